// The linearizability checker on generated linearizable histories: the 10 000
// operations over 100 keys and 8 actors, and one hard single-key history (long, overlapping
// operations of 8 actors on one key, some ambiguous).
#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include "properties/history_gen.h"
#include "properties/version_order.h"

namespace testbed::props {
namespace {

// Makes the last successful read of the history report a version nobody wrote: the checker
// must then search every interleaving before it can say no.
RegisterHistory Corrupt(RegisterHistory h) {
  for (auto it = h.rbegin(); it != h.rend(); ++it)
    if (it->op.kind == model::RegisterOp::Kind::kGet && it->op.ok && !it->ambiguous) {
      it->op.out_version += 100;
      break;
    }
  return h;
}

void Check(benchmark::State& state, const HistoryShape& shape, bool corrupt = false) {
  RegisterHistory h = GenerateLinearizable(42, shape);
  if (corrupt) h = Corrupt(h);
  model::StateRegisterModel m;
  int64_t explored = 0;
  for (auto _ : state) {
    Verdict v = Checker<model::StateRegisterModel>(m).check(h);
    if (v.ok != !corrupt || !v.complete) state.SkipWithError("wrong verdict");
    explored = v.states_explored;
  }
  state.counters["operations"] = static_cast<double>(h.size());
  state.counters["states"] = static_cast<double>(explored);
}

void BM_TenThousandOpsHundredKeysEightActors(benchmark::State& state) {
  Check(state, {.operations = 10000, .keys = 100, .actors = 8, .max_duration_ms = 10});
}

void BM_HardSingleKey(benchmark::State& state) {
  Check(state,
        {.operations = 400, .keys = 1, .actors = 8, .max_duration_ms = 40, .ambiguous = {1, 20}});
}

void BM_HardSingleKeyRejected(benchmark::State& state) {
  Check(state,
        {.operations = static_cast<int>(state.range(0)),
         .keys = 1,
         .actors = 8,
         .max_duration_ms = 40,
         .ambiguous = {1, 20}},
        true);
}

// Many clients on one hot key (issue 33): `actors` clients with `ops` operations each, a tenth
// of them with their reply lost, and in every other history one overlapping pair of sets
// acknowledged as the same version (a race the checker must find). Each history is checked as
// the state properties check one key: the search with the hot key's budget (100,000 states),
// then version-order inference and a greedy witness on what it cannot decide. Counters: the
// fraction of histories decided, and the process's peak memory.
void BM_HotKeyDecided(benchmark::State& state) {
  const int actors = static_cast<int>(state.range(0)), ops = static_cast<int>(state.range(1));
  constexpr int kHistories = 10;
  std::vector<RegisterHistory> histories;
  for (int seed = 1; seed <= kHistories; ++seed) {
    RegisterHistory h = GenerateHotKey(static_cast<uint64_t>(seed), actors, actors * ops);
    if (seed % 2 == 0)  // plant the race
      for (size_t i = 0, planted = 0; i < h.size() && !planted; ++i)
        for (size_t j = 0; j < h.size() && !planted; ++j)
          if (i != j && !h[i].ambiguous && !h[j].ambiguous &&
              h[i].op.kind == model::RegisterOp::Kind::kSet &&
              h[j].op.kind == model::RegisterOp::Kind::kSet &&
              h[i].op.out_version == h[j].op.out_version + 1 && h[j].ret > h[i].invoke &&
              h[i].ret > h[j].invoke) {
            h[i].op.out_version = h[j].op.out_version;
            planted = 1;
          }
    histories.push_back(PinObservedWrites(std::move(h)));
  }
  model::StateRegisterModel m;
  int decided = 0, by_search = 0, wrong = 0;
  for (auto _ : state) {
    decided = by_search = wrong = 0;
    for (size_t k = 0; k < histories.size(); ++k) {
      const Verdict v = Checker<model::StateRegisterModel>(m, 100'000).check(histories[k]);
      const bool planted = k % 2 == 1;
      if (v.complete) {
        ++decided;
        ++by_search;
        wrong += v.ok == planted;
      } else if (InferRejectedCore(histories[k])) {
        ++decided;
        wrong += !planted;
      } else if (GreedyLinearization(histories[k])) {
        ++decided;
        wrong += planted;
      }
    }
  }
  if (wrong) state.SkipWithError("wrong verdict");
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  state.counters["decided"] = static_cast<double>(decided) / kHistories;
  state.counters["by_search"] = static_cast<double>(by_search) / kHistories;
  state.counters["peak_MB"] = static_cast<double>(usage.ru_maxrss) / 1024;
}

BENCHMARK(BM_HotKeyDecided)
    ->Unit(benchmark::kMillisecond)
    ->ArgsProduct({{3, 10, 30, 100}, {12, 50, 200}})
    ->Iterations(1);

BENCHMARK(BM_HardSingleKeyRejected)
    ->Unit(benchmark::kMillisecond)
    ->Arg(50)
    ->Arg(100)
    ->Arg(200)
    ->Arg(400);
BENCHMARK(BM_TenThousandOpsHundredKeysEightActors)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HardSingleKey)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace testbed::props

BENCHMARK_MAIN();
