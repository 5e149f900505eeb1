// The System seam: a toy second system (tests/toy/), registered by one line in its own binary,
// runs through check, list, replay and scenario files; the state system's reports for fixed
// seeds are byte-identical to the ones pinned before the seam (tests/golden/); and every
// command's printed replay line reproduces its run.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include <filesystem>

#include "tests/cli_run.h"
#include "tests/temp_dir.h"

namespace testbed {
namespace {

using testing_cli::LineStarting;
using testing_cli::ReadFile;
using testing_cli::Result;
using testing_dirs::TempDir;

Result Toy(const std::string& args) { return testing_cli::Run(TESTBED_TOY_CLI_PATH, args); }
using testing_cli::Cli;

// "replay: testbed X ..." -> "X ..."
std::string ReplayArgs(const std::string& out) {
  const std::string line = LineStarting(out, "replay: testbed ");
  return line.empty() ? "" : line.substr(std::string("replay: testbed ").size());
}

TEST(ToySystem, ListShowsItsVersionsPropertiesAndOption) {
  const Result r = Toy("list");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("system counter: a toy shared counter"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("v2         no scripts (plain commands); HINCRBY; rolling deploy from v1"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("mixed-pods-no-lost-increment"), std::string::npos);
  EXPECT_NE(r.out.find("option --step (default 1)"), std::string::npos);
  EXPECT_NE(r.out.find("system state:"), std::string::npos) << "the built-in systems stay";
}

TEST(ToySystem, CheckFindsTheLostUpdateOfV1MinimizesItAndItsReplayAndScenarioReproduceIt) {
  TempDir dir("toy-check");
  const Result r =
      Toy("check --system counter --version v1 --seed 3 --runs 20 --step 2 --quiet --out " +
          dir.path() + " --save-scenarios " + (dir / "scenarios"));
  ASSERT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("mixed-pods-no-lost-increment                      n/a"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  lost-increment                                                     20 3"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("violation of no-lost-increment, class lost-increment: the counter ends "
                       "below the acknowledged sum (seed "),
            std::string::npos)
      << r.out;
  // Minimized to the race itself: two clients' read-modify-writes, one operation each.
  EXPECT_NE(r.out.find("(seed 3, 2 clients x 1 operation)"), std::string::npos) << r.out;
  const std::string replay = ReplayArgs(r.out);
  EXPECT_NE(replay.find("--step 2"), std::string::npos) << replay;
  const Result again = Toy(replay);
  EXPECT_EQ(again.code, 1) << again.out;
  EXPECT_NE(ReadFile(dir / "report.json").find("\"system\": \"counter\""), std::string::npos);
  const std::string scenario = dir / "scenarios/counter-v1-no-lost-increment-lost-increment.json";
  EXPECT_NE(ReadFile(scenario).find("\"step\": \"2\""), std::string::npos) << ReadFile(scenario);
  EXPECT_NE(ReadFile(scenario).find("\"class\": \"lost-increment\""), std::string::npos);
  // A saved finding that still shows is "reproduced" (exit 0).
  const Result replayed = Toy("replay " + scenario + " --redis spawn");
  EXPECT_EQ(replayed.code, 0) << replayed.out;
  EXPECT_NE(replayed.out.find("violated: no-lost-increment (classes: lost-increment)"),
            std::string::npos)
      << replayed.out;
  EXPECT_NE(replayed.out.find("result: reproduced (expected: class lost-increment)"),
            std::string::npos)
      << replayed.out;
}

TEST(ToySystem, V2PassesAndARollingDeployFromV1LosesIncrements) {
  const Result v2 = Toy("check --system counter --seed 3 --runs 20 --properties no-lost-increment");
  EXPECT_EQ(v2.code, 0) << v2.out;
  const Result mixed = Toy("check --system counter --seed 3 --runs 20 --clients 3");
  EXPECT_EQ(mixed.code, 1) << mixed.out;
  EXPECT_NE(mixed.out.find("violation of mixed-pods-no-lost-increment"), std::string::npos)
      << mixed.out;
}

TEST(ToySystem, TheStateCliDoesNotKnowTheToyAndItsOptionIsRefusedForState) {
  EXPECT_EQ(Cli("check --system counter").code, 2);
  const Result r = Toy("check --system state --step 2");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--step is not an option of system state"), std::string::npos) << r.out;
}

TEST(GoldenReports, StateReportsForFixedSeedsAreByteIdenticalToThePinnedOnes) {
  struct Pinned {
    std::string args, file;
  };
  for (const Pinned& p :
       std::vector<Pinned>{{"--version beta30 --seed 99 --runs 40", "state-beta30-seed-99-runs-40"},
                           {"--version beta24 --seed 31 --runs 5 --faults all",
                            "state-beta24-seed-31-runs-5-faults-all"},
                           {"--version beta3 --seed 1 --runs 5", "state-beta3-seed-1-runs-5"}}) {
    TempDir dir("golden");
    const std::string golden = std::string(TESTBED_SOURCE_DIR "/tests/golden/") + p.file;
    // The properties the pinned report holds, named: a property added to the system later is
    // not in the pinned run, and its report stays the same bytes.
    const nlohmann::ordered_json pinned = nlohmann::ordered_json::parse(ReadFile(golden + ".json"));
    std::string properties;
    for (const auto& [name, row] : pinned.at("properties").items())
      properties += (properties.empty() ? "" : ",") + name;
    ASSERT_FALSE(properties.empty());
    const Result r = Cli("check --system state " + p.args + " --properties " + properties +
                         " --quiet --out " + dir.path());
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_EQ(ReadFile(dir / "report.json"), ReadFile(golden + ".json")) << p.args;
    EXPECT_EQ(ReadFile(dir / "report.md"), ReadFile(golden + ".md")) << p.args;
  }
}

// The block that describes a violation, from "violation of" up to its replay line.
std::string ViolationBlock(const std::string& out) {
  const size_t from = out.find("violation of");
  if (from == std::string::npos) return "";
  return out.substr(from, out.find("replay: ", from) - from);
}

// Each class's replay line, "violation of P, class C" -> "replay: ..." (as `check` prints them).
std::map<std::string, std::string> ReplayLinesByClass(const std::string& out) {
  std::map<std::string, std::string> lines;
  std::string cls;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("violation of ", 0) == 0) cls = line.substr(0, line.find(':'));
    if (line.rfind("replay: testbed ", 0) == 0 && !cls.empty()) lines[cls] = line;
  }
  return lines;
}

