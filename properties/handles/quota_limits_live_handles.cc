// Property "quota-limits-live-handles" of handles: maxEntries limits the live handles of a kind
// (the other half of quota-counts-live-handles): with maxEntries live drafts a create is
// refused, and a draft already there can still be updated and committed (its write is an
// overwrite, which the quota does not count). Fault-free: lost and re-sent calls make drafts
// nobody can name (quota-counts-live-handles reports those).
#include "properties/handles/handles_workload.h"

namespace testbed::props::handles {

const HandlesProperty& QuotaLimitsLiveHandles() {
  static const HandlesProperty kProperty = {
      {"quota-limits-live-handles",
       "maxEntries limits the live handles of a kind: with maxEntries live drafts a create is "
       "refused, and a draft already there can still be updated and committed",
       Always,
       sim::FaultSet::All(),
       {{"overfill", "a create was accepted though maxEntries live drafts were there"},
        {"full-kind-refuses-update",
         "an update of a live draft failed because the kind was full: an overwrite was counted "
         "as a new entry"},
        {"full-kind-refuses-commit",
         "a commit of a live draft failed because the kind was full: an overwrite was counted "
         "as a new entry"}}},
      Run<WorkloadFindings, Workload::kQuotaLimit>};
  return kProperty;
}

}  // namespace testbed::props::handles
