// Property "fencing" of the a2 event store: complete, fail and appends caused by an attempt are
// accepted only from the current attempt of a live claim: not after a newer attempt was granted,
// and not after the lease expired. Its workers also append progress notes caused by their attempts.
#include <absl/strings/str_cat.h>

#include "properties/a2/a2_workload.h"

namespace testbed::props::a2 {
namespace {

// The anomaly classes this file names, declared once: its table and its judge use them.
constexpr char kCompletedBySupersededAttempt[] = "completed-by-superseded-attempt";
constexpr char kFailedBySupersededAttempt[] = "failed-by-superseded-attempt";
constexpr char kCompletedAfterLeaseExpired[] = "completed-after-lease-expired";
constexpr char kFailedAfterLeaseExpired[] = "failed-after-lease-expired";
constexpr char kCausedAppendBySupersededAttempt[] = "caused-append-by-superseded-attempt";
constexpr char kCausedAppendAfterLeaseExpired[] = "caused-append-after-lease-expired";

std::vector<Finding> JudgeFencing(const Recorder& r) {
  std::vector<Finding> out;
  for (const SettleRec& s : r.settles) {
    const bool accepted = s.outcome == "completed" || s.outcome == "failed" ||
                          s.outcome == "dead_lettered" || s.outcome == "appended";
    if (!accepted) continue;
    const std::string what =
        absl::StrCat(Actor(s.actor), "'s ", s.op, "(event ", s.index, ", attempt ", s.attempt,
                     ") at ", Ms(s.inv), " was accepted (", s.outcome, ")");
    const ClaimRec* own = nullptr;
    for (const ClaimRec& c : r.claims)
      if (c.index == s.index && c.attempt == s.attempt && c.actor == s.actor) own = &c;
    for (const ClaimRec& c : r.claims)
      if (c.index == s.index && c.attempt > s.attempt && c.ret < s.inv) {
        out.push_back(
            {s.op == "complete" ? kCompletedBySupersededAttempt
             : s.op == "fail"   ? kFailedBySupersededAttempt
                                : kCausedAppendBySupersededAttempt,
             what + " after " + ClaimText(c),
             {},
             {Involve(c.actor, c.inv, c.ret, "claim"), Involve(s.actor, s.inv, s.ret, s.op)},
             {LeaseEnd(c)}});
        break;
      }
    if (own && s.inv > own->lease_end)
      out.push_back(
          {s.op == "complete" ? kCompletedAfterLeaseExpired
           : s.op == "fail"   ? kFailedAfterLeaseExpired
                              : kCausedAppendAfterLeaseExpired,
           what + ", after its lease had expired: " + ClaimText(*own),
           {},
           {Involve(own->actor, own->inv, own->ret, "claim"), Involve(s.actor, s.inv, s.ret, s.op)},
           {LeaseEnd(*own)}});
  }
  return out;
}

}  // namespace

const A2Property& Fencing() {
  static const A2Property kProperty = {
      {"fencing",
       "complete, fail and caused appends are accepted only from the current attempt of a live "
       "claim",
       Always,
       LosesWrites(),
       {{kCompletedBySupersededAttempt,
         "a complete was accepted after a newer attempt had been granted"},
        {kFailedBySupersededAttempt, "a fail was accepted after a newer attempt had been granted"},
        {kCompletedAfterLeaseExpired, "a complete was accepted after its lease had expired"},
        {kFailedAfterLeaseExpired, "a fail was accepted after its lease had expired"},
        {kCausedAppendBySupersededAttempt,
         "an append caused by an attempt was accepted after a newer attempt had been granted"},
        {kCausedAppendAfterLeaseExpired,
         "an append caused by an attempt was accepted after its lease had expired"}}},
      Concurrent<JudgeFencing, Workload::kEventsWithCausedAppends>};
  return kProperty;
}

}  // namespace testbed::props::a2
