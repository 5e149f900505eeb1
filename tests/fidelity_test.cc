// The differential check itself: fixed seeds agree with redis-server 7.0, injected emulator
// deviations are caught and shrunk, runs are deterministic, and the generator covers the subset.
#include <gtest/gtest.h>

#include <set>

#include "harness/system.h"
#include "real/real_backend.h"
#include "sim/fidelity.h"
#include "sim/clock.h"

namespace testbed::sim::fidelity {
namespace {

const real::ScriptCatalog& Catalog() {
  static const real::ScriptCatalog catalog =
      real::ScriptCatalog::Load(real::ScriptCatalog::ShippedDir());
  return catalog;
}
// Every shipped script, with its system's argument shapes.
const std::vector<Script>& Scripts() {
  static const std::vector<Script> scripts = props::FidelityScripts(Catalog());
  return scripts;
}

std::string Replay(uint64_t seed, int64_t commands, const std::string& extra = "") {
  return "replay: ./build/testbed fidelity --seed " + std::to_string(seed) + " --commands " +
         std::to_string(commands) + extra;
}

class FixedSeeds : public ::testing::TestWithParam<uint64_t> {};

TEST_P(FixedSeeds, EmulatorAndRedisServerAgreeOnEveryReplyAndCheckpoint) {
  const uint64_t seed = GetParam();
  const int64_t commands = 4000;
  real::RedisServer server(sim::kDefaultEpochMs);
  real::SpawnedReference reference(server);
  Runner runner(&reference, {});
  const auto steps = Generate(seed, commands, Scripts());
  auto d = runner.run(steps);
  ASSERT_FALSE(d.has_value()) << "seed " << seed << " diverges at step " << d->step << ": "
                              << steps[d->step].render() << "\n emulator: " << d->emulator
                              << "\n redis:    " << d->redis << "\n"
                              << Replay(seed, commands);
}

INSTANTIATE_TEST_SUITE_P(Seeds, FixedSeeds, ::testing::Values(1, 2, 3, 4, 5, 6));

// A fidelity check that never fails proves nothing: each injected deviation must be caught.
std::optional<std::pair<uint64_t, std::vector<Step>>> FirstCatch(const sim::EmulatorOptions& fault,
                                                                 ReferenceServer& server) {
  Runner runner(&server, fault);
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    const auto steps = Generate(seed, 2000, Scripts());
    if (auto d = runner.run(steps)) {
      std::vector<Step> prefix(steps.begin(), steps.begin() + d->step + 1);
      return std::make_pair(seed, Shrink(prefix, runner));
    }
  }
  return std::nullopt;
}

TEST(InjectedDeviation, AnExpiryBoundaryMovedByOneMillisecondIsCaughtAndShrunk) {
  real::RedisServer spawned(sim::kDefaultEpochMs);
  real::SpawnedReference server(spawned);
  sim::EmulatorOptions fault;
  fault.fault_expiry_shift_ms = -1;
  auto caught = FirstCatch(fault, server);
  ASSERT_TRUE(caught.has_value()) << "expiry shift not caught in 5 seeds x 2000 commands";
  EXPECT_LE(caught->second.size(), 6u) << "shrunk counterexample is too long";
  Runner runner(&server, fault);
  EXPECT_TRUE(runner.run(caught->second).has_value()) << "the shrunk sequence must still fail";
  Runner faithful(&server, {});
  EXPECT_FALSE(faithful.run(caught->second).has_value()) << "and pass without the fault";
}

TEST(InjectedDeviation, CjsonEncodingEmptyTablesAsArraysIsCaught) {
  real::RedisServer spawned(sim::kDefaultEpochMs);
  real::SpawnedReference server(spawned);
  sim::EmulatorOptions fault;
  fault.fault_cjson_empty_table_as_array = true;
  auto caught = FirstCatch(fault, server);
  ASSERT_TRUE(caught.has_value()) << "cjson deviation not caught in 5 seeds x 2000 commands";
  EXPECT_LE(caught->second.size(), 6u);
}

TEST(Determinism, TheSameSeedGivesTheSameTraceHashAndAnotherSeedAnother) {
  std::string a, b, c;
  Runner(nullptr, {}).run(Generate(7, 3000, Scripts()), nullptr, &a);
  Runner(nullptr, {}).run(Generate(7, 3000, Scripts()), nullptr, &b);
  Runner(nullptr, {}).run(Generate(8, 3000, Scripts()), nullptr, &c);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(a.size(), 64u);
}

TEST(Coverage, AFewThousandCommandsExerciseTheWholeSubsetAndEverySeedScript) {
  Coverage coverage;
  Runner(nullptr, {}).run(Generate(11, 6000, Scripts()), &coverage);
  for (const std::string& want : ExpectedCoverage())
    EXPECT_GT(coverage.commands[want], 0) << want << " never ran";
  std::set<std::string> scripts_seen;
  for (const auto& [key, n] : coverage.script_shapes)
    scripts_seen.insert(key.substr(0, key.find(" -> ")));
  for (const real::ScriptFile& s : Catalog().all())
    EXPECT_TRUE(scripts_seen.count(s.id())) << s.id() << " never ran";
  // The seed scripts' success paths, not only their error paths, must be reached.
  for (const char* shape : {"state/beta30/COMPARE_AND_SET_WITH_QUOTA_SCRIPT -> [1,bulk]",
                            "state/beta24/CLAIM_LEGACY_SCRIPT -> [1,bulk]",
                            "a2/0.5.0/APPEND_LUA -> ['ok',bulk,bulk,...]"})
    EXPECT_GT(coverage.script_shapes[shape], 0) << shape;
}

}  // namespace
}  // namespace testbed::sim::fidelity
