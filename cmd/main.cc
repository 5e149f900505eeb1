// testbed: the one CLI. Prints its seed first; exit codes 0 = no violation, 1 = violation
// (divergence) found, 2 = usage or setup error.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <functional>
#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>
#include <regex>
#include <nlohmann/json.hpp>
#include <set>
#include <unistd.h>
#include <optional>
#include <string>
#include <vector>

#include "properties/fidelity.h"
#include "properties/state_props.h"
#include "reports/check_report.h"
#include "real/state/namespace.h"
#include "real/real_backend.h"
#include "sim/lua_scripting.h"
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
    "  testbed check --system state [--version V] [--scripts DIR] [--seed S]\n"
    "                [--runs N | --budget-seconds S] [--clients N] [--ops N] [--faults LIST]\n"
    "                [--properties LIST] [--redis none|spawn] [--out DIR] [--ops-mix all|cas]\n"
    "                [--rolling-from V] [--skip C:I,...] [--save-scenarios DIR]\n"
    "                [--real-sample K] [--jobs N]\n"
    "      Runs generated multi-client workloads through the ported SDK version against its\n"
    "      scripts and checks the properties; prints a per-property table, and for the first\n"
    "      violation a minimized counterexample and a replay command. --scripts DIR replaces\n"
    "      shipped scripts by the files of the same name in DIR. Versions: beta3, beta23,\n"
    "      beta24, beta30 (default). Rolling-deploy properties run old pods of --rolling-from\n"
    "      (default: beta23 <- beta3, beta24 <- beta23, beta30 <- beta3); a property that\n"
    "      means nothing for a version is reported n/a. A violation is shrunk to the fewest\n"
    "      clients, then operations, then single operations (--skip: client:index pairs).\n"
    "      --real-sample K replays every K-th run on a spawned redis-server and requires the\n"
    "      emulator's verdict and trace hash there (exit 1 on a divergence). --jobs N runs on N\n"
    "      threads (default: the cores; 1 with a redis-server); the results do not depend on N.\n"
    "  testbed replay FILE [--redis none|spawn]\n"
    "      Replays a saved scenario (scenarios/*.json); exit 1 when its violation shows.\n"
    "  testbed list\n"
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
  out.trace = world.trace().Lines();
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


// Copies the shipped scripts and overlays the files of the same name found in dir.
ScriptCatalog CatalogWithOverrides(const std::string& dir) {
  const std::string shipped = ScriptCatalog::ShippedDir();
  ScriptCatalog base = ScriptCatalog::Load(shipped);
  if (dir.empty()) return base;
  if (!std::filesystem::is_directory(dir)) throw UsageError("--scripts " + dir + " is not a directory");
  const std::string merged = std::filesystem::temp_directory_path().string() + "/testbed-scripts-" +
                             std::to_string(getpid());
  std::filesystem::remove_all(merged);
  std::filesystem::copy(shipped, merged, std::filesystem::copy_options::recursive);
  int replaced = 0;
  for (const auto& s : base.all()) {
    const std::filesystem::path name = std::filesystem::path(s.file).filename();
    for (const auto& candidate : {std::filesystem::path(dir) / s.file, std::filesystem::path(dir) / name}) {
      if (std::filesystem::exists(candidate)) {
        std::filesystem::copy_file(candidate, merged + "/" + s.file,
                                   std::filesystem::copy_options::overwrite_existing);
        std::printf("scripts: %s replaced by %s\n", s.file.c_str(), candidate.c_str());
        ++replaced;
        break;
      }
    }
  }
  if (replaced == 0) throw UsageError("--scripts " + dir + " holds no file named like a shipped script");
  ScriptCatalog c = ScriptCatalog::Load(merged);
  std::filesystem::remove_all(merged);
  return c;
}

