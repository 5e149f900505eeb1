// testbed check-history: Jepsen JSON histories against the cas-register model, on the command
// line (verdicts, the operations that cannot be ordered, bad input as one line and exit 2) and
// against a brute-force search over every order of small generated histories.
#include <absl/strings/str_replace.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <unistd.h>
#include <vector>

#include "checker/jepsen_history.h"
#include "cmd/cli.h"
#include "harness/prng_draws.h"
#include "checker/register_history.h"
#include "sim/prng.h"
#include "tests/cli_run.h"

namespace testbed {
namespace {

using Json = nlohmann::json;

class CheckHistory : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("testbed-check-history-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  testing_cli::Result Check(const std::string& text, const std::string& flags = "") {
    const std::string path = (dir_ / "history.json").string();
    std::ofstream(path) << text;
    return testing_cli::Run(TESTBED_CLI_PATH, "check-history " + path + flags);
  }
  std::filesystem::path dir_;
};

TEST_F(CheckHistory, ALinearizableHistoryPassesAndAStaleReadIsNamed) {
  testing_cli::Result r = Check(R"([
    {"process":0,"type":"invoke","f":"write","value":1},
    {"process":0,"type":"ok","f":"write","value":1},
    {"process":1,"type":"invoke","f":"read","value":null},
    {"process":2,"type":"invoke","f":"cas","value":[1,2]},
    {"process":1,"type":"ok","f":"read","value":2},
    {"process":2,"type":"ok","f":"cas","value":[1,2]},
    {"process":"nemesis","type":"info","f":"start","value":null},
    {"process":0,"type":"invoke","f":"write","value":3},
    {"process":0,"type":"info","f":"write","value":3},
    {"process":1,"type":"invoke","f":"read","value":null},
    {"process":1,"type":"ok","f":"read","value":3}])");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out,
            "linearizable: 5 operations (1 info, 0 failed and left out) on one cas-register\n");
  // Keywords as EDN writes them; a failed cas did not happen; the read after the cas is stale.
  r = Check(R"([
    {"process":0,"type":":invoke","f":":write","value":1},
    {"process":0,"type":":ok","f":":write","value":1},
    {"process":1,"type":":invoke","f":":cas","value":[1,2]},
    {"process":1,"type":":ok","f":":cas","value":[1,2]},
    {"process":2,"type":":invoke","f":":cas","value":[0,5]},
    {"process":2,"type":":fail","f":":cas","value":[0,5]},
    {"process":0,"type":":invoke","f":":read","value":null},
    {"process":0,"type":":ok","f":":read","value":1}])");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("not linearizable: 3 operations (0 info, 1 failed and left out)"),
            std::string::npos)
      << r.out;
  // The inference names it without a search: the cas left 2, the read found 1, and the only write
  // of 1 returned before the cas was invoked.
  EXPECT_NE(r.out.find("process 1 left 2 before process 0 was invoked, which then found 1; every "
                       "write of 1 returned before the first was invoked"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  process 1 cas [1,2] (entries 2..3)\n  process 0 read -> 1 (entries "
                       "6..7)\n  process 0 write 1 (entries 0..1)\n"),
            std::string::npos)
      << r.out;
  // A read of a value nobody wrote (Elle's garbage read) is a core of one.
  r = Check(R"([
    {"process":0,"type":"invoke","f":"write","value":1},
    {"process":0,"type":"ok","f":"write","value":1},
    {"process":1,"type":"invoke","f":"read","value":null},
    {"process":1,"type":"ok","f":"read","value":7}])");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("process 1 found 7, which no operation invoked before it returned wrote "
                       "(nobody wrote it at all):\n  process 1 read -> 7 (entries 2..3)\n"),
            std::string::npos)
      << r.out;
}

