// Properties on a recorded trace and testbed explore (issue 29, items 3 and 4): the committed
// capture of the shipped ports (tests/data/ports-capture.txt) is imported, its state segment is
// judged as recorded (it shows nothing), explored (the interleavings around it show a class the
// baseline knows), and each saved scenario and printed replay line reproduces the finding.
#include <absl/strings/str_join.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "properties/system.h"
#include "real/script_catalog.h"
#include "sim/runtime.h"
#include "sim/trace.h"
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

// a2's judge of a trace can fail. The committed capture of an a2 run that showed nothing
// (scenarios/traces/a2-0.5.0-calls-capture-3.json), answered by the shipped scripts, is judged to
// show nothing; the same calls answered as a server whose claim script ignores leases answers
// them (tests/broken_scripts/a2-claim-ignores-lease) are judged violated. explore around the
// capture with that script finds a class a2's baseline does not know.
TEST_F(Explore, AnA2CaptureAnsweredByABrokenClaimScriptIsJudgedViolated) {
  const std::string source = TESTBED_SOURCE_DIR;
  const std::string trace_file = source + "/scenarios/traces/a2-0.5.0-calls-capture-3.json";
  std::ifstream in(trace_file);
  ASSERT_TRUE(in);
  int64_t start = 0;
  const props::RecordedCalls recorded = props::ReadRecordedCalls(Json::parse(in), &start);
  std::ifstream broken_in(source +
                          "/tests/broken_scripts/a2-claim-ignores-lease/"
                          "CLAIM_AVAILABLE_LUA.lua");
  std::stringstream broken;
  broken << broken_in.rdbuf();
  ASSERT_FALSE(broken.str().empty());
  const props::TraceSupport* support = props::FindSystem("a2")->trace_support("0.5.0");
  ASSERT_NE(support, nullptr);
  auto judged = [&](bool broken_claims) {
    props::RecordedCalls calls = recorded;
    sim::EmulatorBackend server;
    int claims = 0;
    for (props::RecordedCall& c : calls) {
      sim::Argv argv = c.argv;
      if (c.script == "a2/0.5.0/CLAIM_AVAILABLE_LUA" && broken_claims) {
        argv.at(1) = broken.str();
        ++claims;
      }
      c.reply = server.execute(argv, c.at_ms);
      c.has_reply = true;
    }
    EXPECT_EQ(claims > 0, broken_claims);
    props::RunOutcome out;
    support->judge("calls-linearizable", calls, start, out);
    props::Conclude(out);
    EXPECT_FALSE(out.incomplete) << absl::StrJoin(out.undecided, "\n");
    return out;
  };
  const props::RunOutcome shipped = judged(false);
  EXPECT_FALSE(shipped.violated) << shipped.description;
  const props::RunOutcome broken_out = judged(true);
  EXPECT_TRUE(broken_out.violated);
  EXPECT_NE(broken_out.description.find("claimAvailable"), std::string::npos)
      << broken_out.description;
  const testing_cli::Result r = testing_cli::Run(
      TESTBED_CLI_PATH, "explore " + trace_file + " --scripts " + source +
                            "/tests/broken_scripts/a2-claim-ignores-lease --seed 1 --runs 50 "
                            "--baseline " +
                            source + "/baselines/a2/0.5.0.json");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find(" new\n"), std::string::npos) << r.out;
}

// A call that no operation of the port makes as recorded (here a GET of a key the port never
// reads) leaves the trace unjudged, naming the capture's line: the rest of its client's calls
// could not be read as operations, and a write left out would make the history lie. explore
// refuses it with exit 2.
TEST_F(Explore, AnA2CallThePortDoesNotMakeIsNamedAndNothingIsJudged) {
  std::ifstream in(std::string(TESTBED_SOURCE_DIR) +
                   "/scenarios/traces/a2-0.5.0-calls-capture-3.json");
  Json trace = Json::parse(in);
  int64_t line = 0;
  for (Json& call : trace["calls"])
    if (call["argv"][0] == "GET") {
      call["argv"][1] = call["argv"][1].get<std::string>() + "-other";
      line = call["line"].get<int64_t>();
      break;
    }
  ASSERT_GT(line, 0);
  const std::string edited = dir_ / "edited.json";
  std::ofstream(edited) << trace.dump();
  testing_cli::Result r = testing_cli::Run(TESTBED_CLI_PATH, "replay " + edited);
  EXPECT_EQ(r.code, 0) << r.out;  // it reproduces: both worlds answer the GET alike
  EXPECT_EQ(testing_cli::LineStarting(r.out, "judged: "), "") << r.out;
  EXPECT_NE(r.out.find("not judged: line " + std::to_string(line) + " of the capture: "),
            std::string::npos)
      << r.out;
  r = testing_cli::Run(TESTBED_CLI_PATH, "explore " + edited + " --runs 5");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("line " + std::to_string(line) + " of the capture"), std::string::npos)
      << r.out;
}