int List() {
  std::printf("systems and versions (scripts under real/scripts/):\n");
  const ScriptCatalog c = ScriptCatalog::Load(ScriptCatalog::ShippedDir());
  std::map<std::string, int> dirs;
  for (const auto& s : c.all()) ++dirs[s.file.substr(0, s.file.rfind('/'))];
  for (const auto& v : state::PortedVersions()) dirs.emplace("state/" + v, 0);
  for (const auto& [d, scripts] : dirs) {
    const std::string version = d.substr(d.find('/') + 1);
    const bool is_ported = d.rfind("state/", 0) == 0 && state::IsPorted(version);
    std::string what = std::to_string(scripts) + " scripts; ";
    if (scripts == 0) what = "no scripts (plain commands); ";
    what += is_ported ? "client logic ported: testbed check" : "client port pending";
    if (is_ported && !props::RollingFrom(version).empty())
      what += " (rolling deploy from " + props::RollingFrom(version) + ")";
    std::printf("  %-16s %s\n", d.c_str(), what.c_str());
  }
  std::printf("properties (state):\n");
  for (const auto& p : props::StateProperties()) {
    std::string na;
    for (const auto& v : state::PortedVersions())
      if (!props::Applies(p, v, props::RollingFrom(v))) na += (na.empty() ? "" : ", ") + v;
    std::printf("  %-30s%s\n", p.c_str(), na.empty() ? "" : ("n/a for " + na).c_str());
  }
  std::printf("faults:\n");
  for (const auto& f : sim::FaultOptions::Kinds()) std::printf("  %s\n", f.c_str());
  return 0;
}

