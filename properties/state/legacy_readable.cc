// Property "legacy-readable" of the state store: an old pod writes v1 values; new pods on their own
// connections read them: a live v1 value is readable by the first concrete connection that
// asks (seed 000's CLAIM_LEGACY_SCRIPT comment: "the first concrete connection ... adopts
// that value"), and stays readable by it.
#include <string>

#include "properties/state/state_workloads.h"

namespace testbed::props::state {
namespace {

class Runner : public StateRun {
 public:
  using StateRun::StateRun;
  void Check(sim::World&, RunOutcome& out) override { out.findings = CheckLegacyReads(log_.keys); }

 private:
  sim::Task<void> Client(sim::Ctx& ctx, int id) override {
    co_await LegacyClient(ctx, id, w, scripts, Legacy::kRead, &log_, &rec);
  }
  LegacyLog log_;
};

}  // namespace

const StateProperty& LegacyReadable() {
  static const StateProperty kProperty = {
      {"legacy-readable",
       "a live v1 value an old pod wrote is readable after the upgrade by the first concrete "
       "connection that asks, and stays readable by it",
       [](const std::string&, const std::string& old) { return IsV1(old); },
       LosesWrites(),
       {{"v1-value-unreadable", "no connection of the new version can read a live v1 value"},
        {"reads-other-value", "a connection reads a v1 key as a value the old pod never wrote"},
        {"loses-adopted-value", "a connection reads a v1 value, then null while it is live"}}},
      MakeRun<Runner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
