// Script catalogs for tests: the shipped one, and copies with one script replaced by a
// deliberately broken file from tests/broken_scripts (the negative tests).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "harness/system.h"
#include "real/script_catalog.h"
#include "real/state/namespace.h"

namespace testbed::testing_catalogs {

inline const real::ScriptCatalog& Shipped() {
  static const real::ScriptCatalog c = real::ScriptCatalog::Load(real::ScriptCatalog::ShippedDir());
  return c;
}

// The shipped catalog with `script` (e.g. "state/beta30/COMPARE_AND_SET_WITH_QUOTA_SCRIPT.lua")
// replaced, in memory, by tests/<file>; `tag` names the copy in messages.
inline real::ScriptCatalog WithFile(const std::string& tag, const std::string& script,
                                    const std::string& file) {
  real::ScriptCatalog c = Shipped();
  std::ifstream in(std::string(TESTBED_SOURCE_DIR "/tests/") + file, std::ios::binary);
  EXPECT_TRUE(in.good()) << tag << ": no script tests/" << file;
  c.replace(script, std::string(std::istreambuf_iterator<char>(in), {}));
  return c;
}
// ... by a deliberately broken copy, tests/broken_scripts/<broken> (the negative tests).
inline real::ScriptCatalog WithBroken(const std::string& tag, const std::string& script,
                                      const std::string& broken) {
  return WithFile(tag, script, "broken_scripts/" + broken);
}
// ... by a copy that keeps a promise the shipped script breaks, tests/fixed_scripts/<fixed>.
inline real::ScriptCatalog WithFixed(const std::string& tag, const std::string& script,
                                     const std::string& fixed) {
  return WithFile(tag, script, "fixed_scripts/" + fixed);
}

// ... every *.lua of tests/fixed_scripts/<dir> in place of the file of that name in `scripts_dir`
// (e.g. "state/beta30").
inline real::ScriptCatalog WithFixedDir(const std::string& scripts_dir, const std::string& dir) {
  real::ScriptCatalog c = Shipped();
  const std::filesystem::path from = std::string(TESTBED_SOURCE_DIR "/tests/fixed_scripts/") + dir;
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(from)) {
    if (e.path().extension() != ".lua") continue;
    std::ifstream in(e.path(), std::ios::binary);
    c.replace(scripts_dir + "/" + e.path().filename().string(),
              std::string(std::istreambuf_iterator<char>(in), {}));
    ++n;
  }
  EXPECT_GT(n, 0) << "no scripts in " << from;
  return c;
}

}  // namespace testbed::testing_catalogs

namespace testbed::props {

// The state system's versions and rolling-deploy predecessors, from its table.
inline std::vector<std::string> StateVersions() { return real::state::PortedVersions(); }
inline std::string RollingFrom(const std::string& version) {
  return FindSystem("state")->version(version)->rolling_from;
}

}  // namespace testbed::props
