// Property runs for the provider state store: generated multi-client workloads through a
// ported SDK version, in the simulated world (emulator or spawned redis-server), with faults;
// the history goes to the linearizability checker against model/state_register.
//
// Property "cas-versions-linearizable": get / set / compareAndSet / delete on each key, with
// versions, are linearizable (ambiguous operations may or may not have taken effect; expiry
// inside an operation's interval may go either way).
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
  std::string version = "beta30";
  sim::FaultOptions faults;
  state::NamespaceOptions ns{.default_ttl_ms = 2000, .max_ttl_ms = 10000, .max_entries = 100};
};

struct StateRun {
  lin::RegisterHistory history;
  lin::Verdict verdict;
  sim::RunResult run;
  std::vector<std::string> trace;
};

// backend: emulator (server == nullptr) or the spawned server.
StateRun RunStateWorkload(const StateWorkload& w, const ScriptCatalog& scripts, RedisServer* server);

// The part of the history on the key the checker rejected, as text.
std::string FormatCounterexample(const StateRun& r);

std::vector<std::string> StateVersions();  // ported versions, by scripts directory name

// A saved finding (scenarios/*.json): the workload that triggers it and what it shows.
struct Scenario {
  std::string name, property, trigger, severity, expect, faults, version;
  StateWorkload workload;
};
Scenario LoadScenario(const std::string& path);  // throws std::invalid_argument, clearly

}  // namespace testbed::props