// Three verdicts, three exit codes a script can read (issue 64): a history only the search can
// decide (three writes whose outcome is unknown, reads that need them in two orders) is no
// verdict, exit 3, within a budget too small for it, and not linearizable, exit 1, within one
// that fits; --max-states is written back into the command line as given.
TEST_F(CheckHistory, NoVerdictExits3WithinABudgetTooSmallAndTheVerdictWithinOneThatFits) {
  const std::string history = R"([
    {"process":0,"type":"invoke","f":"write","value":1},
    {"process":1,"type":"invoke","f":"write","value":2},
    {"process":2,"type":"invoke","f":"write","value":3},
    {"process":3,"type":"invoke","f":"read","value":null},
    {"process":4,"type":"invoke","f":"read","value":null},
    {"process":0,"type":"info","f":"write","value":1},
    {"process":1,"type":"info","f":"write","value":2},
    {"process":2,"type":"info","f":"write","value":3},
    {"process":3,"type":"ok","f":"read","value":2},
    {"process":4,"type":"ok","f":"read","value":1},
    {"process":5,"type":"invoke","f":"read","value":null},
    {"process":5,"type":"ok","f":"read","value":3},
    {"process":6,"type":"invoke","f":"read","value":null},
    {"process":6,"type":"ok","f":"read","value":2}])";
  testing_cli::Result r = Check(history, " --max-states 10");
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_EQ(r.out.rfind("no verdict: the search ran out of its budget (10 states)", 0), 0u)
      << r.out;
  r = Check(history, " --max-states 1000");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out.rfind("not linearizable: 7 operations", 0), 0u) << r.out;
  EXPECT_EQ(Check(history, " --max-states 0").code, 2);
  // The same verdicts as elle-cli's JSON result: valid? "unknown", then false with the anomaly
  // and the operations it names.
  r = Check(history, " --max-states 10 --json");
  EXPECT_EQ(r.code, 3) << r.out;
  Json j = Json::parse(r.out);
  EXPECT_EQ(j["valid?"], "unknown") << r.out;
  r = Check(history, " --max-states 1000 --json");
  EXPECT_EQ(r.code, 1) << r.out;
  j = Json::parse(r.out);
  EXPECT_EQ(j["valid?"], false) << r.out;
  EXPECT_EQ(j["anomaly"].get<std::string>().rfind("not linearizable: 7 operations", 0), 0u);
  EXPECT_EQ(j["operations"].size(), 6u) << r.out;
  EXPECT_EQ(j["counts"]["info"], 3) << r.out;
  cli::CheckHistorySpec spec;
  spec.history = "h.json";
  spec.max_states = 10;
  EXPECT_EQ(spec.Write(), "testbed check-history h.json --max-states 10");
}

// EDN as Knossos's test data and Jepsen write it (tests/jepsen/knossos/README.md: copied from
// Knossos): each file read with its verdict, good/ linearizable and bad/ not.
TEST_F(CheckHistory, KnossosOwnEdnHistoriesGetKnossossVerdicts) {
  int files = 0;
  for (const auto& e :
       std::filesystem::recursive_directory_iterator(TESTBED_SOURCE_DIR "/tests/jepsen/knossos")) {
    if (e.path().extension() != ".edn") continue;
    ++files;
    const std::string model = e.path().parent_path().parent_path().filename().string();
    const bool good = e.path().parent_path().filename() == "good";
    const testing_cli::Result r = testing_cli::Run(
        TESTBED_CLI_PATH, "check-history " + e.path().string() + " --model " + model);
    EXPECT_EQ(r.code, good ? 0 : 1) << e.path() << "\n" << r.out;
    EXPECT_EQ(r.out.rfind(good ? "linearizable: " : "not linearizable: ", 0), 0u) << r.out;
  }
  EXPECT_EQ(files, 8);
  // The forms Jepsen's and Clojure's printers use beyond those files: one map per line at the top
  // level (history.edn), tagged records, sets, keywords as values, characters, discards, big
  // integers and nested maps.
  testing_cli::Result r = Check(
      R"(#jepsen.history.Op{:index 0, :time 5, :type :invoke, :process 0, :f :write, :value 1N}
{:index 1, :time 9, :type :ok, :process 0, :f :write, :value 1, :extra #{:a :b}, :error {:why "x\"y"}}
#_{:type :invoke, :process 9, :f :read}
{:type :invoke, :f :read, :value nil, :process 1, :c \a} ; a comment
{:type :ok, :f :read, :value 1, :process 1})");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out,
            "linearizable: 2 operations (0 info, 0 failed and left out) on one cas-register\n");
  // Bad EDN: one line naming where.
  for (const auto& [text, why] : std::vector<std::pair<std::string, std::string>>{
           {"[{:type :invoke", "EDN, line 1: a collection opened at line 1 is not closed"},
           {"[{:type :invoke}\n)", "EDN, line 2: ')' closes a collection opened at line 1"},
           {"{:type}", "EDN, line 1: the map opened at line 1 has a key without a value"},
           {"", "EDN, line 1: no form in it: an empty history file"},
           {"[\"abc", "EDN, line 1: a string that is not closed"},
           {std::string(20000, '('), "collections nested more than 10000 deep"}}) {
    r = Check(text);
    EXPECT_EQ(r.code, 2) << text.substr(0, 40) << "\n" << r.out;
    EXPECT_NE(r.out.find(why), std::string::npos) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  }
}

