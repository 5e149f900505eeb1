// Benchmark pairs, measured in one run and reported as ratios (this machine is shared and
// noisy, so absolute times mean little):
//   1. check on the emulator against the same runs on a spawned redis-server (target >= 10x);
//   2. client Redis calls per second on one core with checking on (target >= 200 000);
// for the state system's default version, every property, seeds 99.., as `testbed check
// --system state --version beta30 --seed 99 --runs N --jobs 1` runs them.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "properties/system.h"
#include "real/redis_server.h"
#include "real/script_catalog.h"
#include "sim/clock.h"

namespace testbed {
namespace {

constexpr int kRuns = 10;

// One `check`'s worth of runs: every applicable property, kRuns seeds; returns the calls made.
int64_t CheckRuns(const ScriptCatalog& scripts, RedisServer* server) {
  const props::System& state = *props::FindSystem("state");
  int64_t calls = 0;
  for (int i = 0; i < kRuns; ++i)
    for (const auto& p : state.properties()) {
      const std::string old = state.version("beta30")->rolling_from;
      if (!p.applies("beta30", old)) continue;
      props::RunSpec spec;
      spec.property = p.name;
      spec.version = "beta30";
      spec.old_version = old;
      spec.seed = 99 + static_cast<uint64_t>(i);
      spec.clients = state.default_clients();
      spec.ops = state.default_ops();
      const props::RunOutcome out = state.Run(spec, scripts, server);
      calls += out.run.steps;
      benchmark::DoNotOptimize(out.violated);
    }
  return calls;
}

const ScriptCatalog& Shipped() {
  static const ScriptCatalog c = ScriptCatalog::Load(ScriptCatalog::ShippedDir());
  return c;
}

void BM_CheckOnTheEmulator(benchmark::State& s) {
  int64_t calls = 0;
  for (auto _ : s) calls += CheckRuns(Shipped(), nullptr);
  s.counters["client_calls_per_s"] =
      benchmark::Counter(static_cast<double>(calls), benchmark::Counter::kIsRate);
}

void BM_CheckOnRedisServer(benchmark::State& s) {
  RedisServer server(kDefaultEpochMs);
  int64_t calls = 0;
  for (auto _ : s) calls += CheckRuns(Shipped(), &server);
  s.counters["client_calls_per_s"] =
      benchmark::Counter(static_cast<double>(calls), benchmark::Counter::kIsRate);
}

BENCHMARK(BM_CheckOnTheEmulator)->Unit(benchmark::kMillisecond)->MinTime(2)->UseRealTime();
BENCHMARK(BM_CheckOnRedisServer)->Unit(benchmark::kMillisecond)->MinTime(2)->UseRealTime();

// Prints each benchmark as usual, then the ratios of the pairs measured in this run.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      seconds_[r.run_name.function_name] = r.GetAdjustedRealTime();
      if (r.counters.count("client_calls_per_s"))
        rate_[r.run_name.function_name] = r.counters.at("client_calls_per_s");
    }
    ConsoleReporter::ReportRuns(runs);
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    const double emu = seconds_["BM_CheckOnTheEmulator"], real = seconds_["BM_CheckOnRedisServer"];
    if (emu > 0 && real > 0)
      std::printf("ratio: check on redis-server / on the emulator = %.1fx (target >= 10x)\n",
                  real / emu);
    if (rate_.count("BM_CheckOnTheEmulator"))
      std::printf(
          "client calls per second on the emulator, one core, checking on: %.0f (target >= "
          "200000)\n",
          rate_["BM_CheckOnTheEmulator"]);
  }

 private:
  std::map<std::string, double> seconds_, rate_;
};

}  // namespace
}  // namespace testbed

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  testbed::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
}
