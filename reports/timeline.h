// A counterexample as one self-contained HTML page (check --html): one lane per actor, each
// Redis call a bar from its request to its reply in the order the world ran events (virtual
// times label the axis; many events share a millisecond), faults, pauses, crashes and clock
// plans marked on the lanes, the operations the finding is about highlighted, and the class's
// sentence above it all. Clicking or hovering a bar shows its call and reply, abbreviated as the
// text report abbreviates them. Inline CSS and script only: the page fetches nothing.
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
};

struct TimelinePage {
  std::string title;     // "state beta30: cas-versions-linearizable / duplicate-version"
  std::string sentence;  // what the class means
  std::string counterexample;
  std::string replay;
  std::vector<Highlight> highlights;
};

std::string TimelineHtml(const TimelinePage& page, const sim::Trace& trace,
                         const ScriptNames& names);

// A file name for a page: letters, digits, '-', '_' and '.' only.
std::string PageFileName(const std::string& stem);

}  // namespace testbed::reports
