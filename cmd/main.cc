// testbed: the one CLI. Prints its seed first; exit codes 0 = no violation, 1 = violation
// (divergence) found, 2 = usage or setup error.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "properties/fidelity.h"
#include "real/real_backend.h"
#include "sim/runtime.h"
#include "sim/strategies.h"
#include "sim/workloads.h"
#include "sim/clock.h"
#include "sim/prng.h"

namespace {

using namespace testbed;

constexpr const char* kUsage =
    "usage:\n"
    "  testbed fidelity [--seed S] [--commands N] [--redis spawn|none]\n"
    "                   [--checkpoint-every K] [--inject-fault expiry-shift|cjson-empty-array]\n"
    "                   [--check-determinism] [--no-shrink]\n"
    "      Runs N generated commands (with virtual-time advances) on the emulator and, with\n"
    "      --redis spawn (the default), on a spawned redis-server; compares every reply byte\n"
    "      for byte and the keyspace at checkpoints; prints a coverage table.\n"
    "  testbed sim [--seed S] [--strategy random|pct|dfs|replay] [--pct-depth D]\n"
    "              [--preemption-bound B] [--choices I,I,...] [--faults LIST] [--actors N]\n"
    "              [--increments N] [--horizon-ms MS] [--redis none|spawn]\n"
    "              [--check-determinism] [--print-trace]\n"
    "      Runs the toy counter workload (a read-modify-write race plus lease renewal) in the\n"
    "      simulated world, with faults from LIST (all, none, or a comma list of: lost-request,\n"
    "      lost-reply, latency, delay, pause, crash, skew, clock-jump, restart, failover,\n"
    "      outage); checks that no acknowledged increment is lost.\n"
    "  testbed help\n";

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::map<std::string, std::string> ParseFlags(int argc, char** argv, int first,
                                              const std::map<std::string, bool>& known) {
  std::map<std::string, std::string> out;
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) != 0) throw UsageError("unexpected argument '" + a + "'");
    std::string name = a.substr(2), value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    auto it = known.find(name);
    if (it == known.end()) throw UsageError("unknown flag --" + name);
    if (it->second && value.empty()) {
      if (i + 1 >= argc) throw UsageError("flag --" + name + " needs a value");
      value = argv[++i];
    }
    out[name] = value;
  }
  return out;
}

uint64_t ParseUnsigned(const std::string& flag, const std::string& v) {
  if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 19)
    throw UsageError("--" + flag + " takes a non-negative integer, not '" + v + "'");
  return std::stoull(v);
}

uint64_t FreshSeed() {
  // The only place the testbed reads entropy: choosing a seed when none is given.
  std::FILE* f = std::fopen("/dev/urandom", "rb");
  uint64_t s = 0;
  if (!f || std::fread(&s, sizeof s, 1, f) != 1) s = 42;
  if (f) std::fclose(f);
  return s % 1000000000000ULL;
}

