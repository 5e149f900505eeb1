#include "reports/terminal.h"

#include <algorithm>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_format.h>

#include "reports/trace_view.h"

namespace testbed::reports {

std::string SummaryText(const CheckReport& r) {
  std::string out =
      absl::StrFormat("%-44s %8s %8s %8s %s\n", "property / class", "runs", "passed", "violated",
                      r.baseline.empty() ? "first seed" : "first seed, against the baseline");
  for (const PropertyRow& p : r.properties) {
    if (!p.applies) {
      absl::StrAppendFormat(&out, "%-44s %8s\n", p.property, "n/a");
      continue;
    }
    absl::StrAppendFormat(&out, "%-44s %8d %8d %8d\n", p.property, p.runs, p.passed, p.violated);
    for (const ClassRow& c : p.classes)
      absl::StrAppendFormat(&out, "  %-42s %8s %8s %8d %d%s\n", c.cls, "", "", c.runs, c.first_seed,
                            c.status.empty() ? "" : "  " + c.status);
    if (p.no_verdict > 0)
      absl::StrAppend(&out, "  (", Count(p.no_verdict, "run"),
                      " hit the checker's state budget: no verdict, not a pass",
                      p.no_verdict_why.empty() ? "" : "; the first, " + p.no_verdict_why, ")\n");
    if (!p.sets_aside.empty())
      absl::StrAppend(&out, "  (runs without these faults: ", p.sets_aside, ")\n");
    if (p.dfs_exhausted == 1)
      absl::StrAppend(&out, "  exhausted: ", Count(p.runs, "schedule"), "\n");
    if (p.dfs_exhausted == 0)
      absl::StrAppend(&out, "  stopped after ", Count(p.runs, "schedule"),
                      " (--max-schedules): not every schedule\n");
  }
  return out;
}

std::string BaselineText(const CheckReport& r, bool all) {
  int64_t known = 0;
  for (const PropertyRow& p : r.properties)
    for (const ClassRow& c : p.classes) known += c.status == "known";
  std::string out =
      absl::StrFormat("baseline %s: %d new, %d known", r.baseline, NewClasses(r), known);
  if (r.unseen.empty()) return out + ", every known class seen\n";
  if (!all && r.unseen.size() > 5)
    return absl::StrCat(out, ", ", r.unseen.size(),
                        " known but not seen this run (--verbose lists them)\n");
  absl::StrAppendFormat(&out, ", %d known but not seen this run:\n", r.unseen.size());
  for (const UnseenRow& u : r.unseen)
    absl::StrAppend(&out, "  known but not seen this run: ", u.property, " / ", u.cls, "\n");
  return out;
}

std::string SampleText(const CheckReport& r) {
  if (r.sample.runs == 0) return "";
  std::string out = absl::StrCat("redis-server sample: ", Count(r.sample.runs, "run"),
                                 " replayed on a spawned redis-server, ", r.sample.diverged,
                                 " diverged from the emulator\n");
  if (r.sample.diverged > 0)
    absl::StrAppend(&out, "  first divergence: ", r.sample.first_divergence, "\n");
  return out;
}

std::string CoverageText(const std::vector<CoverageRow>& scripts) {
  std::string out = "\nlua line coverage (lines with code that the runs executed):\n";
  size_t width = 0;
  for (const CoverageRow& c : scripts) width = std::max(width, c.script.size());
  for (const CoverageRow& c : scripts) {
    const int64_t lines = static_cast<int64_t>(c.code_lines.size());
    absl::StrAppend(&out, "  ", c.script, std::string(width - c.script.size(), ' '), "  ",
                    absl::StrFormat("%3d of %3d (%3d%%)", c.covered(), lines,
                                    lines ? c.covered() * 100 / lines : 0));
    const std::vector<int> never = c.never_run();
    if (!never.empty()) absl::StrAppend(&out, "  never run: ", Shorten(LineRanges(never), 200));
    out += "\n";
  }
  return out;
}

namespace {
// A counterexample's calls, `indent`ed, one per line: past kListed, the first and the last ones
// and how many are left out (a client calling without end makes thousands; --json and the
// timeline have them all).
constexpr size_t kListed = 400, kListedTail = 100;
void AppendCalls(std::string& out, const std::vector<std::string>& calls,
                 const std::string& indent) {
  for (size_t i = 0; i < calls.size(); ++i) {
    if (calls.size() > kListed && i == kListed - kListedTail) {
      absl::StrAppend(&out, indent, "... ", calls.size() - kListed,
                      " more calls (the report's JSON and the timeline have them all) ...\n");
      i = calls.size() - kListedTail;
    }
    absl::StrAppend(&out, indent, Shorten(calls[i]), "\n");
  }
}
}  // namespace

std::string ViolationText(const ViolationRow& v) {
  std::string out = absl::StrCat("\nviolation of ", v.property, ", class ", v.cls,
                                 v.status.empty() ? "" : " (" + v.status + ")", ": ", v.sentence,
                                 " (seed ", v.seed, ", ", Count(v.clients, "client"), " x ",
                                 Count(v.ops, "operation"), "):\n");
  if (!v.shape.empty()) absl::StrAppend(&out, "  shape: ", v.shape, "\n");
  absl::StrAppend(&out, v.counterexample,
                  "redis calls (and faults), in the order Redis ran them:\n");
  AppendCalls(out, v.redis_calls, "  ");
  absl::StrAppend(&out, "the same calls per actor, with virtual times:\n");
  for (const auto& [actor, calls] : v.calls_per_actor) {
    absl::StrAppend(&out, "  ", actor, ":\n");
    AppendCalls(out, calls, "    ");
  }
  absl::StrAppend(&out, "replay: ", v.replay, "\n");
  if (!v.html.empty()) absl::StrAppend(&out, "timeline: ", v.html, "\n");
  if (!v.scenario.empty()) absl::StrAppend(&out, "scenario: ", v.scenario, "\n");
  return out;
}

namespace {
std::string GithubEscape(const std::string& text, bool property) {
  std::string out;
  for (char c : text) {
    if (c == '%')
      out += "%25";
    else if (c == '\r')
      out += "%0D";
    else if (c == '\n')
      out += "%0A";
    else if (property && c == ':')
      out += "%3A";
    else if (property && c == ',')
      out += "%2C";
    else
      out += c;
  }
  return out;
}
}  // namespace

std::string GithubAnnotation(const ViolationRow& v, const std::string& file) {
  std::string props;
  if (!file.empty()) props = "file=" + GithubEscape(file, true) + ",";
  props += "title=" + GithubEscape(absl::StrCat("testbed: ", v.property, " / ", v.cls,
                                                v.status.empty() ? "" : " (" + v.status + ")"),
                                   true);
  const std::string message = absl::StrCat(v.sentence, " (seed ", v.seed, ")\nreplay: ", v.replay);
  return absl::StrCat("::error ", props, "::", GithubEscape(message, false), "\n");
}

std::string ProgressLine(const ProgressState& p) {
  const double rate = p.seconds > 0 ? static_cast<double>(p.runs) / p.seconds : 0;
  std::string out;
  if (p.total > 0) {
    absl::StrAppendFormat(&out, "%d/%d runs (%d%%), %.0f/s", p.runs, p.total,
                          p.runs * 100 / p.total, rate);
    if (rate > 0)
      absl::StrAppendFormat(&out, ", ETA %.0f s", static_cast<double>(p.total - p.runs) / rate);
  } else {
    absl::StrAppendFormat(&out, "%d runs, %.0f/s", p.runs, rate);
  }
  if (p.budget_seconds > 0)
    absl::StrAppendFormat(&out, ", %.0f s left of the budget",
                          std::max(0.0, static_cast<double>(p.budget_seconds) - p.seconds));
  if (p.baseline)
    absl::StrAppend(&out, ", ", Count(p.fresh, "new class"), ", ", p.known, " known");
  else
    absl::StrAppend(&out, ", ", Count(p.fresh, "class"), " so far");
  return out;
}

std::string Shorten(const std::string& line, size_t max) {
  std::string out = Abbreviate(line);
  if (out.size() <= max) return out;
  // Cut at a UTF-8 character boundary.
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
  return absl::StrCat(out.substr(0, cut), "...(", out.size() - cut, " more bytes)");
}

}  // namespace testbed::reports
