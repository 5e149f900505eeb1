// Property "reads-never-quota-error" of the state store: an old pod fills a small namespace with v1
// values, a new pod fills its own scope, then reads the v1 keys: no read may fail with a quota
// error, nor (where the version reads v1 keys) come back null.
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
    co_await ReadQuotaProbe(ctx, w, scripts, id, i, &rec);
  }
};

}  // namespace

const StateProperty& ReadsNeverQuotaError() {
  static const StateProperty kProperty = {
      {"reads-never-quota-error",
       "get() and list() never fail with a quota error, and a full scope hides no live value an "
       "old pod wrote",
       Always,
       {},
       {{"get-fails-with-quota-error", "get() fails with a quota error"},
        {"list-fails-with-quota-error", "list() fails with a quota error"},
        {"get-misses-v1-value-in-full-scope",
         "in a full scope, get() of a live value an old pod wrote returns null (a version that "
         "reads v1 keys)"}}},
      MakeRun<Runner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
