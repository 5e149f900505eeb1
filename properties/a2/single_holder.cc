// Property "single-holder" of the a2 event store: at any instant at most one live claim holds an
// event. A lease lives from its grant until the expiry the claimer asked for (extended by
// acknowledged renewals) or until its holder completes or fails it, judged in real (world) time.
#include <absl/strings/str_cat.h>
#include <algorithm>

#include "properties/a2/a2_workload.h"

namespace testbed::props::a2 {
namespace {

// The anomaly classes this file names, declared once: its table and its judge use them.
constexpr char kTwoLiveHolders[] = "two-live-holders";

std::vector<Finding> JudgeSingleHolder(const Recorder& r) {
  std::vector<Finding> out;
  for (const ClaimRec& x : r.claims)
    for (const ClaimRec& y : r.claims) {
      if (x.index != y.index || y.attempt <= x.attempt) continue;
      const int64_t live_until = std::min(x.lease_end, ReleasedAt(r, x));
      if (y.ret < live_until)
        out.push_back(
            {kTwoLiveHolders,
             ClaimText(x) + "; " + ClaimText(y) + ", while the first lease was live",
             {},
             {Involve(x.actor, x.inv, x.ret, "claim"), Involve(y.actor, y.inv, y.ret, "claim")},
             {LeaseEnd(x)}});
    }
  return out;
}

}  // namespace

const A2Property& SingleHolder() {
  static const A2Property kProperty = {
      {"single-holder",
       "at any instant at most one live claim holds an event (a lease lives until its expiry, "
       "extended by renewals, or until its holder completes or fails the event; real time)",
       Always,
       LosesWrites(),
       {{kTwoLiveHolders, "an event was claimed again while another claim's lease was live"}}},
      Concurrent<JudgeSingleHolder>};
  return kProperty;
}

}  // namespace testbed::props::a2