// jepsen.independent's [key value] tuples, as Jepsen writes them in history.edn: each key checked
// on its own, its entries named by their place in the file; one stale key makes the history not
// linearizable. Without --independent the tuples are the register's values, and the keys mix.
TEST_F(CheckHistory, IndependentKeysAreCheckedEachOnItsOwn) {
  const std::string history =
      R"({:type :invoke, :f :write, :value [0 1], :process 0, :time 1, :index 0}
{:type :ok, :f :write, :value [0 1], :process 0, :time 2, :index 1}
{:type :invoke, :f :write, :value [1 5], :process 1, :time 3, :index 2}
{:type :ok, :f :write, :value [1 5], :process 1, :time 4, :index 3}
{:type :invoke, :f :read, :value [0 nil], :process 2, :time 5, :index 4}
{:type :ok, :f :read, :value [0 1], :process 2, :time 6, :index 5}
{:type :info, :f :start, :value nil, :process :nemesis, :time 7, :index 6}
{:type :invoke, :f :cas, :value [1 [5 6]], :process 0, :time 8, :index 7}
{:type :ok, :f :cas, :value [1 [5 6]], :process 0, :time 9, :index 8}
{:type :invoke, :f :read, :value [1 nil], :process 2, :time 10, :index 9}
{:type :ok, :f :read, :value [1 %s], :process 2, :time 11, :index 10})";
  auto with = [&](const std::string& read) { return absl::StrReplaceAll(history, {{"%s", read}}); };
  testing_cli::Result r = Check(with("5"), " --independent");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out.rfind("2 independent keys: 1 linearizable, 1 not, 0 without a verdict\n"
                        "key 0: linearizable: 2 operations",
                        0),
            0u)
      << r.out;
  EXPECT_NE(r.out.find("key 1: not linearizable: 3 operations"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  process 2 read -> 5 (entries 9..10)\n"), std::string::npos) << r.out;
  r = Check(with("6"), " --independent");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.rfind("2 independent keys: 2 linearizable, 0 not, 0 without a verdict\n", 0), 0u)
      << r.out;
  EXPECT_EQ(Check(with("6")).code, 1);  // as one register, key 1's write hides key 0's value
  // As Jepsen's independent checker reports: results by key, and the keys that failed.
  r = Check(with("5"), " --independent --json");
  EXPECT_EQ(r.code, 1) << r.out;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["valid?"], false) << r.out;
  EXPECT_EQ(j["failures"], Json::parse("[1]")) << r.out;
  EXPECT_EQ(j["results"]["0"]["valid?"], true) << r.out;
  EXPECT_EQ(j["results"]["1"]["operations"][1], "process 2 read -> 5 (entries 9..10)") << r.out;
  r = Check(R"([{"process":0,"type":"invoke","f":"write","value":3}])", " --independent");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("entry 0: the value is not an independent [key value] tuple: 3"),
            std::string::npos)
      << r.out;
  cli::CheckHistorySpec spec;
  spec.history = "h.edn";
  spec.independent = true;
  EXPECT_EQ(spec.Write(), "testbed check-history h.edn --independent");
}

TEST_F(CheckHistory, BadInputIsOneLineAndExit2) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"{", "not JSON"},
      {"{}", "not a JSON array"},
      {"[1]", "entry 0: not an object"},
      {R"([{"type":"invoke","f":"read"}])", "entry 0: \"process\" is missing"},
      {R"([{"process":0,"type":"begin","f":"read"}])", "type \"begin\""},
      {R"([{"process":0,"type":"invoke","f":"append"}])", "f \"append\""},
      {R"([{"process":0,"type":"invoke","f":"cas","value":1}])", "not [old, new]"},
      {R"([{"process":0,"type":"ok","f":"read","value":1}])", "without an invoke"},
      {R"([{"process":0,"type":"invoke","f":"read"},{"process":0,"type":"invoke","f":"read"}])",
       "invokes again"},
      {R"([{"process":0,"type":"invoke","f":"read"},{"process":0,"type":"ok","f":"write"}])",
       "completes a read as a write"},
  };
  for (const auto& [text, says] : bad) {
    const testing_cli::Result r = Check(text);
    EXPECT_EQ(r.code, 2) << text << "\n" << r.out;
    EXPECT_NE(r.out.find(says), std::string::npos) << text << "\n" << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << text << "\n" << r.out;
  }
  EXPECT_EQ(Check("[]", " --model queue").code, 2);  // not a model check-history knows
  EXPECT_EQ(testing_cli::Run(TESTBED_CLI_PATH, "check-history /nonexistent/h.json").code, 2);
}

