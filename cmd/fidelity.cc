// testbed fidelity: the differential check of the emulator against a spawned redis-server.
#include <absl/strings/str_cat.h>

#include <cstdio>
#include <memory>

#include "cmd/cli_internal.h"
#include "harness/system.h"
#include "real/real_backend.h"
#include "sim/fidelity.h"
#include "real/redis_server.h"
#include "real/script_catalog.h"
#include "sim/clock.h"

namespace testbed::cli {
namespace {

using internal::AppendFlag;

struct FidelityRaw {
  FidelitySpec spec;
  bool has_seed = false;
};

void DefineFidelity(CLI::App& app, FidelityRaw& r) {
  internal::AddSeed(app, &r.spec.seed, &r.has_seed);
  internal::AddInt(app, "--commands", &r.spec.commands, 1, "generated commands (default 10000)");
  app.add_option("--redis", r.spec.redis,
                 "spawn (default): compare with a spawned redis-server; none")
      ->check(CLI::IsMember({"spawn", "none"}));
  internal::AddInt(app, "--checkpoint-every", &r.spec.checkpoint_every, 1,
                   "compare the keyspaces every K commands (default 100)");
  app.add_option("--inject-fault", r.spec.inject_fault, "a deliberate emulator deviation")
      ->check(CLI::IsMember({"expiry-shift", "cjson-empty-array"}));
  app.add_flag("--check-determinism", r.spec.check_determinism,
               "run the seed twice more on the emulator and compare trace hashes");
  app.add_flag("--no-shrink", r.spec.no_shrink, "print the failing prefix unshrunk");
}

FidelitySpec ResolveFidelity(const FidelityRaw& r) {
  FidelitySpec s = r.spec;
  if (!r.has_seed) s.seed = FreshSeed();
  return s;
}

}  // namespace

std::string FidelitySpec::Write() const {
  std::string line = absl::StrCat("testbed fidelity --seed ", seed, " --commands ", commands);
  if (checkpoint_every != 100) AppendFlag(line, "checkpoint-every", absl::StrCat(checkpoint_every));
  if (!inject_fault.empty()) AppendFlag(line, "inject-fault", inject_fault);
  if (redis != "spawn") AppendFlag(line, "redis", redis);
  if (check_determinism) AppendFlag(line, "check-determinism", "");
  if (no_shrink) AppendFlag(line, "no-shrink", "");
  return line;
}

FidelitySpec ParseFidelity(const std::vector<std::string>& args) {
  return internal::ParseWith<FidelityRaw, FidelitySpec>("fidelity", args, DefineFidelity,
                                                        ResolveFidelity);
}

int RunFidelity(const FidelitySpec& spec) {
  sim::EmulatorOptions options;
  if (spec.inject_fault == "expiry-shift") options.fault_expiry_shift_ms = -1;
  if (spec.inject_fault == "cjson-empty-array") options.fault_cjson_empty_table_as_array = true;

  const real::ScriptCatalog catalog = real::ScriptCatalog::Load(real::ScriptCatalog::ShippedDir());
  const std::vector<sim::fidelity::Script> scripts = props::FidelityScripts(catalog);
  const int every = static_cast<int>(spec.checkpoint_every);
  // The steps stream from the seed: a campaign of any length runs in constant memory.
  auto stream = [&] { return sim::fidelity::StepStream(spec.seed, spec.commands, scripts, every); };
  std::unique_ptr<real::RedisServer> server;
  std::unique_ptr<real::SpawnedReference> reference;
  if (spec.redis == "spawn") {
    internal::CatchInterrupts("fidelity",
                              /*at_boundary=*/false);  // a signal stops the server first
    server = std::make_unique<real::RedisServer>(sim::kDefaultEpochMs);
    reference = std::make_unique<real::SpawnedReference>(*server);
  }
  std::printf("seed: %llu\n", static_cast<unsigned long long>(spec.seed));  // once it can run
  std::fflush(stdout);
  sim::fidelity::Runner runner(reference.get(), options);
  sim::fidelity::Coverage coverage;
  std::string hash;
  size_t steps_run = 0;
  sim::fidelity::StepStream steps = stream();
  auto divergence = runner.run(steps, &steps_run, &coverage, &hash);
  std::printf("%s", sim::fidelity::FormatCoverage(coverage).c_str());
  std::printf("commands: %lld, steps: %zu, compared against: %s\n",
              static_cast<long long>(spec.commands), steps_run,
              server ? "spawned redis-server" : "nothing (emulator only)");
  if (spec.check_determinism) {
    std::string once, again;
    sim::fidelity::StepStream first = stream(), second = stream();
    sim::fidelity::Runner(nullptr, options).run(first, nullptr, nullptr, &once);
    sim::fidelity::Runner(nullptr, options).run(second, nullptr, nullptr, &again);
    std::printf("determinism: %s (%s vs %s)\n", once == again ? "same trace hash" : "DIFFERENT",
                once.c_str(), again.c_str());
    if (once != again) return 1;
  }
  if (!divergence) {
    std::printf("divergences: 0\ntrace-hash: %s\n", hash.c_str());
    return 0;
  }
  // Only now is the failing prefix kept: generated again from the seed.
  std::vector<sim::fidelity::Step> prefix =
      sim::fidelity::Generate(spec.seed, spec.commands, scripts, every, divergence->step + 1);
  std::printf("divergences: 1 (the run stops at the first)\n");
  std::printf("first divergence at step %zu: %s\n", divergence->step,
              prefix.back().render().c_str());
  if (!spec.no_shrink && server) {
    prefix = sim::fidelity::Shrink(prefix, runner);
    auto again = runner.run(prefix);
    std::printf("shortest failing sequence (%zu steps, %lld runs to shrink):\n", prefix.size(),
                static_cast<long long>(runner.runs()));
    for (size_t i = 0; i < prefix.size(); ++i)
      std::printf("  %3zu  %s\n", i, prefix[i].render().c_str());
    if (again) divergence = again;
  }
  std::printf("emulator:     %s\nredis-server: %s\n", divergence->emulator.c_str(),
              divergence->redis.c_str());
  std::printf("trace-hash: %s\nreplay: %s\n", hash.c_str(), spec.Write().c_str());
  return 1;
}

namespace internal {
Command FidelityCommand() {
  return internal::MakeCommand<FidelityRaw, FidelitySpec>(
      "fidelity",
      "Runs N generated commands (with virtual-time advances) on the emulator and, with --redis "
      "spawn, on a spawned redis-server; compares every reply byte for byte and the keyspace at "
      "checkpoints; prints a coverage table.",
      DefineFidelity, ResolveFidelity, RunFidelity);
}
}  // namespace internal

}  // namespace testbed::cli
