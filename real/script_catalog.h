// The seed Lua scripts as shipped files, read through their manifest
// (real/scripts/manifest.json: file, package, version, constant, sha1, provenance).
#pragma once

#include <absl/container/flat_hash_map.h>

#include <string>
#include <vector>

#include "real/client_code.h"
#include "sim/trace.h"

namespace testbed::real {

struct ScriptFile {
  std::string file;  // relative to the scripts dir, e.g. state/beta30/DELETE_WITH_INDEX_SCRIPT.lua
  std::string package;
  std::string version;
  std::string constant;
  std::string sha1;  // from the manifest
  std::string body;  // the file's bytes
  std::string id()
      const;  // "<system>/<version dir>/<CONSTANT>", e.g. state/beta30/DELETE_WITH_INDEX_SCRIPT
};

class ScriptCatalog {
 public:
  static std::string ShippedDir();  // $TESTBED_SCRIPTS_DIR or <source>/real/scripts
  // Reads the manifest and every file it names; throws std::runtime_error with a clear message.
  static ScriptCatalog Load(const std::string& dir);
  const std::vector<ScriptFile>& all() const { return scripts_; }
  const ScriptFile& get(const std::string& id) const;  // throws if unknown
  // A changed script (check --scripts): the body of `file` becomes `body` (throws if unknown).
  void replace(const std::string& file, std::string body);
  // Every body by the first 12 digits of its SHA1, named by its id (a body two files share:
  // the later file's).
  const sim::ScriptNames& names() const { return names_; }
  // The client code that runs these scripts (--client, --client-dir): the ports by default.
  // Its changed scripts go with it (ClientCode::scripts).
  const ClientCode& client() const { return client_; }
  void set_client(ClientCode client);

 private:
  ClientCode client_;
  std::vector<ScriptFile> scripts_;
  absl::flat_hash_map<std::string, size_t> by_id_;  // id() -> index in scripts_
  sim::ScriptNames names_;
  void Name();  // fills names_, and client_.scripts from the bodies that differ from the manifest
};

}  // namespace testbed::real