// A small history of three processes on one register, run for real (each operation takes
// effect at its completion), then perhaps corrupted: a read's value changed, a completion made
// info (its effect kept or not).
Json Generate(uint64_t seed) {
  sim::Prng rng(seed);
  Json h = Json::array();
  Json reg;                      // the register
  std::vector<Json> pending(3);  // each process's invoke, or null
  int invokes = 0;
  while (invokes < 6 ||
         std::any_of(pending.begin(), pending.end(), [](const Json& p) { return !p.is_null(); })) {
    const int p = static_cast<int>(rng.below(3));
    if (pending[p].is_null()) {
      if (invokes >= 6) continue;
      ++invokes;
      const uint64_t f = rng.below(3);
      Json op = {{"process", p}, {"type", "invoke"}};
      op["f"] = f == 0 ? "read" : f == 1 ? "write" : "cas";
      op["value"] =
          f == 0 ? Json()
          : f == 1
              ? Json(rng.below(3))
              : Json::array({rng.chance({1, 3}) ? Json() : Json(rng.below(3)), Json(rng.below(3))});
      h.push_back(op);
      pending[p] = op;
      continue;
    }
    Json done = pending[p];
    pending[p] = Json();
    const bool info = rng.chance({1, 6});
    const bool lands = !info || rng.chance({1, 2});
    done["type"] = "ok";
    if (done["f"] == "read") {
      done["value"] = reg;
      if (rng.chance({1, 4})) done["value"] = rng.below(3);  // corrupted
    } else if (done["f"] == "write") {
      if (lands) reg = done["value"];
    } else if (done["value"][0] == reg) {
      if (lands) reg = done["value"][1];
    } else {
      done["type"] = "fail";
    }
    if (info) done["type"] = "info";
    h.push_back(done);
  }
  return h;
}

// Every order of the operations that real time allows, each info operation in or out.
bool BruteForceLinearizable(const Json& h) {
  struct Call {
    std::string f;
    Json value;
    size_t inv, ret;
    bool info;
  };
  std::vector<Call> calls;
  std::vector<int> open(3, -1);
  for (size_t i = 0; i < h.size(); ++i) {
    const int p = h[i]["process"];
    if (h[i]["type"] == "invoke") {
      open[p] = static_cast<int>(calls.size());
      calls.push_back({h[i]["f"], h[i]["value"], i, SIZE_MAX, false});
    } else {
      Call& c = calls[open[p]];
      if (h[i]["type"] == "fail") c.f = "";
      if (h[i]["type"] == "info") c.info = true;
      if (h[i]["type"] == "ok") c.ret = i;
      if (h[i]["type"] == "ok" && c.f == "read") c.value = h[i]["value"];
    }
  }
  std::erase_if(calls, [](const Call& c) { return c.f.empty() || (c.info && c.f == "read"); });
  std::vector<size_t> info;
  for (size_t i = 0; i < calls.size(); ++i)
    if (calls[i].info) info.push_back(i);
  for (uint64_t mask = 0; mask < (uint64_t{1} << info.size()); ++mask) {
    std::vector<size_t> in;
    for (size_t i = 0; i < calls.size(); ++i) {
      const auto k = std::find(info.begin(), info.end(), i);
      if (k == info.end() || (mask >> (k - info.begin()) & 1)) in.push_back(i);
    }
    std::sort(in.begin(), in.end());
    do {
      bool ok = true;
      Json reg;
      for (size_t a = 0; a < in.size() && ok; ++a) {
        for (size_t b = a + 1; b < in.size() && ok; ++b)  // b after a, though b returned first
          ok = calls[in[b]].ret == SIZE_MAX || calls[in[b]].ret > calls[in[a]].inv;
        const Call& c = calls[in[a]];
        if (c.f == "read") ok = ok && c.value == reg;
        if (c.f == "write") reg = c.value;
        if (c.f == "cas") {
          ok = ok && c.value[0] == reg;
          reg = c.value[1];
        }
      }
      if (ok) return true;
    } while (std::next_permutation(in.begin(), in.end()));
  }
  return false;
}

TEST(CheckHistoryModel, AgreesWithABruteForceSearchOnGeneratedHistories) {
  int linearizable = 0, not_linearizable = 0;
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    const Json h = Generate(seed);
    const bool want = BruteForceLinearizable(h);
    const checker::HistoryVerdict got = checker::CheckCasRegisterHistory(h);
    ASSERT_TRUE(got.decided) << h.dump();
    EXPECT_EQ(got.linearizable, want) << "seed " << seed << "\n" << h.dump() << "\n" << got.text;
    (want ? linearizable : not_linearizable)++;
  }
  // Both verdicts are exercised.
  EXPECT_GT(linearizable, 100);
  EXPECT_GT(not_linearizable, 50);
}

