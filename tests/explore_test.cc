// Properties on a recorded trace and testbed explore (issue 29, items 3 and 4): the committed
// capture of the shipped ports (tests/data/ports-capture.txt) is imported, its state segment is
// judged as recorded (it shows nothing), explored (the interleavings around it show a class the
// baseline knows), and each saved scenario and printed replay line reproduces the finding.
#include <absl/strings/match.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "harness/property.h"
#include "harness/system.h"
#include "real/script_catalog.h"
#include "sim/runtime.h"
#include "sim/trace.h"
#include "tests/cli_run.h"
#include "tests/temp_dir.h"

namespace testbed {
namespace {

using Json = nlohmann::json;

// A run's calls as MONITOR would show them: each call Redis ran, when it ran it, from its
// client's connection (its renewal loop's calls too), with the reply Redis gave. A call a fault
// kept from Redis (a lost request, an outage) is not there; one the client library re-sent
// (resend) is there twice. An EVAL is named by the catalog id of its body under `scripts`
// ("state/beta30/").
props::RecordedCalls CallsOf(const props::RunOutcome& run, const real::ScriptCatalog& catalog,
                             const std::string& scripts) {
  props::RecordedCalls calls;
  for (size_t i = 0; i < run.trace.events.size(); ++i) {
    const sim::TraceEvent& e = run.trace.events[i];
    if (e.kind != sim::EventKind::kReply || e.call < 0) continue;
    const sim::TraceEvent& sent = run.trace.events[static_cast<size_t>(e.call)];
    if (sent.thread < 0) continue;  // the harness's own
    props::RecordedCall c;
    const std::string actor = run.trace.actor_of(sent);
    c.client = std::stoi(actor.substr(actor.find_first_of("0123456789")));
    c.line = static_cast<int64_t>(i) + 1;
    c.at_ms = e.at_ms;
    c.argv = sent.argv;
    for (const real::ScriptFile& f : catalog.all())
      if (c.argv.size() > 1 && c.argv[0] == "EVAL" && c.argv[1] == f.body &&
          f.id().rfind(scripts, 0) == 0)
        c.script = f.id();
    c.reply = e.reply;
    c.has_reply = true;
    calls.push_back(std::move(c));
  }
  return calls;
}

// A run of handles' work-at-most-once: 3 clients, 8 operations each, under `faults`.
props::RunSpec WorkAtMostOnce(const std::string& version, uint64_t seed,
                              const std::string& faults) {
  props::RunSpec spec;
  spec.property = "work-at-most-once";
  spec.version = version;
  spec.seed = seed;
  spec.clients = 3;
  spec.ops = 8;
  spec.faults = sim::FaultList::Parse(faults);
  return spec;
}

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
  // It replays as captured, and a judged property violated makes the replay fail as check does.
  EXPECT_NE(r.out.find("result: reproduced"), std::string::npos) << r.out;
  EXPECT_EQ(r.code, 1) << r.out;
  const std::string judged = testing_cli::LineStarting(r.out, "judged: ");
  EXPECT_NE(judged.find("violated (classes: duplicate-version)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("were both acknowledged as version 1 on 0:a0."), std::string::npos) << r.out;
  // Against a baseline that accepts the class (the repository's baselines/, laid out as
  // <system>/<version>.json, or the version's file), the replay passes; against one that does
  // not, it fails and names the class as new.
  for (const std::string& baseline :
       {std::string(TESTBED_SOURCE_DIR "/baselines"),
        std::string(TESTBED_SOURCE_DIR "/baselines/state/beta24.json")}) {
    const testing_cli::Result known = testing_cli::Run(
        TESTBED_CLI_PATH, "replay " + (dir_ / "reused.json") + " --baseline " + baseline);
    EXPECT_EQ(known.code, 0) << known.out;
    EXPECT_NE(known.out.find("duplicate-version; the baseline accepts each)"), std::string::npos)
        << known.out;
  }
  Json strict =
      Json::parse(testing_cli::ReadFile(TESTBED_SOURCE_DIR "/baselines/state/beta24.json"));
  Json kept = Json::array();
  for (const Json& a : strict["accepted"])
    if (a["class"] != "duplicate-version") kept.push_back(a);
  strict["accepted"] = kept;
  std::ofstream(dir_ / "strict.json") << strict.dump();
  const testing_cli::Result fresh =
      testing_cli::Run(TESTBED_CLI_PATH, "replay " + (dir_ / "reused.json") + " --baseline " +
                                             (dir_ / "strict.json"));
  EXPECT_EQ(fresh.code, 1) << fresh.out;
  EXPECT_NE(fresh.out.find("new against the baseline: duplicate-version)"), std::string::npos)
      << fresh.out;
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
// A finalize is linked to its claim by the version it expects, not by its connection, so the
// same calls each on a connection of its own are judged alike.
TEST_F(Explore, HandlesCallsOfACasWithoutItsVersionCheckShowWorkRunTwice) {
  auto judged = [&](bool broken) {
    real::ScriptCatalog catalog = real::ScriptCatalog::Load(real::ScriptCatalog::ShippedDir());
    if (broken) {
      std::ifstream in(std::string(TESTBED_SOURCE_DIR) +
                       "/tests/broken_scripts/cas-without-version-check/" +
                       "COMPARE_AND_SET_WITH_QUOTA_SCRIPT.lua");
      std::stringstream body;
      body << in.rdbuf();
      catalog.replace("state/beta30/COMPARE_AND_SET_WITH_QUOTA_SCRIPT.lua", body.str());
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
      const props::RecordedCalls calls = CallsOf(live, catalog, "state/beta30/");
      props::RunOutcome out;
      support->judge("work-at-most-once", calls, 0, out);
      props::Conclude(out);
      // The same calls each on a connection of its own (a pool, or a connection per call, issue
      // 61 item 4): the verdict and its classes are the same.
      props::RecordedCalls own = calls;
      for (size_t i = 0; i < own.size(); ++i) own[i].client = static_cast<int>(i);
      props::RunOutcome one_call;
      support->judge("work-at-most-once", own, 0, one_call);
      props::Conclude(one_call);
      EXPECT_EQ(one_call.violated, out.violated) << "seed " << seed << ": " << out.description;
      EXPECT_EQ(one_call.classes, out.classes) << "seed " << seed;
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

// The rebuild of a handles capture is exact where a remake can be: each of 60 fault-free runs'
// calls (3 clients, both versions), read back as handle operations and made again through the
// port without faults, make every client send the same calls (command, key, the status each
// write writes) at the same instants from the capture's first call. The drafts are named alike
// because the remake's clients draw from the workload's own seeds.
TEST_F(Explore, AHandlesCaptureMadeAgainThroughThePortSendsTheCallsItRecorded) {
  const real::ScriptCatalog catalog = real::ScriptCatalog::Load(real::ScriptCatalog::ShippedDir());
  const props::System& handles = *props::FindSystem("handles");
  // A call as the comparison sees it: its command and key, the record a CAS writes (without its
  // instants, claim id and the work's result, which name the run's own clock, draws and
  // operation numbers), and its instant from the capture's first call.
  auto shapes = [](const props::RecordedCalls& calls) {
    std::map<int, std::vector<std::string>> by;
    for (const props::RecordedCall& c : calls) {
      std::string record;
      if (absl::EndsWith(c.script, "/COMPARE_AND_SET_WITH_QUOTA_SCRIPT")) {
        Json r = Json::parse(c.argv[3 + std::stoul(c.argv[2]) + 5])["value"];
        for (const char* k : {"created_at_ms", "expires_at_ms", "max_expires_at_ms",
                              "committed_at_ms", "claim_id", "result"})
          r.erase(k);
        record = r.dump();
      }
      by[c.client].push_back(absl::StrCat(c.argv[0], " ",
                                          c.argv[0] == "EVAL" ? c.argv[3] : c.argv[1], " ", record,
                                          " +", c.at_ms - calls.front().at_ms));
    }
    return by;
  };
  int commits = 0;
  for (const std::string version : {"beta30", "beta24"}) {
    const props::TraceSupport* support = handles.trace_support(version);
    for (uint64_t seed = 1; seed <= 30; ++seed) {
      props::RunSpec spec = WorkAtMostOnce(version, seed, "none");
      const props::RunOutcome live = handles.Run(spec, catalog, nullptr);
      const props::RecordedCalls recorded = CallsOf(live, catalog, "state/" + version + "/");
      const std::vector<int> ops = support->ops_per_client(recorded);
      ASSERT_EQ(ops.size(), 3u);
      spec.ops = *std::max_element(ops.begin(), ops.end());
      const sim::FaultOptions none;
      std::unique_ptr<props::PropertyRun> run =
          support->explore("work-at-most-once", recorded, spec, none, catalog);
      const props::RunOutcome again = props::RunProperty(*run, seed, 4000, none, catalog, nullptr);
      EXPECT_FALSE(again.violated) << again.description;
      const props::RecordedCalls remade = CallsOf(again, catalog, "state/" + version + "/");
      EXPECT_EQ(support->ops_per_client(remade), ops) << version << " seed " << seed;
      const auto want = shapes(recorded), got = shapes(remade);
      for (const auto& [client, calls] : want) {
        const std::vector<std::string>& made = got.count(client) ? got.at(client) : calls;
        const auto [w, g] = std::mismatch(calls.begin(), calls.end(), made.begin(), made.end());
        EXPECT_TRUE(w == calls.end() && g == made.end())
            << version << " seed " << seed << " client " << client << " call "
            << (w - calls.begin()) << ": recorded " << (w == calls.end() ? "(none)" : *w)
            << ", made again " << (g == made.end() ? "(none)" : *g);
      }
      for (const props::RecordedCall& c : recorded)
        commits += c.argv[0] == "EVAL" &&
                   absl::StrJoin(c.argv, " ").find("\"status\":\"committed") != std::string::npos;
    }
  }
  EXPECT_GT(commits, 30);  // the remade commits finalize as recorded
}

// handles (item 4): the committed capture's handles segment shows no work run twice as recorded;
// made again through the port under every fault kind, its own operations let Redis lose a claim
// and a second commit run the work again, a durability class the baseline knows; the saved
// scenario and the printed replay line reproduce it. With a CAS that skips its version check,
// the same operations run work twice without any fault, which the shipped CAS never does here.
TEST_F(Explore, FindsALostClaimAroundAHandlesCaptureOfARunThatDidNotShowIt) {
  const std::string trace = dir_ / "traces/handles-beta30-ports-capture-2.json";
  testing_cli::Result r = testing_cli::Run(TESTBED_CLI_PATH, "replay " + trace);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(testing_cli::LineStarting(r.out, "judged: "),
            "judged: work-at-most-once on 21 operations of 3 clients: no violation")
      << r.out;
  const std::string baseline = std::string(TESTBED_SOURCE_DIR) + "/baselines/handles/beta30.json";
  r = testing_cli::Run(TESTBED_CLI_PATH, "explore " + trace +
                                             " --faults all --seed 1 --runs 400 --jobs 2 "
                                             "--baseline " +
                                             baseline + " --save-scenarios " + (dir_ / "found"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("  work-ran-twice-after-lost-claim "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("result: nothing new against the baseline"), std::string::npos) << r.out;
  const std::string saved =
      dir_ / "found/handles-beta30-work-at-most-once-work-ran-twice-after-lost-claim.json";
  const testing_cli::Result again = testing_cli::Run(TESTBED_CLI_PATH, "replay " + saved);
  EXPECT_EQ(again.code, 0) << again.out;
  EXPECT_NE(again.out.find("result: reproduced (expected: class work-ran-twice-after-lost-claim)"),
            std::string::npos)
      << again.out;
  r = testing_cli::Run(TESTBED_CLI_PATH, "explore " + trace + " --faults all --seed 1 --runs 400");
  EXPECT_EQ(r.code, 1) << r.out;
  const std::string line = testing_cli::LineStarting(r.out, "replay: testbed ");
  ASSERT_FALSE(line.empty()) << r.out;
  const testing_cli::Result replayed =
      testing_cli::Run(TESTBED_CLI_PATH, line.substr(std::string("replay: testbed ").size()));
  EXPECT_EQ(replayed.code, 1) << replayed.out;
  EXPECT_NE(replayed.out.find("  work-ran-twice-after-lost-claim "), std::string::npos)
      << replayed.out;
  // Fault-free: the shipped CAS never lets two commits claim; one without its version check does.
  r = testing_cli::Run(TESTBED_CLI_PATH, "explore " + trace + " --seed 1 --runs 200");
  EXPECT_EQ(r.code, 0) << r.out;
  r = testing_cli::Run(TESTBED_CLI_PATH, "explore " + trace + " --seed 1 --runs 200 --scripts " +
                                             std::string(TESTBED_SOURCE_DIR) +
                                             "/tests/broken_scripts/cas-without-version-check");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("  work-ran-twice "), std::string::npos) << r.out;
}

// A trace longer than the system's horizon (handles': 4 s) is made again to its end: its calls
// from the middle on, moved 10 s later, are still made, at their recorded distance.
TEST_F(Explore, ATraceLongerThanTheHorizonIsMadeAgainToItsEnd) {
  std::ifstream in(dir_ / "traces/handles-beta30-ports-capture-2.json");
  Json trace = Json::parse(in);
  const size_t half = trace["calls"].size() / 2;
  for (size_t i = half; i < trace["calls"].size(); ++i)
    trace["calls"][i]["at_us"] = trace["calls"][i]["at_us"].get<int64_t>() + 10'000'000;
  std::ofstream(dir_ / "long.json") << trace.dump();
  const real::ScriptCatalog catalog = real::ScriptCatalog::Load(real::ScriptCatalog::ShippedDir());
  const props::System& handles = *props::FindSystem("handles");
  props::RunSpec spec;
  spec.property = "work-at-most-once";
  spec.version = "beta30";
  spec.seed = 1;
  spec.clients = 3;
  spec.ops = 20;
  spec.trace = dir_ / "long.json";
  const props::RunOutcome run = handles.Run(spec, catalog, nullptr);
  int late = 0;
  for (const sim::TraceEvent& e : run.trace.events)
    late += e.kind == sim::EventKind::kCall && e.at_ms > 10'000;
  EXPECT_GT(late, 0);
}

// Under every fault kind a capture still reads back whole: 200 runs (both versions, 3 clients,
// --faults all) as MONITOR would show them, a request a fault kept from Redis missing, a re-sent
// call there twice, a write that reached Redis after its client gave up on it. Each is read back
// as handle operations, made again through the port, and judged; the judge finds work run twice
// only where the run's own record of the upstream work shows it.
TEST_F(Explore, AHandlesCaptureOfARunUnderEveryFaultReadsBackWhole) {
  const real::ScriptCatalog catalog = real::ScriptCatalog::Load(real::ScriptCatalog::ShippedDir());
  const props::System& handles = *props::FindSystem("handles");
  int operations = 0;
  for (const std::string version : {"beta30", "beta24"}) {
    const props::TraceSupport* support = handles.trace_support(version);
    for (uint64_t seed = 1; seed <= 100; ++seed) {
      props::RunSpec spec = WorkAtMostOnce(version, seed, "all");
      const props::RunOutcome live = handles.Run(spec, catalog, nullptr);
      const props::RecordedCalls recorded = CallsOf(live, catalog, "state/" + version + "/");
      std::vector<int> ops;
      try {
        ops = support->ops_per_client(recorded);
      } catch (const std::invalid_argument& e) {
        ADD_FAILURE() << version << " seed " << seed << ": " << e.what();
        continue;
      }
      for (int n : ops) operations += n;
      props::RunOutcome judged;
      support->judge("work-at-most-once", recorded, 0, judged);
      props::Conclude(judged);
      if (judged.violated) {
        EXPECT_TRUE(
            std::any_of(live.classes.begin(), live.classes.end(),
                        [](const std::string& c) { return c.rfind("work-ran-twice", 0) == 0; }))
            << version << " seed " << seed << ": " << judged.description;
      }
      spec.ops = *std::max_element(ops.begin(), ops.end());
      std::unique_ptr<props::PropertyRun> run =
          support->explore("work-at-most-once", recorded, spec, sim::FaultOptions(), catalog);
      EXPECT_NO_THROW(props::RunProperty(*run, seed, 4000, sim::FaultOptions(), catalog, nullptr))
          << version << " seed " << seed;
    }
  }
  EXPECT_GT(operations, 200 * 3 * 8);
}

TEST_F(Explore, BadInputExitsWith2NamingIt) {
  struct Case {
    std::string args, says;
  };
  const std::string a2 = dir_ / "traces/a2-0.5.0-ports-capture-3.json";
  for (const Case& c : std::vector<Case>{
           {"explore " + (dir_ / "missing.json"), "cannot read recorded trace"},
           {"explore " + std::string(TESTBED_SOURCE_DIR) + "/README.md", "is not a recorded trace"},
           {"explore " + (dir_ / "traces/handles-beta30-ports-capture-2.json") +
                " --properties busy-means-committing",
            "busy-means-committing is not judged on a recorded trace"},
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
