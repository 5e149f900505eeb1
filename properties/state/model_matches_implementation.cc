// Property "model-matches-implementation" of the state store: one client, fault-free, random
// operations across connections, scopes, namespaces, TTLs and quota (and old-pod writes for
// beta.24), each compared with model/state_store at one instant of the call (a call on a slow
// network takes effect at one instant of its span). On beta.24 a second model,
// the claim as built, names the disagreements the claim explains (answers-as-the-v1-claim),
// and the run goes on judging after them.
#include <string>

#include "properties/state/state_workload.h"

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
       "(model/state_store.h) does at one instant of the call (some calls run on a slow "
       "network, so that their steps span an entry's expiry)",
       Always,
       sim::FaultSet::All(),
       {{"disagrees-on-get", "get() answers other than the model"},
        {"disagrees-on-set", "set() answers other than the model"},
        {"disagrees-on-compareAndSet", "compareAndSet() answers other than the model"},
        {"disagrees-on-delete", "delete() answers other than the model"},
        {"disagrees-on-list", "list() answers other than the model"},
        {"disagrees-on-increment", "increment() answers other than the model"},
        {"disagrees-on-legacy-write", "an old pod's write leaves a state the model does not"},
        {kAnswersAsTheV1Claim,
         "a call answers as beta.24's claim is built (the first concrete scope adopts a v1 "
         "value and others lose it), not as the contract (rule 7); the run is judged on"},
        {kValueBentByCjson,
         "a value comes back as cjson re-encodes it (numbers to 14 digits, an empty array as "
         "an object; value-read-back's finding), otherwise as the model answers; the run is "
         "judged on"},
        {kQuotaFreesSlotAtExpiryInstant,
         "the quota counts an entry as gone at its expiry millisecond while get() still returns "
         "it (quota-safety's expiry-instant-overfill), otherwise as the model answers; the run "
         "is judged on"},
        {kVersionContinuesAfterExpiry,
         "a write whose read and write straddle its key's expiry (the call took time) numbers "
         "itself on from the expired entry and keeps its createdAt, as no single instant of "
         "the call answers"},
        {kStaleCasSucceedsAfterExpiry,
         "a compareAndSet() whose check and write straddle its key's expiry (the call took "
         "time) succeeds on top of the expired entry, numbered on from it"},
        {"set-straddles-expiry",
         "a set() whose steps straddle its key's expiry (the call took time) answers as no "
         "single instant of the call does"},
        {"compareAndSet-straddles-expiry",
         "a compareAndSet() whose steps straddle its key's expiry (the call took time) answers "
         "as no single instant of the call does: checked against the expired entry, it "
         "reports success and writes a new entry at version 1"},
        {"increment-straddles-expiry",
         "an increment whose steps straddle its key's expiry (the call took time) answers as "
         "no single instant of the call does: it carries the expired value into a new entry, "
         "or numbers on from it"},
        {"update-refused-at-expiry-instant",
         "a write of a live entry at its expiry millisecond is refused as quota exceeded (the "
         "index no longer holds the key, so the update asks for a new slot in a full scope), "
         "otherwise as the model answers; the run is judged on"},
        {"list-drops-at-expiry-instant",
         "list() leaves out an entry at its expiry millisecond while get() still returns it "
         "(expiry-boundary-get-list's finding), otherwise as the model answers; the run is "
         "judged on"}}},
      MakeRun<Runner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
