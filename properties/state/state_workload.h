// Internal to properties/state/: what every state property's run is made from (StateEnv), what
// its clients record (Recorder), the base of a run (StateRun: each client runs Client(), the
// findings are what the clients recorded unless the property judges more), and what several
// property files share, split by file (a probe one property uses lives in that property's file):
//   state_workload.cc      values, quota writes, old pods and the quota probe across clocks
//   state_linearizable.cc  one plain operation into the history, and its judging
//   state_legacy.cc        rolling deploys and the v1 -> v2 legacy workloads
//   state_trace_ops.cc     a recorded trace's calls read back as the register's operations
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "properties/shared/json_bend.h"
#include "harness/property.h"
#include "checker/register_history.h"
#include "properties/state/state_props.h"
#include "real/state/memory_beta30.h"
#include "real/state/namespace.h"
#include "sim/prng.h"

namespace testbed::props::state {

// The anomaly classes the shared workloads name, declared once: the legacy workload's
// (legacy-readable, rolling-deploy-writes-visible), the quota probe across clocks' (quota-safety,
// quota-liveness), and the sequential client's and the history judge's
// (model-matches-implementation, versions-never-repeat). The properties' tables use them.
inline constexpr char kV1ValueUnreadable[] = "v1-value-unreadable";
inline constexpr char kV1ValueLostToAnotherScope[] = "v1-value-lost-to-another-scope";
inline constexpr char kUnreadableWithoutConnection[] = "unreadable-without-connection";
inline constexpr char kReadsOtherValue[] = "reads-other-value";
inline constexpr char kLosesWrite[] = "loses-write";
inline constexpr char kListMissesOldPodRewrite[] = "list-misses-old-pod-rewrite";
inline constexpr char kReadsStale[] = "reads-stale";
inline constexpr char kResurrectsDeleted[] = "resurrects-deleted";
inline constexpr char kSkewOverfill[] = "skew-overfill";
inline constexpr char kSkewExpiredSlotRefused[] = "skew-expired-slot-refused";
inline constexpr char kAnswersAsTheV1Claim[] = "answers-as-the-v1-claim";
inline constexpr char kValueBentByCjson[] = "value-bent-by-cjson";
inline constexpr char kQuotaFreesSlotAtExpiryInstant[] = "quota-frees-slot-at-expiry-instant";
inline constexpr char kVersionContinuesAfterExpiry[] = "version-continues-after-expiry";
inline constexpr char kStaleCasSucceedsAfterExpiry[] = "stale-cas-succeeds-after-expiry";

// acknowledged-writes-visible: one operation, as the checker needs it.
struct AckOp {
  enum class Kind { kSet, kGet, kList, kDelete } kind = Kind::kGet;
  std::string key;
  int actor = 0;
  int64_t inv_seq = 0, ret_seq = 0, inv_ms = 0, ret_ms = 0;
  bool ambiguous = false;  // a transport error: it may or may not have happened
  bool found = false;      // get/list: the key was there
  bool rejected = false;   // a quota or policy error: it wrote nothing (the judge skips it)
  // set: the earliest instant the entry may expire, as promised: the writer's ttl on the
  // server's clock from the call's start (model rule 1)
  int64_t exp_lo = 0;
  // set: the expiry the store itself set on the server, read back as the write returns (the
  // shipped scripts: PXAT from the writer's own clock)
  int64_t stated_ms = 0;
  int64_t clock_ms = 0;  // the caller's own clock when it called (inv_ms plus its skew)
  std::optional<int64_t> ttl;
};

// legacy-readable: a v1 value an old pod wrote, and what each connection read of it (the
// connection "" is a caller without one).
struct LegacyKey {
  std::string value;      // JSON of what the old pod wrote
  int64_t acked_ms = -1;  // when the old pod's set returned (-1: it did not)
  // The first instant the value may be gone: the old pod's ttl from its call, by the server's
  // clock, or the expiry the old pod set from its own clock, whichever is sooner.
  int64_t live_until_ms = 0;
  std::string old_version;
  struct Read {
    std::string connection;
    int64_t inv_ms, ret_ms;
    std::optional<std::string> got;  // JSON of the value read; nullopt: null
    bool done = false;               // false: it failed or never returned (a claim may have run)
  };
  std::vector<Read> reads;
};

// What a run's clients record as they go: the world, the history's sequence numbers and the
// findings of the run's one property.
struct Recorder {
  sim::World* world = nullptr;
  int64_t seq = 0;
  std::vector<Finding> findings;
  // AckStep: the server key each thread's set is writing, and the expiry the server held for it
  // right after that thread's latest applied call (virtual ms; absent: no expiry was read).
  std::map<sim::ThreadId, std::string> writing;
  std::map<sim::ThreadId, int64_t> expiry_after_call;
  bool observing = false;
};

// What every state property's run is made from: the workload's parameters (faults: those the
// property keeps) and the version's scripts.
struct StateEnv {
  StateEnv(StateWorkload w, const real::ScriptCatalog& scripts)
      : w(std::move(w)), scripts(scripts) {}
  StateWorkload w;
  real::state::VersionScripts scripts;
};
using StateProperty = Property<StateEnv>;

// A run of a state property: `clients` actors client0..., each running Client(ctx, id).
class StateRun : public PropertyRun {
 public:
  explicit StateRun(const StateEnv& env) : w(env.w), scripts(env.scripts) {}
  void Start(sim::World& world) override;
  void Check(sim::World&, RunOutcome& out) override { out.findings = std::move(rec.findings); }

