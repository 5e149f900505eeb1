// Property "legacy-adopted-once" of the state store: an old pod keeps writing one key; new pods on
// six connections get / set / compareAndSet / delete it; one v1 write must be read as its own by at
// most one scope.
#include <string>

#include "properties/state/state_workloads.h"

namespace testbed::props::state {
namespace {

class Runner : public StateRun {
 public:
  using StateRun::StateRun;
  void Check(sim::World&, RunOutcome& out) override {
    for (const auto& [origin, scopes] : log_.adopters)
      if (scopes.size() > 1) {
        std::string list;
        for (const auto& c : scopes) list += (list.empty() ? "" : ", ") + c;
        out.findings.push_back({"adopted-by-several-scopes",
                                "the old pod's write " + origin + " of A was read by " +
                                    std::to_string(scopes.size()) + " connections: " + list});
      }
  }

 private:
  sim::Task<void> Client(sim::Ctx& ctx, int id) override {
    co_await LegacyClient(ctx, id, w, scripts, Legacy::kAdoption, &log_, &rec);
  }
  LegacyLog log_;
};

}  // namespace

const StateProperty& LegacyAdoptedOnce() {
  static const StateProperty kProperty = {
      {"legacy-adopted-once",
       "one v1 write is adopted by at most one v2 scope",
       [](const std::string& v, const std::string& old) {
         return IsV1(old) && real::state::HasConnectionScopes(v);
       },
       LosesWrites(),
       {{"adopted-by-several-scopes", "one v1 write is read as its own by several connections"}}},
      MakeRun<Runner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
