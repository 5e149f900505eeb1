// testbed replay: runs a saved scenario (scenarios/*.json) of any registered system.
#include <absl/strings/str_cat.h>

#include <cstdio>
#include <memory>

#include "cmd/cli_internal.h"
#include "real/redis_server.h"
#include "real/script_catalog.h"
#include "scenarios/scenario.h"
#include "sim/clock.h"

namespace testbed::cli {
namespace {

using internal::AppendFlag;

void Define(CLI::App& app, ReplaySpec& s) {
  app.add_option("file", s.file, "a scenario file (scenarios/*.json)")->required();
  app.add_option("--redis", s.redis, "none (default): the emulator; spawn: a spawned redis-server")
      ->check(CLI::IsMember({"none", "spawn"}));
}

ReplaySpec Identity(const ReplaySpec& s) { return s; }

}  // namespace

std::string ReplaySpec::Write() const {
  std::string line = "testbed replay";
  AppendFlag(line, "", file);
  line.erase(line.find(" --"), 3);  // a positional argument, not a flag
  if (redis != "none") AppendFlag(line, "redis", redis);
  return line;
}

ReplaySpec ParseReplay(const std::vector<std::string>& args) {
  return internal::ParseWith<ReplaySpec, ReplaySpec>("replay", args, Define, Identity);
}

int RunReplay(const ReplaySpec& spec) {
  scenarios::Scenario sc;
  try {
    sc = scenarios::Load(spec.file);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const props::RunSpec& r = sc.spec;
  std::printf("seed: %llu\nscenario: %s (%s, %s)\ntrigger: %s\n",
              static_cast<unsigned long long>(r.seed), sc.name.c_str(), r.property.c_str(),
              r.version.c_str(), sc.trigger.c_str());
  std::unique_ptr<RedisServer> server;
  if (spec.redis == "spawn") server = std::make_unique<RedisServer>(kDefaultEpochMs);
  const ScriptCatalog scripts = ScriptCatalog::Load(ScriptCatalog::ShippedDir());
  const props::RunOutcome out = sc.system->Run(r, scripts, server.get());
  std::printf("world: %s\n", server ? "spawned redis-server" : "emulator");
  if (!out.violated) {
    std::printf("result: no violation (expected: %s)\ntrace-hash: %s\n", sc.expect.c_str(),
                out.trace_hash.c_str());
    return 0;
  }
  std::printf("result: %s violated\n%s", r.property.c_str(), out.description.c_str());
  std::printf("trace-hash: %s\n", out.trace_hash.c_str());
  return 1;
}

namespace internal {
Command ReplayCommand() {
  return internal::MakeCommand<ReplaySpec, ReplaySpec>(
      "replay", "Replays a saved scenario; exit 1 when its violation shows.", Define, Identity,
      RunReplay);
}
}  // namespace internal

}  // namespace testbed::cli
