// Property "quota-counts-live-handles" of handles: maxEntries limits the live handles
// of a kind: each probe makes two drafts of a maxEntries-2 kind, lets both go (idle expiry,
// discard, or a commit whose result expires), then creates a third, which must be accepted.
#include "properties/handles/handles_workload.h"

namespace testbed::props::handles {

const HandlesProperty& QuotaCountsLiveHandles() {
  static const HandlesProperty kProperty = {
      {"quota-counts-live-handles",
       "maxEntries limits the live handles of a kind: once the drafts are expired, discarded, or "
       "committed with expired results, a create is accepted",
       Always,
       {sim::Fault::kRestart, sim::Fault::kFailover, sim::Fault::kKeyLoss, sim::Fault::kLatency,
        sim::Fault::kDelay, sim::Fault::kReorder, sim::Fault::kPause, sim::Fault::kSkew,
        sim::Fault::kClockJump},
       {{"expired-drafts-hold-quota", "drafts past their deadline still count against maxEntries"},
        {"discarded-drafts-hold-quota", "discarded drafts still count against maxEntries"},
        {"expired-results-hold-quota",
         "committed drafts whose results expired still count against maxEntries"},
        {"resent-create-orphans-draft",
         "a create re-sent by the client library after a reconnect made two drafts: the first, "
         "whose handle no caller got, holds a slot until it expires"}}},
      Run<WorkloadFindings, Workload::kQuota>};
  return kProperty;
}

}  // namespace testbed::props::handles
