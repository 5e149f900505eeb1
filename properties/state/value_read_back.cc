// Property "value-read-back" of the state store: each probe sets a key, compareAndSets it to a
// tricky value (empty arrays, 16-digit integers, fractions, unicode) and reads it back with get().
#include <absl/strings/escaping.h>
#include <absl/strings/match.h>
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>

#include "model/state_store.h"
#include "properties/state/state_workload.h"
#include "sim/clock.h"

namespace testbed::props::state {
namespace {

sim::Task<void> ReadBackProbe(sim::Ctx& ctx, real::state::StateNamespace& ns,
                              const std::string& key, real::state::Json value, Recorder* rec) {
  const int64_t since = rec->world->now_ms();
  try {
    real::state::Json first = real::state::Json::object();
    first["first"] = true;
    co_await ns.set(key, first, std::nullopt);
    real::state::CasResult r = co_await ns.compare_and_set(key, 1, value, std::nullopt);
    std::optional<real::state::StateValue> got = co_await ns.get(key);
    if (r.ok && got && got->value != value)
      rec->findings.push_back({JsonBend(value, got->value),
                               "compareAndSet(\"" + key + "\", 1, " +
                                   real::state::Stringify(value) + ") then get() read back " +
                                   real::state::Stringify(got->value),
                               {},
                               {Since(ctx, since)}});
  } catch (const real::state::StateError&) {
  }
}

class ValueReadBackRunner : public StepRun {
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
       {{kEmptyArrayBecomesObject, "an empty array reads back as an empty object"},
        {kNumberBent, "a number reads back as a different number"},
        {kStringBent, "a string reads back with different characters"},
        {kStructureBent, "a value reads back with a different structure"}}},
      MakeRun<ValueReadBackRunner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
