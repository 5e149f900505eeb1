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
// Property "acknowledged-writes-visible": after a write is acknowledged, get() and list() find
// the key until it is overwritten, deleted or expires (no other operation could remove it).
// Property "quota-liveness": once an entry is deleted or expired, a namespace at its quota
// accepts a new key (with old pods in a rolling deploy deleting, when there are old pods).
// Property "reads-never-quota-error": get() and list() never fail with a quota error.
// Property "legacy-readable": a live v1 value written by an old pod is readable after the
// upgrade, by the first concrete connection that asks (seed 000's CLAIM_LEGACY_SCRIPT comment:
// "the first concrete connection ... adopts that value"), and stays readable by it.
// Property "legacy-adopted-once": one v1 write is adopted by at most one v2 scope.
// Property "rolling-deploy-writes-visible": with old and new pods on one key, in sequence,
// every read (get or list, on either version) returns the last acknowledged write.
// Property "model-matches-implementation": a sequential, fault-free run answers every call
// (get, set, compareAndSet, delete, list, increment, old-pod writes for beta.24) as the pure
// model of the whole contract (model/state_store.h) does at that instant.
//
// Rolling deploys: clients that run `old_version` are the old pods. Which version precedes
// which follows the seeds' diffs: beta.23 <- beta.3, beta.24 <- beta.23 (seed 000), beta.30 <-
// beta.3 (seed 001). A property that needs something a version lacks is "n/a" for it (see
// Applies): there is no old pod before beta.3, no memory-backend port but beta.30's, and no
// connection scope before beta.24.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "properties/register_history.h"
#include "properties/system.h"
#include "real/redis_server.h"
#include "real/script_catalog.h"
#include "real/state/state_api.h"
#include "sim/runtime.h"

