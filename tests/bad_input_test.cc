// Bad input to every entry point: one clear line naming what is wrong, exit 2, before any work,
// never a crash (issue 60).
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "model/json_file.h"
#include "tests/cli_run.h"
#include "tests/temp_dir.h"

namespace {

using testbed::testing_cli::ReadFile;
using testbed::testing_cli::Result;
using testbed::testing_dirs::TempDir;

using testbed::testing_cli::Cli;

// Arrays nested n deep: `[[[...]]]`.
std::string Deep(size_t n) { return std::string(n, '[') + std::string(n, ']'); }

// `j` written out with the string "DEEP" replaced by arrays nested n deep.
std::string WithDeep(const nlohmann::json& j, size_t n) {
  std::string text = j.dump();
  const size_t at = text.find("\"DEEP\"");
  EXPECT_NE(at, std::string::npos);
  return text.replace(at, 6, Deep(n));
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(JsonDepth, CountsArraysAndObjectsOutsideStrings) {
  EXPECT_EQ(testbed::model::JsonDepth("1"), 0u);
  EXPECT_EQ(testbed::model::JsonDepth(R"({"a":[1,{"b":[]}]})"), 4u);
  EXPECT_EQ(testbed::model::JsonDepth(R"(["[[[", "\"[[", {}])"), 2u);
  EXPECT_EQ(testbed::model::JsonDepth(Deep(100000)), 100000u);
}

// A value nested 100,000 deep in each of the files the testbed reads (a history, a scenario's
// trigger, an extra field of a recorded trace, a baseline's reason, an equivalence list, a
// report to merge): refused with the file's name and the depth, exit 2, before any run. The
// first four crashed (a recursive copy or walk ran out of stack).
TEST(BadInput, JsonNestedPastTheBoundIsRefusedByEveryReaderBeforeAnyWork) {
  TempDir dir("deep");
  constexpr size_t kDeep = 100000;
  const std::string history = dir / "history.json";
  Write(history,
        WithDeep(nlohmann::json::array(
                     {{{"type", "invoke"}, {"f", "write"}, {"value", "DEEP"}, {"process", 0}}}),
                 kDeep));
  nlohmann::json scenario = nlohmann::json::parse(
      ReadFile(TESTBED_SOURCE_DIR "/scenarios/state-beta30-cas-bends-values-through-cjson.json"));
  scenario["trigger"] = "DEEP";
  const std::string scenario_file = dir / "scenario.json";
  Write(scenario_file, WithDeep(scenario, kDeep));
  ASSERT_EQ(
      Cli("import " TESTBED_SOURCE_DIR "/tests/data/ports-capture.txt --out " + (dir / "traces"))
          .code,
      0);
  std::string trace_file;
  for (const auto& e : std::filesystem::directory_iterator(dir / "traces"))
    if (e.path().extension() == ".json") trace_file = e.path().string();
  ASSERT_FALSE(trace_file.empty());
  nlohmann::json trace = nlohmann::json::parse(ReadFile(trace_file));
  trace["extra"] = "DEEP";
  const std::string deep_trace = dir / "trace.json";
  Write(deep_trace, WithDeep(trace, kDeep));
  nlohmann::json baseline =
      nlohmann::json::parse(ReadFile(TESTBED_SOURCE_DIR "/baselines/state/beta30.json"));
  baseline["accepted"][0]["reason"] = "DEEP";
  const std::string baseline_file = dir / "baseline.json";
  Write(baseline_file, WithDeep(baseline, kDeep));
  const std::string equivalent = dir / "equivalent.json";
  Write(equivalent, WithDeep({{"mutants", "DEEP"}}, kDeep));
  const std::string report = dir / "report.json";
  Write(report, WithDeep({{"seed", "DEEP"}}, kDeep));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"check-history " + history, history},
      {"replay " + scenario_file, scenario_file},
      {"replay " + deep_trace, deep_trace},
      {"explore " + deep_trace, deep_trace},
      {"check --system state --version beta30 --runs 1 --baseline " + baseline_file, baseline_file},
      {"mutate --system state --version beta24 --runs 1 --equivalent " + equivalent, equivalent},
      {"merge " + report + " " + report, report},
  };
  for (const auto& [args, file] : cases) {
    const Result r = Cli(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(file), std::string::npos) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(" deep (at most 10000)"), std::string::npos) << args << "\n" << r.out;
    EXPECT_EQ(r.out.find("seed:"), std::string::npos) << args << ": work began\n" << r.out;
  }
}

// A history's process is an integer or the nemesis, nothing else: a string, a fraction or null
// were taken as the nemesis, so every operation of theirs was skipped (linearizable, exit 0) or
// a write dropped.
TEST(BadInput, AHistorysProcessIsAnIntegerOrTheNemesis) {
  TempDir dir("process");
  for (const std::string process : {"\"p0\"", "0.5", "null", "true", "[0]"}) {
    const std::string path = dir / "history.json";
    Write(path, R"([{"type":"invoke","f":"write","value":1,"process":)" + process +
                    R"(},{"type":"ok","f":"write","value":1,"process":)" + process + "}]");
    const Result r = Cli("check-history " + path + " --model cas-register");
    EXPECT_EQ(r.code, 2) << process << "\n" << r.out;
    EXPECT_NE(r.out.find("entry 0: \"process\" is " + process + ": an integer, or \"nemesis\""),
              std::string::npos)
        << r.out;
  }
  const std::string path = dir / "nemesis.json";
  Write(path, R"([{"type":"info","f":"start","value":null,"process":"nemesis"},)"
              R"({"type":"invoke","f":"write","value":1,"process":0},)"
              R"({"type":"ok","f":"write","value":1,"process":0}])");
  const Result r = Cli("check-history " + path + " --model cas-register");
  EXPECT_EQ(r.code, 0) << r.out;
}

// A recorded trace names a system testbed knows and one of its versions (or null): replay of one
// whose system is unknown, or whose version is a number, exited 0.
TEST(BadInput, ATraceNamesAKnownSystemAndOneOfItsVersions) {
  TempDir dir("trace");
  ASSERT_EQ(
      Cli("import " TESTBED_SOURCE_DIR "/tests/data/ports-capture.txt --out " + (dir / "traces"))
          .code,
      0);
  std::string trace_file;
  for (const auto& e : std::filesystem::directory_iterator(dir / "traces"))
    if (e.path().extension() == ".json") trace_file = e.path().string();
  ASSERT_FALSE(trace_file.empty());
  const nlohmann::json trace = nlohmann::json::parse(ReadFile(trace_file));
  for (const auto& [field, value, says] :
       std::vector<std::tuple<std::string, nlohmann::json, std::string>>{
           {"system", "nosuch", "\"system\" is \"nosuch\": not a system testbed knows"},
           {"system", 3, "\"system\" is 3: not a system testbed knows"},
           {"version", 30, "\"version\" is 30: not a version of"},
           {"version", "beta99", "\"version\" is \"beta99\": not a version of"},
           {"versions_fitting", nlohmann::json::array({"beta99"}),
            "\"versions_fitting\" names \"beta99\": not a version of"}}) {
    nlohmann::json bad = trace;
    bad[field] = value;
    const std::string path = dir / "bad.json";
    Write(path, bad.dump());
    for (const std::string command : {"replay ", "explore "}) {
      const Result r = Cli(command + path);
      EXPECT_EQ(r.code, 2) << command << field << "\n" << r.out;
      EXPECT_NE(r.out.find(says), std::string::npos) << command << field << "\n" << r.out;
    }
  }
  // explore's trace is its argument: a --trace beside it (the same file or another, which was
  // silently ignored) is a usage error.
  for (const std::string& other : std::vector<std::string>{trace_file, dir / "bad.json"}) {
    const Result r = Cli("explore " + trace_file + " --trace " + other);
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("testbed explore: "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("--trace"), std::string::npos) << r.out;
  }
}

// A scenario's counts are checked at both ends: "clients": 0 ran and reported "fixed or
// changed" (JSON's 0 reads as unsigned, and only a signed value's lower end was checked).
TEST(BadInput, AScenarioWithoutClientsOrOperationsIsRefused) {
  TempDir dir("scenario");
  const nlohmann::json scenario = nlohmann::json::parse(
      ReadFile(TESTBED_SOURCE_DIR "/scenarios/state-beta30-cas-bends-values-through-cjson.json"));
  for (const std::string field : {"clients", "ops"})
    for (const int value : {0, -3}) {
      nlohmann::json bad = scenario;
      bad[field] = value;
      const std::string path = dir / "bad.json";
      Write(path, bad.dump());
      const Result r = Cli("replay " + path);
      EXPECT_EQ(r.code, 2) << field << " " << value << "\n" << r.out;
      EXPECT_NE(r.out.find("field \"" + field + "\" must be an integer from 1"), std::string::npos)
          << r.out;
      EXPECT_EQ(r.out.find("seed:"), std::string::npos) << r.out;
    }
  // A bad field is named as itself: a bad "skip" was reported as field "faults".
  for (const auto& [field, value] :
       std::vector<std::pair<std::string, std::string>>{{"skip", "x:y"}, {"faults", "nosuch"}}) {
    nlohmann::json bad = scenario;
    bad[field] = value;
    const std::string path = dir / "bad.json";
    Write(path, bad.dump());
    const Result r = Cli("replay " + path);
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("field \"" + field + "\": "), std::string::npos) << r.out;
  }
}

// An empty value is an error, never a default; --faults' all and none stand alone.
TEST(BadInput, EmptyOrContradictoryValuesAreUsageErrorsNamingTheFlag) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"check --system state --runs 1 --shard ''", "check: --shard is empty"},
      {"check --system state --runs 1 --out ''", "check: --out is empty"},
      {"diff --system state --candidate " TESTBED_SOURCE_DIR "/tests/fixed_scripts --runs ''",
       "diff: --runs is empty"},
      {"diff --system state --candidate " TESTBED_SOURCE_DIR "/tests/fixed_scripts --seed ''",
       "diff: --seed is empty"},
      {"mutate --system state --only ''", "mutate: --only is empty"},
      {"check --system state --runs 1 --faults all,none", "all stands alone"},
      {"check --system state --runs 1 --faults none,resend", "none stands alone"},
      {"check --system state --runs 1 --faults all,resend", "all stands alone"},
      // A misspelt flag, in the order it was given; a flag where the command goes, by name.
      {"check --system state --seeds 1", "testbed check: unexpected arguments: --seeds 1"},
      {"--bogus", "testbed: --bogus is not a command"},
      // diff and mutate parse check's flags, and say so in their own name.
      {"diff --system state --candidate " TESTBED_SOURCE_DIR "/tests/fixed_scripts --runs 0",
       "testbed diff: --runs: must be at least 1"},
      {"mutate --system state --runs 0", "testbed mutate: --runs: must be at least 1"},
      {"mutate --system state --write-mutants " TESTBED_SOURCE_DIR "/README.md/x",
       "testbed mutate: --write-mutants "},
  };
  for (const auto& [args, says] : cases) {
    const Result r = Cli(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(says), std::string::npos) << args << "\n" << r.out;
    EXPECT_EQ(r.out.find("seed:"), std::string::npos) << args << ": work began\n" << r.out;
  }
}

