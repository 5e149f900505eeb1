// The seed scripts are the code under test: they must stay byte for byte what the seeds ship.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "real/script_catalog.h"
#include "sim/clock.h"
#include "sim/emulator.h"
#include "sim/lua_scripting.h"

namespace testbed {
namespace {

TEST(SeedScripts, EveryFileMatchesTheSha1InItsManifest) {
  const real::ScriptCatalog catalog = real::ScriptCatalog::Load(real::ScriptCatalog::ShippedDir());
  ASSERT_EQ(catalog.all().size(), 20u);
  for (const real::ScriptFile& s : catalog.all()) {
    EXPECT_EQ(sim::Sha1Hex(s.body), s.sha1) << s.file;
    // Template literals start and end with a newline; line numbers in errors depend on it.
    ASSERT_FALSE(s.body.empty()) << s.file;
    EXPECT_EQ(s.body.front(), '\n') << s.file;
    EXPECT_EQ(s.body.back(), '\n') << s.file;
  }
}

TEST(SeedScripts, EachVersionHoldsTheConstantsItsSeedDefines) {
  const real::ScriptCatalog catalog = real::ScriptCatalog::Load(real::ScriptCatalog::ShippedDir());
  std::map<std::string, std::set<std::string>> by_dir;
  for (const real::ScriptFile& s : catalog.all())
    by_dir[s.file.substr(0, s.file.rfind('/'))].insert(s.constant);
  const std::set<std::string> state_v2 = {
      "SET_WITH_QUOTA_SCRIPT", "COMPARE_AND_SET_WITH_QUOTA_SCRIPT", "DELETE_WITH_INDEX_SCRIPT"};
  std::set<std::string> beta23 = state_v2, beta24 = state_v2;
  beta23.insert("BACKFILL_LEGACY_INDEX_SCRIPT");
  beta24.insert("CLAIM_LEGACY_SCRIPT");
  EXPECT_EQ(by_dir["state/beta23"], beta23);
  EXPECT_EQ(by_dir["state/beta24"], beta24);
  EXPECT_EQ(by_dir["state/beta30"], state_v2);
  EXPECT_EQ(by_dir["a2/0.5.0"].size(), 9u);
  for (const std::string& c : by_dir["a2/0.5.0"]) EXPECT_EQ(c.substr(c.size() - 4), "_LUA");
}

TEST(SeedScripts, RestoredHiddenLinesAreDeclaredInTheManifest) {
  const real::ScriptCatalog catalog = real::ScriptCatalog::Load(real::ScriptCatalog::ShippedDir());
  const real::ScriptFile& b23 = catalog.get("state/beta23/SET_WITH_QUOTA_SCRIPT");
  EXPECT_NE(
      b23.body.find("local expires_at = tonumber(ARGV[3])\nlocal index_ttl = tonumber(ARGV[4])\n"),
      std::string::npos);
}

TEST(SeedScripts, EveryScriptCompilesOnTheEmulatorUnderItsManifestSha) {
  const real::ScriptCatalog catalog = real::ScriptCatalog::Load(real::ScriptCatalog::ShippedDir());
  sim::VirtualClock clock;
  sim::Emulator em(clock);
  for (const real::ScriptFile& s : catalog.all()) {
    const sim::Reply r = em.execute({"SCRIPT", "LOAD", s.body});
    EXPECT_EQ(r, sim::Reply::Bulk(s.sha1)) << s.file << ": " << r.debug();
  }
}

TEST(SeedScripts, AMissingManifestIsAClearError) {
  try {
    real::ScriptCatalog::Load("/nonexistent-dir");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/manifest.json"), std::string::npos);
  }
}

}  // namespace
}  // namespace testbed
