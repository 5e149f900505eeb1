// testbed sim: the toy counter workload in the simulated world, under every strategy.
#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>
#include <absl/strings/str_split.h>
#include <absl/strings/numbers.h>

#include <cstdio>
#include <memory>

#include "cmd/cli_internal.h"
#include "real/real_backend.h"
#include "real/redis_server.h"
#include "sim/clock.h"
#include "sim/runtime.h"
#include "sim/strategies.h"
#include "sim/workloads.h"

namespace testbed::cli {
namespace {

using internal::AppendFlag;

struct Raw {
  SimSpec spec;
  bool has_seed = false;
  std::string choices, faults = "none";
};

void Define(CLI::App& app, Raw& r) {
  internal::AddSeed(app, &r.spec.seed, &r.has_seed);
  app.add_option("--strategy", r.spec.strategy, "random (default), pct, dfs or replay")
      ->check(CLI::IsMember({"random", "pct", "dfs", "replay"}));
  internal::AddInt(app, "--pct-depth", &r.spec.pct_depth, 1, "PCT's bug depth d (default 2)");
  internal::AddInt(app, "--preemption-bound", &r.spec.preemption_bound, 0,
                   "dfs: at most this many preemptions (default unbounded)");
  app.add_option("--choices", r.choices, "replay: the recorded choices, I,I,...");
  app.add_option("--faults", r.faults, "all, none, or a comma list (see testbed list)");
  internal::AddInt(app, "--actors", &r.spec.actors, 1, "actors (default 2)");
  internal::AddInt(app, "--increments", &r.spec.increments, 1, "increments per actor (default 3)");
  internal::AddInt(app, "--horizon-ms", &r.spec.horizon_ms, 1,
                   "virtual time after which the run stops (default 60000)");
  app.add_option("--redis", r.spec.redis, "none (default) or spawn")
      ->check(CLI::IsMember({"none", "spawn"}));
  app.add_flag("--check-determinism", r.spec.check_determinism,
               "run the seed twice and compare the traces event by event");
  app.add_flag("--print-trace", r.spec.print_trace, "print every trace event");
}

SimSpec Resolve(const Raw& r) {
  SimSpec s = r.spec;
  if (!r.has_seed) s.seed = FreshSeed();
  s.choices = ParseChoices(r.choices);
  if (s.strategy == "replay" && s.choices.empty())
    throw UsageError("--strategy replay needs --choices");
  try {
    s.faults = sim::FaultList::Parse(r.faults);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--faults: ") + e.what());
  }
  return s;
}

struct Outcome {
  sim::RunResult run;
  std::vector<std::string> trace;
  std::optional<std::string> violation;
};

Outcome RunOnce(const SimSpec& s, RedisServer* server, sim::Strategy& strategy) {
  std::unique_ptr<sim::Backend> backend = MakeBackend(server);
  sim::WorldOptions o;
  o.seed = s.seed;
  o.horizon_ms = s.horizon_ms;
  o.faults = s.faults.Options();
  sim::World world(o, *backend, strategy);
  sim::CounterStats stats;
  sim::AddCounterWorkload(world, static_cast<int>(s.actors), static_cast<int>(s.increments),
                          &stats);
  Outcome out;
  out.run = world.run();
  out.trace = world.trace().Lines();
  out.violation = sim::CheckCounter(*backend, world.now_ms(), stats);
  return out;
}

std::unique_ptr<sim::Strategy> MakeStrategy(const SimSpec& s) {
  if (s.strategy == "pct")
    return std::make_unique<sim::Pct>(static_cast<int>(s.pct_depth), s.actors * s.increments * 4);
  if (s.strategy == "replay") return std::make_unique<sim::Replay>(s.choices);
  return std::make_unique<sim::RandomWalk>();
}

}  // namespace

std::string SimSpec::Write() const {
  std::string line = absl::StrCat("testbed sim --seed ", seed);
  if (strategy != "random") AppendFlag(line, "strategy", strategy);
  if (pct_depth != 2) AppendFlag(line, "pct-depth", absl::StrCat(pct_depth));
  if (preemption_bound != -1) AppendFlag(line, "preemption-bound", absl::StrCat(preemption_bound));
  if (!choices.empty()) AppendFlag(line, "choices", absl::StrJoin(choices, ","));
  if (!faults.empty()) AppendFlag(line, "faults", faults.ToString());
  AppendFlag(line, "actors", absl::StrCat(actors));
  AppendFlag(line, "increments", absl::StrCat(increments));
  if (horizon_ms != 60000) AppendFlag(line, "horizon-ms", absl::StrCat(horizon_ms));
  if (redis != "none") AppendFlag(line, "redis", redis);
  if (check_determinism) AppendFlag(line, "check-determinism", "");
  if (print_trace) AppendFlag(line, "print-trace", "");
  return line;
}

SimSpec ParseSim(const std::vector<std::string>& args) {
  return internal::ParseWith<Raw, SimSpec>("sim", args, Define, Resolve);
}

int RunSim(const SimSpec& s) {
  std::printf("seed: %llu\n", static_cast<unsigned long long>(s.seed));
  std::fflush(stdout);
  std::unique_ptr<RedisServer> server;
  if (s.redis == "spawn") server = std::make_unique<RedisServer>(kDefaultEpochMs);
  if (s.strategy == "dfs") {
    sim::DfsResult r = sim::ExploreDfs(
        [&](sim::Strategy& strategy, sim::RunResult* run) {
          Outcome o = RunOnce(s, server.get(), strategy);
          *run = o.run;
          return o.violation.has_value();
        },
        {.preemption_bound = static_cast<int>(s.preemption_bound),
         .prune_visited_states = true,
         .max_schedules = 200000});
    std::printf("dfs: %lld schedules explored, %lld pruned at visited states, %s\n",
                static_cast<long long>(r.schedules), static_cast<long long>(r.pruned),
                r.exhausted ? "exhaustive within the bound" : "stopped at the schedule limit");
    std::printf("violations: %lld\n", static_cast<long long>(r.violations));
    if (!r.violations) return 0;
    SimSpec replay = s;
    replay.strategy = "replay";
    replay.choices = r.first_violation;
    std::printf("replay: %s\n", replay.Write().c_str());
    return 1;
  }
  auto strategy = MakeStrategy(s);
  Outcome out = RunOnce(s, server.get(), *strategy);
  if (s.print_trace)
    for (const auto& line : out.trace) std::printf("  %s\n", line.c_str());
  std::printf("steps: %lld, virtual time: %lld ms, stop: %s\n",
              static_cast<long long>(out.run.steps), static_cast<long long>(out.run.elapsed_ms),
              out.run.stop_reason.c_str());
  if (!out.run.error.empty()) std::printf("client logic error: %s\n", out.run.error.c_str());
  int code = 0;
  if (s.check_determinism) {
    auto again_strategy = MakeStrategy(s);
    Outcome again = RunOnce(s, server.get(), *again_strategy);
    size_t i = 0;
    while (i < out.trace.size() && i < again.trace.size() && out.trace[i] == again.trace[i]) ++i;
    if (i == out.trace.size() && i == again.trace.size()) {
      std::printf("determinism: same trace twice (%zu steps)\n", out.trace.size());
    } else {
      std::printf("determinism: DIFFERENT at trace line %zu:\n  first:  %s\n  second: %s\n", i,
                  i < out.trace.size() ? out.trace[i].c_str() : "(end)",
                  i < again.trace.size() ? again.trace[i].c_str() : "(end)");
      code = 1;
    }
  }
  std::printf("trace-hash: %s\n", out.run.trace_hash.c_str());
  if (out.violation) {
    SimSpec replay = s;
    replay.strategy = "replay";
    replay.choices.clear();
    for (auto [n, pick] : out.run.choices) replay.choices.push_back(pick);
    std::printf("violation: %s\nreplay: %s\n", out.violation->c_str(), replay.Write().c_str());
    return 1;
  }
  return code;
}

namespace internal {
Command SimCommand() {
  return internal::MakeCommand<Raw, SimSpec>(
      "sim",
      "Runs the toy counter workload (a read-modify-write race plus lease renewal) in the "
      "simulated world with faults; checks that no acknowledged increment is lost.",
      Define, Resolve, RunSim);
}
}  // namespace internal

}  // namespace testbed::cli
