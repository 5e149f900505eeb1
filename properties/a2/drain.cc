// Property "drain" of the a2 event store: hasPending and a claim's "settled" answer report
// exactly whether some event is pending. One sequential, fault-free caller whose claims are
// settled promptly, within their leases, so only the drain bookkeeping can differ from the
// model (model/a2.h).
#include <set>

#include "properties/a2/a2_sequential.h"

namespace testbed::props::a2 {
namespace {

// The anomaly classes this file names, declared once: its table and its judge use them.
constexpr char kHasPendingWithoutPendingEvent[] = "has-pending-without-pending-event";
constexpr char kPendingEventNotReported[] = "pending-event-not-reported";
constexpr char kSettledWhilePending[] = "settled-while-pending";
constexpr char kClaimedAfterDrain[] = "claimed-after-drain";
constexpr char kClaimableEventWithheld[] = "claimable-event-withheld";
constexpr char kClaimOutcomeDiffers[] = "claim-outcome-differs";

const Mix kDrainMix = {{25, 25, 0, 14, 12, 4, 0, 0, 0, 0, 0, 0, 0, 0}, {"s1"}, {}, {}, false};

std::string JudgeDrain(const std::vector<SequentialStep>& steps, size_t k) {
  const SequentialStep& s = steps[k];
  std::string cls;
  if (s.op == "append" && s.store.contains("hasPending") && s.model.contains("hasPending") &&
      s.store["hasPending"] != s.model["hasPending"])
    cls = s.store["hasPending"].get<bool>() ? kHasPendingWithoutPendingEvent
                                            : kPendingEventNotReported;
  if (s.op == "claim" && s.store != s.model) {
    const std::string got = s.store.value("outcome", ""), want = s.model.value("outcome", "");
    std::set<int64_t> granted;
    for (const Json& e : s.store.value("events", Json::array()))
      granted.insert(e["index"].get<int64_t>());
    bool withheld = false;
    for (const Json& e : s.model.value("events", Json::array()))
      withheld = withheld || !granted.count(e["index"].get<int64_t>());
    cls = got == "settled" && want != "settled"   ? kSettledWhilePending
          : want == "settled" && got != "settled" ? kClaimedAfterDrain
          : withheld                              ? kClaimableEventWithheld
                                                  : kClaimOutcomeDiffers;
  }
  if (cls.empty() && s.store != s.model) cls = kDiverged;  // another difference: stop here
  return cls;
}

}  // namespace

const A2Property& Drain() {
  static const A2Property kProperty = {
      {"drain",
       "hasPending is true exactly when some event is pending (dead letters are not), and a "
       "claim answers settled exactly when nothing is pending",
       Always,
       sim::FaultSet::All(),
       {{kHasPendingWithoutPendingEvent, "append reported hasPending although no event is pending"},
        {kPendingEventNotReported, "append reported no pending event although one is"},
        {kSettledWhilePending, "a claim answered settled although an event is pending"},
        {kClaimedAfterDrain, "a claim granted or waited although nothing is pending"},
        {kClaimableEventWithheld,
         "a claim withheld an event the model grants (a lane stalled behind a dead letter, say)"},
        {kClaimOutcomeDiffers, "a claim answered busy or claimed other than the model"}}},
      Sequential<kDrainMix, JudgeDrain>};
  return kProperty;
}

}  // namespace testbed::props::a2
