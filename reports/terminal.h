// The terminal's rendering of the report model (reports/check_report.h): what `check` and
// `merge` print on stdout is made here from the same rows that report.json, report.md and JUnit
// are made from, so the terminal and the files cannot say different things.
#pragma once

#include <string>
#include <vector>

#include "reports/check_report.h"

namespace testbed::reports {

// The per-property table: runs, passes and violations, each class with its runs, first seed and
// status, and the notes of a property (runs without a verdict, faults set aside, dfs coverage).
std::string SummaryText(const CheckReport& r);
// "baseline FILE: N new, M known, ...", with the known classes no run showed (listed when
// `all` or when there are a few; otherwise counted: report.json lists them).
std::string BaselineText(const CheckReport& r, bool all = false);
// A run sample replayed on redis-server, "" when there was none.
std::string SampleText(const CheckReport& r);
// Lua line coverage (check --coverage, mutate): per script, the lines with code that ran and
// the ones that never did.
std::string CoverageText(const std::vector<CoverageRow>& scripts);
// One class's counterexample: the finding, its Redis calls (in order, then per actor), its
// replay line, and the timeline page and scenario file written for it.
std::string ViolationText(const ViolationRow& v);
// A GitHub Actions workflow annotation for a class: "::error file=F,title=T::message\n", the
// message its sentence, seed and replay line (file omitted when ""), escaped as the runner
// requires (% \r \n in the message; also : and , in the properties).
std::string GithubAnnotation(const ViolationRow& v, const std::string& file);
// The progress line of a running check: runs done of the total (0: not known, as under a time
// budget or dfs), the rate, an ETA or the time left of a budget, and the classes found so far
// (new and known against a baseline, or all of them without one).
struct ProgressState {
  int64_t runs = 0, total = 0;
  double seconds = 0;
  int64_t budget_seconds = 0;
  int64_t fresh = 0, known = 0;
  bool baseline = false;
};
std::string ProgressLine(const ProgressState& p);
// A line of a counterexample for people: key hashes abbreviated (Abbreviate), and cut at
// `max` characters with the count of what was left out (report.json keeps it whole).
std::string Shorten(const std::string& line, size_t max = 400);

}  // namespace testbed::reports
