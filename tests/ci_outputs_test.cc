// CI outputs: shards merged into the single-process report, JUnit checked against the common
// schema (xmllint), and a timeline page rendered in headless Chromium. xmllint and chromium are
// installed by .ci/install; a missing one fails these tests, it never skips them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <algorithm>
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

using testing_cli::Cli;
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
  EXPECT_EQ(ReadFile(dir / "merged/coverage.lcov"), ReadFile(dir / "single/coverage.lcov"));
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
  // Runs without a verdict, nothing new: check exits 3, and so does the merge of its shards.
  ExpectShardsMergeToTheSingleReport(
      "check --system state --version beta23 --seed 8675309 --runs 30 --faults all --jobs 2 "
      "--properties hot-key-linearizable --quiet --baseline " TESTBED_SOURCE_DIR
      "/baselines/state/beta23.json",
      2);
  // A counterexample shrunk from a later run than the class's first (reports::
  // PickCounterexample), the two runs in different shards: merge picks it from the shards'
  // candidates as the single process did.
  const std::string later =
      "check --system state --version beta3 --seed 1 --runs 20 --jobs 2 --quiet --properties "
      "cas-versions-linearizable";
  ExpectShardsMergeToTheSingleReport(later, 3);
  {
    TempDir dir("later");
    ASSERT_EQ(Cli(later + " --out " + dir.path()).code, 1);
    const nlohmann::json r = nlohmann::json::parse(ReadFile(dir / "report.json"));
    bool from_a_later_run = false;
    for (const auto& v : r["violations"])
      from_a_later_run = from_a_later_run ||
                         v["seed"] != r["properties"][v["property"].get<std::string>()]["classes"]
                                       [v["class"].get<std::string>()]["first_seed"];
    EXPECT_TRUE(from_a_later_run) << r.dump(2);
  }
  // Line coverage: the shards' hits add up to the single process's, line by line.
  ExpectShardsMergeToTheSingleReport(
      "check --system a2 --seed 5 --runs 6 --jobs 2 --quiet --coverage "
      "--properties calls-linearizable,lane-order",
      3);
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

// The README is one page a user reads (issues 32, 59): the reference is docs/cli.md, generated,
// and measurements live under docs/.
TEST(CiOutputs, TheReadmeFitsOnePage) {
  const std::string readme = ReadFile(TESTBED_SOURCE_DIR "/README.md");
  ASSERT_FALSE(readme.empty());
  EXPECT_LT(std::count(readme.begin(), readme.end(), '\n'), 150);
}

// docs/cli.md is what docs/generate-cli.sh writes from this build's --help: a flag added,
// renamed or described anew without regenerating the page fails here.
TEST(CliReference, DocsCliMdIsTheHelpOfEveryCommand) {
  const std::string committed = ReadFile(TESTBED_SOURCE_DIR "/docs/cli.md");
  ASSERT_NE(committed.find("## testbed check\n"), std::string::npos);
  const Result generated =
      Shell("bash " TESTBED_SOURCE_DIR "/docs/generate-cli.sh " TESTBED_CLI_PATH " 2>&1");
  ASSERT_EQ(generated.code, 0) << generated.out;
  EXPECT_TRUE(generated.out == committed)
      << "docs/cli.md is stale: run bash docs/generate-cli.sh build/testbed > docs/cli.md";
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

// The committed example pages (reports/examples/, README "In CI"): a state, a handles and an
// a2 counterexample, each with the command that writes it and its screenshot
// (reports/examples/regenerate.sh writes both).
struct Example {
  std::string command, page;
};
const std::vector<Example>& Examples() {
  static const std::vector<Example> kExamples = {
      // A TTL that ended inside the run is what the finding turns on (a deadline is drawn only
      // where the run reached it).
      {"check --system state --version beta3 --properties cas-versions-linearizable --seed "
       "8676535 --runs 1 --clients 3 --ops 5 --skip 0:0,0:2,1:4,2:2 --faults all",
       "state-beta3-cas-versions-linearizable-version-continues-after-expiry.html"},
      {"check --system handles --version beta24 --properties busy-means-committing --seed 36 "
       "--runs 1 --clients 3 --ops 5 --faults all --skip 0:0,0:3,0:4,0:5,1:0,1:2,1:3,2:0,2:3,2:5",
       "handles-beta24-busy-means-committing-busy-beyond-lease.html"},
      {"check --system a2 --version 0.5.0 --properties fencing --seed 1 --runs 1 --clients 2 "
       "--ops 3 --skip 0:0,0:2",
       "a2-0.5.0-fencing-completed-after-lease-expired.html"},
  };
  return kExamples;
}

// A page's structure: its elements' tags and classes, and where each sits, without the texts.
std::string Structure(const std::string& html) {
  static const std::regex tag("<(div|span|p|h1|h2|header|code|button|a)( [^>]*)?>");
  static const std::regex keep(" (class|style|data-actor)=\"[^\"]*\"");
  std::string out;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), tag); it != std::sregex_iterator();
       ++it) {
    out += "<" + (*it)[1].str();
    const std::string attrs = (*it)[2].str();
    for (auto a = std::sregex_iterator(attrs.begin(), attrs.end(), keep);
         a != std::sregex_iterator(); ++a)
      out += a->str();
    out += ">\n";
  }
  return out;
}