// The shortcuts (inference, then the greedy witness, then the search) against the search alone, on
// generated histories of up to 8 processes, half of them corrupted, with repeated and unique
// values and lost replies. Returns the histories where the two disagree.
struct Agreement {
  int compared = 0, disagree = 0, rejected = 0, by_inference = 0, by_witness = 0;
};
Agreement CompareWithTheSearch(bool broken_inference) {
  Agreement a;
  for (uint64_t seed = 1; seed <= 240; ++seed) {
    const checker::CasRegisterShape shape{.processes = static_cast<int>(3 + seed % 6),
                                          .operations = static_cast<int>(20 + seed % 40),
                                          .values = static_cast<int>(seed % 3 * 3),
                                          .info_per_mille = seed % 4 == 0 ? 80 : 0,
                                          .corrupt = seed % 2 == 1};
    const Json h = checker::GenerateCasRegisterHistory(harness::PrngDraws(seed), shape);
    const checker::HistoryVerdict search =
        checker::CheckCasRegisterHistory(h, {.max_states = 2'000'000, .search_only = true});
    if (!search.decided) continue;
    const checker::HistoryVerdict fast =
        checker::CheckCasRegisterHistory(h, {.broken_inference = broken_inference});
    ++a.compared;
    a.rejected += !search.linearizable;
    a.by_inference += fast.decided_by == "inference";
    a.by_witness += fast.decided_by == "witness";
    const bool disagree = !fast.decided || fast.linearizable != search.linearizable;
    a.disagree += disagree;
    if (disagree && !broken_inference)
      ADD_FAILURE() << "seed " << seed << ": the search says " << search.text
                    << "the shortcuts say " << fast.text;
  }
  return a;
}

TEST(CheckHistoryModel, TheShortcutsAgreeWithTheSearchAndABrokenInferenceDoesNot) {
  const Agreement a = CompareWithTheSearch(false);
  std::printf("compared %d rejected %d inference %d witness %d\n", a.compared, a.rejected,
              a.by_inference, a.by_witness);
  EXPECT_GT(a.compared, 200);
  EXPECT_EQ(a.disagree, 0);
  // Both shortcuts decide, and both verdicts occur.
  EXPECT_GT(a.rejected, 60);
  EXPECT_GT(a.by_inference, 40);
  EXPECT_GT(a.by_witness, 30);
  // A history is linearizable only by construction: a generated one that was not corrupted.
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const Json h = checker::GenerateCasRegisterHistory(
        harness::PrngDraws(seed),
        {.processes = 8, .operations = 80, .values = 3, .info_per_mille = 100});
    EXPECT_TRUE(checker::CheckCasRegisterHistory(h, {.search_only = true}).linearizable) << seed;
  }
  // Taking the earliest write of the value read in place of the latest rejects histories that
  // a later write of it explains.
  EXPECT_GT(CompareWithTheSearch(true).disagree, 0);
}

