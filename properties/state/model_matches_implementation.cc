// Property "model-matches-implementation" of the state store: one client, fault-free, random
// operations across connections, scopes, namespaces, TTLs and quota (and old-pod writes for
// beta.24), each compared with model/state_store at that instant.
#include <string>

#include "properties/state/state_workloads.h"

namespace testbed::props::state {
namespace {

class Runner : public StateRun {
 public:
  using StateRun::StateRun;

 private:
  sim::Task<void> Client(sim::Ctx& ctx, int id) override {
    if (id == 0) co_await SequentialClient(ctx, w, scripts, &rec);
  }
};

}  // namespace

const StateProperty& ModelMatchesImplementation() {
  static const StateProperty kProperty = {
      {"model-matches-implementation",
       "a sequential, fault-free run answers every call as the pure model of the whole contract "
       "(model/state_store.h) does at that instant",
       Always,
       sim::FaultSet::All(),
       {{"disagrees-on-get", "get() answers other than the model"},
        {"disagrees-on-set", "set() answers other than the model"},
        {"disagrees-on-compareAndSet", "compareAndSet() answers other than the model"},
        {"disagrees-on-delete", "delete() answers other than the model"},
        {"disagrees-on-list", "list() answers other than the model"},
        {"disagrees-on-increment", "increment() answers other than the model"},
        {"disagrees-on-legacy-write", "an old pod's write leaves a state the model does not"}}},
      MakeRun<Runner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