TEST(CiOutputs, TheCommittedExamplePagesAreWhatTheCheckWritesToday) {
  for (const Example& e : Examples()) {
    TempDir dir("example");
    const Result r = Cli(e.command + " --quiet --html " + dir.path());
    ASSERT_EQ(r.code, 1) << e.command << "\n" << r.out;
    const std::string page = ReadFile(dir / e.page);
    const std::string committed = ReadFile(TESTBED_SOURCE_DIR "/reports/examples/" + e.page);
    ASSERT_FALSE(committed.empty()) << e.page;
    EXPECT_EQ(Structure(page), Structure(committed))
        << e.page << ": regenerate reports/examples/ (reports/examples/regenerate.sh)";
    EXPECT_EQ(page, committed) << e.page;
    EXPECT_EQ(ReadFile(TESTBED_SOURCE_DIR "/reports/examples/" +
                       e.page.substr(0, e.page.size() - 5) + ".png")
                  .substr(1, 3),
              "PNG")
        << e.page;
  }
}

// The bars of a page: left edge (px) and the virtual ms each call was sent at.
std::vector<std::pair<int64_t, int>> Bars(const std::string& html) {
  static const std::regex bar(
      "class=\"bar[^\"]*\" data-actor=\"[^\"]*\" style=\"left:(-?[0-9]+)px[^\"]*\" "
      "title=\"[^\"]*\" data-detail=\"[^,]*, \\+([0-9]+)ms");
  std::vector<std::pair<int64_t, int>> out;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), bar); it != std::sregex_iterator();
       ++it)
    out.emplace_back(std::stoll((*it)[2]), std::stoi((*it)[1]));
  std::sort(out.begin(), out.end());
  return out;
}

TEST(CiOutputs, TheTimelineIsToScaleWithGapsCompressedAndDeadlinesDrawn) {
  constexpr int kPxPerMs = 6;
  constexpr int64_t kGapMs = 40;
  for (const Example& e : Examples()) {
    TempDir dir("scale");
    ASSERT_EQ(Cli(e.command + " --quiet --html " + dir.path()).code, 1) << e.command;
    const std::string html = ReadFile(dir / e.page);
    const std::vector<std::pair<int64_t, int>> bars = Bars(html);
    ASSERT_GE(bars.size(), 3u) << e.page;
    std::vector<int64_t> gaps;
    // Each gap is drawn as kGapMs, whatever its length.
    static const std::regex gap_label(
        "class=\"gap-label\" style=\"left:[0-9]+px;width:([0-9]+)px\"[^>]*>&#8776;([0-9]+) ms<");
    for (auto it = std::sregex_iterator(html.begin(), html.end(), gap_label);
         it != std::sregex_iterator(); ++it) {
      gaps.push_back(std::stoll((*it)[2]));
      EXPECT_EQ(std::stoi((*it)[1]), kGapMs * kPxPerMs) << e.page << " " << gaps.back() << " ms";
    }
    // The virtual ms of each mark (faults, sleeps, crashes, clock events).
    std::vector<int64_t> marks;
    static const std::regex mark(
        "class=\"mark [^\"]*\" style=\"[^\"]*\" data-detail=\"[^,]*, \\+([0-9]+)ms");
    for (auto it = std::sregex_iterator(html.begin(), html.end(), mark);
         it != std::sregex_iterator(); ++it)
      marks.push_back(std::stoll((*it)[1]));
    for (size_t k = 1; k < bars.size(); ++k) {
      const auto [a_ms, a_x] = bars[k - 1];
      const auto [b_ms, b_x] = bars[k];
      if (a_ms == b_ms) continue;
      // Later is to the right, by at least the time between them (up to a gap's width).
      EXPECT_GE(b_x - a_x, std::min(b_ms - a_ms, kGapMs) * kPxPerMs)
          << e.page << " +" << a_ms << "ms and +" << b_ms << "ms";
      // A longer stretch with no other event in it (a fault, a sleep or a crash is drawn as a
      // mark) is compressed, and a mark says how long a gap inside it was.
      const bool mark_between =
          std::any_of(marks.begin(), marks.end(), [&](int64_t t) { return t > a_ms && t < b_ms; });
      if (b_ms - a_ms > kGapMs && !mark_between) {
        EXPECT_TRUE(std::any_of(gaps.begin(), gaps.end(),
                                [&](int64_t g) { return g > kGapMs && g <= b_ms - a_ms; }))
            << e.page << " +" << a_ms << "ms to +" << b_ms << "ms";
      }
    }
    // The SDK operations the finding is about sit above their calls, and the deadlines it turns
    // on are drawn (the state example's TTLs, the lease ends of handles and a2).
    EXPECT_NE(html.find("class=\"op\""), std::string::npos) << e.page;
    EXPECT_NE(html.find("class=\"deadline\""), std::string::npos) << e.page;
    EXPECT_NE(html.find("<button id=\"copy\""), std::string::npos) << e.page;
  }
  // a2's lease end lies after the claim that took it and before the complete that was accepted
  // past it.
  TempDir dir("lease");
  ASSERT_EQ(Cli(Examples()[2].command + " --quiet --html " + dir.path()).code, 1);
  const std::string html = ReadFile(dir / Examples()[2].page);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(html, m, std::regex("class=\"deadline\" style=\"left:([0-9]+)px")));
  const int lease_x = std::stoi(m[1]);
  ASSERT_TRUE(
      std::regex_search(html, m,
                        std::regex("class=\"op\" data-actor=\"client1\" "
                                   "style=\"left:([0-9]+)px;width:([0-9]+)px[^>]*>claim<")));
  EXPECT_GT(lease_x, std::stoi(m[1]) + std::stoi(m[2]));
  ASSERT_TRUE(std::regex_search(
      html, m,
      std::regex("class=\"op\" data-actor=\"client1\" style=\"left:([0-9]+)px[^>]*>complete<")));
  EXPECT_LT(lease_x, std::stoi(m[1]));
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
