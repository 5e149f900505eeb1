// Property "work-at-most-once" of handles: work() runs at most once per draft, across every
// caller and retry (a claim is exclusive; "re-running it is the worse failure", js 784): the
// drafts workload counts each draft's upstream side effects.
#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include "properties/handles/handles_workload.h"

namespace testbed::props::handles {
namespace {

std::vector<Finding> Judge(const Recorder& rec, const sim::Trace&) {
  std::vector<Finding> out;
  for (const auto& [draft, d] : rec.drafts)
    if (d.effects > 1)
      out.push_back(
          {"work-ran-twice", absl::StrCat("work() ran ", d.effects, " times for ", draft, ": by ",
                                          absl::StrJoin(d.effect_log, ", by "))});
  return out;
}

}  // namespace

const HandlesProperty& WorkAtMostOnce() {
  static const HandlesProperty kProperty = {
      {"work-at-most-once",
       "work() runs at most once per draft, across every caller and retry",
       Always,
       {},
       {{"work-ran-twice", "the upstream work of one draft ran twice"}}},
      Run<Judge>};
  return kProperty;
}

}  // namespace testbed::props::handles