int ReplayScenario(int argc, char** argv) {
  if (argc < 3 || std::string(argv[2]).rfind("--", 0) == 0) throw UsageError("replay needs a scenario FILE");
  const std::string file = argv[2];
  auto flags = ParseFlags(argc, argv, 3, {{"redis", true}});
  props::Scenario sc;
  try {
    sc = props::LoadScenario(file);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  std::printf("seed: %llu\nscenario: %s (%s, %s)\ntrigger: %s\n",
              static_cast<unsigned long long>(sc.workload.seed), sc.name.c_str(),
              sc.property.c_str(), sc.version.c_str(), sc.trigger.c_str());
  const std::string redis = flags.count("redis") ? flags["redis"] : "none";
  if (redis != "none" && redis != "spawn") throw UsageError("--redis takes none or spawn");
  std::unique_ptr<RedisServer> server;
  if (redis == "spawn") server = std::make_unique<RedisServer>(kDefaultEpochMs);
  const ScriptCatalog scripts = ScriptCatalog::Load(ScriptCatalog::ShippedDir());
  props::StateRun r = props::RunStateWorkload(sc.workload, scripts, server.get());
  std::printf("world: %s\n", server ? "spawned redis-server" : "emulator");
  if (!props::Violates(r, sc.property)) {
    std::printf("result: no violation (expected: %s)\ntrace-hash: %s\n", sc.expect.c_str(),
                r.run.trace_hash.c_str());
    return 0;
  }
  std::printf("result: %s violated\n%s", sc.property.c_str(), props::DescribeViolation(r, sc.property).c_str());
  std::printf("trace-hash: %s\n", r.run.trace_hash.c_str());
  return 1;
}

// Runs fn(0), ..., fn(n - 1) on n threads (inline when n == 1); rethrows the first exception.
void OnThreads(size_t n, const std::function<void(size_t)>& fn) {
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto guarded = [&](size_t i) {
    try {
      fn(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
    }
  };
  if (n == 1) {
    guarded(0);
  } else {
    std::vector<std::thread> threads;
    for (size_t i = 0; i < n; ++i) threads.emplace_back(guarded, i);
    for (auto& t : threads) t.join();
  }
  if (failure) std::rethrow_exception(failure);
}

// The smallest i in [0, n) with fails(i), trying `jobs` candidates at a time on threads; -1 if
// none. Deterministic: the answer is the one a single thread finds.
int64_t FirstFailing(size_t n, int64_t jobs, const std::function<bool(size_t)>& fails) {
  for (size_t begin = 0; begin < n; begin += static_cast<size_t>(jobs)) {
    const size_t end = std::min(n, begin + static_cast<size_t>(jobs));
    std::vector<char> failed(end - begin, 0);
    OnThreads(end - begin, [&](size_t i) { failed[i] = fails(begin + i) ? 1 : 0; });
    for (size_t i = begin; i < end; ++i)
      if (failed[i - begin]) return static_cast<int64_t>(i);
  }
  return -1;
}

// Shortens the long parts of state keys for reading (scope digests, index identities).
std::string Abbreviate(const std::string& line) {
  static const std::regex digest("sha256:([0-9a-f]{8})[0-9a-f]{56}");
  static const std::regex index(":index:([A-Za-z0-9_-]{8})[A-Za-z0-9_-]+");
  return std::regex_replace(std::regex_replace(line, digest, "sha256:$1.."), index, ":index:$1..");
}

// Replaces the trace's "<script SHA>" names by the scripts' ids.
std::string NameScripts(std::string line, const std::map<std::string, std::string>& names) {
  for (size_t at = line.find("<script "); at != std::string::npos; at = line.find("<script ", at + 1)) {
    auto it = names.find(line.substr(at + 8, 12));
    if (it != names.end()) line.replace(at + 1, 19, it->second);
  }
  return line;
}

// Writes a minimized violation as scenarios/<name>.json (see scenarios/README.md); the
// trigger is the counterexample's first line until someone words it better.
std::string SaveScenario(const std::string& dir, const props::StateWorkload& m, const std::string& property,
                         const std::string& faults, const std::string& description) {
  std::filesystem::create_directories(dir);
  const std::string name = "state-" + m.version + "-" + property;
  std::string trigger = description.substr(0, description.find('\n'));
  trigger.erase(0, trigger.find_first_not_of(' '));
  nlohmann::ordered_json j;
  j["name"] = name;
  j["system"] = "state";
  j["version"] = m.version;
  if (!m.old_version.empty()) j["old_version"] = m.old_version;
  j["property"] = property;
  j["seed"] = m.seed;
  j["clients"] = m.clients;
  j["ops"] = m.ops;
  if (!m.skip.empty()) j["skip"] = props::FormatSkip(m.skip);
  j["faults"] = faults;
  j["ops_mix"] = m.cas_only ? "cas" : "all";
  j["trigger"] = trigger;
  j["severity"] = "unrated";
  j["why"] = "";
  j["expect"] = "violated";
  const std::string path = dir + "/" + name + ".json";
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << j.dump(2) << "\n";
    if (!out) throw UsageError("cannot write " + tmp);
  }
  std::filesystem::rename(tmp, path);
  return path;
}

int Check(int argc, char** argv) {
  auto flags = ParseFlags(argc, argv, 2,
                          {{"system", true}, {"version", true}, {"scripts", true}, {"seed", true},
                           {"runs", true}, {"budget-seconds", true}, {"clients", true},
                           {"ops", true}, {"faults", true}, {"properties", true},
                           {"redis", true}, {"out", true}, {"ops-mix", true},
                           {"rolling-from", true}, {"skip", true},
                           {"save-scenarios", true}, {"real-sample", true}, {"jobs", true}});
  const uint64_t seed = flags.count("seed") ? ParseUnsigned("seed", flags["seed"]) : FreshSeed();
  std::printf("seed: %llu\n", static_cast<unsigned long long>(seed));
  std::fflush(stdout);
  if (!flags.count("system")) throw UsageError("check needs --system (state)");
  if (flags["system"] != "state")
    throw UsageError("--system " + flags["system"] + ": only state has a ported client so far");
  props::StateWorkload w;
  w.version = flags.count("version") ? flags["version"] : "beta30";
  if (!state::IsPorted(w.version))
    throw UsageError("--version " + w.version + " is not a ported version (beta3, beta23, beta24, beta30; see testbed list)");
  w.old_version = flags.count("rolling-from") ? flags["rolling-from"] : props::RollingFrom(w.version);
  if (!w.old_version.empty() && !state::IsPorted(w.old_version))
    throw UsageError("--rolling-from " + w.old_version + " is not a ported version (beta3, beta23, beta24, beta30)");
  if (w.old_version == w.version) throw UsageError("--rolling-from must differ from --version");
  std::printf("version: state %s (rolling-deploy properties run old pods of %s)\n", w.version.c_str(),
              w.old_version.empty() ? "no earlier version" : w.old_version.c_str());
  if (flags.count("ops-mix")) {
    if (flags["ops-mix"] != "all" && flags["ops-mix"] != "cas")
      throw UsageError("--ops-mix takes all or cas");
    w.cas_only = flags["ops-mix"] == "cas";
  }
  if (flags.count("clients")) w.clients = static_cast<int>(ParseUnsigned("clients", flags["clients"]));
  if (flags.count("ops")) w.ops = static_cast<int>(ParseUnsigned("ops", flags["ops"]));
  if (w.clients < 1 || w.ops < 1) throw UsageError("--clients and --ops must be at least 1");
  try {
    if (flags.count("skip")) w.skip = props::ParseSkip(flags["skip"]);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  try {
    w.faults = sim::FaultOptions::Parse(flags.count("faults") ? flags["faults"] : "none");
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  std::vector<std::string> properties = props::StateProperties();
  if (flags.count("properties")) {
    properties.clear();
    std::string list = flags["properties"];
    for (size_t start = 0; start < list.size();) {
      size_t end = list.find(',', start);
      if (end == std::string::npos) end = list.size();
      const std::string p = list.substr(start, end - start);
      const auto known = props::StateProperties();
      if (std::find(known.begin(), known.end(), p) == known.end())
        throw UsageError("unknown property '" + p + "' (see testbed list)");
      properties.push_back(p);
      start = end + 1;
    }
  }
  if (flags.count("runs") && flags.count("budget-seconds"))
    throw UsageError("--runs and --budget-seconds exclude each other");
  const int64_t runs = flags.count("runs") ? ParseUnsigned("runs", flags["runs"]) : -1;
  const int64_t budget = flags.count("budget-seconds") ? ParseUnsigned("budget-seconds", flags["budget-seconds"]) : 0;
  const int64_t max_runs = runs >= 0 ? runs : (budget > 0 ? INT64_MAX : 100);
  const std::string redis = flags.count("redis") ? flags["redis"] : "none";
  if (redis.find(':') != std::string::npos)
    throw UsageError("--redis " + redis + ": check moves the server's clock with virtual time, which only a "
                     "redis-server it spawns (under its time shim) allows, and it never writes to a server it "
                     "did not start; use --redis spawn");
  if (redis != "none" && redis != "spawn") throw UsageError("--redis takes none or spawn");
  const int64_t real_every = flags.count("real-sample") ? ParseUnsigned("real-sample", flags["real-sample"]) : 0;
  if (real_every > 0 && redis != "none")
    throw UsageError("--real-sample compares emulator runs with a spawned redis-server; use it with --redis none");
  const ScriptCatalog scripts = CatalogWithOverrides(flags.count("scripts") ? flags["scripts"] : "");
  std::unique_ptr<RedisServer> server;
  if (redis == "spawn") server = std::make_unique<RedisServer>(kDefaultEpochMs);
  for (const std::string& v : {w.version, w.old_version})
    if (!v.empty())
      if (const std::string err = props::FirstCompileError(scripts, v); !err.empty())
        throw SetupError("a script does not compile: " + err);
  std::unique_ptr<RedisServer> sample_server;
  if (real_every > 0) sample_server = std::make_unique<RedisServer>(kDefaultEpochMs);
  // "<script 1a2b3c4d5e6f>" in the trace -> the script's file, e.g. state/beta30/SET_WITH_QUOTA_SCRIPT.
  std::map<std::string, std::string> script_names;
  for (const auto& f : scripts.all()) script_names[Sha1Hex(f.body).substr(0, 12)] = f.id();
  std::string first_script_error;
  uint64_t script_error_seed = 0;
  std::string script_error_property;
  int64_t sampled = 0, diverged = 0;
  std::string first_divergence;

  int64_t jobs = flags.count("jobs") ? ParseUnsigned("jobs", flags["jobs"])
                                     : std::clamp<int64_t>(std::thread::hardware_concurrency(), 1, 8);
  if (jobs < 1) throw UsageError("--jobs must be at least 1");
  if (server || real_every > 0) jobs = 1;  // one spawned server serves one run at a time
  const auto start = std::chrono::steady_clock::now();
  struct Tally {
    int64_t done = 0, violated = 0, incomplete = 0;
    std::optional<props::StateWorkload> first;
  };
  std::map<std::string, Tally> tally;
  // One run of one property. Runs are independent worlds, so they go to `jobs` threads; the
  // tally merges them in run order, so the result does not depend on the thread count.
  struct Outcome {
    std::string property;
    props::StateWorkload run;
    bool violated = false, incomplete = false;
    std::string script_error;
  };
  auto run_one = [&](int64_t i, const std::string& p) {
    Outcome o;
    o.property = p;
    o.run = props::ForProperty(w, p);
    o.run.seed = seed + static_cast<uint64_t>(i);
    props::StateRun r = props::RunStateWorkload(o.run, scripts, server.get());
    o.violated = props::Violates(r, p);
    o.incomplete = !r.verdict.complete;
    if (!r.script_errors.empty()) o.script_error = r.script_errors.front();
    if (real_every > 0 && i % real_every == 0) {  // jobs == 1 here: one spawned server
      // The same schedule on a spawned redis-server: same verdict, same trace.
      props::StateRun real = props::RunStateWorkload(o.run, scripts, sample_server.get());
      ++sampled;
      if (real.run.trace_hash != r.run.trace_hash || props::Violates(real, p) != o.violated) {
        if (!diverged++)
          first_divergence = p + " seed " + std::to_string(o.run.seed) + ": emulator trace " +
                             r.run.trace_hash.substr(0, 16) + ", redis-server trace " +
                             real.run.trace_hash.substr(0, 16);
      }
    }
    return o;
  };
  for (int64_t i0 = 0; i0 < max_runs; i0 += jobs) {
    if (budget > 0 && std::chrono::steady_clock::now() - start > std::chrono::seconds(budget)) break;
    const int64_t n = std::min<int64_t>(jobs, max_runs - i0);
    std::vector<std::vector<Outcome>> results(static_cast<size_t>(n));
    OnThreads(static_cast<size_t>(n), [&](size_t k) {
      for (const std::string& p : properties)
        if (props::Applies(p, w.version, w.old_version))
          results[k].push_back(run_one(i0 + static_cast<int64_t>(k), p));
    });
    for (const auto& batch : results)
      for (const Outcome& o : batch) {
        if (!o.script_error.empty() && first_script_error.empty()) {
          first_script_error = o.script_error;
          script_error_seed = o.run.seed;
          script_error_property = o.property;
        }
        Tally& t = tally[o.property];
        ++t.done;
        if (o.incomplete) ++t.incomplete;
        if (o.violated) {
          ++t.violated;
          if (!t.first) t.first = o.run;
        }
      }
  }
  std::printf("%-30s %8s %8s %8s\n", "property", "runs", "passed", "violated");
  reports::CheckReport report;
  report.seed = seed;
  report.system = "state";
  report.version = w.version;
  report.old_version = w.old_version;
  for (size_t k = 0; k < properties.size(); ++k) {
    const Tally& t = tally[properties[k]];
    if (!props::Applies(properties[k], w.version, w.old_version)) {
      std::printf("%-30s %8s\n", properties[k].c_str(), "n/a");
      report.properties.push_back({properties[k], 0, 0, 0, false});
      continue;
    }
    std::printf("%-30s %8lld %8lld %8lld\n", properties[k].c_str(), static_cast<long long>(t.done),
                static_cast<long long>(t.done - t.violated), static_cast<long long>(t.violated));
    if (t.incomplete)
      std::printf("  (%lld runs hit the checker's state budget: no verdict)\n", static_cast<long long>(t.incomplete));
    report.properties.push_back({properties[k], t.done, t.done - t.violated, t.violated});
    if (flags.count("faults") && flags["faults"] != "none" && !props::FaultsSetAside(properties[k]).empty())
      std::printf("  (runs without these faults: %s)\n", props::FaultsSetAside(properties[k]).c_str());
  }
  int code = 0;
  if (!first_script_error.empty()) {
    // A script that fails at run time makes the SDK report "Redis is unavailable", which the
    // properties must treat as an unknown outcome: the verdicts above mean little.
    std::fprintf(stderr,
                 "testbed: a script failed at run time (property %s, seed %llu); its calls count as "
                 "unknown outcomes, so the verdicts above are not to be trusted:\n  %s\n  error: %s\n"
                 "replay: testbed check --system state --version %s --properties %s --seed %llu --runs 1%s\n",
                 script_error_property.c_str(), static_cast<unsigned long long>(script_error_seed),
                 Abbreviate(NameScripts(first_script_error, script_names)).substr(0, 400).c_str(),
                 first_script_error.substr(first_script_error.find("-> (error) ") + 11).c_str(),
                 w.version.c_str(), script_error_property.c_str(),
                 static_cast<unsigned long long>(script_error_seed),
                 flags.count("scripts") ? (" --scripts " + flags["scripts"]).c_str() : "");
    return 2;
  }
  if (real_every > 0) {
    std::printf("redis-server sample: %lld runs replayed on a spawned redis-server, %lld diverged from the emulator\n",
                static_cast<long long>(sampled), static_cast<long long>(diverged));
    if (diverged) {
      std::printf("  first divergence: %s\n", first_divergence.c_str());
      code = 1;
    }
  }
  for (const std::string& p : properties) {
    const Tally& t = tally[p];
    if (!t.first) continue;
    // Minimize: the fewest clients, then the fewest operations per client, that still fail
    // with the same seed; then drop single operations (client, index), greedily. Candidates
    // are tried `jobs` at a time, and the first failing one in order wins, so the result is
    // the one a single thread finds.
    auto fails = [&](const props::StateWorkload& x) {
      return props::Violates(props::RunStateWorkload(x, scripts, server.get()), p);
    };
    props::StateWorkload m = *t.first;
    if (int64_t k = FirstFailing(m.clients, jobs, [&](size_t i) {
          props::StateWorkload x = m;
          x.clients = static_cast<int>(i) + 1;
          return fails(x);
        }); k >= 0)
      m.clients = static_cast<int>(k) + 1;
    if (int64_t k = FirstFailing(m.ops, jobs, [&](size_t i) {
          props::StateWorkload x = m;
          x.ops = static_cast<int>(i) + 1;
          return fails(x);
        }); k >= 0)
      m.ops = static_cast<int>(k) + 1;
    std::vector<std::pair<int, int>> singles;
    for (int c = 0; c < m.clients; ++c)
      for (int o = 0; o < m.ops; ++o)
        if (!m.skip.count({c, o})) singles.emplace_back(c, o);
    for (size_t from = 0; from < singles.size();) {
      const int64_t k = FirstFailing(singles.size() - from, jobs, [&](size_t i) {
        props::StateWorkload x = m;
        x.skip.insert(singles[from + i]);
        return fails(x);
      });
      if (k < 0) break;
      m.skip.insert(singles[from + static_cast<size_t>(k)]);
      from += static_cast<size_t>(k) + 1;
    }
    props::StateRun r = props::RunStateWorkload(m, scripts, server.get());
    std::printf("\nviolation of %s (seed %llu, %d clients x %d operations):\n%s", p.c_str(),
                static_cast<unsigned long long>(m.seed), m.clients, m.ops,
                props::DescribeViolation(r, p).c_str());
    reports::ViolationRow row{p, m.seed, m.clients, m.ops, props::DescribeViolation(r, p), {}, ""};
    std::printf("redis calls (and faults), in the order Redis ran them:\n");
    std::map<std::string, std::vector<std::string>> by_actor;
    for (const auto& e : r.trace.events) {
      if (e.kind != sim::EventKind::kReply && e.kind != sim::EventKind::kFault &&
          e.kind != sim::EventKind::kClock)
        continue;
      const std::string line = NameScripts(r.trace.Render(e), script_names);
      std::printf("  %s\n", line.c_str());
      row.redis_calls.push_back(line);
      if (e.kind == sim::EventKind::kReply)
        by_actor[r.trace.actor_of(e)].push_back(
            NameScripts("+" + std::to_string(e.at_ms) + "ms " + sim::ShortArgv(e.argv) + " -> " +
                            e.reply.debug(),
                        script_names));
    }
    std::printf("the same calls per actor, with virtual times:\n");
    for (const auto& [actor, calls] : by_actor) {
      std::printf("  %s:\n", actor.c_str());
      for (const auto& c : calls) std::printf("    %s\n", Abbreviate(c).substr(0, 600).c_str());
    }
    std::string replay = "testbed check --system state --version " + w.version + " --properties " + p +
                         " --seed " + std::to_string(m.seed) + " --runs 1 --clients " +
                         std::to_string(m.clients) + " --ops " + std::to_string(m.ops) +
                         (flags.count("faults") ? " --faults " + flags["faults"] : "") +
                         (w.cas_only ? " --ops-mix cas" : "") +
                         (flags.count("rolling-from") ? " --rolling-from " + w.old_version : "") +
                         (m.skip.empty() ? "" : " --skip " + props::FormatSkip(m.skip)) +
                         (flags.count("scripts") ? " --scripts " + flags["scripts"] : "");
    std::printf("replay: %s\n", replay.c_str());
    row.replay = replay;
    report.violations.push_back(row);
    if (flags.count("save-scenarios")) {
      const std::string path = SaveScenario(flags["save-scenarios"], m, p, flags.count("faults") ? flags["faults"] : "none",
                                            props::DescribeViolation(r, p));
      std::printf("scenario: %s\n", path.c_str());
    }
    code = 1;
  }
  if (flags.count("out"))
    for (const auto& path : reports::WriteReports(report, flags["out"]))
      std::printf("report: %s\n", path.c_str());
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string sub = argc > 1 ? argv[1] : "help";
    if (sub == "fidelity") return Fidelity(argc, argv);
    if (sub == "sim") return Sim(argc, argv);
    if (sub == "check") return Check(argc, argv);
    if (sub == "list") return List();
    if (sub == "replay") return ReplayScenario(argc, argv);
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