// A replay line is final: run, its run minimizes to the same counterexample and prints the same
// line (minimization runs to a fixpoint).
TEST(ReplayLines, ACampaignsReplayLinesShrinkNoFurtherWhenRun) {
  int compared = 0;
  for (const std::string args :
       {"check --system state --version beta30 --seed 99 --runs 30 --quiet --properties "
        "hot-key-linearizable,increments-all-kept,quota-safety",
        "check --system a2 --seed 4 --runs 10 --quiet --properties presence-lww,fencing"}) {
    const Result r = Cli(args);
    ASSERT_EQ(r.code, 1) << r.out;
    for (const auto& [cls, replay] : ReplayLinesByClass(r.out)) {
      const Result again = Cli(replay.substr(std::string("replay: testbed ").size()));
      const auto lines = ReplayLinesByClass(again.out);
      ASSERT_TRUE(lines.count(cls)) << replay << "\n" << again.out;
      EXPECT_EQ(lines.at(cls), replay) << cls;
      ++compared;
    }
  }
  EXPECT_GE(compared, 5);
}

TEST(ReplayLines, EveryCommandsPrintedReplayLineReproducesItsRunVerbatim) {
  // fidelity: the checkpoint interval must survive, or the divergence moves.
  const Result fid =
      Cli("fidelity --seed 1 --commands 2000 --checkpoint-every 37 --inject-fault expiry-shift");
  ASSERT_EQ(fid.code, 1) << fid.out;
  EXPECT_NE(ReplayArgs(fid.out).find("--checkpoint-every 37"), std::string::npos) << fid.out;
  const Result fid_again = Cli(ReplayArgs(fid.out));
  EXPECT_EQ(fid_again.code, 1);
  EXPECT_EQ(LineStarting(fid_again.out, "first divergence at step"),
            LineStarting(fid.out, "first divergence at step"));
  EXPECT_EQ(LineStarting(fid_again.out, "trace-hash: "), LineStarting(fid.out, "trace-hash: "));
  // check: faults, clients, ops, the rolling deploy and the system's option in the line.
  const Result check =
      Cli("check --system state --version beta24 --rolling-from beta3 --seed 4 --runs 6 "
          "--clients 2 --ops 6 --faults lost-reply,latency --ops-mix cas --quiet "
          "--properties cas-versions-linearizable,quota-safety,rolling-deploy-writes-visible");
  ASSERT_EQ(check.code, 1) << check.out;
  const std::string replay = ReplayArgs(check.out);
  for (const char* flag : {"--rolling-from beta3", "--faults lost-reply,latency", "--ops-mix cas"})
    EXPECT_NE(replay.find(flag), std::string::npos) << replay;
  const Result check_again = Cli(replay);
  EXPECT_EQ(check_again.code, 1) << check_again.out;
  EXPECT_EQ(ViolationBlock(check_again.out), ViolationBlock(check.out));
}

}  // namespace
}  // namespace testbed