// check --jepsen: each counterexample's key histories leave the testbed in Jepsen's forms. The
// JSON is valid against a schema written from elle-cli's documentation (and the process rules a
// schema cannot state), the EDN holds the same operations, and check-history reads each file
// back with the verdict the index gives it. beta.3's lost update (two compareAndSets from one
// version both acknowledged) is rejected by the cas-register too.
TEST_F(CheckHistory, CounterexampleHistoriesLeaveInJepsensFormsAndReadBackWithTheirVerdicts) {
  const std::string out = (dir_ / "jepsen").string();
  testing_cli::Result r =
      testing_cli::Run(TESTBED_CLI_PATH,
                       "check --system state --version beta3 --seed 1 --runs 20 --quiet "
                       "--properties cas-versions-linearizable --jepsen " +
                           out);
  ASSERT_EQ(r.code, 1) << r.out;
  // And a counterexample a TTL's end is part of (its key's history does not fit a register
  // without expiry).
  r = testing_cli::Run(TESTBED_CLI_PATH,
                       "check --system state --version beta3 --properties "
                       "cas-versions-linearizable --seed 8676535 --runs 1 --clients 3 --ops 5 "
                       "--skip 0:0,0:2,1:4,2:2 --faults all --quiet --jepsen " +
                           out);
  ASSERT_EQ(r.code, 1) << r.out;
  int written = 0, rejected = 0, unfit = 0;
  std::vector<std::string> files;
  for (const auto& d : std::filesystem::directory_iterator(out)) {
    std::ifstream in(d.path() / "index.json");
    const Json index = Json::parse(in);
    for (const Json& h : index) {
      EXPECT_EQ(h["model"], "cas-register");
      if (!h["fits"].get<bool>()) {
        ++unfit;
        EXPECT_FALSE(h["unfit"].empty()) << h.dump();
        continue;
      }
      ++written;
      const std::string json = (d.path() / h["json"].get<std::string>()).string();
      files.push_back(json);
      const testing_cli::Result back =
          testing_cli::Run(TESTBED_CLI_PATH, "check-history " + json + " --model cas-register");
      const std::string verdict = h["verdict"];
      EXPECT_EQ(back.code, verdict == "linearizable" ? 0 : 1) << json << "\n" << back.out;
      rejected += verdict == "not linearizable";
      // The EDN: the same operations, one map per line, as Jepsen writes them.
      std::ifstream edn(d.path() / h["edn"].get<std::string>());
      std::ifstream again(json);
      const Json ops = Json::parse(again);
      std::string line;
      size_t lines = 0;
      while (std::getline(edn, line)) {
        ASSERT_LT(lines, ops.size());
        EXPECT_EQ(line.rfind("{:type :" + ops[lines]["type"].get<std::string>() +
                                 ", :f :" + ops[lines]["f"].get<std::string>() + ", :value ",
                             0),
                  0u)
            << line;
        ++lines;
      }
      EXPECT_EQ(lines, ops.size());
      // check-history reads the EDN as the same history: the same verdict and text.
      const std::string edn_path = (d.path() / h["edn"].get<std::string>()).string();
      const testing_cli::Result from_edn =
          testing_cli::Run(TESTBED_CLI_PATH, "check-history " + edn_path + " --model cas-register");
      EXPECT_EQ(from_edn.code, back.code) << edn_path << "\n" << from_edn.out;
      EXPECT_EQ(from_edn.out, back.out) << edn_path;
    }
  }
  EXPECT_GT(written, 0);
  EXPECT_GT(unfit, 0) << "beta.3's short TTLs run out inside its histories";
  std::cout << written << " histories written (" << rejected << " not linearizable), " << unfit
            << " that do not fit\n";
  // replay writes a scenario's histories the same way.
  const std::string replayed = (dir_ / "replayed").string();
  r = testing_cli::Run(TESTBED_CLI_PATH,
                       "replay " TESTBED_SOURCE_DIR
                       "/scenarios/state-beta23-cas-versions-linearizable-version-reused.json "
                       "--jepsen " +
                           replayed);
  EXPECT_EQ(r.code, 0) << r.out;
  std::ifstream replayed_index(std::filesystem::path(replayed) /
                               "state-beta23-cas-versions-linearizable-version-reused" /
                               "index.json");
  ASSERT_TRUE(replayed_index.good()) << r.out;
  EXPECT_FALSE(Json::parse(replayed_index).empty());
  // (Its minimized counterexamples are version anomalies, which a register of values cannot
  // see.) A lost update can: two compareAndSets from version 1, both acknowledged.
  const checker::JepsenProjection lost = checker::ProjectCasRegister(
      checker::ParseRegisterHistory("0 0 1 0 1 set value=a exp=100000 -> version=1\n"
                                    "1 2 5 2 5 cas expected=1 value=b exp=100000 -> version=2\n"
                                    "2 3 6 3 6 cas expected=1 value=c exp=100000 -> version=2\n"));
  ASSERT_TRUE(lost.fits) << lost.unfit.front();
  EXPECT_EQ(lost.history[2]["value"], Json::array({"a", "b"}));  // the first cas's invoke
  files.push_back((dir_ / "lost-update.json").string());
  std::ofstream(files.back()) << lost.history.dump();
  r = testing_cli::Run(TESTBED_CLI_PATH, "check-history " + files.back() + " --model cas-register");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_FALSE(checker::CheckCasRegisterHistory(lost.history).linearizable);
  // Every file against the schema; a history that breaks it is seen to fail.
  std::string args;
  for (const std::string& f : files) args += " '" + f + "'";
  const std::string validate =
      "/usr/bin/python3 " TESTBED_SOURCE_DIR "/tests/jepsen/validate.py " TESTBED_SOURCE_DIR
      "/tests/jepsen/cas-register-history.schema.json";
  EXPECT_EQ(std::system((validate + args + " > /dev/null").c_str()), 0) << validate << args;
  const std::string bad = (dir_ / "bad.json").string();
  std::ofstream(bad)
      << R"([{"type":"invoke","f":"read","value":null,"process":0,"time":0,"index":0},
    {"type":"ok","f":"write","value":1,"process":0,"time":1,"index":1}])";
  EXPECT_NE(std::system((validate + " " + bad + " > /dev/null").c_str()), 0);
  std::ofstream(bad) << R"([{"type":"invoke","f":"cas","value":1,"process":0,"time":0,"index":0}])";
  EXPECT_NE(std::system((validate + " " + bad + " > /dev/null").c_str()), 0);
}