int Fidelity(int argc, char** argv) {
  auto flags = ParseFlags(argc, argv, 2,
                          {{"seed", true}, {"commands", true}, {"redis", true},
                           {"checkpoint-every", true}, {"inject-fault", true},
                           {"check-determinism", false}, {"no-shrink", false}});
  const uint64_t seed = flags.count("seed") ? ParseUnsigned("seed", flags["seed"]) : FreshSeed();
  std::printf("seed: %llu\n", static_cast<unsigned long long>(seed));
  std::fflush(stdout);
  const int64_t commands =
      flags.count("commands") ? ParseUnsigned("commands", flags["commands"]) : 10000;
  const int checkpoint_every = flags.count("checkpoint-every")
                                   ? static_cast<int>(ParseUnsigned("checkpoint-every", flags["checkpoint-every"]))
                                   : 100;
  const std::string redis = flags.count("redis") ? flags["redis"] : "spawn";
  if (redis != "spawn" && redis != "none")
    throw UsageError("--redis takes spawn or none (a shared server is never used for fidelity: "
                     "the check flushes it)");
  EmulatorOptions options;
  if (flags.count("inject-fault")) {
    const std::string f = flags["inject-fault"];
    if (f == "expiry-shift") {
      options.fault_expiry_shift_ms = -1;
    } else if (f == "cjson-empty-array") {
      options.fault_cjson_empty_table_as_array = true;
    } else {
      throw UsageError("--inject-fault takes expiry-shift or cjson-empty-array");
    }
  }

  ScriptCatalog scripts = ScriptCatalog::Load(ScriptCatalog::ShippedDir());
  const auto steps = fidelity::Generate(seed, commands, scripts, checkpoint_every);
  std::unique_ptr<RedisServer> server;
  if (redis == "spawn") server = std::make_unique<RedisServer>(kDefaultEpochMs);
  fidelity::Runner runner(server.get(), options);
  fidelity::Coverage coverage;
  std::string hash;
  auto divergence = runner.run(steps, &coverage, &hash);
  std::printf("%s", fidelity::FormatCoverage(coverage).c_str());
  std::printf("commands: %lld, steps: %zu, compared against: %s\n",
              static_cast<long long>(commands), steps.size(),
              server ? "spawned redis-server" : "nothing (emulator only)");
  if (flags.count("check-determinism")) {
    std::string again;
    fidelity::Runner second(nullptr, options);
    second.run(steps, nullptr, &again);
    fidelity::Runner first(nullptr, options);
    std::string once;
    first.run(steps, nullptr, &once);
    std::printf("determinism: %s (%s vs %s)\n", once == again ? "same trace hash" : "DIFFERENT",
                once.c_str(), again.c_str());
    if (once != again) return 1;
  }
  std::string replay = std::string("testbed fidelity --seed ") + std::to_string(seed) +
                       " --commands " + std::to_string(commands);
  if (flags.count("inject-fault")) replay += " --inject-fault " + flags["inject-fault"];
  if (!divergence) {
    std::printf("divergences: 0\ntrace-hash: %s\n", hash.c_str());
    return 0;
  }
  std::printf("divergences: 1 (the run stops at the first)\n");
  std::printf("first divergence at step %zu: %s\n", divergence->step,
              steps[divergence->step].render().c_str());
  std::vector<fidelity::Step> prefix(steps.begin(), steps.begin() + divergence->step + 1);
  if (!flags.count("no-shrink") && server) {
    prefix = fidelity::Shrink(prefix, runner);
    auto again = runner.run(prefix);
    std::printf("shortest failing sequence (%zu steps, %lld runs to shrink):\n", prefix.size(),
                static_cast<long long>(runner.runs()));
    for (size_t i = 0; i < prefix.size(); ++i)
      std::printf("  %3zu  %s\n", i, prefix[i].render().c_str());
    if (again) divergence = again;
  }
  std::printf("emulator:     %s\nredis-server: %s\n", divergence->emulator.c_str(),
              divergence->redis.c_str());
  std::printf("trace-hash: %s\nreplay: %s\n", hash.c_str(), replay.c_str());
  return 1;
}


struct SimSetup {
  uint64_t seed;
  std::string strategy;
  int pct_depth = 2;
  int preemption_bound = -1;
  std::vector<size_t> choices;
  sim::FaultOptions faults;
  int actors = 2;
  int increments = 3;
  int64_t horizon_ms = 60000;
  RedisServer* server = nullptr;
};

struct SimOutcome {
  sim::RunResult run;
  std::vector<std::string> trace;
  std::optional<std::string> violation;
};

SimOutcome RunSimOnce(const SimSetup& s, sim::Strategy& strategy) {
  std::unique_ptr<sim::Backend> backend;
  if (s.server) {
    backend = std::make_unique<RealBackend>(*s.server);
  } else {
    backend = std::make_unique<sim::EmulatorBackend>();
  }
  sim::WorldOptions o;
  o.seed = s.seed;
  o.horizon_ms = s.horizon_ms;
  o.faults = s.faults;
  sim::World world(o, *backend, strategy);
  sim::CounterStats stats;
  sim::AddCounterWorkload(world, s.actors, s.increments, &stats);
  SimOutcome out;
  out.run = world.run();
  out.trace = world.trace();
  out.violation = sim::CheckCounter(*backend, world.now_ms(), stats);
  return out;
}

std::unique_ptr<sim::Strategy> MakeStrategy(const SimSetup& s) {
  if (s.strategy == "random") return std::make_unique<sim::RandomWalk>();
  if (s.strategy == "pct") return std::make_unique<sim::Pct>(s.pct_depth, s.actors * s.increments * 4);
  if (s.strategy == "replay") return std::make_unique<sim::Replay>(s.choices);
  throw UsageError("--strategy takes random, pct, dfs or replay");
}

std::string JoinChoices(const std::vector<size_t>& c) {
  std::string out;
  for (size_t i = 0; i < c.size(); ++i) out += (i ? "," : "") + std::to_string(c[i]);
  return out;
}

