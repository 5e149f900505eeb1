// The CLI as a user meets it: seed first, typed exit codes, clear messages for bad input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/cli_run.h"
#include "tests/registry_counts.h"
#include "tests/temp_dir.h"

namespace {

using testbed::testing_cli::Result;

Result RunCli(const std::string& args, const std::string& env = "") {
  return testbed::testing_cli::Run(TESTBED_CLI_PATH, args, env);
}

TEST(Cli, PrintsTheSeedFirstAndATraceHashLast) {
  Result r = RunCli("fidelity --redis none --seed 7 --commands 200");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.rfind("seed: 7\n", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("trace-hash: "), std::string::npos);
  EXPECT_NE(r.out.find("coverage: command/option x count"), std::string::npos);
}

TEST(Cli, UnknownFlagsAndCommandsAreUsageErrors) {
  for (const char* args : {"fidelity --bogus", "frobnicate", "fidelity --seed -3",
                           "fidelity --redis 10.0.0.1:6379", "fidelity --commands"}) {
    Result r = RunCli(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    // One line naming what is wrong, and a pointer to --help; never the whole usage.
    EXPECT_EQ(r.out.rfind("testbed", 0), 0u) << r.out;
    EXPECT_LE(std::count(r.out.begin(), r.out.end(), '\n'), 2) << r.out;
    EXPECT_NE(r.out.find("--help"), std::string::npos) << r.out;
  }
}

TEST(Cli, NamesItsVersionAndCommitAndSuggestsAMisspeltCommand) {
  Result r = RunCli("--version");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.rfind("testbed ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find(" (commit "), std::string::npos) << r.out;
  r = RunCli("chek --seed 1");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("unknown command 'chek' (did you mean 'check'?)"), std::string::npos)
      << r.out;
  r = RunCli("relpay scenarios");
  EXPECT_NE(r.out.find("(did you mean 'replay'?)"), std::string::npos) << r.out;
}

TEST(Cli, AMissingRedisServerIsASetupErrorWithExitCode2) {
  Result r =
      RunCli("fidelity --seed 1 --commands 10", "TESTBED_REDIS_SERVER=/nonexistent/redis-server");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("setup error"), std::string::npos) << r.out;
}

TEST(Cli, ADivergenceExitsWith1AndPrintsAShrunkCounterexampleAndAReplayCommand) {
  Result r = RunCli("fidelity --seed 1 --commands 2000 --inject-fault expiry-shift");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("shortest failing sequence"), std::string::npos) << r.out;
  EXPECT_NE(
      r.out.find("replay: testbed fidelity --seed 1 --commands 2000 --inject-fault expiry-shift"),
      std::string::npos)
      << r.out;
}

}  // namespace

namespace {

using testbed::testing_cli::LineStarting;

}  // namespace

namespace {

TEST(CliCheck, AViolationExitsWith1WithAReplayThatReproducesIt) {
  testbed::testing_dirs::TempDir dir("check-report");
  Result r = RunCli("check --system state --seed 1 --runs 30 --out " + dir.path());
  ASSERT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out.rfind("seed: 1\n", 0), 0u);
  EXPECT_NE(r.out.find("cas-versions-linearizable"), std::string::npos);
  std::string replay = LineStarting(r.out, "replay: testbed ");
  ASSERT_FALSE(replay.empty()) << r.out;
  Result again = RunCli(replay.substr(std::string("replay: testbed ").size()));
  EXPECT_EQ(again.code, 1) << again.out;
  std::ifstream report(dir / "report.json");
  EXPECT_TRUE(report.good());
}

