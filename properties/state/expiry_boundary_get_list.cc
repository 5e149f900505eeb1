// Property "expiry-boundary-get-list" of the state store: each client sets a key of its own with a
// TTL, waits exactly that long, then reads it with get() and list() in the same millisecond; after
// its last probe, an entry adopted from an old pod, read past the new pods' maxTtl.
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
    // Keys of their own, so that other clients' writes do not blur the boundary.
    const std::string probe_key = "probe" + std::to_string(id) + "-" + std::to_string(i);
    co_await ExpiryProbe(ctx, ns, probe_key, rng.range(1, 50), &rec);
    // After the last probe (so that the ones before keep their instants): an entry adopted
    // from an old pod, read past the new pods' maxTtl.
    if (i == w.ops - 1) co_await AdoptedEntryProbe(ctx, w, scripts, id, i, &rec);
  }
};

}  // namespace

const StateProperty& ExpiryBoundaryGetList() {
  static const StateProperty kProperty = {
      {"expiry-boundary-get-list",
       "an entry that get() returns at an instant is listed by list() at the same instant",
       Always,
       MovesTheInstant(),
       {{"list-drops-at-expiry-instant",
         "at an entry's expiry millisecond get() returns it and list() leaves it out"},
        {"list-misses-adopted-entry",
         "an entry adopted from an old pod, with a TTL past the new pods' maxTtl, outlives the "
         "index its claim refreshed: get() returns it and list() leaves it out"}}},
      MakeRun<Runner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
