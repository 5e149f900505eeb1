#include "real/script_catalog.h"

#include "sim/lua_scripting.h"

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace testbed::real {

std::string ScriptFile::id() const {
  const std::string stem = file.substr(0, file.rfind(".lua"));
  return stem;
}

std::string ScriptCatalog::ShippedDir() {
  if (const char* env = std::getenv("TESTBED_SCRIPTS_DIR")) return env;
  return std::string(TESTBED_SOURCE_DIR) + "/real/scripts";
}

static std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ScriptCatalog ScriptCatalog::Load(const std::string& dir) {
  ScriptCatalog catalog;
  nlohmann::json manifest;
  try {
    manifest = nlohmann::json::parse(ReadFile(dir + "/manifest.json"));
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(dir + "/manifest.json is not valid JSON: " + e.what());
  }
  for (const auto& row : manifest.at("scripts")) {
    ScriptFile s;
    s.file = row.at("file");
    s.package = row.at("package");
    s.version = row.at("version");
    s.constant = row.at("constant");
    s.sha1 = row.at("sha1");
    s.body = ReadFile(dir + "/" + s.file);
    catalog.by_id_.emplace(s.id(), catalog.scripts_.size());
    catalog.scripts_.push_back(std::move(s));
  }
  catalog.Name();
  return catalog;
}

void ScriptCatalog::replace(const std::string& file, std::string body) {
  for (auto& s : scripts_)
    if (s.file == file) {
      s.body = std::move(body);
      Name();
      return;
    }
  throw std::runtime_error("no shipped script " + file);
}

void ScriptCatalog::set_client(ClientCode client) {
  client_ = std::move(client);
  Name();
}

void ScriptCatalog::Name() {
  names_.clear();
  auto swaps = std::make_shared<std::map<std::string, ScriptSwap>>();
  for (const auto& f : scripts_) {
    const std::string& sha = sim::CachedSha1(f.body);
    names_[sha.substr(0, 12)] = f.id();
    if (sha == f.sha1) continue;
    const std::string dir = f.file.substr(0, f.file.rfind('/'));
    (*swaps)[dir.substr(dir.rfind('/') + 1)][f.sha1] = f.body;
  }
  client_.scripts = swaps->empty() ? nullptr : std::move(swaps);
}

const ScriptFile& ScriptCatalog::get(const std::string& id) const {
  const auto it = by_id_.find(id);
  if (it == by_id_.end()) throw std::runtime_error("unknown script " + id);
  return scripts_[it->second];
}

}  // namespace testbed::real
