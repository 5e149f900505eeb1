// Property "valid-calls-never-script-error" of the state store: set a value a JSON-over-Lua store
// may choke on (nesting deeper than cjson's 1000, -0, 1e21, long numbers, nested empties, unicode),
// then compareAndSet it at the version set() returned, then compareAndSet the value back over it.
// A script that fails at run time is a finding (script-error, as in every property).
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

// The anomaly classes this file names, declared once: its table and its judge use them.
constexpr char kCasRefusedAtCurrentVersionValidCallsNeverScriptError[] =
    "cas-refused-at-current-version";

// valid-calls-never-script-error: a stored value can always be compare-and-set again at the
// version set() returned (script errors themselves become findings in System::Run).
sim::Task<void> AdversarialProbe(sim::Ctx& ctx, real::state::StateNamespace& ns,
                                 const std::string& key, const AdversarialCase& c, Recorder* rec) {
  const std::string& label = c.label;
  const real::state::Json& value = c.value;
  real::state::Json small = real::state::Json::object();
  small["after"] = 1;
  // The value stored by set(), then compareAndSet at the version set() returned.
  int64_t since = rec->world->now_ms();
  try {
    const real::state::StateValue written = co_await ns.set(key + "s", value, std::nullopt);
    const real::state::CasResult r =
        co_await ns.compare_and_set(key + "s", written.version, small, std::nullopt);
    if (!r.ok && r.current && r.current->version == written.version)
      rec->findings.push_back(
          {kCasRefusedAtCurrentVersionValidCallsNeverScriptError,
           "set(\"" + key + "s\", " + label + ") was acknowledged as version " +
               std::to_string(written.version) + "; compareAndSet(\"" + key + "s\", " +
               std::to_string(written.version) +
               ", {\"after\":1}) failed, reporting that same version as current",
           {},
           {Since(ctx, since)}});
  } catch (const real::state::StateError&) {
  }
  // The value written by compareAndSet over an existing key (the scripts that keep createdAt
  // decode the new envelope), then compareAndSet again at the version it returned.
  since = rec->world->now_ms();
  try {
    const real::state::StateValue first = co_await ns.set(key + "c", small, std::nullopt);
    const real::state::CasResult r =
        co_await ns.compare_and_set(key + "c", first.version, value, std::nullopt);
    if (r.ok && r.value) {
      const real::state::CasResult again =
          co_await ns.compare_and_set(key + "c", r.value->version, small, std::nullopt);
      if (!again.ok && again.current && again.current->version == r.value->version)
        rec->findings.push_back(
            {kCasRefusedAtCurrentVersionValidCallsNeverScriptError,
             "compareAndSet(\"" + key + "c\", " + std::to_string(first.version) + ", " + label +
                 ") was acknowledged as version " + std::to_string(r.value->version) +
                 "; compareAndSet(\"" + key + "c\", " + std::to_string(r.value->version) +
                 ", {\"after\":1}) failed, reporting that same version as current",
             {},
             {Since(ctx, since)}});
    }
  } catch (const real::state::StateError&) {
  }
}

class ValidCallsNeverScriptErrorRunner : public StepRun {
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
        {kCasRefusedAtCurrentVersionValidCallsNeverScriptError,
         "compareAndSet at the version set() returned fails, reporting that version as "
         "current"}}},
      MakeRun<ValidCallsNeverScriptErrorRunner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
