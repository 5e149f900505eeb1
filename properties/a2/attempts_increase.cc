// Property "attempts-increase" of the a2 event store: each claim of an event gets a fresh attempt
// number, larger than every attempt granted before it ("claims with leases and attempts"). Judged
// over every pair of claims of one event.
#include <absl/strings/str_cat.h>

#include "properties/a2/a2_workload.h"

namespace testbed::props::a2 {
namespace {

// The anomaly classes this file names, declared once: its table and its judge use them.
constexpr char kAttemptRepeated[] = "attempt-repeated";
constexpr char kAttemptDecreased[] = "attempt-decreased";

std::vector<Finding> JudgeAttemptsIncrease(const Recorder& r) {
  std::vector<Finding> out;
  for (size_t a = 0; a < r.claims.size(); ++a)
    for (size_t b = 0; b < r.claims.size(); ++b) {
      const ClaimRec &x = r.claims[a], &y = r.claims[b];
      if (a == b || x.index != y.index) continue;
      if (a < b && x.attempt == y.attempt)
        out.push_back(
            {kAttemptRepeated,
             ClaimText(x) + "; " + ClaimText(y),
             {},
             {Involve(x.actor, x.inv, x.ret, "claim"), Involve(y.actor, y.inv, y.ret, "claim")}});
      else if (x.ret < y.inv && y.attempt < x.attempt)
        out.push_back(
            {kAttemptDecreased,
             ClaimText(x) + "; later, " + ClaimText(y),
             {},
             {Involve(x.actor, x.inv, x.ret, "claim"), Involve(y.actor, y.inv, y.ret, "claim")}});
    }
  return out;
}

}  // namespace

const A2Property& AttemptsIncrease() {
  static const A2Property kProperty = {
      {"attempts-increase",
       "each claim of an event gets a fresh attempt number, larger than every attempt granted "
       "before it",
       Always,
       LosesWrites(),
       {{kAttemptRepeated, "two claims of one event got the same attempt number"},
        {kAttemptDecreased, "a later claim got a smaller attempt number"}}},
      Concurrent<JudgeAttemptsIncrease>};
  return kProperty;
}

}  // namespace testbed::props::a2
