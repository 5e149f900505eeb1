// Property "quota-safety" of the state store: in a namespace with maxEntries 1, set a with a TTL,
// wait until its expiry instant, set b, and read both in that same millisecond; then several
// clients race for one slot, a client whose clock runs ahead writes while another's entry is
// live, and in a rolling deploy a full scope writes a key an old pod wrote.
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
    co_await QuotaProbe(ctx, w, scripts, id, i, rng.range(1, 50), &rec);
    co_await QuotaRace(ctx, w, scripts, id, i, &rec);
    co_await SkewQuotaProbe(ctx, w, scripts, id, i, /*safety=*/true, &skew_writes_, &rec);
    co_await ClaimQuotaProbe(ctx, w, scripts, id, i, &rec);
  }
  SkewWrites skew_writes_;
};

}  // namespace

const StateProperty& QuotaSafety() {
  static const StateProperty kProperty = {
      {"quota-safety",
       "a namespace never holds more live entries than maxEntries",
       Always,
       AndResend(
           {sim::Fault::kLatency, sim::Fault::kDelay, sim::Fault::kReorder, sim::Fault::kPause}),
       {{"overfill", "a namespace accepts a key past maxEntries while its entries are live"},
        {"refusal-reported-as-written",
         "a write the full namespace refused is acknowledged as written, and nothing is stored"},
        {"expiry-instant-overfill",
         "at an entry's expiry millisecond a new key is accepted while get() still returns the "
         "old one"},
        {"concurrent-overfill",
         "keys set at one instant by several clients all stay live past "
         "maxEntries"},
        {"overfill-after-eviction",
         "an eviction (fault key-loss) took the namespace's index, which the quota counts, and "
         "the namespace then admitted keys past maxEntries: the quota lives in one evictable "
         "key"},
        {"skew-overfill",
         "a client whose clock runs ahead admits a key while another is live by the server's "
         "clock"},
        {"refusal-misreported",
         "a write the full scope refuses fails with an error other than quota exceeded"},
        {"adopted-key-overfill",
         "a full scope admits the write of a key an old pod wrote (a v1 value is not the "
         "scope's entry, rule 7)"}}},
      MakeRun<Runner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