// handles' judge of a trace (work-at-most-once from the commit claims its calls show) agrees
// with the run's own judge and can fail: runs of the shipped CAS script are judged clean from
// their calls, and runs of a CAS without its version check (tests/broken_scripts/
// cas-without-version-check: two commits that loaded the same version both claim) are judged to
// run work twice only where the run's own record of the upstream work shows it, and some are.
TEST_F(Explore, HandlesCallsOfACasWithoutItsVersionCheckShowWorkRunTwice) {
  const std::string cas = "state/beta30/COMPARE_AND_SET_WITH_QUOTA_SCRIPT";
  auto judged = [&](bool broken) {
    real::ScriptCatalog catalog = real::ScriptCatalog::Load(real::ScriptCatalog::ShippedDir());
    if (broken) {
      std::ifstream in(std::string(TESTBED_SOURCE_DIR) +
                       "/tests/broken_scripts/cas-without-version-check/" +
                       "COMPARE_AND_SET_WITH_QUOTA_SCRIPT.lua");
      std::stringstream body;
      body << in.rdbuf();
      catalog.replace(cas + ".lua", body.str());
    }
    const props::System& handles = *props::FindSystem("handles");
    const props::TraceSupport* support = handles.trace_support("beta30");
    int both = 0, judged_twice = 0;
    for (uint64_t seed = 1; seed <= 60; ++seed) {
      const props::RunOutcome live = handles.Run({.property = "work-at-most-once",
                                                  .version = "beta30",
                                                  .seed = seed,
                                                  .clients = 3,
                                                  .ops = 8},
                                                 catalog, nullptr);
      // The run's calls as a capture would hold them: each client's calls with their replies.
      props::RecordedCalls calls;
      std::map<int64_t, size_t> of_call;
      for (size_t i = 0; i < live.trace.events.size(); ++i) {
        const sim::TraceEvent& e = live.trace.events[i];
        if (e.kind == sim::EventKind::kCall && e.thread >= 0) {
          props::RecordedCall c;
          const std::string actor = live.trace.actor_of(e);
          c.client = std::stoi(actor.substr(actor.find_first_of("0123456789")));
          c.line = static_cast<int64_t>(i) + 1;
          c.at_ms = e.at_ms;
          c.argv = e.argv;
          if (c.argv.size() > 1 && c.argv[0] == "EVAL" && c.argv[1] == catalog.get(cas).body)
            c.script = cas;
          of_call[static_cast<int64_t>(i)] = calls.size();
          calls.push_back(std::move(c));
        } else if (e.kind == sim::EventKind::kReply && of_call.count(e.call)) {
          calls[of_call[e.call]].reply = e.reply;
          calls[of_call[e.call]].has_reply = true;
        }
      }
      props::RunOutcome out;
      support->judge("work-at-most-once", calls, 0, out);
      props::Conclude(out);
      const bool twice = std::find(live.classes.begin(), live.classes.end(), "work-ran-twice") !=
                         live.classes.end();
      if (out.violated) {
        ++judged_twice;
        EXPECT_EQ(out.classes, std::vector<std::string>{"work-ran-twice"}) << out.description;
        EXPECT_TRUE(twice) << "seed " << seed << ": " << out.description;
      }
      both += out.violated && twice;
    }
    return std::make_pair(judged_twice, both);
  };
  EXPECT_EQ(judged(false).first, 0);
  const auto [judged_twice, both] = judged(true);
  EXPECT_GT(judged_twice, 0);
  EXPECT_EQ(both, judged_twice);
}

TEST_F(Explore, BadInputExitsWith2NamingIt) {
  struct Case {
    std::string args, says;
  };
  const std::string a2 = dir_ / "traces/a2-0.5.0-ports-capture-3.json";
  for (const Case& c : std::vector<Case>{
           {"explore " + (dir_ / "missing.json"), "cannot read recorded trace"},
           {"explore " + std::string(TESTBED_SOURCE_DIR) + "/README.md", "is not a recorded trace"},
           {"explore " + (dir_ / "traces/handles-beta30-ports-capture-2.json"),
            "handles beta30's operations are judged on a recorded trace (testbed replay) but not "
            "made again through the port yet"},
           {"explore " + a2 + " --properties durability",
            "durability is not judged on a recorded trace"},
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