namespace testbed::props {

struct StateWorkload {
  uint64_t seed = 1;
  int clients = 3;
  int ops = 12;  // per client
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
  // Property "acknowledged-writes-visible": set / get / list / delete on shared keys; the
  // checker looks for reads that miss a write nothing else could have removed.
  bool ack_probes = false;
  // Property "quota-liveness": fill a maxEntries-2 namespace, delete (or let expire) one
  // entry, then set a new key; it must be accepted.
  bool liveness_probes = false;
  // Property "reads-never-quota-error": an old pod fills a small namespace with v1 values,
  // a new pod fills its own scope, then reads the v1 keys.
  bool read_quota_probes = false;
  // Property "legacy-readable": an old pod writes v1 values; new pods on their own
  // connections read them.
  bool legacy_read_probes = false;
  // Property "legacy-adopted-once": an old pod keeps writing one key; new pods on their own
  // connections get / set / compareAndSet / delete it; which scope saw which v1 write.
  bool adoption_probes = false;
  // Property "rolling-deploy-writes-visible": each client runs both versions in sequence.
  bool rolling_probes = false;
  // Property "increments-all-kept": every client increments one shared counter; the last
  // client to finish reads it and compares it with the increments that were acknowledged.
  bool counter_probes = false;
  // Property "versions-never-repeat": each client writes a key of its own, deletes it (or lets
  // it expire), writes it again, and compares the two versions; on a repeat it
  // compareAndSets at the first write's version.
  bool version_probes = false;
  // Property "valid-calls-never-script-error": set a value a JSON-over-Lua store may choke on
  // (nesting deeper than cjson's 1000, -0, 1e21, long numbers, nested empties, unicode), then
  // compareAndSet it at the version set() returned, then compareAndSet the value back over it.
  bool adversarial_probes = false;
  // Property "foreign-values-consistent": another writer (an older SDK, a migration script, an
  // operator) SETs a key to raw text this SDK did not write; get and compareAndSet at the
  // version get() returned must agree about it.
  bool foreign_probes = false;
  // Property "model-matches-implementation": one client, fault-free, random operations
  // across connections, scopes, namespaces, TTLs and quota, each compared with model/state_store.
  bool model_probes = false;
  // Property "names-are-opaque": one client, fault-free, runs each operation twice at one
  // instant: under plain names, and under names with ':', '*', '?', '[', '\\', empty or unicode
  // (provider, connections, namespaces, keys), under another provider; the answers must match.
  bool names_probes = false;
  // Property "hot-key-linearizable": the plain workload on one key ("hot"), each client's
  // operations split over kHotKeyThreadsPerClient concurrent threads.
  bool hot_key_probes = false;
  std::string version = "beta30";
  std::string old_version;  // the old pods' version in a rolling deploy ("": no old pods)
  // rolling-deploy-writes-visible only: pods of further old versions in the same deploy
  // (--rolling-from beta24,beta23: beta.23 writes v1 data while beta.24 and the new pods run).
  std::vector<std::string> more_old_versions;
  // Operations shrunk away: (client, op index) pairs that the client skips entirely (no draws,
  // no calls, no pause), so later operations draw differently but deterministically.
  std::set<std::pair<int, int>> skip;
  sim::FaultOptions faults;
  state::NamespaceOptions ns{.default_ttl_ms = 2000, .max_ttl_ms = 10000, .max_entries = 100};
};

inline constexpr int kHotKeyThreadsPerClient = 3;

struct StateRun {
  std::vector<Finding> lin_violations;          // cas-versions-linearizable: per rejected key
  std::vector<Finding> boundary_violations;     // expiry-boundary-get-list
  std::vector<Finding> read_back_violations;    // value-read-back
  std::vector<Finding> quota_violations;        // quota-safety
  std::vector<Finding> memory_violations;       // memory-matches-redis
  std::vector<Finding> isolation_violations;    // connection-isolation
  std::vector<Finding> ack_violations;          // acknowledged-writes-visible
  std::vector<Finding> liveness_violations;     // quota-liveness
  std::vector<Finding> read_quota_violations;   // reads-never-quota-error
  std::vector<Finding> legacy_read_violations;  // legacy-readable
  std::vector<Finding> adoption_violations;     // legacy-adopted-once
  std::vector<Finding> rolling_violations;      // rolling-deploy-writes-visible
  std::vector<Finding> model_violations;        // model-matches-implementation
  std::vector<Finding> counter_violations;      // increments-all-kept
  std::vector<Finding> version_violations;      // versions-never-repeat
  std::vector<Finding> adversarial_violations;  // valid-calls-never-script-error
  std::vector<Finding> foreign_violations;      // foreign-values-consistent
  std::vector<Finding> names_violations;        // names-are-opaque
  // Redis calls that ran a script and got an error reply (a script that fails at run time;
  // the SDK reports it as "Redis is unavailable", so the workload cannot tell it apart).
  std::vector<std::string> script_errors;
  lin::RegisterHistory history;
  lin::Verdict verdict;
  sim::RunResult run;
  sim::Trace trace;
};

// backend: emulator (server == nullptr) or the spawned server.
// strategy: which pending call runs next (nullptr: a random walk from the seed).
StateRun RunStateWorkload(const StateWorkload& w, const ScriptCatalog& scripts, RedisServer* server,
                          sim::Strategy* strategy = nullptr);

// The part of the history on the key the checker rejected, as text.
std::string FormatCounterexample(const StateRun& r);

// The property table (properties/system.h), with each property's probe and findings.
struct StateProperty {
  PropertyInfo info;
  bool StateWorkload::*probe;  // the workload switch (nullptr: the plain mix)
  std::vector<Finding> StateRun::*findings;
};
const std::vector<StateProperty>& StatePropertyTable();
const StateProperty& FindStateProperty(const std::string& name);  // throws std::invalid_argument

std::vector<std::string> StateProperties();  // names, in table order
// The workload that exercises a property, with the faults it sets aside switched off.
StateWorkload ForProperty(StateWorkload w, const std::string& property);
bool Violates(const StateRun& r, const std::string& property);
const std::vector<Finding>& FindingsOf(const StateRun& r, const std::string& property);
std::vector<Finding>& FindingsOf(StateRun& r, const std::string& property);
std::string DescribeViolation(const StateRun& r, const std::string& property);
// Whether the property means anything for this version and old version (else "n/a").
bool Applies(const std::string& property, const std::string& version,
             const std::string& old_version);

}  // namespace testbed::props
