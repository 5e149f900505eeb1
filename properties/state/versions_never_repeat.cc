// Property "versions-never-repeat" of the state store: each client writes a key of its own, deletes
// it (or lets it expire), writes it again, and compares the two versions; on a repeat it
// compareAndSets at the first write's version.
#include <string>

#include "properties/state/state_workload.h"

namespace testbed::props::state {
namespace {

// versions-never-repeat: a version names one write of a key, also across a delete or an
// expiry in between (the API's name: compareAndSet(expectedVersion) means "nobody wrote since
// I read this version"). Write, delete or let expire, write again; a repeated version, and a
// compareAndSet at the first write's version that succeeds against the second write, are
// findings.
sim::Task<void> VersionProbe(sim::Ctx& ctx, real::state::StateNamespace& ns, const std::string& key,
                             bool by_expiry, Recorder* rec) {
  const int64_t since = rec->world->now_ms();
  const std::string gap = by_expiry ? "expiry" : "delete";
  try {
    const real::state::Json first = {{"write", "first"}}, second = {{"write", "second"}},
                            third = {{"write", "stale"}};
    std::optional<int64_t> short_ttl;
    if (by_expiry) short_ttl = 5;
    const real::state::StateValue a = co_await ns.set(key, first, short_ttl);
    if (by_expiry)
      co_await ctx.sleep(30);
    else
      co_await ns.del(key);
    const real::state::StateValue b = co_await ns.set(key, second, std::nullopt);
    if (b.version != a.version) co_return;
    const std::string what =
        "set(" + key + ", " + real::state::Stringify(first) + (by_expiry ? ", ttl 5 ms" : "") +
        ") was acknowledged as version " + std::to_string(a.version) + "; " +
        (by_expiry ? "30 ms later, after it expired" : "after delete(" + key + ")") + ", set(" +
        key + ", " + real::state::Stringify(second) + ") was acknowledged as version " +
        std::to_string(b.version) + " too";
    rec->findings.push_back({"version-repeated-after-" + gap, what, {}, {Since(ctx, since)}});
    const real::state::CasResult r =
        co_await ns.compare_and_set(key, a.version, third, std::nullopt);
    if (r.ok)
      rec->findings.push_back(
          {"stale-cas-succeeds-after-" + gap,
           what + "; compareAndSet(" + key + ", expected " + std::to_string(a.version) +
               ", the first write's version) then succeeded, overwriting the second write",
           {},
           {Since(ctx, since)}});
  } catch (const real::state::StateError&) {
  }
}

class VersionsNeverRepeatRunner : public StepRun {
 public:
  using StepRun::StepRun;

 private:
  sim::Task<void> Step(sim::Ctx& ctx, real::state::StateNamespace& ns, int id, int i,
                       sim::Prng& rng) override {
    co_await VersionProbe(ctx, ns, "ver" + std::to_string(id) + "-" + std::to_string(i),
                          rng.chance({1, 2}), &rec);
  }
};

}  // namespace

const StateProperty& VersionsNeverRepeat() {
  static const StateProperty kProperty = {
      {"versions-never-repeat",
       "a key's version names one write: a write after a delete or an expiry gets a version "
       "no earlier write had, so a compareAndSet at a version read before the delete cannot "
       "succeed against a later value (the strongest reading of compareAndSet(expectedVersion))",
       Always,
       LosesWrites(),
       {{"version-repeated-after-delete",
         "a write after delete() was acknowledged with the version of a write before it"},
        {"version-repeated-after-expiry",
         "a write after an expiry was acknowledged with the version of the expired write"},
        {"stale-cas-succeeds-after-delete",
         "a compareAndSet at a version from before a delete succeeded against a later value"},
        {kStaleCasSucceedsAfterExpiry,
         "a compareAndSet at a version from before an expiry succeeded against a later value"}}},
      MakeRun<VersionsNeverRepeatRunner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
