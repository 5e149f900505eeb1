// Property "quota-liveness" of the state store: fill a maxEntries-2 namespace, delete (or let
// expire) one entry, then set a new key: it must be accepted (old pods deleting, in a rolling
// deploy); and a client whose clock runs behind must not refuse a key once an entry expired.
#include <string>

#include "properties/state/state_workloads.h"

namespace testbed::props::state {
namespace {

class Runner : public StepRun {
 public:
  using StepRun::StepRun;

 private:
  sim::Task<void> Step(sim::Ctx& ctx, real::state::StateNamespace& ns, int id, int i,
                       sim::Prng& rng) override {
    co_await LivenessProbe(ctx, w, scripts, id, i, rng, &rec);
    co_await SkewQuotaProbe(ctx, w, scripts, id, i, /*safety=*/false, &skew_writes_, &rec);
  }
  SkewWrites skew_writes_;
};

}  // namespace

const StateProperty& QuotaLiveness() {
  static const StateProperty kProperty = {
      {"quota-liveness",
       "once an entry is deleted or expired, a namespace at its quota accepts a new key (old "
       "pods deleting, in a rolling deploy)",
       Always,
       {sim::Fault::kRestart, sim::Fault::kFailover, sim::Fault::kKeyLoss},
       {{"deleted-slot-refused", "after delete() the namespace still refuses a new key"},
        {"overwrite-refused", "a full namespace refuses an overwrite of a live key"},
        {"deleted-key-recreate-refused",
         "a key that is gone cannot be written again though the namespace has room"},
        {"expired-slot-refused", "after an entry expires the namespace still refuses a new key"},
        {"old-pod-delete-leaks-slot",
         "after an old pod deletes an entry the entry is gone, yet the namespace still refuses a "
         "new key: the deleted entry keeps its quota slot"},
        {"old-pod-delete-lost",
         "an old pod's delete never reaches the key the new pods read: the entry stays live, so "
         "the namespace (counting rightly) still refuses a new key"},
        {"skew-expired-slot-refused",
         "a client whose clock runs behind refuses a key after an entry expired by the "
         "server's clock"}}},
      MakeRun<Runner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
