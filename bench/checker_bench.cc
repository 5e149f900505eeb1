// The linearizability checker on generated linearizable histories: the 10 000
// operations over 100 keys and 8 actors, and one hard single-key history (long, overlapping
// operations of 8 actors on one key, some ambiguous).
#include <benchmark/benchmark.h>

#include "properties/history_gen.h"

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
