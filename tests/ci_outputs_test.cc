// CI outputs: shards merged into the single-process report, JUnit checked against the common
// schema (xmllint), and a timeline page rendered in headless Chromium. xmllint and chromium are
// installed by .ci/install; a missing one fails these tests, it never skips them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli_run.h"
#include "tests/temp_dir.h"

namespace testbed {
namespace {

using testing_cli::ReadFile;
using testing_cli::Result;
using testing_dirs::TempDir;

Result Cli(const std::string& args) { return testing_cli::Run(TESTBED_CLI_PATH, args); }
Result Shell(const std::string& command) { return testing_cli::Run(command, ""); }

std::string WithoutTimes(std::string xml) {
  return std::regex_replace(xml, std::regex(" time=\"[0-9.]+\""), "");
}

// The check of `args` in one process, and in `n` shards merged; the reports must be the same.
void ExpectShardsMergeToTheSingleReport(const std::string& args, int n) {
  TempDir dir("shards");
  const Result single =
      Cli(args + " --out " + (dir / "single") + " --junit " + (dir / "single.xml"));
  ASSERT_NE(single.code, 2) << single.out;
  std::string reports;
  for (int i = n; i >= 1; --i) {  // merge does not depend on the order it is given
    const std::string out = dir / ("shard" + std::to_string(i));
    const Result shard =
        Cli(args + " --shard " + std::to_string(i) + "/" + std::to_string(n) + " --out " + out);
    ASSERT_NE(shard.code, 2) << shard.out;
    reports += " " + out + "/report.json";
  }
  const Result merged =
      Cli("merge" + reports + " --out " + (dir / "merged") + " --junit " + (dir / "merged.xml"));
  EXPECT_EQ(merged.code, single.code) << merged.out;
  const std::string json = ReadFile(dir / "single/report.json");
  ASSERT_FALSE(json.empty());
  EXPECT_EQ(ReadFile(dir / "merged/report.json"), json);
  EXPECT_EQ(ReadFile(dir / "merged/report.md"), ReadFile(dir / "single/report.md"));
  EXPECT_EQ(WithoutTimes(ReadFile(dir / "merged.xml")), WithoutTimes(ReadFile(dir / "single.xml")));
  // The terminal is rendered from the same report model: merge prints the table (and the
  // baseline's line) that the single process printed.
  const size_t from = merged.out.find("property / class");
  ASSERT_NE(from, std::string::npos) << merged.out;
  const size_t to = std::min(merged.out.find("\nreport: "), merged.out.find("\njunit: "));
  const std::string table = merged.out.substr(from, to + 1 - from);
  EXPECT_GT(std::count(table.begin(), table.end(), '\n'), 3) << table;
  EXPECT_NE(single.out.find(table), std::string::npos) << table << "\n---\n" << single.out;
  // The shards really split the runs: none of them ran them all.
  const auto runs = [](const std::string& text) {
    int64_t total = 0;
    const nlohmann::json j = nlohmann::json::parse(text);
    for (const auto& [name, p] : j["properties"].items())
      if (p.is_object()) total += p["runs"].get<int64_t>();
    return total;
  };
  EXPECT_GT(runs(json), runs(ReadFile(dir / "shard1/report.json")));
  for (const std::string& xml : {dir / "single.xml", dir / "merged.xml"}) {
    const Result valid =
        Shell("xmllint --noout --schema " TESTBED_SOURCE_DIR "/tests/junit/junit.xsd " + xml);
    EXPECT_EQ(valid.code, 0) << valid.out;
  }
}

TEST(CiOutputs, ShardsMergeIntoTheSingleProcessReportByteForByte) {
  ExpectShardsMergeToTheSingleReport(
      "check --system state --version beta24 --seed 7 --runs 9 --jobs 2 --quiet "
      "--baseline " TESTBED_SOURCE_DIR "/baselines/state/beta24.json",
      3);
  ExpectShardsMergeToTheSingleReport("check --system handles --seed 3 --runs 6 --jobs 2 --quiet",
                                     2);
}

TEST(CiOutputs, MergeRefusesShardsThatDoNotMakeOneCheck) {
  TempDir dir("merge-bad");
  const std::string args =
      "check --system state --version beta30 --seed 2 --quiet "
      "--properties quota-safety";
  for (int i = 1; i <= 2; ++i)
    ASSERT_NE(Cli(args + " --runs 4 --shard " + std::to_string(i) + "/2 --out " +
                  (dir / std::to_string(i)))
                  .code,
              2);
  ASSERT_NE(Cli(args + " --runs 5 --shard 2/2 --out " + (dir / "other")).code, 2);
  const std::string s1 = dir / "1/report.json", s2 = dir / "2/report.json";
  const struct {
    std::string args, says;
  } cases[] = {
      {s1, "shard 2/2 is missing"},
      {s1 + " " + s1 + " " + s2, "shard 1/2 is given twice"},
      {s1 + " " + (dir / "other/report.json"), "the shards ran different checks"},
      {dir / "none.json", "cannot read report"},
  };
  for (const auto& c : cases) {
    const Result r = Cli("merge " + c.args);
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << r.out;
  }
  for (const std::string bad : {"0/2", "3/2", "1/0", "x/2", "1-2"}) {
    const Result r = Cli("check --system state --seed 1 --shard " + bad);
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("--shard"), std::string::npos) << r.out;
  }
}

TEST(CiOutputs, MergeJoinsShardsThatDifferOnlyInHowTheyRan) {
  // One CI job runs its shard on two threads, another on one, and they spell the baseline's
  // path differently: the runs are the same, so the shards make one check.
  TempDir dir("merge-how");
  const std::string args =
      "check --system state --version beta30 --seed 2 --quiet --runs 4 --properties "
      "quota-safety,cas-versions-linearizable --baseline ";
  ASSERT_NE(Cli(args +
                TESTBED_SOURCE_DIR "/baselines/state/beta30.json --jobs 1 --shard 1/2 "
                                   "--out " +
                (dir / "1"))
                .code,
            2);
  ASSERT_NE(Cli(args +
                TESTBED_SOURCE_DIR "/baselines/../baselines/state/beta30.json --jobs 2 "
                                   "--shard 2/2 --out " +
                (dir / "2"))
                .code,
            2);
  const Result r = Cli("merge " + (dir / "1/report.json") + " " + (dir / "2/report.json"));
  EXPECT_NE(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("property / class"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("baseline "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nresult: "), std::string::npos) << r.out;
}

// The README's concrete commands: each `testbed ...` span and each code line that runs
// ./build/testbed, without placeholders (S, V, DIR, [optional], ...) or CI-template syntax.
std::vector<std::string> ReadmeCommands() {
  const std::string readme = ReadFile(TESTBED_SOURCE_DIR "/README.md");
  std::vector<std::string> found;
  const auto take = [&](std::string text) {
    for (char& c : text)
      if (c == '\n') c = ' ';
    const size_t at = text.find("testbed ");
    if (at == std::string::npos) return;
    if (at > 0 && text.compare(at >= 8 ? at - 8 : 0, 8, "./build/") != 0) return;
    std::string command = text.substr(at + 8);
    if (command.find('[') != std::string::npos || command.find("...") != std::string::npos ||
        command.find("${{") != std::string::npos || command.find('|') != std::string::npos)
      return;
    static const std::regex placeholder("(^| )[A-Z][A-Z_]*( |$)");
    if (std::regex_search(command, placeholder)) return;
    if (command.find(' ') == std::string::npos && command != "list" && command != "--version")
      return;  // `testbed check`, `testbed merge`: the command's name, not a command
    found.push_back(command);
  };
  for (size_t open = readme.find('`'); open != std::string::npos;) {
    if (readme.compare(open, 3, "```") == 0) {  // a fenced block: its lines, not spans
      const size_t end = readme.find("```", open + 3);
      open = end == std::string::npos ? end : readme.find('`', end + 3);
      continue;
    }
    const size_t close = readme.find('`', open + 1);
    if (close == std::string::npos) break;
    take(readme.substr(open + 1, close - open - 1));
    open = readme.find('`', close + 1);
  }
  // Indented code lines, outside fenced blocks (the CI workflow there is a template, which
  // CiOutputs.ShardsMergeIntoTheSingleProcessReportByteForByte runs as such).
  std::istringstream lines(readme);
  bool fenced = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("```", 0) == 0) fenced = !fenced;
    if (!fenced && line.rfind("    ", 0) == 0 && line.find("./build/testbed ") != std::string::npos)
      take(line.substr(line.find("./build/testbed ")));
  }
  return found;
}

TEST(CiOutputs, EveryConcreteCommandInTheReadmeRunsAsItSays) {
  TempDir dir("readme");
  const std::vector<std::string> commands = ReadmeCommands();
  ASSERT_GE(commands.size(), 5u) << "the README's commands are no longer found";
  for (std::string command : commands) {
    // Outputs go to this test's directory, never into the source tree.
    static const std::regex output("--(html|out|junit|save-scenarios) [^ ]+");
    command = std::regex_replace(command, output, "--$1 " + dir.path() + "/$1");
    const Result r = testing_cli::Run(TESTBED_CLI_PATH, command, "cd '" TESTBED_SOURCE_DIR "' &&");
    EXPECT_TRUE(r.code == 0 || r.code == 1) << "testbed " << command << "\n" << r.out;
    EXPECT_EQ(r.out.rfind("testbed:", 0), std::string::npos) << "testbed " << command;
  }
}

TEST(CiOutputs, TheSchemaCheckCanFail) {
  TempDir dir("junit-bad");
  ASSERT_NE(Cli("check --system state --version beta30 --seed 1 --runs 2 --quiet --properties "
                "quota-safety --junit " +
                (dir / "j.xml"))
                .code,
            2);
  const std::string xml = ReadFile(dir / "j.xml");
  ASSERT_NE(xml.find(" errors=\"0\""), std::string::npos);
  std::ofstream(dir / "bad.xml") << std::regex_replace(xml, std::regex(" errors=\"0\""), "");
  const Result r = Shell("xmllint --noout --schema " TESTBED_SOURCE_DIR "/tests/junit/junit.xsd " +
                         (dir / "bad.xml"));
  EXPECT_NE(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("errors"), std::string::npos) << r.out;
}

// Headless Chromium on a page: the DOM after its scripts ran, and everything it logged.
struct Rendered {
  std::string dom, log;
};
Rendered Render(const std::string& page, const std::string& screenshot) {
  const std::string chromium =
      "chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars "
      "--window-size=1200,900 --enable-logging=stderr --v=0 ";
  Rendered r;
  r.dom = Shell(chromium + "--dump-dom file://" + page + " 2>/dev/null").out;
  r.log = Shell(chromium + "--screenshot=" + screenshot + " file://" + page).out;
  return r;
}

// Console messages (errors included) and uncaught errors the page itself recorded.
std::vector<std::string> PageErrors(const Rendered& r) {
  std::vector<std::string> out;
  std::istringstream lines(r.log);
  for (std::string line; std::getline(lines, line);)
    if (line.find(":CONSOLE") != std::string::npos) out.push_back(line);
  if (r.dom.find("data-errors=") != std::string::npos) out.push_back("data-errors in the DOM");
  if (r.dom.find("data-ready=\"1\"") == std::string::npos) out.push_back("the script did not run");
  return out;
}

TEST(CiOutputs, ATimelinePageRendersInHeadlessChromiumWithEveryLaneAndHighlight) {
  TempDir dir("html");
  const Result check =
      Cli("check --system state --version beta30 --properties cas-versions-linearizable --seed 1 "
          "--runs 20 --quiet --html " +
          (dir / "html") + " --out " + (dir / "out"));
  ASSERT_EQ(check.code, 1) << check.out;
  const nlohmann::json report = nlohmann::json::parse(ReadFile(dir / "out/report.json"));
  ASSERT_FALSE(report["violations"].empty());
  const nlohmann::json& v = report["violations"][0];
  const std::string page = v["html"];
  ASSERT_NE(ReadFile(dir / "out/report.md").find("Timeline: ["), std::string::npos);
  // No address outside the page: nothing to fetch.
  const std::string html = ReadFile(page);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find(" src="), std::string::npos);

  const Rendered r = Render(page, dir / "timeline.png");
  EXPECT_TRUE(PageErrors(r).empty()) << PageErrors(r).front();
  // Every actor that made a call has its lane (actors from the report's call list).
  std::set<std::string> actors;
  const std::regex actor_re("^\\+[0-9]+ms ([a-z0-9]+)/");
  for (const auto& call : v["redis_calls"]) {
    std::smatch m;
    const std::string line = call;
    if (std::regex_search(line, m, actor_re)) actors.insert(m[1]);
  }
  ASSERT_FALSE(actors.empty());
  for (const std::string& a : actors)
    EXPECT_NE(r.dom.find("class=\"lane\" data-actor=\"" + a + "\""), std::string::npos) << a;
  // Every operation of the core (the lines after "cannot be ordered") is highlighted on its
  // actor's lane.
  const std::string cx = v["counterexample"];
  const std::string core = cx.substr(cx.find("cannot be ordered"));
  std::istringstream lines(core);
  std::string heading;
  std::getline(lines, heading);
  int core_ops = 0;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string client;
    if (!(words >> client)) continue;
    ++core_ops;
    EXPECT_TRUE(std::regex_search(
        r.dom, std::regex("class=\"bar[^\"]* hl\" data-actor=\"client" + client + "\"")))
        << "client " << client;
  }
  EXPECT_GE(core_ops, 2);
  EXPECT_GT(ReadFile(dir / "timeline.png").size(), 1000u);
  EXPECT_EQ(ReadFile(dir / "timeline.png").substr(1, 3), "PNG");
}

TEST(CiOutputs, TheCommittedExamplePageIsWhatTheCheckWritesToday) {
  TempDir dir("example");
  const Result r =
      Cli("check --system state --version beta30 --properties cas-versions-linearizable --seed 1 "
          "--runs 20 --quiet --html " +
          dir.path());
  ASSERT_EQ(r.code, 1) << r.out;
  const std::string name = "state-beta30-cas-versions-linearizable-duplicate-version.html";
  EXPECT_EQ(ReadFile(dir / name), ReadFile(TESTBED_SOURCE_DIR "/reports/examples/" + name))
      << "regenerate reports/examples/ (README, In CI) and its screenshot";
}

TEST(CiOutputs, TheBrowserCheckSeesAScriptErrorAndAConsoleMessage) {
  TempDir dir("html-bad");
  std::ofstream(dir / "bad.html")
      << "<!DOCTYPE html><html><body><script>"
         "console.error('boom'); notAFunction();</script></body></html>";
  const std::vector<std::string> errors = PageErrors(Render(dir / "bad.html", dir / "bad.png"));
  EXPECT_GE(errors.size(), 2u);
}

}  // namespace
}  // namespace testbed
