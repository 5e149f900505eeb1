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

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string sub = argc > 1 ? argv[1] : "help";
    if (sub == "fidelity") return Fidelity(argc, argv);
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
