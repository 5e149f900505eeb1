// Property "acknowledged-writes-visible" of the state store: set / get / list / delete on shared
// keys; a read that misses a write nothing else could have removed is a finding.
#include <string>
#include <vector>

#include "properties/state/state_workloads.h"

namespace testbed::props::state {
namespace {

// acknowledged-writes-visible: a read that found nothing although an acknowledged write
// returned before it began, outlives it, and no other operation that could remove the entry
// (a delete, an ambiguous write, a write that expires sooner) overlaps the gap.
std::vector<Finding> Judge(const std::vector<AckOp>& ops) {
  using K = AckOp::Kind;
  for (const AckOp& r : ops) {
    if ((r.kind != K::kGet && r.kind != K::kList) || r.ambiguous || r.found) continue;
    for (const AckOp& w : ops) {
      if (w.kind != K::kSet || w.ambiguous || w.key != r.key || w.ret_seq >= r.inv_seq) continue;
      if (w.exp_lo < r.ret_ms) continue;
      bool removable = false;
      for (const AckOp& o : ops) {
        if (&o == &w || o.key != r.key || (o.kind != K::kSet && o.kind != K::kDelete)) continue;
        const bool overlaps = o.inv_seq < r.ret_seq && (o.ambiguous || o.ret_seq > w.inv_seq);
        if (overlaps && (o.kind == K::kDelete || o.ambiguous || o.exp_lo < r.ret_ms))
          removable = true;
      }
      if (removable) continue;
      auto at = [](int64_t ms) { return "+" + std::to_string(ms - sim::kDefaultEpochMs) + "ms"; };
      auto set_of = [&](const AckOp& x) {
        return "client " + std::to_string(x.actor) + " set(\"" + x.key + "\", ttl " +
               (x.ttl ? std::to_string(*x.ttl) : std::string("default")) + ") acknowledged at " +
               at(x.ret_ms) + " (alive through " + at(x.exp_lo) + ")";
      };
      std::string later;
      for (const AckOp& o : ops)
        if (&o != &w && o.key == r.key && o.kind == K::kSet && o.ret_seq > w.inv_seq &&
            o.inv_seq < r.ret_seq)
          later += ", then " + set_of(o);
      return {
          {r.kind == K::kGet ? "get-misses-live-write" : "list-misses-live-write",
           set_of(w) + later + "; then client " + std::to_string(r.actor) + "'s " +
               (r.kind == K::kGet ? "get" : "list") + " from " + at(r.inv_ms) + " to " +
               at(r.ret_ms) +
               " found nothing, though no delete ran and every write keeps the key alive through " +
               at(r.ret_ms)}};
    }
  }
  return {};
}

class Runner : public StepRun {
 public:
  using StepRun::StepRun;
  void Check(sim::World&, RunOutcome& out) override { out.findings = Judge(ops_); }

 private:
  sim::Task<void> Step(sim::Ctx& ctx, real::state::StateNamespace& ns, int id, int i,
                       sim::Prng& rng) override {
    co_await AckStep(ctx, ns, id, i, rng, &ops_, &rec);
  }
  std::vector<AckOp> ops_;
};

}  // namespace

const StateProperty& AcknowledgedWritesVisible() {
  static const StateProperty kProperty = {
      {"acknowledged-writes-visible",
       "after a write is acknowledged, get() and list() find the key until it is overwritten, "
       "deleted or expires",
       Always,
       LosesWrites(),
       {{"get-misses-live-write", "get() finds nothing while an acknowledged write is alive"},
        {"list-misses-live-write",
         "list() leaves out a key while an acknowledged write is alive"}}},
      MakeRun<Runner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
