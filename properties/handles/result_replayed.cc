// Property "result-replayed" of handles: once a commit returned a result, every later commit
// returns exactly that result ("the promised replay", js 625) and no read finds the draft
// uncommitted or missing while the result is live (resultTtlMs; this checks its first half).
#include <absl/strings/str_cat.h>

#include <algorithm>

#include "properties/handles/handles_workload.h"

namespace testbed::props::handles {
namespace {

std::vector<Finding> Judge(const Recorder& rec, const sim::Trace&) {
  std::vector<Finding> out;
  for (const Op& c : rec.ops) {
    // The commit that ran the work and recorded its result (a replay's own return is later
    // than the result's start: it cannot anchor the window).
    if (c.op != "commit" || c.outcome != "ok") continue;
    // While the result is live (the first half of resultTtlMs after the success returned).
    const int64_t until = c.ret + DraftKind().result_ttl_ms / 2;
    for (const Op& o : rec.ops) {
      if (o.draft != c.draft || o.inv <= c.ret || o.inv >= until || o.ret == kNever) continue;
      // A caller that discarded the draft gave up its result (a choice: the seed guards a
      // committing record against discard, and is silent on a committed one). A discard whose
      // reply was lost, or whose caller crashed, may have landed too.
      const bool discarded = std::any_of(rec.ops.begin(), rec.ops.end(), [&](const Op& d) {
        return d.draft == c.draft && d.op == "discard" &&
               (d.outcome == "ok" || d.transport || d.ret == kNever) && d.inv <= o.ret &&
               d.ret >= c.inv;
      });
      if (discarded) continue;
      std::string cls;
      if (o.op == "commit" && (o.outcome == "ok" || o.outcome == "replayed") && o.value != c.value)
        cls = "different-result";
      else if ((o.op == "commit" || o.op == "read") &&
               (o.outcome == "HANDLE_NOT_FOUND" || o.outcome == "HANDLE_EXPIRED"))
        cls = "result-lost";
      else if (o.op == "read" && o.outcome == "ok" && o.value.value("status", "") != "committed")
        cls = "result-lost";
      if (cls.empty()) continue;
      out.push_back({cls,
                     absl::StrCat("on ", c.draft, ": ", Describe(c), "; then ", Describe(o)),
                     {},
                     {Involve(c), Involve(o)}});
      return out;  // the first one per run says it
    }
  }
  return out;
}

}  // namespace

const HandlesProperty& ResultReplayed() {
  static const HandlesProperty kProperty = {
      {"result-replayed",
       "once a commit returned a result, every later commit returns exactly that result and "
       "the draft reads as committed while the result is live",
       Always,
       LosesWrites(),  // they lose acknowledged writes by themselves
       {{"different-result", "a later commit returned another result than the first success"},
        {"result-lost", "after a successful commit the draft is missing or uncommitted"}}},
      Run<Judge>};
  return kProperty;
}

}  // namespace testbed::props::handles