// Knossos's mutex (issue 29): two acquires with no release between them cannot be ordered; an
// acquire concurrent with the holder's release can; an :info release may have happened.
TEST_F(CheckHistory, MutexHistoriesAreCheckedAsKnossosChecksThem) {
  auto entry = [](int process, const char* type, const char* f) {
    return Json{{"process", process}, {"type", type}, {"f", f}, {"value", nullptr}};
  };
  const Json two_holders = Json::array({entry(0, "invoke", "acquire"), entry(0, "ok", "acquire"),
                                        entry(1, "invoke", "acquire"), entry(1, "ok", "acquire")});
  const checker::HistoryVerdict v = checker::CheckMutexHistory(two_holders);
  EXPECT_FALSE(v.linearizable) << v.text;
  EXPECT_NE(v.text.find("where the lock is \"held\""), std::string::npos) << v.text;
  const Json handed_over = Json::array(
      {entry(0, "invoke", "acquire"), entry(0, "ok", "acquire"), entry(1, "invoke", "acquire"),
       entry(0, "invoke", "release"), entry(0, "info", "release"), entry(1, "ok", "acquire")});
  EXPECT_TRUE(checker::CheckMutexHistory(handed_over).linearizable);
  const Json release_free = Json::array({entry(0, "invoke", "release"), entry(0, "ok", "release")});
  EXPECT_FALSE(checker::CheckMutexHistory(release_free).linearizable);
  // Through the CLI, with the model named; a cas-register history is not a mutex's.
  std::ofstream(dir_ / "two.json") << two_holders.dump();
  testing_cli::Result r = testing_cli::Run(
      TESTBED_CLI_PATH, "check-history " + (dir_ / "two.json").string() + " --model mutex");
  EXPECT_EQ(r.code, 1) << r.out;
  r = testing_cli::Run(TESTBED_CLI_PATH, "check-history " + (dir_ / "two.json").string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("f \"acquire\" is not read, write, cas (cas-register)"), std::string::npos)
      << r.out;
  r = testing_cli::Run(TESTBED_CLI_PATH,
                       "check-history " + (dir_ / "two.json").string() + " --model queue");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("the models are: cas-register, mutex"), std::string::npos) << r.out;
  // A short check of the a2 copy whose claim ignores the lease writes lease histories the
  // mutex rejects (the sanitized run's share of the longer test below, which it leaves out).
  const std::string out = (dir_ / "leases").string();
  r = testing_cli::Run(
      TESTBED_CLI_PATH,
      "check --system a2 --properties calls-linearizable --seed 11 --runs 20 "
      "--quiet --jepsen " +
          out + " --scripts " TESTBED_SOURCE_DIR "/tests/broken_scripts/a2-claim-ignores-lease");
  EXPECT_EQ(r.code, 1) << r.out;
  int rejected = 0;
  for (const auto& d : std::filesystem::directory_iterator(out)) {
    std::ifstream in(d.path() / "index.json");
    for (const Json& e : Json::parse(in))
      rejected += e["model"] == "mutex" && e.value("verdict", "") == "not linearizable";
  }
  EXPECT_GT(rejected, 0) << r.out;
}

