// Reports of a check run: the JSON parses and carries every row; the Markdown has the table,
// each counterexample and its replay line; files are written whole.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "reports/check_report.h"
#include "reports/terminal.h"
#include "tests/temp_dir.h"

namespace testbed::reports {
namespace {

CheckReport Sample() {
  CheckReport r;
  r.seed = 7;
  r.system = "state";
  r.version = "beta30";
  r.properties = {{"cas-versions-linearizable",
                   10,
                   8,
                   2,
                   true,
                   {{"duplicate-version", "two writers got one version", 2, 8, ""}}},
                  {"quota-safety", 10, 10, 0}};
  r.violations = {{"cas-versions-linearizable",
                   "duplicate-version",
                   "two writers got one version",
                   "",
                   8,
                   2,
                   1,
                   "  1 1 2 0 0 set value=a -> version=1\n",
                   {"+0ms client0 exec \"GET\" \"k\" -> (nil)"},
                   "testbed check --seed 8"}};
  return r;
}

TEST(Reports, JsonCarriesEveryPropertyAndViolation) {
  const auto j = nlohmann::json::parse(ToJson(Sample()));
  EXPECT_EQ(j["seed"], 7);
  EXPECT_EQ(j["properties"]["cas-versions-linearizable"]["violated"], 2);
  EXPECT_EQ(j["properties"]["quota-safety"]["passed"], 10);
  ASSERT_EQ(j["violations"].size(), 1u);
  EXPECT_EQ(j["violations"][0]["replay"], "testbed check --seed 8");
  EXPECT_EQ(j["violations"][0]["redis_calls"].size(), 1u);
  EXPECT_EQ(j["violations"][0]["class"], "duplicate-version");
  EXPECT_EQ(j["properties"]["cas-versions-linearizable"]["classes"]["duplicate-version"]["runs"],
            2);
  EXPECT_FALSE(j.contains("known_not_seen"));  // no baseline
}

TEST(Reports, WithABaselineEachClassIsNewOrKnownAndUnseenOnesAreListed) {
  CheckReport r = Sample();
  r.baseline = "baselines/state/beta30.json";
  r.properties[0].classes[0].status = r.violations[0].status = "known";
  r.unseen = {{"quota-safety", "overfill", "accepted: see the scenario"}};
  const auto j = nlohmann::json::parse(ToJson(r));
  EXPECT_EQ(j["properties"]["cas-versions-linearizable"]["classes"]["duplicate-version"]["status"],
            "known");
  ASSERT_EQ(j["known_not_seen"].size(), 1u);
  EXPECT_EQ(j["known_not_seen"][0]["class"], "overfill");
  const std::string md = ToMarkdown(r);
  EXPECT_NE(md.find("duplicate-version (known) | | | 2 | 8 |"), std::string::npos) << md;
  EXPECT_NE(md.find("<summary>1 known class not seen this run</summary>\n\n- quota-safety / "
                    "overfill\n"),
            std::string::npos)
      << md;
  // The verdict opens the page; a known class's counterexample stays in report.json.
  EXPECT_EQ(md.rfind("**:white_check_mark: nothing new against the baseline** (1 known class "
                     "seen): state beta30, seed 7, 10 runs per property\n",
                     0),
            0u)
      << md;
  EXPECT_EQ(md.find("### cas-versions-linearizable"), std::string::npos) << md;
  EXPECT_NE(md.find("- cas-versions-linearizable / duplicate-version (seed 8): `testbed check "
                    "--seed 8`"),
            std::string::npos)
      << md;
}

TEST(Reports, MarkdownFitsAPullRequestCommentWhateverTheCounterexample) {
  // A new class with thousands of long Redis calls: the comment caps them and says where the
  // rest is (GitHub takes 65,536 characters).
  CheckReport r = Sample();
  r.violations[0].redis_calls.assign(5000, "EVAL " + std::string(2000, 'x'));
  r.violations[0].counterexample.clear();
  for (int i = 0; i < 3000; ++i) r.violations[0].counterexample += std::string(500, 'y') + "\n";
  const std::string md = ToMarkdown(r);
  EXPECT_LT(md.size(), 60000u);
  EXPECT_EQ(md.rfind("**:x: 1 anomaly class**", 0), 0u) << md.substr(0, 200);
  EXPECT_NE(md.find("... 4920 more in report.json"), std::string::npos);
  EXPECT_NE(md.find("... 2940 more in report.json"), std::string::npos);
}

TEST(Reports, MarkdownHasTheTableTheCounterexampleAndTheReplay) {
  const std::string md = ToMarkdown(Sample());
  EXPECT_NE(md.find("| cas-versions-linearizable | 10 | 8 | 2 | |"), std::string::npos) << md;
  EXPECT_NE(md.find("| &nbsp;&nbsp;duplicate-version :x: | | | 2 | 8 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| quota-safety | 10 | 10 | 0 | |"), std::string::npos) << md;
  EXPECT_NE(md.find("### cas-versions-linearizable / duplicate-version"), std::string::npos) << md;
  EXPECT_NE(md.find("set value=a -> version=1"), std::string::npos) << md;
  EXPECT_NE(md.find("Replay: `testbed check --seed 8`"), std::string::npos) << md;
  CheckReport clean = Sample();
  clean.violations.clear();
  EXPECT_NE(ToMarkdown(clean).find("No violation."), std::string::npos);
}

TEST(Reports, JUnitHasACasePerClassFailingOnlyForNewOnes) {
  CheckReport r = Sample();
  std::string xml = ToJUnit(r, 1.5);
  EXPECT_NE(xml.find("<testsuites name=\"testbed check state beta30 seed 7\" tests=\"2\" "
                     "failures=\"1\" errors=\"0\" time=\"1.500\">"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<testcase classname=\"state.beta30.cas-versions-linearizable\" "
                     "name=\"duplicate-version\">"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<failure message=\"two writers got one version\" type=\"violation\">"
                     "replay: testbed check --seed 8</failure>"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("name=\"no violation\"/>"), std::string::npos) << xml;
  // Against a baseline, a known class passes and says so.
  r.baseline = "baselines/state/beta30.json";
  r.properties[0].classes[0].status = "known";
  xml = ToJUnit(r, 1.5);
  EXPECT_NE(xml.find("failures=\"0\" errors=\"0\" time"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<system-out>runs: 2, first seed: 8\nknown (baselines/state/beta30.json)"),
            std::string::npos)
      << xml;
  // Text is escaped.
  r.properties[0].classes[0].status = "new";
  r.properties[0].classes[0].sentence = "a <b> & \"c\"";
  EXPECT_NE(ToJUnit(r, 0).find("message=\"a &lt;b&gt; &amp; &quot;c&quot;\" type=\"new\""),
            std::string::npos);
}

TEST(Reports, AreWrittenWholeWithNoTemporaryLeftBehind) {
  testing_dirs::TempDir tmp("reports-test");
  const std::string dir = tmp.path();
  std::filesystem::remove_all(dir);
  const auto paths = WriteReports(Sample(), dir);
  ASSERT_EQ(paths.size(), 2u);
  for (const auto& p : paths) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    EXPECT_FALSE(ss.str().empty()) << p;
    EXPECT_FALSE(std::filesystem::exists(p + ".tmp")) << p;
  }
}

TEST(Reports, CountsReadAsEnglish) {
  EXPECT_EQ(Count(1, "client"), "1 client");
  EXPECT_EQ(Count(3, "client"), "3 clients");
  EXPECT_EQ(Count(0, "run"), "0 runs");
  EXPECT_EQ(Count(1, "class"), "1 class");
  EXPECT_EQ(Count(2, "class"), "2 classes");
  EXPECT_EQ(Count(2, "property"), "2 properties");
  EXPECT_EQ(Count(2, "key"), "2 keys");
}

// The check's last line (issue 59): what was found, where the report is, what to run next.
TEST(Reports, TheVerdictLineSaysWhatWasFoundWhereTheReportIsAndHowToGate) {
  CheckReport r = Sample();
  EXPECT_EQ(VerdictLine(r, "out"),
            "result: 1 anomaly class in 1 property, each above with its replay: line; report: "
            "out/report.md; to gate on them, accept them with --write-baseline FILE and check "
            "with --baseline FILE");
  r.properties[0].classes.clear();
  EXPECT_EQ(VerdictLine(r, ""), "result: no violation in 20 runs of 2 properties");
  // With a baseline: exactly the line CI scripts match, also when some runs gave no verdict
  // (they have their own line); a new class is counted.
  r = Sample();
  r.baseline = "baselines/state/beta30.json";
  r.properties[0].classes[0].status = "known";
  r.properties[1].no_verdict = 3;
  EXPECT_EQ(VerdictLine(r, "out"), "result: nothing new against the baseline");
  r.properties[0].classes[0].status = "new";
  EXPECT_EQ(VerdictLine(r, ""),
            "result: 1 new class against the baseline, and 3 runs gave no verdict (not a pass), "
            "each above with its replay: line");
}

}  // namespace
TEST(Reports, TheProgressLineSaysHowFarHowFastHowLongAndWhatWasFound) {
  ProgressState p;
  p.runs = 250;
  p.total = 1000;
  p.seconds = 2.5;
  p.baseline = true;
  p.fresh = 1;
  p.known = 7;
  EXPECT_EQ(ProgressLine(p), "250/1000 runs (25%), 100/s, ETA 8 s, 1 new class, 7 known");
  p.total = 0;  // a time budget
  p.budget_seconds = 60;
  p.baseline = false;
  p.fresh = 3;
  EXPECT_EQ(ProgressLine(p), "250 runs, 100/s, 58 s left of the budget, 3 classes so far");
  p.budget_seconds = 0;  // dfs: schedules, no total
  p.seconds = 0;
  EXPECT_EQ(ProgressLine(p), "250 runs, 0/s, 3 classes so far");
}

TEST(Reports, AGithubAnnotationIsOneLineEscapedAsTheRunnerReadsIt) {
  ViolationRow v;
  v.property = "quota-safety";
  v.cls = "overfill";
  v.status = "new";
  v.sentence = "100% over, a:b";
  v.seed = 3;
  v.replay = "testbed check --seed 3";
  EXPECT_EQ(GithubAnnotation(v, "real/scripts/x,y.lua"),
            "::error file=real/scripts/x%2Cy.lua,title=testbed%3A quota-safety / overfill "
            "(new)::100%25 over, a:b (seed 3)%0Areplay: testbed check --seed 3\n");
  EXPECT_EQ(GithubAnnotation(v, "").rfind("::error title=", 0), 0u);
}

TEST(Reports, AnInterruptedCheckIsAnErrorInJUnitAndSaysSoInEveryReport) {
  CheckReport r = Sample();
  r.incomplete = "interrupted by SIGINT after 12 runs";
  const std::string xml = ToJUnit(r, 1.0);
  EXPECT_NE(xml.find("errors=\"1\" time="), std::string::npos) << xml;
  EXPECT_NE(
      xml.find("<error message=\"interrupted by SIGINT after 12 runs\" type=\"incomplete\"/>"),
      std::string::npos)
      << xml;
  EXPECT_EQ(FromJson(ToJson(r), "t").incomplete, r.incomplete);
  EXPECT_EQ(ToMarkdown(r).rfind("**:warning: incomplete, interrupted by SIGINT after 12 runs**", 0),
            0u);
}

}  // namespace testbed::reports