 protected:
  virtual sim::Task<void> Client(sim::Ctx& ctx, int id) = 0;
  // The namespace "ns" of the provider under test on `connection`, as most workloads use it.
  std::unique_ptr<real::state::StateNamespace> Namespace(
      sim::Ctx& ctx, const std::string& connection = "conn") const;
  const StateWorkload& w;
  const real::state::VersionScripts& scripts;
  Recorder rec;
};

// A run whose clients each open the namespace "ns" on Connection(id) and make one Step per
// operation, each drawing from the operation's own stream (OpSeed), skipping what was shrunk
// away; then Finish.
class StepRun : public StateRun {
 public:
  using StateRun::StateRun;

 protected:
  virtual std::string Connection(int id) const { return "conn"; }
  virtual sim::Task<void> Step(sim::Ctx& ctx, real::state::StateNamespace& ns, int id, int i,
                               sim::Prng& rng) = 0;
  virtual sim::Task<void> Finish(sim::Ctx& ctx, real::state::StateNamespace& ns, int id) {
    co_return;
  }

 private:
  sim::Task<void> Client(sim::Ctx& ctx, int id) final;
};

// A probe that judges one client's calls in sequence takes each outcome as reported. A request
// re-sent after a reconnect (the resend fault) may have taken effect before the outcome its
// caller saw, which such a probe would blame on the store: it sets resend aside too. The
// linearizability properties judge the resend (resent-write-effect-hidden,
// cas-fails-on-its-own-write).
inline sim::FaultSet AndResend(sim::FaultSet s) {
  s.insert(sim::Fault::kResend);
  return s;
}

// The probes aim at one exact millisecond; the model answers one instant per call.
inline sim::FaultSet MovesTheInstant() {
  using F = sim::Fault;
  return {F::kLatency, F::kDelay, F::kReorder, F::kPause, F::kSkew, F::kClockJump};
}
// Whether a version writes v1 keys (the old pods of a v1 -> v2 upgrade).
// A virtual instant as findings print it: "+12ms" or "-97ms" since the run's start.
inline std::string RunTime(int64_t ms) {
  const int64_t d = ms - sim::kDefaultEpochMs;
  return (d < 0 ? "" : "+") + std::to_string(d) + "ms";
}

inline bool IsV1(const std::string& version) { return version == "beta3" || version == "beta23"; }

// quota probes across clients' clocks: namespace -> client 0's write of a (invoked, returned).
using SkewWrites = std::map<std::string, std::pair<int64_t, int64_t>>;

// What the legacy workload saw: every v1 key an old pod wrote and who read it (legacy-readable).
struct LegacyLog {
  std::map<std::string, LegacyKey> keys;
};
enum class Legacy { kRead, kRolling };

// ---- state_workload.cc: what several probes share ----
// The values whose JSON a store could bend (value-read-back, the sequential client).
real::state::Json TrickyValue(sim::Prng& rng);

// How a caller tells a failed call's error apart: "quota", "transport" or "policy"
// (model-matches-implementation, names-are-opaque).
std::string ErrorKind(const real::state::StateError& e);

// A value valid for a JavaScript caller that a JSON-over-Lua store may choke on, and a short
// description of it (the deep ones are too long to print).
struct AdversarialCase {
  std::string label;
  real::state::Json value;
};
// The first kShallowAdversarialCases cases are small; the rest are nested 1000 and 1001 deep.
inline constexpr uint64_t kShallowAdversarialCases = 6;
// A case drawn from all of them, or (deep == false) from the small ones only. The cases live
// for the whole program. (valid-calls-never-script-error, memory-matches-redis)
const AdversarialCase& AdversarialValue(sim::Prng& rng, bool deep);

// The quota probes' write that creates or overwrites `key`, by each of the writes that have a
// quota check of their own in the scripts, in turn (`how` 0, 1, 2: set, compareAndSet at
// `expected`, increment): how a caller names it, whether it wrote, and what it failed with.
struct KeyWrite {
  std::string shown;
  bool written = false;
  std::optional<real::state::StateError> error;
};
// (quota-safety, quota-liveness)
sim::Task<KeyWrite> WriteKeyBy(real::state::StateNamespace& ns, int how, std::string key,
                               int64_t expected, real::state::Json value,
                               std::optional<int64_t> ttl);

// Sleeps until virtual instant t (the probes and the legacy workload).
sim::Task<void> SleepUntil(sim::Ctx& ctx, Recorder* rec, int64_t t);

// An old pod of the rolling deploy: namespace `name` on `connection` through w.old_version's port
// (quota-safety, quota-liveness, reads-never-quota-error, foreign-values-consistent, keys-expire,
// old-pod-writes-listed, expiry-boundary-get-list, the legacy workload).

std::unique_ptr<real::state::StateNamespace> OldPod(sim::Ctx& ctx, const StateWorkload& w,
                                                    const real::state::VersionScripts& scripts,
                                                    const std::string& name,
                                                    real::state::NamespaceOptions o,
                                                    const std::string& connection);

// The quota across clients' clocks (quota-safety with safety, quota-liveness without).
sim::Task<void> SkewQuotaProbe(sim::Ctx& ctx, const StateWorkload& w,
                               const real::state::VersionScripts& scripts, int id, int i,
                               bool safety, SkewWrites* writes, Recorder* rec);

// ---- state_linearizable.cc ----
// One operation of the register: what PlainOp draws, or what a recorded trace's client made
// (state_trace_ops.cc).
struct RegisterCall {
  model::RegisterOp::Kind kind = model::RegisterOp::Kind::kGet;
  std::string key;
  std::string partition;  // the history's key ("": `key`)
  real::state::Json value;
  std::optional<int64_t> ttl;
  int64_t expected = 0;  // compareAndSet
  // A quota error is a finding (quota-error-below-max-entries): the plain workload's namespace
  // never fills; a recorded trace's may have.
  bool quota_error_is_finding = true;
};
// Makes `call` through the port and records it in `history` as `actor`'s operation.
sim::Task<void> MakeRegisterCall(sim::Ctx& ctx, real::state::StateNamespace& ns,
                                 const StateWorkload& w, int actor, RegisterCall call,
                                 std::map<std::string, int64_t>& seen_version,
                                 checker::RegisterHistory* history, Recorder* rec);
// One random operation on `key` (get, set, compareAndSet, delete; no set with cas_only),
// recorded in `history` as `actor`'s, then a pause. The draws after the key's come from rng.
sim::Task<void> PlainOp(sim::Ctx& ctx, real::state::StateNamespace& ns, const StateWorkload& w,
                        int actor, int i, std::string key, sim::Prng& rng,
                        std::map<std::string, int64_t>& seen_version,
                        checker::RegisterHistory* history, Recorder* rec);

// The history judged against model/state_register, key by key: a finding per rejected key,
// named by the 1-minimal core of its history. hot_key: nine actors on one key (a smaller
// search budget, and the sentence says who the actors are). Sets out.incomplete when the
// search gave up.
// The classes JudgeHistory names its findings by; `key` says which keys ("a key").
std::vector<AnomalyClass> HistoryClasses(const std::string& key);

void JudgeHistory(const checker::RegisterHistory& history, const StateWorkload& w, int64_t start_ms,
                  bool hot_key, RunOutcome& out);

// ---- state_trace_ops.cc ----
// What a recorded trace of `version` can be judged by (beta.23, beta.24, beta.30; nullptr else).
const TraceSupport* StateTraceSupport(const std::string& version);

// ---- state_legacy.cc ----
sim::Task<void> LegacyClient(sim::Ctx& ctx, int id, const StateWorkload& w,
                             const real::state::VersionScripts& scripts, Legacy probe,
                             LegacyLog* log, Recorder* rec);

// reads_claim: the version's reads claim v1 keys, so a failed read may have taken a value.
std::vector<Finding> CheckLegacyReads(const std::map<std::string, LegacyKey>& keys,
                                      bool reads_claim);

}  // namespace testbed::props::state