TEST(CliCheck, UnportedVersionsAndBadFlagsAreUsageErrors) {
  for (const char* args :
       {"check --system state --version beta99", "check --system nosuch",
        "check --system state --version beta24 --rolling-from beta99",
        "check --system state --version beta24 --rolling-from beta24",
        "check --system state --version beta30 --rolling-from beta24,beta30",
        "check --system state --version beta30 --rolling-from beta24,beta24",
        "check --system state --version beta30 --rolling-from beta24,beta23,beta3",
        "check --system handles --version beta30 --rolling-from beta24,beta23",
        "check --system state --redis 127.0.0.1:6379", "check --system state --skip 1-2",
        "check --system state --redis spawn --real-sample 2", "check",
        "check --system state --runs 2 --budget-seconds 2",
        "check --system state --scripts /nonexistent", "replay /nonexistent.json",
        "check --system state --properties bogus",
        // Numbers past their documented ceilings, and empty or repeated list items.
        "check --system state --clients 2147483648", "check --system state --ops 4294967297",
        "check --system state --clients 201", "check --system state --clients 200 --ops 1000",
        "check --system state --budget-seconds 9223372037",
        "check --system state --seed 9223372036854775807", "check --system state --jobs 1000",
        "check --system state --faults ''", "check --system state --faults skew,,latency",
        "check --system state --faults skew,skew", "check --system state --properties ''",
        "check --system state --properties quota-safety,quota-safety",
        // Output and input paths that are directories, before any run.
        "check --system state --junit /tmp", "check --system state --write-baseline /tmp",
        "check --system state --baseline /tmp"}) {
    Result r = RunCli(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_EQ(r.out.find("property / class"), std::string::npos) << args << ": ran first";
  }
}

// A three-version deploy (--rolling-from A,B) runs old pods of both versions; its replay line
// names both, and reproduces.
TEST(CliCheck, AThreeVersionDeployRunsOldPodsOfBothVersionsAndReplays) {
  const Result r = RunCli(
      "check --system state --version beta30 --rolling-from beta24,beta23 --seed 1 --runs 20 "
      "--properties rolling-deploy-writes-visible --quiet");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("old pod (beta24)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("old pod (beta23)"), std::string::npos) << r.out;
  const size_t at = r.out.find("replay: testbed ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
  EXPECT_NE(line.find("--rolling-from beta24,beta23"), std::string::npos) << line;
  const Result again = RunCli(line.substr(std::string("replay: testbed ").size()));
  EXPECT_EQ(again.code, 1) << line << "\n" << again.out;
}

TEST(CliCheck, ASampleOfRunsReplaysOnRedisServerWithTheSameTraces) {
  Result r = RunCli(
      "check --system state --version beta24 --seed 9 --runs 4 --real-sample 2 --properties "
      "connection-isolation,legacy-readable,model-matches-implementation");
  EXPECT_NE(
      r.out.find("redis-server sample: 6 runs replayed on a spawned redis-server, 0 diverged"),
      std::string::npos)
      << r.out;
}

TEST(CliCheck, EveryVersionReportsItsFindingsWithReplayLinesThatReproduceThem) {
  for (const char* version : {"beta3", "beta23", "beta24", "beta30"}) {
    Result r =
        RunCli(std::string("check --system state --version ") + version + " --seed 1 --runs 5");
    EXPECT_EQ(r.code, 1) << version << "\n" << r.out;
    const size_t at = r.out.find("replay: testbed ");
    ASSERT_NE(at, std::string::npos) << r.out;
    const std::string replay = r.out.substr(at + 16, r.out.find('\n', at) - at - 16);
    Result again = RunCli(replay + " --redis spawn");
    EXPECT_EQ(again.code, 1) << replay << "\n" << again.out;
    EXPECT_NE(again.out.find("violation of"), std::string::npos) << again.out;
  }
}

TEST(CliCheck, AScriptThatFailsToCompileIsExit2AndOneThatFailsAtRunTimeIsAFinding) {
  testbed::testing_dirs::TempDir tmp("cli-bad-scripts");
  const std::string dir = tmp.path();
  std::filesystem::create_directories(dir + "/syntax");
  std::filesystem::create_directories(dir + "/runtime");
  std::ofstream(dir + "/syntax/DELETE_WITH_INDEX_SCRIPT.lua") << "local x =\n";
  std::ofstream(dir + "/runtime/SET_WITH_QUOTA_SCRIPT.lua")
      << "return redis.call('GET', undefined_global)\n";
  Result syntax = RunCli("check --system state --runs 2 --seed 1 --scripts " + dir + "/syntax");
  EXPECT_EQ(syntax.code, 2) << syntax.out;
  EXPECT_NE(
      syntax.out.find("state/beta30/DELETE_WITH_INDEX_SCRIPT.lua: ERR Error compiling script"),
      std::string::npos)
      << syntax.out;
  Result runtime = RunCli(
      "check --system state --runs 2 --seed 1 --clients 2 --ops 4 --faults latency --properties "
      "cas-versions-linearizable --scripts " +
      dir + "/runtime");
  // A finding like any other (exit 1), minimized to the one call that fails.
  EXPECT_EQ(runtime.code, 1) << runtime.out;
  EXPECT_NE(runtime.out.find("violation of cas-versions-linearizable, class script-error: a call "
                             "failed with a script error"),
            std::string::npos)
      << runtime.out;
  EXPECT_NE(runtime.out.find("(seed 1, 1 client x 1 operation)"), std::string::npos) << runtime.out;
  EXPECT_NE(runtime.out.find("undefined_global"), std::string::npos) << runtime.out;
  // Its replay line carries every flag that decided the run, and fails the same way.
  const std::string replay = LineStarting(runtime.out, "replay: testbed ");
  ASSERT_FALSE(replay.empty()) << runtime.out;
  for (const char* flag : {"--clients 1", "--ops 1", "--faults latency", "--scripts "})
    EXPECT_NE(replay.find(flag), std::string::npos) << replay;
  const Result again = RunCli(replay.substr(std::string("replay: testbed ").size()));
  EXPECT_EQ(again.code, 1) << again.out;
  EXPECT_NE(again.out.find("undefined_global"), std::string::npos) << again.out;
  // In a GitHub workflow: an annotation on the replaced script's file.
  const Result github = RunCli(
      "check --system state --runs 2 --seed 1 --clients 2 --ops 4 --quiet --properties "
      "cas-versions-linearizable --format github --scripts " +
      dir + "/runtime");
  EXPECT_NE(github.out.find("\n::error file=" + dir +
                            "/runtime/SET_WITH_QUOTA_SCRIPT.lua,title=testbed%3A "
                            "cas-versions-linearizable / script-error::a call failed"),
            std::string::npos)
      << github.out;
  // diff names it too: the candidate introduces script-error.
  const Result diff = RunCli(
      "diff --system state --runs 3 --seed 1 --properties cas-versions-linearizable "
      "--candidate " +
      dir + "/runtime");
  EXPECT_EQ(diff.code, 1) << diff.out;
  EXPECT_NE(diff.out.find("script-error"), std::string::npos) << diff.out;
}

TEST(CliCheck, TheSameSeedWritesTheSameReportTwiceWhateverTheThreadCount) {
  testbed::testing_dirs::TempDir tmp("cli-same-seed");
  const std::string dir = tmp.path();
  std::string reports[2];
  for (int i = 0; i < 2; ++i) {
    const std::string out = dir + "/" + std::to_string(i);
    std::filesystem::remove_all(out);
    // Once on one thread, once on three: the threads must not change the result.
    Result r =
        RunCli("check --system state --version beta24 --seed 31 --runs 5 --faults all --jobs " +
               std::string(i == 0 ? "1" : "3") + " --out " + out);
    EXPECT_EQ(r.code, 1) << r.out;
    std::ifstream in(out + "/report.json");
    reports[i].assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  EXPECT_GT(reports[0].size(), 1000u);
  EXPECT_EQ(reports[0], reports[1]);
}

TEST(CliCheck, TheCasPathPassesAndExitsWith0) {
  Result r = RunCli(
      "check --system state --properties cas-versions-linearizable --seed 5 --runs 20 --ops-mix "
      "cas");
  EXPECT_EQ(r.code, 0) << r.out;
}

}  // namespace

namespace {

TEST(CliCheck, RunsOnRedisServerStayDeterministicThroughScanPagesOfTheBeta23Backfill) {
  // beta.24's rolling deploy runs beta.23 pods, whose backfill stops after a few SCAN pages:
  // the pages must hold the same keys in both worlds, and on every invocation.
  Result r =
      RunCli("check --system state --version beta24 --seed 3 --runs 30 --real-sample 5 --quiet");
  // Every 5th of the 30 runs of each property that applies to beta.24.
  const int properties = testbed::testing_registry::PropertiesThatApply("state", "beta24");
  ASSERT_GT(properties, 0);
  EXPECT_NE(r.out.find("redis-server sample: " + std::to_string(30 * properties / 5) +
                       " runs replayed on a spawned redis-server, 0 diverged"),
            std::string::npos)
      << r.out;
  const std::string once =
      RunCli("replay " TESTBED_SOURCE_DIR
             "/scenarios/state-beta24-get-fails-with-quota-error.json --redis spawn")
          .out;
  const std::string twice =
      RunCli("replay " TESTBED_SOURCE_DIR
             "/scenarios/state-beta24-get-fails-with-quota-error.json --redis spawn")
          .out;
  EXPECT_FALSE(LineStarting(once, "trace-hash: ").empty()) << once;
  EXPECT_EQ(LineStarting(once, "trace-hash: "), LineStarting(twice, "trace-hash: "));
}

}  // namespace
