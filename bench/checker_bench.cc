// The linearizability checker on generated linearizable histories: the 10 000
// operations over 100 keys and 8 actors, and one hard single-key history (long, overlapping
// operations of 8 actors on one key, some ambiguous).
#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include "checker/history_gen.h"
#include "harness/prng_draws.h"
#include "checker/jepsen_history.h"
#include "checker/version_order.h"

namespace testbed::checker {

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
  RegisterHistory h = GenerateLinearizable(testbed::harness::PrngDraws(42), shape);
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
// the state properties check a long key: version-order inference, then the greedy witness, then
// the search with the hot key's budget (100,000 states) for what neither decides. Counters: the
// fraction of histories decided, the fraction the search had to decide, and the process's peak
// memory.
void BM_HotKeyDecided(benchmark::State& state) {
  const int actors = static_cast<int>(state.range(0)), ops = static_cast<int>(state.range(1));
  constexpr int kHistories = 10;
  std::vector<RegisterHistory> histories;
  for (int seed = 1; seed <= kHistories; ++seed) {
    RegisterHistory h = GenerateHotKey(testbed::harness::PrngDraws(static_cast<uint64_t>(seed)),
                                       actors, actors * ops);
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
      const bool planted = k % 2 == 1;
      if (InferRejectedCore(histories[k])) {
        ++decided;
        wrong += !planted;
      } else if (GreedyLinearization(histories[k])) {
        ++decided;
        wrong += planted;
      } else if (const Verdict v =
                     Checker<model::StateRegisterModel>(m, 100'000).check(histories[k]);
                 v.complete) {
        ++decided;
        ++by_search;
        wrong += v.ok == planted;
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

// Knossos's cas-register (check-history) at scale: 10 generated histories of `processes`
// clients and 1,000 operations over 5 values, half with a corrupted read, with 2% of them info
// when the second argument is 1; inference, then the greedy witnesses, then the search
// (10 million states). The histories are those of the Porcupine comparison
// (bench/porcupine/compare.sh). Counters: the fraction decided, the fraction the search had to
// decide, peak memory.
void BM_CasRegisterDecided(benchmark::State& state) {
  const int processes = static_cast<int>(state.range(0));
  std::vector<nlohmann::json> histories;
  for (uint64_t seed = 1; seed <= 5; ++seed)
    for (bool corrupt : {false, true})
      histories.push_back(GenerateCasRegisterHistory(testbed::harness::PrngDraws(seed),
                                                     {.processes = processes,
                                                      .operations = 1000,
                                                      .values = 5,
                                                      .info_per_mille = state.range(1) ? 20 : 0,
                                                      .corrupt = corrupt}));
  int decided = 0, by_search = 0;
  for (auto _ : state) {
    decided = by_search = 0;
    for (const nlohmann::json& h : histories) {
      const HistoryVerdict v = CheckCasRegisterHistory(h);
      decided += v.decided;
      by_search += v.decided_by == "search";
    }
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  state.counters["decided"] = static_cast<double>(decided) / static_cast<double>(histories.size());
  state.counters["by_search"] =
      static_cast<double>(by_search) / static_cast<double>(histories.size());
  state.counters["peak_MB"] = static_cast<double>(usage.ru_maxrss) / 1024;
}

BENCHMARK(BM_CasRegisterDecided)
    ->Unit(benchmark::kMillisecond)
    ->ArgsProduct({{8, 16, 32}, {0, 1}})
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
}  // namespace testbed::checker

BENCHMARK_MAIN();
