// Property "model-matches-implementation" of the state store: one client, fault-free, random
// operations across connections, scopes, namespaces, TTLs and quota (and old-pod writes for
// beta.24), each compared with model/state_store at that instant. On beta.24 a second model,
// the claim as built, names the disagreements the claim explains (answers-as-the-v1-claim),
// and the run goes on judging after them.
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
        {"disagrees-on-legacy-write", "an old pod's write leaves a state the model does not"},
        {"answers-as-the-v1-claim",
         "a call answers as beta.24's claim is built (the first concrete scope adopts a v1 "
         "value and others lose it), not as the contract (rule 7); the run is judged on"},
        {"value-bent-by-cjson",
         "a value comes back as cjson re-encodes it (numbers to 14 digits, an empty array as "
         "an object; value-read-back's finding), otherwise as the model answers; the run is "
         "judged on"},
        {"quota-frees-slot-at-expiry-instant",
         "the quota counts an entry as gone at its expiry millisecond while get() still returns "
         "it (quota-safety's expiry-instant-overfill), otherwise as the model answers; the run "
         "is judged on"},
        {"list-drops-at-expiry-instant",
         "list() leaves out an entry at its expiry millisecond while get() still returns it "
         "(expiry-boundary-get-list's finding), otherwise as the model answers; the run is "
         "judged on"}}},
      MakeRun<Runner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
