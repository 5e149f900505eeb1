// Property runs for the provider state store: generated multi-client workloads through a
// ported SDK version, in the simulated world (emulator or spawned redis-server), with faults;
// the history goes to the linearizability checker against model/state_register.
//
// Property "cas-versions-linearizable": get / set / compareAndSet / delete on each key, with
// versions, are linearizable (ambiguous operations may or may not have taken effect; expiry
// inside an operation's interval may go either way).
// Property "expiry-boundary-get-list": get() and list() agree on what is alive: an entry that
// get() returns at instant t is listed by list() at the same t (one expiry boundary).
// Property "value-read-back": a value reads back exactly as written (JSON equality).
// Property "quota-safety": a namespace never holds more live entries than maxEntries.
// Property "memory-matches-redis": the memory backend answers as the Redis backend does.
// Property "connection-isolation": a connection never reads another connection's data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "properties/register_history.h"
#include "real/redis_server.h"
#include "real/script_catalog.h"
#include "real/state/state_api.h"
#include "sim/runtime.h"

namespace testbed::props {

struct StateWorkload {
  uint64_t seed = 1;
  int clients = 3;
  int ops = 12;       // per client
  int keys = 2;
  bool cas_only = false;  // get / compareAndSet / delete only: no set()
  // Property "expiry-boundary-get-list": each client sets a key with a TTL, waits exactly
  // that long, then reads it with get() and list() in the same millisecond.
  bool expiry_probes = false;
  // Property "value-read-back": set a key, compareAndSet it to a tricky value (empty arrays,
  // 16-digit integers, fractions, unicode), read it back with get().
  bool read_back_probes = false;
  // Property "quota-safety": in a namespace with maxEntries 1, set a with a TTL, wait until
  // its expiry instant, set b, and read both in that same millisecond.
  bool quota_probes = false;
  // Property "memory-matches-redis": one client runs the same operations on the SDK's memory
  // backend and on the Redis backend, in lockstep, and compares what each returns.
  bool memory_probes = false;
  int64_t probe_ttl_max_ms = 30;  // memory probes: TTLs in [1, max]; 0: the namespace default
  // Property "connection-isolation": each client is its own connection; all write and read the
  // same key in a connection-scoped namespace, and must only ever read their own values.
  bool isolation_probes = false;
  bool broken_scope_for_negative_test = false;  // every connection gets one discriminator
  std::string version = "beta30";
  sim::FaultOptions faults;
  state::NamespaceOptions ns{.default_ttl_ms = 2000, .max_ttl_ms = 10000, .max_entries = 100};
};

struct StateRun {
  std::vector<std::string> boundary_violations;  // expiry-boundary-get-list
  std::vector<std::string> read_back_violations;  // value-read-back
  std::vector<std::string> quota_violations;      // quota-safety
  std::vector<std::string> memory_violations;     // memory-matches-redis
  std::vector<std::string> isolation_violations;  // connection-isolation
  lin::RegisterHistory history;
  lin::Verdict verdict;
  sim::RunResult run;
  std::vector<std::string> trace;
};

// backend: emulator (server == nullptr) or the spawned server.
StateRun RunStateWorkload(const StateWorkload& w, const ScriptCatalog& scripts, RedisServer* server);

// The part of the history on the key the checker rejected, as text.
std::string FormatCounterexample(const StateRun& r);

std::vector<std::string> StateProperties();
// The workload that exercises a property (throws std::invalid_argument for unknown names).
StateWorkload ForProperty(StateWorkload w, const std::string& property);
bool Violates(const StateRun& r, const std::string& property);
std::string DescribeViolation(const StateRun& r, const std::string& property);

std::vector<std::string> StateVersions();  // ported versions, by scripts directory name

// A saved finding (scenarios/*.json): the workload that triggers it and what it shows.
struct Scenario {
  std::string name, property, trigger, severity, expect, faults, version;
  StateWorkload workload;
};
Scenario LoadScenario(const std::string& path);  // throws std::invalid_argument, clearly

}  // namespace testbed::props