// a2's leases leave as mutexes (a2_calls.h, LeaseAsMutex). On the shipped scripts, under every
// fault, no lease history that fits the mutex is rejected (a lapse, a lost reply or a replayed
// release is set aside as unfit, never blamed); on the copy whose claim ignores the lease, two
// holders of one lease are a fitting history the mutex rejects. Every written file is a valid
// mutex history, and check-history reads it back with the index's verdict.
TEST_F(CheckHistory, A2LeasesLeaveAsMutexesThatRejectOnlyTwoHolders) {
  auto run = [&](const std::string& scripts, const std::string& faults, const std::string& out) {
    return testing_cli::Run(
        TESTBED_CLI_PATH,
        "check --system a2 --properties calls-linearizable --seed 11 --runs 300 "
        "--quiet --faults " +
            faults + " --jepsen " + out + (scripts.empty() ? "" : " --scripts " + scripts));
  };
  auto verdicts = [&](const std::string& out, std::vector<std::string>* files) {
    std::map<std::string, int> seen;
    for (const auto& d : std::filesystem::directory_iterator(out)) {
      std::ifstream in(d.path() / "index.json");
      for (const Json& e : Json::parse(in)) {
        if (e["model"] != "mutex") continue;
        ++seen[e["fits"].get<bool>() ? e["verdict"].get<std::string>() : "unfit"];
        if (!e["fits"].get<bool>()) continue;
        files->push_back((d.path() / e["json"].get<std::string>()).string());
        const testing_cli::Result r =
            testing_cli::Run(TESTBED_CLI_PATH, "check-history " + files->back() + " --model mutex");
        EXPECT_EQ(r.code, e["verdict"] == "linearizable" ? 0 : 1) << files->back() << r.out;
      }
    }
    return seen;
  };
  std::vector<std::string> files;
  for (const std::string faults : {"none", "all"}) {
    const std::string out = (dir_ / ("shipped-" + faults)).string();
    run("", faults, out);
    const std::map<std::string, int> seen = verdicts(out, &files);
    EXPECT_GT(seen.count("linearizable") ? seen.at("linearizable") : 0, 0) << faults;
    EXPECT_EQ(seen.count("not linearizable"), 0u) << faults;
  }
  const std::string broken = (dir_ / "broken").string();
  run(TESTBED_SOURCE_DIR "/tests/broken_scripts/a2-claim-ignores-lease", "none", broken);
  const std::map<std::string, int> seen = verdicts(broken, &files);
  EXPECT_GT(seen.count("not linearizable") ? seen.at("not linearizable") : 0, 0);
  std::string args;
  for (const std::string& f : files) args += " '" + f + "'";
  const std::string validate =
      "/usr/bin/python3 " TESTBED_SOURCE_DIR "/tests/jepsen/validate.py " TESTBED_SOURCE_DIR
      "/tests/jepsen/mutex-history.schema.json";
  EXPECT_EQ(std::system((validate + args + " > /dev/null").c_str()), 0) << validate << args;
  const std::string bad = (dir_ / "bad.json").string();
  std::ofstream(bad)
      << R"([{"type":"invoke","f":"read","value":null,"process":0,"time":0,"index":0}])";
  EXPECT_NE(std::system((validate + " " + bad + " > /dev/null").c_str()), 0);
}

// handles' commit claims leave as Knossos's mutex too (one history per draft a commit claimed):
// every fitting history of the shipped ports is linearizable, under every fault kind that keeps
// Redis's writes, and each counterexample of a claim that Redis lost (restart, failover, key
// loss: work-at-most-once's work-ran-twice-after-lost-claim) is rejected as two holders. Each
// file validates against the mutex schema and reads back with its verdict.
TEST_F(CheckHistory, HandlesCommitClaimsLeaveAsMutexesThatRejectALostClaim) {
  auto verdicts = [&](const std::string& args, const std::string& out) {
    testing_cli::Run(TESTBED_CLI_PATH,
                     "check --system handles --seed 11 --quiet " + args + " --jepsen " + out);
    std::map<std::string, int> seen;
    std::string files;
    for (const auto& d : std::filesystem::directory_iterator(out)) {
      std::ifstream in(d.path() / "index.json");
      for (const Json& e : Json::parse(in)) {
        if (e["model"] != "mutex") continue;
        EXPECT_EQ(e["name"].get<std::string>().rfind("commit-", 0), 0u) << e.dump();
        EXPECT_TRUE(e["fits"].get<bool>()) << e.dump();
        ++seen[e["verdict"].get<std::string>()];
        const std::string file = (d.path() / e["json"].get<std::string>()).string();
        files += " '" + file + "'";
        const testing_cli::Result r =
            testing_cli::Run(TESTBED_CLI_PATH, "check-history " + file + " --model mutex");
        EXPECT_EQ(r.code, e["verdict"] == "linearizable" ? 0 : 1) << file << r.out;
      }
    }
    const std::string validate =
        "/usr/bin/python3 " TESTBED_SOURCE_DIR "/tests/jepsen/validate.py " TESTBED_SOURCE_DIR
        "/tests/jepsen/mutex-history.schema.json";
    if (!files.empty()) {
      EXPECT_EQ(std::system((validate + files + " > /dev/null").c_str()), 0) << validate << files;
    }
    return seen;
  };
  for (const std::string version : {"beta24", "beta30"}) {
    const std::map<std::string, int> kept = verdicts(
        "--version " + version +
            " --properties calls-linearizable,busy-means-committing,result-replayed --runs 200 "
            "--faults all",
        (dir_ / ("kept-" + version)).string());
    EXPECT_GT(kept.count("linearizable") ? kept.at("linearizable") : 0, 0) << version;
    EXPECT_EQ(kept.count("not linearizable"), 0u) << version;
  }
  const std::map<std::string, int> lost =
      verdicts("--properties work-at-most-once --runs 300 --faults restart,failover,key-loss",
               (dir_ / "lost").string());
  EXPECT_GT(lost.count("not linearizable") ? lost.at("not linearizable") : 0, 0);
}

}  // namespace
}  // namespace testbed
