// Property "cas-versions-linearizable" of the state store: get, set, compareAndSet and delete on
// two shared keys by every client, with versions, judged as a history against model/state_register
// (linearizability: an ambiguous operation may or may not have taken effect, an expiry inside an
// operation may go either way).
#include <map>
#include <string>

#include "properties/state/state_workload.h"

namespace testbed::props::state {
namespace {

class CasVersionsLinearizableRunner : public StateRun {
 public:
  using StateRun::StateRun;
  void Check(sim::World& world, RunOutcome& out) override {
    JudgeHistory(history_, w, world.start_ms(), /*hot_key=*/false, out);
    out.findings.insert(out.findings.end(), rec.findings.begin(), rec.findings.end());
  }

 private:
  sim::Task<void> Client(sim::Ctx& ctx, int id) override {
    auto ns = Namespace(ctx);
    std::map<std::string, int64_t> seen_version;
    for (int i = 0; i < w.ops; ++i) {
      if (w.skip.count({id, i})) continue;  // shrunk away
      sim::Prng rng(sim::OpSeed(w.seed, id, i));
      const std::string key = "k" + std::to_string(rng.below(w.keys));
      co_await PlainOp(ctx, *ns, w, id, i, key, rng, seen_version, &history_, &rec);
    }
  }
  checker::RegisterHistory history_;
};

}  // namespace

const StateProperty& CasVersionsLinearizable() {
  static const StateProperty kProperty = {
      {"cas-versions-linearizable",
       "get, set, compareAndSet and delete on each key, with versions, are linearizable (an "
       "ambiguous operation may or may not have taken effect; an expiry inside an operation may "
       "go either way)",
       Always,
       {},
       HistoryClasses("a key")},
      MakeRun<CasVersionsLinearizableRunner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
