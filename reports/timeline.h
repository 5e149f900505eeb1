// A counterexample as one self-contained HTML page (check --html): one lane per actor, each
// Redis call a bar from its request to its reply. Time runs left to right in proportion
// (kPxPerMs); events that share a millisecond take a slot each in the order the world ran them,
// and a gap longer than kGapMs is drawn as kGapMs, compressed and marked with its length.
// Faults, pauses, crashes and clock plans are marked on the lanes; the SDK operations the
// finding is about are drawn above the calls they made and their calls highlighted; the
// deadlines it turns on are vertical lines; the class's sentence and the replay line (with a
// copy button) stay in view above it all. Clicking or hovering a bar shows its call and reply,
// abbreviated as the text report abbreviates them. Inline CSS and script only: the page
// fetches nothing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reports/trace_view.h"
#include "sim/trace.h"

namespace testbed::reports {

// The calls of `actor` from `from_ms` to `to_ms` (virtual ms since the run's start).
struct Highlight {
  std::string actor;
  int64_t from_ms = 0, to_ms = 0;
  std::string op = "";  // the SDK operation, drawn above its calls ("": "operation")
};

// A vertical line at `at_ms` on `actor`'s lane ("": across every lane).
struct DeadlineMark {
  std::string actor;
  int64_t at_ms = 0;
  std::string what;
};

inline constexpr int kPxPerMs = 6;
inline constexpr int64_t kGapMs = 40;

struct TimelinePage {
  std::string title;     // "state beta30: cas-versions-linearizable / duplicate-version"
  std::string sentence;  // what the class means
  std::string counterexample;
  std::string replay;
  std::vector<Highlight> highlights;
  std::vector<DeadlineMark> deadlines = {};
  std::string report_link = "";  // the report this page belongs to, relative to the page
};

std::string TimelineHtml(const TimelinePage& page, const sim::Trace& trace,
                         const ScriptNames& names);

// A file name: letters, digits, '-', '_' and '.' kept, anything else '_'.
std::string SafeFileName(const std::string& stem);
// A file name for a page: SafeFileName(stem) + ".html".
std::string PageFileName(const std::string& stem);

}  // namespace testbed::reports
