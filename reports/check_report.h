// The report model of a `testbed check` run, and its renderings for machines: JSON and JUnit,
// and Markdown for a pull-request comment (the terminal's is reports/terminal.h). Files are
// written through a temporary file and a rename, so a report on disk is never half-written.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace testbed::reports {

// One anomaly class a property showed (harness/system.h).
struct ClassRow {
  std::string cls;
  std::string sentence;
  int64_t runs = 0;         // runs that showed it
  uint64_t first_seed = 0;  // the first of them
  std::string status;       // with a baseline: "new" or "known"; "" without one
};

struct PropertyRow {
  std::string property;
  int64_t runs = 0;
  int64_t passed = 0;
  int64_t violated = 0;
  bool applies = true;  // false: the property means nothing for this version ("n/a")
  std::vector<ClassRow> classes = {};
  int64_t no_verdict = 0;  // runs that hit the checker's budget: neither passed nor violated
  std::string no_verdict_why = {};  // the first of them: its seed and what made it hard
  std::string sets_aside = {};      // the faults its runs leave out, when faults were asked for
  // dfs: 1 when every schedule of its seeds was explored, 0 when --max-schedules stopped a
  // search; -1 for the other strategies.
  int dfs_exhausted = -1;
};

// A baseline entry no run showed this time.
struct UnseenRow {
  std::string property, cls, reason;
};

// One minimized counterexample per anomaly class.
struct ViolationRow {
  std::string property;
  std::string cls;
  std::string sentence;
  std::string status;  // "new", "known" or "" (no baseline)
  uint64_t seed = 0;
  int clients = 0;
  int ops = 0;
  std::string counterexample;  // one line per operation or finding
  std::vector<std::string> redis_calls;
  std::string replay;
  std::string html = {};  // its timeline page (check --html), "" when none
  // For the terminal only (not in report.json): the finding's shape, the calls per actor with
  // virtual times, and the scenario file saved for it.
  std::string shape = {};
  std::vector<std::pair<std::string, std::vector<std::string>>> calls_per_actor = {};
  std::string scenario = {};
  // How many operations the counterexample makes (its clients' operations less those it
  // skips), and, in a shard's report only, the counterexamples of the shard's first runs that
  // showed the class, in seed order, from which merge picks as the unsharded check does.
  int64_t operations = 0;
  std::vector<ViolationRow> candidates = {};
};

// A class's counterexample, of those shrunk from the first runs that showed it (`rows`, in seed
// order, at most kCounterexampleCandidates): the first run's, unless it makes more than
// kSmallCounterexample operations and the class is not known to the baseline (a gate's
// counterexamples are not read); then the one with the fewest operations, then clients, the
// earliest of equals. Leaving an operation out moves its client's later ones in time, so a race
// may shrink further from one seed than from another. Returns an index into rows.
inline constexpr size_t kCounterexampleCandidates = 3;
inline constexpr int64_t kSmallCounterexample = 4;
bool ShrinkOtherRuns(const ViolationRow& first);
size_t PickCounterexample(const std::vector<ViolationRow>& rows);

// A sample of runs replayed on a spawned redis-server (check --real-sample).
struct SampleRow {
  int64_t runs = 0, diverged = 0;  // runs 0: no sample
  std::string first_divergence;
};

// A shard's own part of its report (check --shard i/n); a merged or unsharded report has none.
struct ShardInfo {
  int64_t index = 0, count = 0;  // count 0: not a shard
  std::string command;           // the check without --shard and its output flags
  double seconds = 0;            // the shard's run time (the merged JUnit's time is their sum)
};

// Lua line coverage of one script (check --coverage): the lines that hold code, and how often
// each ran in the check's runs (its minimization runs left out).
struct CoverageRow {
  std::string script;           // its catalog id, e.g. state/beta30/SET_WITH_QUOTA_SCRIPT
  std::string file;             // the file its body was read from
  std::vector<int> code_lines;  // the lines that hold code, ascending
  std::map<int, int64_t> hits;  // line -> times it ran (only lines that ran)
  int64_t covered() const;      // code lines that ran
  std::vector<int> never_run() const;
};

struct CheckReport {
  uint64_t seed = 0;
  std::string system;
  std::string version;
  std::string old_version;  // the old pods' version in rolling-deploy properties ("": none)
  std::vector<PropertyRow> properties;
  std::vector<ViolationRow> violations;
  std::string baseline;  // the baseline file compared against ("": none)
  std::vector<UnseenRow> unseen;
  ShardInfo shard = {};
  SampleRow sample = {};  // terminal only
  // A check stopped by a signal before its planned runs ended: "interrupted by SIGINT after N
  // runs" ("": complete). Its counts and classes are those of the runs it made.
  std::string incomplete = {};
  bool coverage = false;                  // check --coverage: the rows below were recorded
  std::vector<CoverageRow> scripts = {};  // by script id
};

// Classes with the status "new" (with a baseline), and runs without a verdict.
int64_t NewClasses(const CheckReport& r);
int64_t NoVerdict(const CheckReport& r);
// The line check and merge print when runs have no verdict and nothing else failed (exit 3).
std::string NoVerdictLine(int64_t runs);
// The last line of check and merge: what was found, how many classes, where the report is
// (`out`: the report directory, "" for none) and what to run next; without a baseline it says
// once how to gate on one. With a baseline that knows every class it is exactly
// "result: nothing new against the baseline", runs without a verdict or not (those have their
// own line before it, and CI scripts match this one whole).
std::string VerdictLine(const CheckReport& r, const std::string& out);

// "1 client", "3 clients".
std::string Count(int64_t n, const std::string& noun);

std::string ToJson(const CheckReport& r);
// Reads what ToJson wrote; std::invalid_argument naming what is wrong otherwise.
CheckReport FromJson(const std::string& text, const std::string& origin);
// The shards of one check (the same command, every shard 1..n once) as the one report the check
// would have written without --shard: counts summed, each class's first seed the smallest, its
// counterexample picked from the shards' candidates as PickCounterexample picks.
// std::invalid_argument otherwise.
CheckReport Merge(const std::vector<CheckReport>& shards);
std::string ToMarkdown(const CheckReport& r);
// An lcov tracefile of the coverage (genhtml and editors read it): a record per script.
std::string ToLcov(const CheckReport& r);
// "3, 7-9, 12": ascending line numbers with runs joined.
std::string LineRanges(const std::vector<int>& lines);
// JUnit XML: a test suite per property, a test case per anomaly class it showed (and one
// "no violation" case for a property that showed none). A case fails only for a class that
// is not known (every class, without a baseline); its message is the class's sentence and its
// body the replay line. Counts and the run time go in the properties.
std::string ToJUnit(const CheckReport& r, double seconds);
// Writes `text` to `path` through a temporary file and a rename.
void WriteFileAtomically(const std::string& path, const std::string& text);
// Writes report.json and report.md into dir (created if needed); returns their paths.
std::vector<std::string> WriteReports(const CheckReport& r, const std::string& dir);

}  // namespace testbed::reports
