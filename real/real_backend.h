// The simulation's Backend on a spawned redis-server: commands run at the virtual time (the
// server's wall clock follows it through the shim); a restart or failover flushes the server
// (ours, so allowed), replays the kept prefix of the command log at its recorded times, and
// flushes the script cache, as a restarted or promoted server would have it.
#pragma once

#include <map>
#include <memory>
#include <optional>

#include "real/redis_server.h"
#include "real/resp_connection.h"
#include "sim/fidelity.h"
#include "sim/runtime.h"

namespace testbed::real {

// The canonical keyspace dump (same text as Emulator::dump_keyspace), read through commands.
std::string DumpKeyspace(sim::RedisConnection& c);

// The spawned redis-server as the emulator's reference in `testbed fidelity`: reset, the clock
// set through the shim, one raw connection.
class SpawnedReference : public sim::fidelity::ReferenceServer {
 public:
  explicit SpawnedReference(RedisServer& server) : server_(server) {}
  sim::RedisConnection& Reset(int64_t now_ms) override;
  void SetTimeMs(int64_t now_ms) override { server_.set_time_ms(now_ms); }
  std::string DumpKeyspace() override { return real::DumpKeyspace(*connection_); }

 private:
  RedisServer& server_;
  std::unique_ptr<RespConnection> connection_;
};

class RealBackend : public sim::Backend {
 public:
  explicit RealBackend(RedisServer& server);  // flushes it: a fresh world
  sim::Reply execute(const sim::Argv& argv, int64_t now_ms, int client = -1) override;
  void rebuild(const std::vector<sim::LoggedCommand>& prefix, int64_t now_ms) override;
  std::string describe_state(int64_t now_ms) override;
  std::string name() const override { return "redis-server"; }

 private:
  std::optional<sim::Reply> Scan(
      const sim::Argv& argv);  // nullopt: not a page request; the server answers

  RedisServer& server_;
  std::unique_ptr<RespConnection> conn_;  // the world's own (flushes, rebuilds, dumps)
  // Each actor's connection, opened at its first call: the server (and a MONITOR capture) sees
  // one client per actor, as it would one per client process; the simulation still runs one
  // command at a time, so the order is the world's.
  std::map<int, std::unique_ptr<RespConnection>> clients_;
  std::map<uint64_t, std::string> scan_cursors_;  // cursor -> last key returned, as the emulator
  uint64_t next_cursor_ = 1;
};

// The world a run executes in: the emulator (server == nullptr) or the spawned server.
std::unique_ptr<sim::Backend> MakeBackend(RedisServer* server);

}  // namespace testbed::real
