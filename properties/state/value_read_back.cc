// Property "value-read-back" of the state store: each probe sets a key, compareAndSets it to a
// tricky value (empty arrays, 16-digit integers, fractions, unicode) and reads it back with get().
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
    const std::string probe_key = "rb" + std::to_string(id) + "-" + std::to_string(i);
    co_await ReadBackProbe(ctx, ns, probe_key, TrickyValue(rng), &rec);
  }
};

}  // namespace

const StateProperty& ValueReadBack() {
  static const StateProperty kProperty = {
      {"value-read-back",
       "a value reads back exactly as written (JSON equality)",
       Always,
       // A lost write (restart, failover, key loss) or a re-send reads back another value that
       // is no bending of the caller's (see AndResend).
       AndResend(LosesWrites()),
       {{"empty-array-becomes-object", "an empty array reads back as an empty object"},
        {"number-bent", "a number reads back as a different number"},
        {"string-bent", "a string reads back with different characters"},
        {"structure-bent", "a value reads back with a different structure"}}},
      MakeRun<Runner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
