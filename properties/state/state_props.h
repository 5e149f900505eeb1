// The provider state store's properties: generated multi-client workloads through a ported SDK
// version, in the simulated world (emulator or spawned redis-server), with faults. Each
// property is one file under properties/state/ (listed in properties.inc; `testbed list`
// prints their contracts).
//
// Rolling deploys: clients that run `old_version` are the old pods. Which version precedes
// which follows the seeds' diffs: beta.23 <- beta.3, beta.24 <- beta.23 (seed 000), beta.30 <-
// beta.3 (seed 001). A property that needs something a version lacks is "n/a" for it: there is
// no old pod before beta.3, no memory-backend port but beta.30's, and no connection scope
// before beta.24.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "harness/system.h"
#include "real/redis_server.h"
#include "real/script_catalog.h"
#include "real/state/state_api.h"
#include "sim/runtime.h"

namespace testbed::props::state {

// The parameters of one run of a state property, as every property's workload reads them: made
// from the RunSpec alone (StateSystem::Prepare), its settings beyond RunSpec's fields from the
// system's options (hidden ones where users do not set them).
struct StateWorkload {
  uint64_t seed = 1;
  int clients = 3;
  int ops = 12;  // per client
  int keys = 2;
  bool cas_only = false;  // the plain workload: get / compareAndSet / delete only, no set()
  // memory-matches-redis: TTLs in [1, max]; 0: the namespace default.
  int64_t probe_ttl_max_ms = 30;
  // connection-isolation's negative test: every connection gets one discriminator.
  bool broken_scope_for_negative_test = false;
  std::string version = "beta30";
  std::string old_version;  // the old pods' version in a rolling deploy ("": no old pods)
  // rolling-deploy-writes-visible only: pods of further old versions in the same deploy
  // (--rolling-from beta24,beta23: beta.23 writes v1 data while beta.24 and the new pods run).
  std::vector<std::string> more_old_versions;
  // Operations shrunk away: (client, op index) pairs that the client skips entirely (no draws,
  // no calls, no pause), so later operations draw differently but deterministically.
  std::set<std::pair<int, int>> skip;
  sim::FaultOptions faults;
  real::state::NamespaceOptions ns{.default_ttl_ms = 2000, .max_ttl_ms = 10000, .max_entries = 100};
};

inline constexpr int kHotKeyThreadsPerClient = 3;

}  // namespace testbed::props::state