// The names of the entries of `dir`, sorted.
std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// A loopback port someone else listens on (the socket stays open while the object lives).
class BusyPort {
 public:
  BusyPort() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(listen(fd_, 1), 0);
    socklen_t len = sizeof addr;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~BusyPort() { close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// Every output path is checked, and every setup that can fail is tried, before the first line
// (the seed) is printed; the refusal is one line naming the command and what is wrong, exit 2,
// and nothing is left behind: no output directory (the ones asked for are new and nested), no
// record file, no spawned server's directory. Before: the seed and version were printed first
// (17 cases), and directories were made before the refusal (import left its --out).
TEST(BadInput, OutputsAndSetupAreCheckedBeforeAnythingIsPrintedAndARefusalLeavesNothing) {
  TempDir dir("outputs");
  const std::string d = dir.path();
  Write(dir / "afile", "x");
  std::filesystem::create_directories(dir / "empty");
  std::filesystem::create_directories(dir / "garbage");
  Write(dir / "garbage/SET_WITH_QUOTA_SCRIPT.lua", "garbage(");
  // A capture whose first calls are fine and whose third line is not.
  Write(dir / "capture.txt",
        "1700000000.000001 [0 127.0.0.1:5000] \"PING\"\n"
        "1700000000.000002 [0 127.0.0.1:5000] \"EVAL\" \"return 1\" \"0\"\n"
        "garbage\n");
  const std::vector<std::string> before = Entries(d);
  const std::string check = "check --system state --runs 1 ";
  const std::string not_redis = "TMPDIR=" + d + " TESTBED_REDIS_SERVER=/bin/true";
  const std::string scenario =
      TESTBED_SOURCE_DIR "/scenarios/state-beta30-cas-bends-values-through-cjson.json";
  const BusyPort busy;
  struct Case {
    std::string args, env, says;
  };
  std::vector<Case> cases;
  for (const std::string flag : {"out", "html", "save-scenarios", "jepsen"})
    cases.push_back({check + "--" + flag + " " + d + "/afile", "",
                     "testbed check: --" + flag + " " + d + "/afile is a file, not a directory"});
  for (const std::string flag :
       {"out", "html", "save-scenarios", "jepsen", "junit", "write-baseline"})
    cases.push_back(
        {check + "--" + flag + " " + d + "/afile/x", "",
         "testbed check: --" + flag + " " + d + "/afile/x is under " + d + "/afile, a file"});
  for (const std::string flag : {"junit", "write-baseline"})
    cases.push_back({check + "--" + flag + " " + d, "",
                     "testbed check: --" + flag + " " + d + " is a directory, not a file"});
  cases.push_back({check + "--out " + d + "/new/out --scripts " + d + "/empty", "",
                   "testbed check: --scripts " + d + "/empty: no *.lua file in it"});
  cases.push_back({check + "--out " + d + "/new/out --scripts " + d + "/garbage", "",
                   "testbed check: setup error: a script does not compile: "
                   "state/beta30/SET_WITH_QUOTA_SCRIPT.lua"});
  cases.push_back({check + "--out " + d + "/new/out --html " + d + "/new/html --redis spawn",
                   not_redis,
                   "testbed check: setup error: redis-server (/bin/true) did not start"});
  cases.push_back({"diff --system state --runs 1 --candidate " + d + "/empty", "",
                   "testbed diff: --candidate " + d + "/empty: no *.lua file in it"});
  cases.push_back({"diff --system state --runs 1 --candidate " + d + "/garbage", "",
                   "testbed diff: setup error: a candidate script does not compile"});
  cases.push_back({"fidelity --commands 10 --redis spawn", not_redis,
                   "testbed fidelity: setup error: redis-server (/bin/true) did not start"});
  cases.push_back({"replay " + scenario + " --jepsen " + d + "/new/jepsen --redis spawn", not_redis,
                   "testbed replay: setup error: redis-server (/bin/true)"});
  cases.push_back({"import " + d + "/capture.txt --out " + d + "/new/a/b", "",
                   "testbed import: " + d + "/capture.txt:3: no timestamp"});
  cases.push_back({"import " + d + "/capture.txt --out " + d + "/afile", "",
                   "testbed import: --out " + d + "/afile is a file, not a directory"});
  cases.push_back(
      {"serve --port " + std::to_string(busy.port()) + " --record " + d + "/new/record.txt", "",
       "testbed serve: cannot listen on 127.0.0.1:" + std::to_string(busy.port())});
  cases.push_back({"merge --out " + d + "/new/merged " + d + "/afile", "", "testbed merge: "});
  for (const Case& c : cases) {
    const Result r = testbed::testing_cli::Run(TESTBED_CLI_PATH, c.args, c.env);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.out;
    EXPECT_EQ(r.out.rfind(c.says, 0), 0u) << c.args << "\n" << r.out;  // the first line
    EXPECT_EQ(r.out.find("seed:"), std::string::npos) << c.args << ": work began\n" << r.out;
    EXPECT_LE(std::count(r.out.begin(), r.out.end(), '\n'), 2) << c.args << "\n" << r.out;
    EXPECT_EQ(Entries(d), before) << c.args << ": left something behind";
  }
}

}  // namespace
