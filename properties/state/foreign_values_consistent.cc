// Property "foreign-values-consistent" of the state store: another writer (an older SDK, a
// migration script, an operator; with old pods, an old pod's key) SETs a key to raw text this SDK
// did not write; get and compareAndSet at the version get() returned must agree about it.
#include <string>

#include "properties/state/state_workloads.h"

namespace testbed::props::state {
namespace {

class Runner : public StateRun {
 public:
  using StateRun::StateRun;

 private:
  sim::Task<void> Client(sim::Ctx& ctx, int id) override {
    auto ns = Namespace(ctx);
    // The same namespace as an old pod of the deploy sees it.
    std::unique_ptr<real::state::StateNamespace> old_pod =
        OldPod(ctx, w, scripts, "ns", w.ns, "conn");
    for (int i = 0; i < w.ops; ++i) {
      if (w.skip.count({id, i})) continue;  // shrunk away
      sim::Prng rng(sim::OpSeed(w.seed, id, i));
      co_await ForeignValueProbe(ctx, *ns, old_pod.get(),
                                 "fv" + std::to_string(id) + "-" + std::to_string(i), rng, &rec);
    }
  }
};

}  // namespace

const StateProperty& ForeignValuesConsistent() {
  static const StateProperty kProperty = {
      {"foreign-values-consistent",
       "a key holding a value this SDK did not write (an older writer's or an operator's: not "
       "JSON, not an envelope, a version that is not a number, keys twice, another key order, "
       "2^53 + 1) "
       "reads the same through every operation: when get() returns null, compareAndSet(0) "
       "creates the key; when it returns version n, compareAndSet(n) replaces it, and get() "
       "then returns the new value",
       Always,
       AndResend(LosesWrites()),
       {{"absent-but-cas-refused",
         "get() returns null, and compareAndSet(0) fails reporting current = null"},
        {"read-but-cas-refused", "get() returns version n, and compareAndSet(n) fails"},
        {"cas-not-visible", "compareAndSet succeeds and get() then returns something else"}}},
      MakeRun<Runner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
