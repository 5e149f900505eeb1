// Property "work-at-most-once" of handles: work() runs at most once per draft, across every
// caller and retry (a claim is exclusive; "re-running it is the worse failure", js 784): the
// drafts workload counts each draft's upstream side effects. The class says what let the second
// run in: Redis losing the claim (a restart, failover or key loss between the two runs: a
// durability class, which no script can prevent), or the lease design itself.
#include <absl/strings/str_cat.h>

#include <algorithm>

#include "properties/handles/handles_workload.h"

namespace testbed::props::handles {
namespace {

// The anomaly classes this file names, declared once: its table and its judge use them.
constexpr char kWorkRanTwice[] = "work-ran-twice";
constexpr char kWorkRanTwiceAfterLostClaim[] = "work-ran-twice-after-lost-claim";

std::vector<Finding> JudgeWorkAtMostOnce(const Recorder& rec, const sim::Trace& trace) {
  std::vector<Finding> out;
  for (const auto& [draft, d] : rec.drafts) {
    if (d.effects.size() < 2) continue;
    const Effect& second = d.effects[1];
    // The fault that lost writes after the draft's first commit began (a claim it lost may
    // have let a version be reused, and a stale CAS land) and before the second run ended.
    int64_t claimed_from = second.at;
    for (const Op& c : rec.ops)
      if (c.draft == draft && c.op == "commit") claimed_from = std::min(claimed_from, c.inv);
    std::string lost;
    for (const auto& e : trace.events)
      if (e.fault && !e.planned && LosesWrites().contains(*e.fault) && e.at_ms <= second.at &&
          e.at_ms >= claimed_from && lost.empty())
        lost = absl::StrCat(e.text, " at +", e.at_ms, "ms");
    std::string text = absl::StrCat("work() ran ", d.effects.size(), " times for ", draft, ":");
    for (const Effect& e : d.effects)
      absl::StrAppend(&text, " by client ", e.actor, " (ended at +", e.at, "ms);");
    if (!lost.empty()) absl::StrAppend(&text, " Redis lost writes in between (", lost, ")");
    out.push_back({lost.empty() ? kWorkRanTwice : kWorkRanTwiceAfterLostClaim, text});
  }
  return out;
}

}  // namespace

const HandlesProperty& WorkAtMostOnce() {
  static const HandlesProperty kProperty = {
      {"work-at-most-once",
       "work() runs at most once per draft, across every caller and retry",
       Always,
       {},
       {{kWorkRanTwice, "the upstream work of one draft ran twice"},
        {kWorkRanTwiceAfterLostClaim,
         "durability: Redis lost the claim (a restart, failover or key loss), and a second "
         "committer claimed the draft and ran its work again"}}},
      Run<JudgeWorkAtMostOnce>};
  return kProperty;
}

}  // namespace testbed::props::handles
