// Every ported state version (beta.3, beta.23, beta.24, beta.30): key layout as the seeds
// build it, the property suites on the emulator and on a spawned redis-server (same verdicts,
// same trace hashes), rolling deploys, the legacy claim and its broken copy, and the model of
// the whole contract against each port.
#include <absl/strings/match.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "properties/state/state_props.h"
#include "tests/state_spec.h"
#include "tests/test_catalogs.h"
#include "real/state/namespace.h"
#include "sim/clock.h"
#include "sim/strategies.h"

namespace testbed::props::state {
namespace {

using testing_catalogs::Shipped;

// One actor of `version` runs body; returns the emulator's keyspace afterwards.
std::string KeyspaceAfter(const std::string& version, std::optional<std::string> connection,
                          std::function<sim::Task<void>(real::state::StateNamespace&)> body) {
  sim::EmulatorBackend backend;
  sim::RandomWalk walk;
  sim::World world(sim::WorldOptions{}, backend, walk);
  real::state::VersionScripts scripts(Shipped());
  world.add_actor("pod", [&](sim::Ctx& ctx) -> sim::Task<void> {
    auto ns = real::state::MakeNamespace(version, ctx, scripts, std::nullopt, "ns",
                                         real::state::NamespaceOptions{}, connection);
    co_await body(*ns);
  });
  const sim::RunResult r = world.run();
  EXPECT_TRUE(r.error.empty()) << r.error;
  return backend.describe_state(world.now_ms());
}

sim::Task<void> SetK(real::state::StateNamespace& ns) {
  real::state::Json v = real::state::Json::object();
  v["n"] = 1;
  co_await ns.set("k", v, std::nullopt);
}

TEST(StateVersions, EachPortWritesTheKeysItsSeedBuilds) {
  const std::string v1 = KeyspaceAfter("beta3", std::nullopt, SetK);
  EXPECT_NE(v1.find("apifuse:provider-state:v1:default:ns:k"), std::string::npos) << v1;
  EXPECT_EQ(v1.find(":index:"), std::string::npos) << "beta.3 has no index\n" << v1;

  const std::string v23 = KeyspaceAfter("beta23", std::nullopt, SetK);
  EXPECT_NE(v23.find("apifuse:provider-state:v1:default:ns:k"), std::string::npos) << v23;
  // base64url("apifuse:provider-state:v1:default:ns"), and the backfill's cursor beside it.
  EXPECT_NE(
      v23.find("apifuse:provider-state:v1:index:YXBpZnVzZTpwcm92aWRlci1zdGF0ZTp2MTpkZWZhdWx0Om5z"),
      std::string::npos)
      << v23;
  EXPECT_NE(v23.find(":legacy-scan-cursor"), std::string::npos) << v23;

  const std::string v24 = KeyspaceAfter("beta24", std::string("c1"), SetK);
  EXPECT_NE(v24.find("apifuse:provider-state:v2:default:ns:scope:connection:sha256:"),
            std::string::npos)
      << v24;
  // set() tombstones the v1 key of a concrete scope (SET_WITH_QUOTA_SCRIPT, ARGV[6] == "1").
  EXPECT_NE(v24.find("apifuse:provider-state:v1:default:ns:k"), std::string::npos) << v24;
  EXPECT_NE(v24.find("deleted"), std::string::npos) << v24;

  const std::string v30 = KeyspaceAfter("beta30", std::nullopt, SetK);
  EXPECT_NE(v30.find("apifuse:provider-state:v2:default:ns:scope:connection:missing:k"),
            std::string::npos)
      << v30;
  EXPECT_EQ(v30.find("provider-state:v1"), std::string::npos) << v30;
}

TEST(StateVersions, EveryApplicablePropertyGivesTheSameVerdictAndTraceOnTheEmulatorAndRedisServer) {
  real::RedisServer server(sim::kDefaultEpochMs);
  int compared = 0;
  for (const std::string& version : StateVersions()) {
    for (const PropertyInfo& info : FindSystem("state")->properties()) {
      const std::string& p = info.name;
      const std::string old = RollingFrom(version);
      if (!info.applies(version, old)) continue;
      RunSpec w = testing_state::Spec(p, 3);
      w.version = version;
      w.old_version = old;
      w.clients = 2;
      w.ops = 6;
      const RunOutcome sim = testing_state::Run(w, Shipped());
      const RunOutcome real = testing_state::Run(w, Shipped(), &server);
      EXPECT_EQ(sim.violated, real.violated) << version << " " << p;
      EXPECT_EQ(sim.trace.Hash(), real.trace.Hash()) << version << " " << p;
      ++compared;
    }
  }
  EXPECT_GE(compared, 40);
}

int Violations(RunSpec w, const std::string& property, int runs,
               const real::ScriptCatalog& scripts) {
  int violated = 0;
  w.property = property;
  for (int s = 1; s <= runs; ++s) {
    w.seed = static_cast<uint64_t>(s);
    violated += testing_state::Run(w, scripts).violated ? 1 : 0;
  }
  return violated;
}

RunSpec Deploy(const std::string& version, const std::string& old) {
  RunSpec w = testing_state::Spec("");
  w.version = version;
  w.old_version = old;
  return w;
}

// The classes `property` shows in `runs` seeds.
std::set<std::string> Classes(RunSpec w, const std::string& property, int runs,
                              const real::ScriptCatalog& scripts) {
  std::set<std::string> seen;
  w.property = property;
  for (int s = 1; s <= runs; ++s) {
    w.seed = static_cast<uint64_t>(s);
    for (const std::string& c : testing_state::Run(w, scripts).classes) seen.insert(c);
  }
  return seen;
}

// Model rule 7 (issue 31): every caller read a v1 value before the upgrade, so every caller
// still reads it after.
TEST(StateVersions, EveryCallerKeepsReadingLiveV1ValuesAfterBeta23ButNotAfterBeta24OrBeta30) {
  EXPECT_EQ(Violations(Deploy("beta23", "beta3"), "legacy-readable", 10, Shipped()), 0);
  EXPECT_EQ(
      Classes(Deploy("beta24", "beta23"), "legacy-readable", 10, Shipped()),
      (std::set<std::string>{"unreadable-without-connection", "v1-value-lost-to-another-scope"}));
  EXPECT_EQ(Violations(Deploy("beta30", "beta3"), "legacy-readable", 10, Shipped()), 10);
  EXPECT_EQ(Classes(Deploy("beta30", "beta3"), "legacy-readable", 10, Shipped()),
            (std::set<std::string>{"v1-value-unreadable"}));
}

// beta.24's claim tombstones the v1 key, so the first connection that reads it takes it from
// every other; a claim that leaves the v1 value in place (tests/fixed_scripts/) loses nothing
// to another scope. A caller without a connection still reads null: the client never claims
// for it (canClaimLegacy, s000:462), which no script can change.
TEST(StateVersions, Beta24WithAClaimThatLeavesTheV1ValueLosesNoValueToAnotherScope) {
  const real::ScriptCatalog fixed =
      testing_catalogs::WithFixed("claim-keeps-v1", "state/beta24/CLAIM_LEGACY_SCRIPT.lua",
                                  "beta24-v1-values-stay-shared/CLAIM_LEGACY_SCRIPT.lua");
  EXPECT_EQ(Classes(Deploy("beta24", "beta23"), "legacy-readable", 20, fixed),
            (std::set<std::string>{"unreadable-without-connection"}));
}

// Model rule 1 (issue 31): an entry lives for its writer's ttl on the server's clock. beta.30
// sets PXAT from the writer's own clock, so under skew keys expire early or outlive maxTtl; the
// copy in tests/fixed_scripts/ measures the ttl on the server (TIME, then PX) and keeps every
// one. list() still trims and filters the index by its caller's clock in client code, which no
// script can change: list-misses-by-fast-clock stays.
TEST(StateVersions, Beta30SetsExpiriesByTheWritersClockAndAServerClockCopyKeepsEveryTtl) {
  RunSpec w = testing_state::Spec("");
  w.faults = sim::FaultList::Parse("skew");
  const real::ScriptCatalog fixed =
      testing_catalogs::WithFixedDir("state/beta30", "beta30-expiry-by-server-clock");
  const std::set<std::string> shipped_ack =
      Classes(w, "acknowledged-writes-visible", 40, Shipped());
  const std::set<std::string> shipped_keys = Classes(w, "keys-expire", 40, Shipped());
  EXPECT_TRUE(shipped_ack.count("expired-early-by-writer-clock"));
  EXPECT_TRUE(shipped_keys.count("outlives-max-ttl-by-writer-clock"));
  EXPECT_TRUE(shipped_keys.count("index-expires-before-entry-by-writer-clock"));
  const std::set<std::string> fixed_ack = Classes(w, "acknowledged-writes-visible", 40, fixed);
  const std::set<std::string> fixed_keys = Classes(w, "keys-expire", 40, fixed);
  EXPECT_FALSE(fixed_ack.count("expired-early-by-writer-clock"));
  EXPECT_FALSE(fixed_keys.count("outlives-max-ttl-by-writer-clock"));
  EXPECT_FALSE(fixed_keys.count("index-expires-before-entry-by-writer-clock"));
  EXPECT_TRUE(fixed_ack.count("list-misses-by-fast-clock"));
}

TEST(StateVersions, OldPodsWritesAreLostInRollingDeploysToV2ButNotBetweenV1Releases) {
  EXPECT_EQ(Violations(Deploy("beta23", "beta3"), "rolling-deploy-writes-visible", 10, Shipped()),
            0);
  EXPECT_GE(Violations(Deploy("beta24", "beta23"), "rolling-deploy-writes-visible", 10, Shipped()),
            8);
  EXPECT_GE(Violations(Deploy("beta30", "beta3"), "rolling-deploy-writes-visible", 10, Shipped()),
            8);
}

TEST(StateVersions, OnlyBeta24FailsAReadWithAQuotaError) {
  EXPECT_EQ(Violations(Deploy("beta23", "beta3"), "reads-never-quota-error", 5, Shipped()), 0);
  EXPECT_EQ(Violations(Deploy("beta24", "beta23"), "reads-never-quota-error", 5, Shipped()), 5);
  EXPECT_EQ(Violations(Deploy("beta30", "beta3"), "reads-never-quota-error", 5, Shipped()), 0);
}

TEST(StateVersions, Beta3RacesItsQuotaAndItsCompareAndSetWhileBeta23ScriptsDoNot) {
  RunSpec w = Deploy("beta3", "");
  w.clients = 3;
  EXPECT_EQ(Violations(w, "quota-safety", 5, Shipped()), 5);
  w.options["ops-mix"] = "cas";
  EXPECT_GE(Violations(w, "cas-versions-linearizable", 20, Shipped()), 3);
  RunSpec b23 = Deploy("beta23", "beta3");
  b23.options["ops-mix"] = "cas";
  EXPECT_EQ(Violations(b23, "cas-versions-linearizable", 20, Shipped()), 0);
}

TEST(StateVersions, TheModelOfTheWholeContractAgreesWithBeta3SequentiallyAndCatchesABrokenScript) {
  // beta.3 answers as the model does, but for the disagreements named by their mechanism: a
  // call on a slow network whose read and write straddle its key's expiry (beta.3 reads, then
  // writes, in separate commands), a finding the baseline holds. Any other class fails.
  RunSpec b3 = Deploy("beta3", "");
  b3.property = "model-matches-implementation";
  b3.ops = 30;
  int straddled = 0;
  for (int s = 1; s <= 40; ++s) {
    b3.seed = static_cast<uint64_t>(s);
    for (const std::string& cls : testing_state::Run(b3, Shipped()).classes) {
      EXPECT_TRUE(absl::EndsWith(cls, "straddles-expiry") || absl::EndsWith(cls, "after-expiry"))
          << "seed " << s << ": " << cls;
      ++straddled;
    }
  }
  EXPECT_LT(straddled, 20);
  const real::ScriptCatalog broken = testing_catalogs::WithBroken(
      "model-broken-catalog", "state/beta30/COMPARE_AND_SET_WITH_QUOTA_SCRIPT.lua",
      "cas-without-version-check/COMPARE_AND_SET_WITH_QUOTA_SCRIPT.lua");
  RunSpec b30 = Deploy("beta30", "");
  b30.ops = 30;
  EXPECT_GE(Violations(b30, "model-matches-implementation", 20, broken), 10);
}

TEST(StateVersions, ARunIsDeterministicForEveryVersion) {
  for (const std::string& version : StateVersions()) {
    RunSpec w = Deploy(version, RollingFrom(version));
    w.property = "cas-versions-linearizable";
    w.seed = 17;
    w.faults = sim::FaultList::Parse("all");
    EXPECT_EQ(testing_state::Run(w, Shipped()).trace.Hash(),
              testing_state::Run(w, Shipped()).trace.Hash())
        << version;
  }
}

TEST(StateVersions, JsonIsWrittenAsJavaScriptWritesIt) {
  EXPECT_EQ(real::state::Stringify(real::state::Json(2.0)), "2");
  EXPECT_EQ(real::state::Stringify(real::state::Json(-0.0)), "0");
  EXPECT_EQ(real::state::Stringify(real::state::Json(0.1)), "0.1");
  EXPECT_EQ(real::state::Stringify(real::state::Json(1e-7)), "1e-7");
  EXPECT_EQ(real::state::Stringify(real::state::Json(1e21)), "1e+21");
  EXPECT_EQ(real::state::Stringify(real::state::Json::parse(R"({"b":[1.5,2.0],"a":"é"})")),
            R"({"a":"é","b":[1.5,2]})");
  EXPECT_EQ(real::state::ParseIsoTime(real::state::IsoTime(sim::kDefaultEpochMs + 1234)),
            sim::kDefaultEpochMs + 1234);
  EXPECT_FALSE(real::state::ParseIsoTime("yesterday").has_value());
}

// quota-liveness names what the refused set(c) found: on beta.23 (old pods of beta.3) the
// deleted entry is gone and its slot leaks; on beta.24 and beta.30 the old pod's delete never
// reached the v2 key, the entry is live, and the quota counts it rightly (another class).
TEST(StateVersions, QuotaLivenessNamesALostDeleteApartFromALeakedSlot) {
  std::map<std::string, int> seen;
  for (const auto& [version, old] : std::vector<std::pair<std::string, std::string>>{
           {"beta23", "beta3"}, {"beta24", "beta23"}, {"beta30", "beta3"}})
    for (uint64_t seed = 1; seed <= 10; ++seed) {
      RunSpec w = testing_state::Spec("quota-liveness", seed);
      w.version = version;
      w.old_version = old;
      const RunOutcome r = testing_state::Run(w, Shipped());
      for (const Finding& f : r.findings) {
        if (f.cls == "old-pod-delete-lost") {
          EXPECT_NE(f.text.find("get(a) now returns its value"), std::string::npos) << f.text;
          EXPECT_NE(version, "beta23") << f.text;
        }
        if (f.cls == "old-pod-delete-leaks-slot") {
          EXPECT_NE(f.text.find("get(a) now returns null"), std::string::npos) << f.text;
          EXPECT_EQ(version, "beta23") << f.text;
        }
        ++seen[version + " " + f.cls];
      }
    }
  EXPECT_GT(seen["beta23 old-pod-delete-leaks-slot"], 0);
  EXPECT_GT(seen["beta24 old-pod-delete-lost"], 0);
  EXPECT_GT(seen["beta30 old-pod-delete-lost"], 0);
}

}  // namespace
}  // namespace testbed::props::state