namespace testbed {
namespace {

TEST(CheckStrategies, BoundedDfsExhaustsASmallWorkloadSoAPassIsAProofForThatSize) {
  const Result r =
      Cli("check --system state --version beta30 --strategy dfs --clients 2 --ops 2 --seed 1 "
          "--properties cas-versions-linearizable --ops-mix cas --quiet");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("exhausted: "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("stopped after"), std::string::npos) << r.out;
}

TEST(CheckStrategies, DfsFindsTheBeta3RaceAndItsScheduleReplaysToTheSameCounterexample) {
  const Result r =
      Cli("check --system state --version beta3 --strategy dfs --clients 2 --ops 2 --seed 1 "
          "--properties cas-versions-linearizable --quiet");
  ASSERT_EQ(r.code, 1) << r.out;
  const std::string replay = ReplayArgs(r.out);
  EXPECT_NE(replay.find("--strategy replay --choices "), std::string::npos) << replay;
  const Result again = Cli(replay);
  EXPECT_EQ(again.code, 1) << again.out;
  EXPECT_EQ(ViolationBlock(again.out), ViolationBlock(r.out));
  // A search cut short says so, and is never called exhaustive.
  const Result cut =
      Cli("check --system state --version beta3 --strategy dfs --clients 2 --ops 2 --seed 1 "
          "--properties cas-versions-linearizable --max-schedules 3 --quiet");
  EXPECT_NE(cut.out.find("stopped after 3 schedules"), std::string::npos) << cut.out;
}

TEST(CheckStrategies, PctFindsTheBeta3RaceWithAReplayLineThatReproducesIt) {
  const Result r =
      Cli("check --system state --version beta3 --strategy pct --pct-depth 3 --seed 2 --runs 20 "
          "--properties cas-versions-linearizable --quiet");
  ASSERT_EQ(r.code, 1) << r.out;
  const std::string replay = ReplayArgs(r.out);
  EXPECT_NE(replay.find("--strategy pct --pct-depth 3"), std::string::npos) << replay;
  EXPECT_EQ(ViolationBlock(Cli(replay).out), ViolationBlock(r.out));
}

}  // namespace
}  // namespace testbed
