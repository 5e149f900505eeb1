// Property "hot-key-linearizable" of the state store: the plain workload on one key ("hot"), each
// client's operations split over kHotKeyThreadsPerClient concurrent threads: thread t of client c
// runs the client's operations i with i % kHotKeyThreadsPerClient == t, as actor c + clients * t (3
// clients of 3 threads are 9 actors on one key, with `ops` operations per client as in every
// workload).
#include <map>
#include <string>
#include <vector>

#include "properties/state/state_workload.h"

namespace testbed::props::state {
namespace {

class HotKeyLinearizableRunner : public StateRun {
 public:
  using StateRun::StateRun;
  void Check(sim::World& world, RunOutcome& out) override {
    JudgeHistory(history_, w, world.start_ms(), /*hot_key=*/true, out);
    out.findings.insert(out.findings.end(), rec.findings.begin(), rec.findings.end());
  }

 private:
  sim::Task<void> Client(sim::Ctx& ctx, int id) override {
    std::vector<sim::ThreadId> threads;
    for (int t = 1; t < kHotKeyThreadsPerClient; ++t)
      threads.push_back(ctx.spawn("hot" + std::to_string(t),
                                  [this, id, t](sim::Ctx& c) { return Thread(c, id, t); }));
    co_await Thread(ctx, id, 0);
    for (sim::ThreadId t : threads) co_await ctx.join(t);
  }
  sim::Task<void> Thread(sim::Ctx& ctx, int id, int t) {
    auto ns = Namespace(ctx);
    std::map<std::string, int64_t> seen_version;
    for (int i = t; i < w.ops; i += kHotKeyThreadsPerClient) {
      if (w.skip.count({id, i})) continue;  // shrunk away
      sim::Prng rng(sim::OpSeed(w.seed, id, i));
      co_await PlainOp(ctx, *ns, w, id + w.clients * t, i, "hot", rng, seen_version, &history_,
                       &rec);
    }
  }
  checker::RegisterHistory history_;
};

}  // namespace

const StateProperty& HotKeyLinearizable() {
  static const StateProperty kProperty = {
      {"hot-key-linearizable",
       "the same contract as cas-versions-linearizable on one hot key: every client runs "
       "three threads on it (3 clients: 9 actors), which share out the client's operations",
       Always,
       {},
       HistoryClasses("the hot key")},
      MakeRun<HotKeyLinearizableRunner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
