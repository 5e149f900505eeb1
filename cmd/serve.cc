// testbed serve: the emulator as a RESP2 server on loopback (serve/server.h), so that an
// application's own tests can point their Redis client at it: Redis 7.0's Lua and cjson byte
// for byte, and virtual time that a test sets, advances or freezes (TESTBED TIME ...). Runs
// until SIGINT or SIGTERM.
#include <absl/strings/str_cat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>

#include "cmd/cli_internal.h"
#include "serve/server.h"

namespace testbed::cli {
namespace {

using internal::AppendFlag;

struct ServeRaw {
  ServeSpec spec;
  std::string faults = "none";
  bool has_seed = false;
};

void DefineServe(CLI::App& app, ServeRaw& r) {
  internal::AddInt(app, "--port", &r.spec.port, 0,
                   "the loopback port (default 6379; 0: a free one, printed)", nullptr, 65535);
  app.add_option("--record", r.spec.record,
                 "write every command as redis-cli MONITOR prints it, with its reply, to FILE "
                 "(testbed import reads it)");
  app.add_option("--faults", r.faults,
                 "lost-request, lost-reply, latency (a comma list), drawn per command from --seed");
  internal::AddSeed(app, &r.spec.seed, &r.has_seed);
}

ServeSpec ResolveServe(const ServeRaw& r) {
  ServeSpec s = r.spec;
  if (!r.has_seed) s.seed = FreshSeed();
  try {
    s.faults = sim::FaultList::Parse(r.faults, /*strict=*/true);
    serve::FaultInjector check(s.faults, s.seed);  // a kind serve cannot inject: refused here
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--faults: ") + e.what());
  }
  if (!s.record.empty()) internal::CheckWritableFile(s.record, "record");
  return s;
}

int ExecuteServe(const ServeSpec& spec) {
  internal::CatchInterrupts("serve");
  std::optional<serve::FaultInjector> faults;
  if (!spec.faults.empty()) faults.emplace(spec.faults, spec.seed);
  std::ofstream record;
  try {
    serve::Serve(
        static_cast<int>(spec.port), spec.record.empty() ? nullptr : &record,
        faults ? &*faults : nullptr,
        // Once the port is ours: the seed, the record file (made only now, so a port in use
        // leaves nothing behind) and the address.
        [&spec, &faults, &record](int port) {
          if (!spec.record.empty()) {
            const std::filesystem::path dir = std::filesystem::path(spec.record).parent_path();
            if (!dir.empty()) std::filesystem::create_directories(dir);
            record.open(spec.record, std::ios::binary | std::ios::trunc);
            if (!record) throw UsageError("--record " + spec.record + " cannot be written");
          }
          std::printf("seed: %llu\n", static_cast<unsigned long long>(spec.seed));
          std::printf(
              "listening: 127.0.0.1:%d (virtual time follows the wall clock; TESTBED "
              "TIME [SET ms | ADVANCE ms | FREEZE | FOLLOW]%s)\n",
              port, faults ? ", TESTBED FAULTS [ON | OFF]" : "");
          std::fflush(stdout);
        },
        [] { return internal::Interrupted() != 0; });
  } catch (const std::runtime_error& e) {
    throw UsageError(e.what());
  }
  std::printf("stopped by %s\n", internal::SignalName(internal::Interrupted()).c_str());
  return 0;
}

}  // namespace

std::string ServeSpec::Write() const {
  std::string line = "testbed serve";
  AppendFlag(line, "port", absl::StrCat(port));
  if (!record.empty()) AppendFlag(line, "record", record);
  if (!faults.empty()) AppendFlag(line, "faults", faults.ToString());
  AppendFlag(line, "seed", absl::StrCat(seed));
  return line;
}

ServeSpec ParseServe(const std::vector<std::string>& args) {
  return internal::ParseWith<ServeRaw, ServeSpec>("serve", args, DefineServe, ResolveServe);
}

int RunServe(const ServeSpec& spec) { return ExecuteServe(spec); }

namespace internal {
Command ServeCommand() {
  return MakeCommand<ServeRaw, ServeSpec>(
      "serve",
      "Serves the emulator as a RESP2 server on loopback, for a client library's own tests: "
      "Redis 7.0's Lua and cjson byte for byte, and virtual time (TESTBED TIME SET, ADVANCE, "
      "FREEZE, FOLLOW).",
      DefineServe, ResolveServe, RunServe);
}
}  // namespace internal

}  // namespace testbed::cli
