// Properties on a recorded trace and testbed explore (issue 29, items 3 and 4): the committed
// capture of the shipped ports (tests/data/ports-capture.txt) is imported, its state segment is
// judged as recorded (it shows nothing), explored (the interleavings around it show a class the
// baseline knows), and each saved scenario and printed replay line reproduces the finding.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli_run.h"
#include "tests/temp_dir.h"

namespace testbed {
namespace {

using Json = nlohmann::json;

class Explore : public ::testing::Test {
 protected:
  void SetUp() override {
    const testing_cli::Result r = testing_cli::Run(
        TESTBED_CLI_PATH, "import " + std::string(TESTBED_SOURCE_DIR) +
                              "/tests/data/ports-capture.txt --out " + (dir_ / "traces"));
    ASSERT_EQ(r.code, 0) << r.out;
  }
  std::string StateTrace() const { return dir_ / "traces/state-beta24-ports-capture-1.json"; }
  testing_dirs::TempDir dir_{"explore"};
};

TEST_F(Explore, FindsAKnownClassAroundACaptureOfARunThatDidNotShowIt) {
  // As recorded, the capture's operations are linearizable: the run did not show the class.
  testing_cli::Result r = testing_cli::Run(TESTBED_CLI_PATH, "replay " + StateTrace());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(testing_cli::LineStarting(r.out, "judged: "),
            "judged: cas-versions-linearizable on 10 operations of 3 clients: no violation")
      << r.out;
  EXPECT_NE(r.out.find("not judged: the other properties of state: "), std::string::npos) << r.out;
  // Around it, the same clients' own operations in other interleavings do.
  const std::string baseline = std::string(TESTBED_SOURCE_DIR) + "/baselines/state/beta24.json";
  r = testing_cli::Run(TESTBED_CLI_PATH, "explore " + StateTrace() +
                                             " --seed 1 --runs 200 --jobs 2 --baseline " +
                                             baseline + " --save-scenarios " + (dir_ / "found"));
  ASSERT_EQ(r.code, 0) << r.out;  // nothing new: every class it finds, the baseline knows
  EXPECT_NE(r.out.find("  duplicate-version "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("result: nothing new against the baseline"), std::string::npos) << r.out;
  // Each saved scenario names the trace, and replays its class.
  const std::string saved =
      dir_ / "found/state-beta24-cas-versions-linearizable-duplicate-version.json";
  std::ifstream in(saved);
  ASSERT_TRUE(in) << r.out;
  const Json scenario = Json::parse(in);
  EXPECT_EQ(std::filesystem::path(dir_ / "found") / scenario["trace"].get<std::string>(),
            std::filesystem::path(dir_ / "found/../traces/state-beta24-ports-capture-1.json"));
  EXPECT_LE(scenario["clients"].get<int>(), 3);
  const testing_cli::Result again = testing_cli::Run(TESTBED_CLI_PATH, "replay " + saved);
  EXPECT_EQ(again.code, 0) << again.out;
  EXPECT_NE(again.out.find("result: reproduced (expected: class duplicate-version)"),
            std::string::npos)
      << again.out;
  // And so does the minimized counterexample's printed replay line, run as printed.
  r = testing_cli::Run(TESTBED_CLI_PATH, "explore " + StateTrace() + " --seed 1 --runs 200");
  EXPECT_EQ(r.code, 1) << r.out;
  const std::string line = testing_cli::LineStarting(r.out, "replay: testbed ");
  ASSERT_FALSE(line.empty()) << r.out;
  EXPECT_NE(line.find(" --trace " + StateTrace()), std::string::npos) << line;
  const testing_cli::Result replayed =
      testing_cli::Run(TESTBED_CLI_PATH, line.substr(std::string("replay: testbed ").size()));
  EXPECT_EQ(replayed.code, 1) << replayed.out;
  const std::string first = r.out.substr(r.out.find("violation of cas-versions-linearizable"));
  const std::string cls =
      first.substr(first.find("class ") + 6, first.find(':') - first.find("class ") - 6);
  EXPECT_NE(replayed.out.find("  " + cls + " "), std::string::npos) << cls << "\n" << replayed.out;
}

// A capture whose calls break the contract as recorded is judged violated: the state segment with
// one set's written version made the one an earlier set was acknowledged with (in the call and
// in the commands its script ran, so that it still replays as captured). The two sets' windows
// overlap (a capture has no reply times: each runs from its client's previous call to its next),
// so they are two concurrent writers acknowledged with one version.
TEST_F(Explore, ARecordedHistoryThatRepeatsAVersionIsJudgedViolated) {
  std::ifstream in(StateTrace());
  Json trace = Json::parse(in);
  bool edited = false;
  for (Json& call : trace["calls"]) {
    std::string text = call.dump();
    const std::string from = "\\\"version\\\":2,", to = "\\\"version\\\":1,";
    if (edited || call.value("script", "").find("SET_WITH_QUOTA") == std::string::npos ||
        text.find(from) == std::string::npos)
      continue;
    for (size_t at; (at = text.find(from)) != std::string::npos;) text.replace(at, from.size(), to);
    call = Json::parse(text);
    edited = true;
  }
  ASSERT_TRUE(edited);
  std::ofstream(dir_ / "reused.json") << trace.dump();
  const testing_cli::Result r =
      testing_cli::Run(TESTBED_CLI_PATH, "replay " + (dir_ / "reused.json"));
  EXPECT_EQ(r.code, 0) << r.out;  // it replays as captured
  const std::string judged = testing_cli::LineStarting(r.out, "judged: ");
  EXPECT_NE(judged.find("violated (classes: duplicate-version)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("were both acknowledged as version 1 on 0:a0."), std::string::npos) << r.out;
}

TEST_F(Explore, BadInputExitsWith2NamingIt) {
  struct Case {
    std::string args, says;
  };
  const std::string a2 = dir_ / "traces/a2-0.5.0-ports-capture-3.json";
  for (const Case& c : std::vector<Case>{
           {"explore " + (dir_ / "missing.json"), "cannot read recorded trace"},
           {"explore " + std::string(TESTBED_SOURCE_DIR) + "/README.md", "is not a recorded trace"},
           {"explore " + a2, "no property of a2 0.5.0 is judged on a recorded trace yet"},
           {"explore " + StateTrace() + " --properties quota-safety",
            "quota-safety is not judged on a recorded trace"},
           {"explore " + StateTrace() + " --clients 9", "has 3 clients"},
           {"explore " + StateTrace() + " --version beta30", "holds calls of state beta24"},
           {"check --system state --version beta24 --trace " + a2, "holds calls of a2 0.5.0"},
       }) {
    const testing_cli::Result r = testing_cli::Run(TESTBED_CLI_PATH, c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << c.args << "\n" << r.out;
  }
}

}  // namespace
}  // namespace testbed