int Sim(int argc, char** argv) {
  auto flags = ParseFlags(argc, argv, 2,
                          {{"seed", true}, {"strategy", true}, {"pct-depth", true},
                           {"preemption-bound", true}, {"choices", true}, {"faults", true},
                           {"actors", true}, {"increments", true}, {"horizon-ms", true},
                           {"redis", true}, {"check-determinism", false}, {"print-trace", false}});
  SimSetup s;
  s.seed = flags.count("seed") ? ParseUnsigned("seed", flags["seed"]) : FreshSeed();
  std::printf("seed: %llu\n", static_cast<unsigned long long>(s.seed));
  std::fflush(stdout);
  s.strategy = flags.count("strategy") ? flags["strategy"] : "random";
  if (flags.count("pct-depth")) s.pct_depth = static_cast<int>(ParseUnsigned("pct-depth", flags["pct-depth"]));
  if (flags.count("preemption-bound"))
    s.preemption_bound = static_cast<int>(ParseUnsigned("preemption-bound", flags["preemption-bound"]));
  if (flags.count("choices")) {
    std::string list = flags["choices"];
    size_t start = 0;
    while (start < list.size()) {
      size_t end = list.find(',', start);
      if (end == std::string::npos) end = list.size();
      s.choices.push_back(ParseUnsigned("choices", list.substr(start, end - start)));
      start = end + 1;
    }
  }
  if (s.strategy == "replay" && !flags.count("choices"))
    throw UsageError("--strategy replay needs --choices");
  try {
    s.faults = sim::FaultOptions::Parse(flags.count("faults") ? flags["faults"] : "none");
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (flags.count("actors")) s.actors = static_cast<int>(ParseUnsigned("actors", flags["actors"]));
  if (flags.count("increments"))
    s.increments = static_cast<int>(ParseUnsigned("increments", flags["increments"]));
  if (flags.count("horizon-ms")) s.horizon_ms = ParseUnsigned("horizon-ms", flags["horizon-ms"]);
  const std::string redis = flags.count("redis") ? flags["redis"] : "none";
  if (redis != "none" && redis != "spawn") throw UsageError("--redis takes none or spawn");
  std::unique_ptr<RedisServer> server;
  if (redis == "spawn") server = std::make_unique<RedisServer>(kDefaultEpochMs);
  s.server = server.get();
  const std::string base = std::string("testbed sim --seed ") + std::to_string(s.seed) +
                           (flags.count("faults") ? " --faults " + flags["faults"] : "") +
                           " --actors " + std::to_string(s.actors) + " --increments " +
                           std::to_string(s.increments);

  if (s.strategy == "dfs") {
    std::vector<std::string> first_trace;
    sim::DfsResult r = sim::ExploreDfs(
        [&](sim::Strategy& strategy, sim::RunResult* run) {
          SimOutcome o = RunSimOnce(s, strategy);
          *run = o.run;
          return o.violation.has_value();
        },
        {.preemption_bound = s.preemption_bound, .prune_visited_states = true, .max_schedules = 200000});
    std::printf("dfs: %lld schedules explored, %lld pruned at visited states, %s\n",
                static_cast<long long>(r.schedules), static_cast<long long>(r.pruned),
                r.exhausted ? "exhaustive within the bound" : "stopped at the schedule limit");
    std::printf("violations: %lld\n", static_cast<long long>(r.violations));
    if (!r.violations) return 0;
    std::printf("replay: %s --strategy replay --choices %s\n", base.c_str(),
                JoinChoices(r.first_violation).c_str());
    return 1;
  }

  auto strategy = MakeStrategy(s);
  SimOutcome out = RunSimOnce(s, *strategy);
  if (flags.count("print-trace"))
    for (const auto& line : out.trace) std::printf("  %s\n", line.c_str());
  std::printf("steps: %lld, virtual time: %lld ms, stop: %s\n",
              static_cast<long long>(out.run.steps), static_cast<long long>(out.run.elapsed_ms),
              out.run.stop_reason.c_str());
  if (!out.run.error.empty()) std::printf("client logic error: %s\n", out.run.error.c_str());
  int code = 0;
  if (flags.count("check-determinism")) {
    auto again_strategy = MakeStrategy(s);
    SimOutcome again = RunSimOnce(s, *again_strategy);
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
    std::vector<size_t> picks;
    for (auto [n, pick] : out.run.choices) picks.push_back(pick);
    std::printf("violation: %s\nreplay: %s --strategy replay --choices %s\n",
                out.violation->c_str(), base.c_str(), JoinChoices(picks).c_str());
    return 1;
  }
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string sub = argc > 1 ? argv[1] : "help";
    if (sub == "fidelity") return Fidelity(argc, argv);
    if (sub == "sim") return Sim(argc, argv);
    if (sub == "help" || sub == "--help" || sub == "-h") {
      std::printf("%s", kUsage);
      return argc > 1 ? 0 : 2;
    }
    throw UsageError("unknown command '" + sub + "'");
  } catch (const UsageError& e) {
    std::fprintf(stderr, "testbed: %s\n%s", e.what(), kUsage);
    return 2;
  } catch (const SetupError& e) {
    std::fprintf(stderr, "testbed: setup error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "testbed: error: %s\n", e.what());
    return 2;
  }
}
