// Property "valid-calls-never-script-error" of the state store: set a value a JSON-over-Lua store
// may choke on (nesting deeper than cjson's 1000, -0, 1e21, long numbers, nested empties, unicode),
// then compareAndSet it at the version set() returned, then compareAndSet the value back over it.
// A script that fails at run time is a finding (script-error, as in every property).
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
    // A depth limit is not a race: one draw per run that may be deep (the first client's
    // first) finds it in three runs of eight, and the deep values' JSON work, the same on
    // both sides of the emulator/redis-server comparison, stays a small part of a check.
    const AdversarialCase& c = AdversarialValue(rng, /*deep=*/id == 0 && i == 0);
    co_await AdversarialProbe(ctx, ns, "adv" + std::to_string(id) + "-" + std::to_string(i), c,
                              &rec);
  }
};

}  // namespace

const StateProperty& ValidCallsNeverScriptError() {
  static const StateProperty kProperty = {
      {"valid-calls-never-script-error",
       "valid calls never fail with a script error, and a stored value can always be "
       "compare-and-set again at its version (values a JavaScript caller may store: deep "
       "nesting, -0, 1e21, long numbers, nested empties, unicode)",
       Always,
       {},
       {{"script-error",
         "a valid call fails with a script error (the SDK reports Redis as "
         "unavailable)"},
        {"cas-refused-at-current-version",
         "compareAndSet at the version set() returned fails, reporting that version as "
         "current"}}},
      MakeRun<Runner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
