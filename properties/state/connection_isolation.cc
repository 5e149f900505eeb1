// Property "connection-isolation" of the state store: each client is its own connection; all write
// and read the same key in a connection-scoped namespace, and must only ever read their own values.
#include <string>

#include "properties/state/state_workload.h"

namespace testbed::props::state {
namespace {

// The anomaly classes this file names, declared once: its table and its judge use them.
constexpr char kReadsOtherConnection[] = "reads-other-connection";

class ConnectionIsolationRunner : public StepRun {
 public:
  using StepRun::StepRun;

 private:
  std::string Connection(int id) const override {
    return w.broken_scope_for_negative_test ? "conn" : "conn" + std::to_string(id);
  }
  sim::Task<void> Step(sim::Ctx& ctx, real::state::StateNamespace& ns, int id, int i,
                       sim::Prng& rng) override {
    try {
      if (rng.chance({1, 2})) {
        real::state::Json mine = real::state::Json::object();
        mine["owner"] = id;
        co_await ns.set("shared", mine, std::nullopt);
      } else {
        std::optional<real::state::StateValue> got = co_await ns.get("shared");
        if (got && got->value.value("owner", -1) != id)
          rec.findings.push_back(
              {kReadsOtherConnection,
               "client " + std::to_string(id) + " (connection " + Connection(id) + ") read " +
                   real::state::Stringify(got->value) + ", written by another connection"});
      }
    } catch (const real::state::StateError&) {
    }
    co_await ctx.sleep(rng.range(0, 5));
  }
};

}  // namespace

const StateProperty& ConnectionIsolation() {
  static const StateProperty kProperty = {
      {"connection-isolation",
       "a connection never reads another connection's data",
       [](const std::string& v, const std::string&) { return real::state::HasConnectionScopes(v); },
       {},
       {{kReadsOtherConnection, "a connection reads a value another connection wrote"}}},
      MakeRun<ConnectionIsolationRunner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
