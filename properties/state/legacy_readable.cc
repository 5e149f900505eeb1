// Property "legacy-readable" of the state store: an old pod writes v1 values; new pods read them,
// on their own connections and without one. Every caller of the namespace could read a v1 value
// before the upgrade (v1 keys have no scope), so every caller still reads it while it is live
// (model rule 7). beta.24's claim gives it to the first concrete connection that asks and
// tombstones it for everyone else (seed 000's comment says why: "a v1 key has no connection
// discriminator, so it cannot safely be exposed to every v2 scope"): that trade is a finding a
// team accepts in the baseline, not the contract. At the end client 0 claims v1 keys at their
// expiry millisecond (a version that claims): compareAndSet at the version must succeed there,
// and the copy must be gone two milliseconds later.
#include <string>

#include "properties/state/state_workload.h"

namespace testbed::props::state {
namespace {

class LegacyReadableRunner : public StateRun {
 public:
  using StateRun::StateRun;
  void Check(sim::World&, RunOutcome& out) override {
    out.findings = CheckLegacyReads(log_.keys, real::state::ClaimsLegacy(w.version));
    // The expiry-instant probe's, as it found them.
    for (Finding& f : rec.findings) out.findings.push_back(std::move(f));
  }

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
       "a live v1 value an old pod wrote is readable after the upgrade by every caller of the "
       "namespace (each connection, and callers without one) that has not written or deleted "
       "it",
       [](const std::string&, const std::string& old) { return IsV1(old); },
       LosesWrites(),
       {{kV1ValueUnreadable, "no caller of the new version can read a live v1 value"},
        {kV1ValueLostToAnotherScope,
         "a connection reads null for a live v1 value another connection read (the first "
         "reader's claim took it)"},
        {kUnreadableWithoutConnection,
         "a caller without a connection reads null for a live v1 value others read"},
        {kReadsOtherValue, "a connection reads a v1 key as a value the old pod never wrote"},
        {"loses-adopted-value", "a connection reads a v1 value, then null while it is live"},
        {"cas-misses-v1-value-at-expiry-instant",
         "at a v1 key's expiry millisecond (still live), compareAndSet at its version fails"},
        {"v1-value-outlives-its-expiry",
         "a copy claimed at a v1 key's expiry millisecond is still read two milliseconds "
         "later"}}},
      MakeRun<LegacyReadableRunner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
