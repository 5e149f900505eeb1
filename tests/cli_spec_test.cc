// Replay lines come from one spec per command: parsing a written spec gives the same spec, for
// every command and with non-default flags; bad flags are usage errors that name the flag.
#include <gtest/gtest.h>

#include "cmd/cli.h"

namespace testbed::cli {
namespace {

// "testbed check --seed 1" -> {"--seed", "1"} (the words after "testbed <command>"); values are
// never quoted in these tests.
std::vector<std::string> Words(const std::string& line, const std::string& command) {
  const std::string head = "testbed " + command;
  EXPECT_EQ(line.rfind(head, 0), 0u) << line;
  std::vector<std::string> out;
  std::string word;
  for (char c : line.substr(head.size())) {
    if (c == ' ') {
      if (!word.empty()) out.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) out.push_back(word);
  return out;
}

TEST(Specs, AWrittenFidelitySpecParsesBackToTheSameSpec) {
  const FidelitySpec s = ParseFidelity({"--seed", "303", "--commands", "5000", "--checkpoint-every",
                                        "7", "--inject-fault", "cjson-empty-array", "--redis",
                                        "none", "--no-shrink", "--check-determinism"});
  EXPECT_EQ(s.checkpoint_every, 7);
  EXPECT_EQ(ParseFidelity(Words(s.Write(), "fidelity")), s) << s.Write();
}

TEST(Specs, AWrittenCheckSpecParsesBackToTheSameSpec) {
  const CheckSpec s =
      ParseCheck({"--system",
                  "state",
                  "--version",
                  "beta24",
                  "--rolling-from",
                  "beta3",
                  "--seed",
                  "9",
                  "--runs",
                  "3",
                  "--clients",
                  "2",
                  "--ops",
                  "5",
                  "--faults",
                  "skew,lost-reply",
                  "--properties",
                  "quota-safety,value-read-back",
                  "--ops-mix",
                  "cas",
                  "--skip",
                  "0:1,1:2",
                  "--jobs",
                  "2",
                  "--quiet",
                  "--baseline",
                  TESTBED_SOURCE_DIR "/baselines/state/beta24.json",
                  "--write-baseline",
                  "/tmp/some-baseline.json",
                  "--junit",
                  "/tmp/some-junit.xml",
                  "--html",
                  "/tmp/some-html",
                  "--shard",
                  "2/3",
                  "--scripts",
                  TESTBED_SOURCE_DIR "/tests/broken_scripts/cas-without-version-check"});
  EXPECT_EQ(s.options.at("ops-mix"), "cas");
  EXPECT_EQ(s.faults.ToString(), "skew,lost-reply");
  EXPECT_EQ(s.shard_index, 2);
  EXPECT_EQ(s.shard_count, 3);
  EXPECT_EQ(ParseCheck(Words(s.Write(), "check")), s) << s.Write();
}

// --trace (testbed explore): the trace's clients and operations become the spec's defaults, and
// the written line names the trace.
TEST(Specs, ACheckSpecOfARecordedTraceParsesBack) {
  const std::string trace =
      TESTBED_SOURCE_DIR "/scenarios/traces/state-beta24-ports-capture-1.json";
  const CheckSpec s = ParseCheck({"--system", "state", "--version", "beta24", "--trace", trace,
                                  "--seed", "3", "--skip", "0:1"});
  EXPECT_EQ(s.trace, trace);
  EXPECT_EQ(s.clients, 3);
  EXPECT_EQ(s.ops, 4);  // the most any of them made (10 operations in all)
  EXPECT_EQ(s.properties, std::vector<std::string>{"cas-versions-linearizable"});
  EXPECT_EQ(ParseCheck(Words(s.Write(), "check")), s) << s.Write();
}

TEST(Specs, AWrittenMergeSpecParsesBack) {
  const MergeSpec s = ParseMerge({TESTBED_SOURCE_DIR "/tests/golden/state-beta3-seed-1-runs-5.json",
                                  "--out", "/tmp/merged", "--junit", "/tmp/merged.xml"});
  EXPECT_EQ(s.reports.size(), 1u);
  EXPECT_EQ(ParseMerge(Words(s.Write(), "merge")), s) << s.Write();
}

TEST(Specs, AWrittenCheckHistorySpecParsesBack) {
  const CheckHistorySpec s =
      ParseCheckHistory({TESTBED_SOURCE_DIR "/tests/golden/state-beta3-seed-1-runs-5.json",
                         "--model", "cas-register"});
  EXPECT_EQ(s.model, "cas-register");
  EXPECT_EQ(ParseCheckHistory(Words(s.Write(), "check-history")), s) << s.Write();
  EXPECT_THROW(ParseCheckHistory({"/nonexistent/h.json"}), UsageError);
}

TEST(Specs, ACheckSpecResolvesTheSystemsDefaultsAndADrawnSeedIntoTheWrittenLine) {
  const CheckSpec s = ParseCheck({"--system", "state"});
  EXPECT_EQ(s.version, "beta30");
  EXPECT_GT(s.clients, 0);
  EXPECT_EQ(ParseCheck(Words(s.Write(), "check")), s) << s.Write();
  EXPECT_NE(s.Write().find("--seed " + std::to_string(s.seed)), std::string::npos);
}

TEST(Specs, AWrittenDiffSpecParsesBackToTheSameSpec) {
  const DiffSpec s = ParseDiff({"--system", "state", "--version", "beta24", "--candidate",
                                TESTBED_SOURCE_DIR "/tests/broken_scripts/quota-off-by-one",
                                "--seed", "4", "--runs", "7", "--faults", "lost-reply",
                                "--properties", "quota-safety", "--ops-mix", "cas", "--jobs", "2"});
  EXPECT_EQ(s.runs, 7);
  EXPECT_EQ(s.options.at("ops-mix"), "cas");
  EXPECT_EQ(ParseDiff(Words(s.Write(), "diff")), s) << s.Write();
  EXPECT_THROW(ParseDiff({"--system", "state", "--candidate", "/nonexistent"}), UsageError);
  EXPECT_THROW(ParseDiff({"--system", "state", "--candidate", TESTBED_SOURCE_DIR, "--runs", "0"}),
               UsageError);
}

TEST(Specs, AWrittenReplaySpecParsesBack) {
  const ReplaySpec s =
      ParseReplay({TESTBED_SOURCE_DIR "/scenarios/state-beta30-concurrent-set-same-version.json",
                   TESTBED_SOURCE_DIR "/scenarios/state-beta3-compare-and-set-is-not-atomic.json",
                   "--redis", "spawn"});
  EXPECT_EQ(s.files.size(), 2u);
  EXPECT_EQ(ParseReplay(Words(s.Write(), "replay")), s) << s.Write();
}

TEST(Specs, BadValuesAreUsageErrorsNamingTheFlag) {
  struct Bad {
    std::vector<std::string> args;
    std::string names;
  };
  for (const Bad& b :
       std::vector<Bad>{{{"--system", "state", "--runs", "0"}, "--runs"},
                        {{"--system", "state", "--budget-seconds", "0"}, "--budget-seconds"},
                        {{"--system", "state", "--seed", "-3"}, "--seed"},
                        {{"--system", "state", "--seed", "010x"}, "--seed"},
                        {{"--system", "state", "--clients", "0"}, "--clients"},
                        {{"--system", "state", "--ops-mix", "some"}, "--ops-mix"},
                        {{"--system", "state", "--faults", "bogus"}, "bogus"},
                        {{"--system", "nope"}, "--system"},
                        {{"--version", "beta30"}, "--system"}}) {
    try {
      ParseCheck(b.args);
      ADD_FAILURE() << "accepted: " << b.args[b.args.size() - 1];
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(b.names), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace testbed::cli
