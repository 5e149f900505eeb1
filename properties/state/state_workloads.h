// Internal to properties/state_*.cc: what the workloads record while they run (Recorder),
// and the workload pieces each property runs, split by file:
//   state_probes.cc     probes of one property each (expiry instants, read-back, quota,
//                       memory backend, acknowledged writes), and the helpers they share
//   state_legacy.cc     rolling deploys and the v1 -> v2 legacy properties
//   state_sequential.cc model-matches-implementation
//   state_props.cc      the client loop, the property table, the checks, runs and scenarios
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "properties/json_bend.h"
#include "properties/state/state_props.h"
#include "real/state/memory_beta30.h"
#include "real/state/namespace.h"
#include "sim/prng.h"

namespace testbed::props::detail {

// acknowledged-writes-visible: one operation, as the checker needs it.
struct AckOp {
  enum class Kind { kSet, kGet, kList, kDelete } kind = Kind::kGet;
  std::string key;
  int actor = 0;
  int64_t inv_seq = 0, ret_seq = 0, inv_ms = 0, ret_ms = 0;
  bool ambiguous = false;  // a transport error: it may or may not have happened
  bool found = false;      // get/list: the key was there
  int64_t exp_lo = 0;      // set: the earliest instant the entry may expire (server time)
  std::optional<int64_t> ttl;
};

// legacy-readable: a v1 value an old pod wrote, and what each connection read of it.
struct LegacyKey {
  std::string value;      // JSON of what the old pod wrote
  int64_t acked_ms = -1;  // when the old pod's set returned (-1: it did not)
  std::string old_version;
  struct Read {
    std::string connection;
    int64_t inv_ms, ret_ms;
    std::optional<std::string> got;  // JSON of the value read; nullopt: null
    bool done = false;               // false: it failed or never returned (a claim may have run)
  };
  std::vector<Read> reads;
};

struct Recorder {
  sim::World* world = nullptr;
  int64_t seq = 0;
  lin::RegisterHistory history;
  std::vector<Finding> boundary_violations;
  std::vector<Finding> read_back_violations;
  std::vector<Finding> quota_violations;
  std::vector<Finding> memory_violations;
  std::vector<Finding> isolation_violations;
  std::vector<Finding> liveness_violations;
  std::vector<Finding> read_quota_violations;
  std::vector<Finding> adoption_violations;
  std::vector<Finding> rolling_violations;
  std::vector<Finding> model_violations;
  std::vector<Finding> counter_violations;
  std::vector<Finding> version_violations;
  std::vector<Finding> adversarial_violations;
  std::vector<Finding> names_violations;
  std::vector<Finding> foreign_violations;
  // increments-all-kept: increments acknowledged, of unknown outcome, and clients done.
  int64_t counter_acked = 0, counter_unknown = 0;
  int counter_clients_done = 0;
  // quota probes across clients' clocks: namespace -> client 0's write of a (invoked, returned).
  std::map<std::string, std::pair<int64_t, int64_t>> skew_writes;
  std::set<std::string> memory_desynced;  // memory-matches-redis: namespaces an unknown outcome hit
  std::vector<AckOp> ack_ops;
  std::map<std::string, LegacyKey> legacy_keys;  // legacy-readable, by key
  std::map<std::string, std::set<std::string>>
      adopters;  // legacy-adopted-once: v1 origin -> scopes
};

// ---- state_probes.cc: the probes, and what every workload shares ----
std::string Show(const std::optional<state::StateValue>& v);

// memory-matches-redis: one call drawn over `keys` (get, set, compareAndSet, delete, list; TTLs
// past maxTtl, values past maxValueBytes, stale versions, adversarial values) on both backends
// of namespace `space` (options `o`).
Task<void> MemoryLockstep(sim::Ctx& ctx, state::StateNamespace& redis,
                          state::memory_beta30::Namespace& memory,
                          const std::vector<std::string>& keys, const state::NamespaceOptions& o,
                          Prng& rng, int i, int64_t ttl_max, const std::string& space,
                          Recorder* rec);

state::Json TrickyValue(Prng& rng);

// A value valid for a JavaScript caller that a JSON-over-Lua store may choke on, and a short
// description of it (the deep ones are too long to print).
struct AdversarialCase {
  std::string label;
  state::Json value;
};
// The first kShallowAdversarialCases cases are small; the rest are nested 1000 and 1001 deep.
inline constexpr uint64_t kShallowAdversarialCases = 6;
// A case drawn from all of them, or (deep == false) from the small ones only. The cases live
// for the whole program.
const AdversarialCase& AdversarialValue(Prng& rng, bool deep);

Task<void> AdversarialProbe(sim::Ctx& ctx, state::StateNamespace& ns, const std::string& key,
                            const AdversarialCase& c, Recorder* rec);

// foreign-values-consistent: another writer (or, with `old_pod`, an old pod's key) leaves a
// value this SDK did not write in `key`;
// get and compareAndSet at the version get() returned must agree about it.
Task<void> ForeignValueProbe(sim::Ctx& ctx, state::StateNamespace& ns,
                             const state::StateNamespace* old_pod, const std::string& key,
                             Prng& rng, Recorder* rec);

Task<void> ReadBackProbe(sim::Ctx& ctx, state::StateNamespace& ns, const std::string& key,
                         state::Json value, Recorder* rec);

Task<void> QuotaProbe(sim::Ctx& ctx, const StateWorkload& w, const state::VersionScripts& scripts,
                      int id, int i, int64_t ttl, Recorder* rec);

Task<void> ExpiryProbe(sim::Ctx& ctx, state::StateNamespace& ns, const std::string& key,
                       int64_t ttl, Recorder* rec);

Task<void> AdoptedEntryProbe(sim::Ctx& ctx, const StateWorkload& w,
                             const state::VersionScripts& scripts, int id, int i, Recorder* rec);

Task<void> SleepUntil(sim::Ctx& ctx, Recorder* rec, int64_t t);

std::unique_ptr<state::StateNamespace> OldPod(sim::Ctx& ctx, const StateWorkload& w,
                                              const state::VersionScripts& scripts,
                                              const std::string& name, state::NamespaceOptions o,
                                              const std::string& connection);

Task<void> QuotaRace(sim::Ctx& ctx, const StateWorkload& w, const state::VersionScripts& scripts,
                     int id, int i, Recorder* rec);

Task<void> SkewQuotaProbe(sim::Ctx& ctx, const StateWorkload& w,
                          const state::VersionScripts& scripts, int id, int i, bool safety,
                          Recorder* rec);

Task<void> AckStep(sim::Ctx& ctx, state::StateNamespace& ns, int id, int i, Prng& rng,
                   Recorder* rec);

Task<void> LivenessProbe(sim::Ctx& ctx, const StateWorkload& w,
                         const state::VersionScripts& scripts, int id, int i, Prng& rng,
                         Recorder* rec);

Task<void> ReadQuotaProbe(sim::Ctx& ctx, const StateWorkload& w,
                          const state::VersionScripts& scripts, int id, int i, Recorder* rec);

// ---- state_sequential.cc ----
Task<void> SequentialClient(sim::Ctx& ctx, const StateWorkload& w,
                            const state::VersionScripts& scripts, Recorder* rec);

Task<void> NamesLockstepClient(sim::Ctx& ctx, const StateWorkload& w,
                               const state::VersionScripts& scripts, Recorder* rec);

// ---- state_legacy.cc ----
Task<void> LegacyClient(sim::Ctx& ctx, int id, const StateWorkload& w,
                        const state::VersionScripts& scripts, Recorder* rec);

std::vector<Finding> CheckLegacyReads(const std::map<std::string, LegacyKey>& keys);

}  // namespace testbed::props::detail
