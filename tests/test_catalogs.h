// Script catalogs for tests: the shipped one, and copies with one script replaced by a
// deliberately broken file from tests/broken_scripts (the negative tests).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "real/script_catalog.h"

namespace testbed::testing_catalogs {

inline const ScriptCatalog& Shipped() {
  static const ScriptCatalog c = ScriptCatalog::Load(ScriptCatalog::ShippedDir());
  return c;
}

// The shipped catalog with `script` (e.g. "state/beta30/COMPARE_AND_SET_WITH_QUOTA_SCRIPT.lua")
// replaced by tests/broken_scripts/<broken>; `tag` names the temporary copy.
inline ScriptCatalog WithBroken(const std::string& tag, const std::string& script, const std::string& broken) {
  const std::string dir = ::testing::TempDir() + "/" + tag;
  std::filesystem::remove_all(dir);
  std::filesystem::copy(ScriptCatalog::ShippedDir(), dir, std::filesystem::copy_options::recursive);
  std::filesystem::copy_file(std::string(TESTBED_SOURCE_DIR "/tests/broken_scripts/") + broken,
                             dir + "/" + script, std::filesystem::copy_options::overwrite_existing);
  return ScriptCatalog::Load(dir);
}

}  // namespace testbed::testing_catalogs
