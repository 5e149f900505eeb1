// The handles workloads, which the handles properties share (properties/handles/*.cc): app
// servers (clients) create drafts, read, update, discard and commit them under a renewed lease
// while upstream work runs (the drafts workload); or one client's calls compared with the
// model or with the memory backend (sequential, lockstep); or quota probes. What the callers
// saw goes into a Recorder, which each property judges in its own file.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "model/handles.h"
#include "checker/linearizability.h"
#include "harness/property.h"
#include "real/handles/handle.h"
#include "real/state/state_api.h"
#include "sim/runtime.h"

namespace testbed::props::handles {

// The class the drafts workload names for bound-isolation (its table uses it).
inline constexpr char kReadsOtherConnectionsDraft[] = "reads-other-connections-draft";

using real::handles::HandleError;
using real::handles::Json;

// The commit lease: the seed's commitLeaseMs option (default 5 minutes), shortened so that the
// drafts' deadlines, upstream work and the lease are of one scale in virtual time, yet still
// longer than what the seed takes for granted fits in it: a finalize's three attempts, each up
// to the SDK's 250 ms Redis timeout, with 50 and 100 ms between them (js 797-818), end within
// half a lease. (At 200 ms, a lost request during the finalize lost the result only because the
// lease was shorter than one Redis timeout: an artifact no real deployment has.) Work takes 0
// to 200 ms in two commits in five; the others run 0.2 to 2.9 s, most of them past the renewal
// interval (lease / 2) and some past the lease itself, so the renewal loop is what keeps their
// claims.
constexpr int64_t kLeaseMs = 2000;
constexpr int64_t kHorizonMs = 4000;

// A bound draft kind with small TTLs: idle 400 ms, hard 1.5 s, results replay for 1 s.
const real::handles::HandleKind& DraftKind();
// A bound cursor kind (model/handles.h promise 7): it lives 600 ms from its create, and reads
// do not slide it.
const real::handles::HandleKind& CursorKind();

// One call a client made, as it saw it. Times are virtual ms since the run's start.
struct Op {
  std::string draft, op;  // op: create, read, update, commit, discard, foreign-read
  int actor = 0;
  int64_t inv = 0, ret = checker::kNever;  // kNever: never returned (its actor crashed)
  std::string outcome = "";                // "ok", "replayed", or the HandleError code
  bool transport = false;
  Json value = Json();  // commit: the result; read and update: the data
  // The client library re-sent one of its calls after a reconnect (fault "resend"): the call
  // may have been applied twice (counted on the actor's thread from begin() to end()).
  bool resent = false;
  int64_t resent_base = 0;
  std::string token = "";     // update: the entry it appends to the data's log (retries share it)
  std::string deadline = "";  // HANDLE_EXPIRED: which deadline (idle, max, result)
  Json sent = Json();         // create: the data it was given
  bool cursor = false;        // a call on a cursor (CursorKind), not a draft
  // The caller's clock (virtual ms since the run's start, skewed or jumped as the faults made
  // it) at the call's invocation and return, and where its work ran (commit; kNever: it did
  // not start), in virtual time and on the caller's clock.
  int64_t clock_inv = 0, clock_ret = checker::kNever;
  int64_t work_start = checker::kNever, work_end = checker::kNever, clock_work_start = 0,
          clock_work_end = 0;
};

// The calls an operation made, for the timeline's highlights.
Involved Involve(const Op& o);

// One upstream side effect of work(): who ran it (in which of its commits), when it ended,
// and the result it returned.
struct Effect {
  int actor = 0;
  int64_t at = 0;
  Json result;
};

struct Draft {
  std::vector<Effect> effects;
};

struct Recorder {
  sim::World* world = nullptr;
  std::vector<std::string> pool;  // drafts (and cursors) every client may use
  std::set<std::string> cursors;  // the handles of the pool that are cursors
  std::map<std::string, Draft> drafts;
  std::vector<Op> ops;
  // What the drafts workload saw besides its calls: reads back that differ from what was
  // written, and reads from another connection that found a bound draft.
  std::vector<Finding> read_back_mismatches, foreign_reads;
  // What the sequential, lockstep and quota workloads found themselves.
  std::vector<Finding> findings;
  struct Answered {
    std::string what;
    model::HandleAnswer answer;
    bool ran = false;
  };
  std::vector<Answered> on_redis, on_memory;  // memory-matches-redis: client 0, client 1
  std::map<int, const sim::Ctx*> actors;      // each client's main thread, for its re-sent calls
  // How far behind virtual time each client's clock was at its furthest (its skew, and its
  // clock jump if it had one: its offset at the start and at the end of the run).
  std::map<int, int64_t> behind;
  // A recorded trace's handles (as the capture names them) and the ones this run's creates got.
  std::map<std::string, std::string> recorded_as;
  int64_t now() const { return world->now_ms() - sim::kDefaultEpochMs; }
  // The caller's clock (`actor`'s main thread), or virtual time for a workload without one.
  int64_t clock(int actor) const {
    return actors.count(actor) ? actors.at(actor)->now_ms() - sim::kDefaultEpochMs : now();
  }
  size_t begin(const std::string& draft, const std::string& op, int actor) {
    ops.push_back({draft, op, actor, now()});
    ops.back().clock_inv = clock(actor);
    if (actors.count(actor)) ops.back().resent_base = actors.at(actor)->resent_calls();
    return ops.size() - 1;
  }
  void end(size_t i, const std::string& outcome, bool transport = false, Json value = Json()) {
    ops[i].ret = now();
    ops[i].outcome = outcome;
    ops[i].transport = transport;
    ops[i].value = std::move(value);
    ops[i].clock_ret = clock(ops[i].actor);
    if (actors.count(ops[i].actor))
      ops[i].resent = actors.at(ops[i].actor)->resent_calls() > ops[i].resent_base;
  }
  void fail(size_t i, const HandleError& e) {
    end(i, e.code, e.transport);
    ops[i].deadline = e.details.value("deadline", "");
  }
};

// What every handles property's run is made from: the spec and the state store's scripts.
// The provider runtime state the handle runtime is given (options.state): the port of the
// version's RedisProviderRuntimeState, or a deliberately broken one in a negative test.
using StateFactory = std::unique_ptr<real::handles::HandleState> (*)(
    const std::string& version, sim::Ctx& ctx, const real::state::VersionScripts& scripts,
    std::string provider_id);

// The handle operations a recorded trace's clients made (properties/handles/handles_trace_ops.cc
// rebuilds them from the calls), made again through the port in place of the drafts workload's
// own (testbed explore).
struct TracePlans {
  struct Op {
    std::string op;         // create, read, update, commit, discard
    size_t kind = 0;        // into kinds
    size_t connection = 0;  // into connections
    std::string draft;      // the handle it names as recorded (create: the one it got, or "")
    int64_t gap_ms = 0;     // from its client's previous operation's last call to its first
    // How long its client waited for each reply, as recorded: from its first call to its second
    // (a load to its write); its calls are answered this much later when made again.
    int64_t latency_ms = 0;
    Json data;            // create: the data; update: the data it wrote
    int64_t work_ms = 0;  // commit: how long its work ran
    bool work_fails = false;
  };
  std::string provider_id;
  std::vector<real::handles::HandleKind> kinds;
  std::vector<std::optional<std::string>> connections;  // nullopt: the connection scope missing
  int64_t lease_ms = kLeaseMs;
  std::vector<std::vector<Op>> clients;
};

struct HandlesEnv {
  HandlesEnv(const RunSpec& spec, const real::ScriptCatalog& scripts)
      : spec(spec), bodies(scripts) {}
  RunSpec spec;
  real::state::VersionScripts bodies;
  StateFactory make_state = real::handles::RedisState;
  // A recorded trace's operations, which the drafts workload's clients make in place of their
  // own (nullptr: the workload's).
  std::shared_ptr<const TracePlans> trace;
};
using HandlesProperty = Property<HandlesEnv>;

// What one client of a run is given: its id, its operations (those shrunk away in `skip`), the
// version and its scripts, where it records, and a recorded trace's plans (explore).
struct ClientArgs {
  bool cursors;  // the drafts workload: a third of the creates make a cursor (CursorKind)
  uint64_t seed;
  int id, ops;
  std::string version;
  const SkipSet* skip;
  const real::state::VersionScripts* scripts;
  Recorder* rec;
  StateFactory make_state;
  const TracePlans* trace = nullptr;
};
using ClientFn = sim::Task<void> (*)(sim::Ctx&, ClientArgs);

// What a run's clients do: `client` in each of them (`clients` of them; 0: the spec's).
struct Workload {
  ClientFn client;
  int clients = 0;
  bool cursors = false;
};

// The drafts workload (most properties): every client creates, reads, updates, commits,
// discards and reads foreign drafts, or makes a recorded trace's operations (explore).
sim::Task<void> DraftsClient(sim::Ctx& ctx, ClientArgs a);

// One operation of a probing client, drawing from the operation's own stream `op`.
using OperationProbe = sim::Task<void> (*)(sim::Ctx&, ClientArgs, int i, sim::Prng& op);
// A client that makes each of its operations by `probe`, one after another (the quota
// properties).
sim::Task<void> EachOperation(sim::Ctx& ctx, ClientArgs a, OperationProbe probe);

// A probe's own handle runtime: the version's state store, one connection of its own, and the
// PRNG its creates draw words from.
struct Probe {  // (quota-counts-live-handles, quota-limits-live-handles)
  Probe(sim::Ctx& ctx, const ClientArgs& a, const std::string& connection, uint64_t seed)
      : rng(seed),
        state(a.make_state(a.version, ctx, *a.scripts, "provider-under-test")),
        h(Options(state.get(), connection), ctx, rng) {}
  static real::handles::HandleOptions Options(real::handles::HandleState* state,
                                              const std::string& connection) {
    real::handles::HandleOptions o;
    o.state = state;
    o.connection_id = connection;
    o.commit_lease_ms = kLeaseMs;
    return o;
  }
  sim::Prng rng;
  std::unique_ptr<real::handles::HandleState> state;
  real::handles::HandleContext h;
};

// handles_sequential.cc: one client, no faults, every call compared with model/handles (or, with
// against_memory, client 1 makes the same calls on the memory backend in lockstep)
// (model-matches-implementation, memory-matches-redis).
sim::Task<void> SequentialClient(sim::Ctx& ctx, ClientArgs a, bool against_memory);

// A run of one workload, judged by `judge` over what the callers saw (the findings, and
// "no verdict" when a checker gave up).
class HandlesRun : public PropertyRun {
 public:
  using Judge = void (*)(const Recorder&, RunOutcome&);
  HandlesRun(const HandlesEnv& env, Workload workload, Judge judge)
      : env_(env), workload_(workload), judge_(judge) {}
  void Start(sim::World& world) override;
  void Check(sim::World& world, RunOutcome& out) override;

 private:
  const HandlesEnv& env_;
  Workload workload_;
  Judge judge_;
  Recorder rec_;
  std::map<int, int64_t> start_offsets_;  // each client's clock minus virtual time at its start
};

// Most properties judge by the findings alone, over the callers' record and the trace.
using FindingsJudge = std::vector<Finding> (*)(const Recorder&, const sim::Trace&);
template <FindingsJudge J>
void Judged(const Recorder& rec, RunOutcome& out) {
  out.findings = J(rec, out.trace);
}

template <FindingsJudge J, ClientFn C = DraftsClient, int Clients = 0>
std::unique_ptr<PropertyRun> Run(const HandlesEnv& env) {
  return std::make_unique<HandlesRun>(env, Workload{C, Clients}, &Judged<J>);
}

// The findings a sequential, lockstep or quota workload made itself.
inline std::vector<Finding> WorkloadFindings(const Recorder& r, const sim::Trace&) {
  return r.findings;
}

// The properties about replies and reads set LosesWrites() aside (a replica behind, a store
// rebuilt from a prefix), while work-at-most-once and updates-exactly-once keep those faults, to
// show what the lease design does when Redis loses a claim or a finalize.

// The commit call in which the work of `e` ran (nullptr if none: the horizon cut it off).
const Op* CommitThatRan(const Recorder& rec, const std::string& draft, const Effect& e);

// A draft's commit claims as Knossos's mutex (issue 29, Jepsen output): {"fits", "history",
// "unfit"} as checker/jepsen_history.h's projections. A commit whose work ran acquired the
// claim (active -> committing) between its call and the start of its work, and released it
// between the end of its work and its reply: ok when the commit answered ok (the finalize
// landed), :fail when it answered another error after the work succeeded (the finalize was
// refused: the claim had moved on), else :info (a restore after failed work is best effort,
// js 735, and a finalize whose reply was lost may have landed). A commit that failed in transport
// before its work ran may have claimed without working: an :info acquire. The claim's lease fits:
// it ends with the draft's key (a committing record answers BUSY to every other caller until its
// TTL takes the whole key, js 518 and 625), so no lapse frees it for another claim. Only Redis
// losing a claim (restart, failover, key loss) lets a second commit acquire a held claim, which the
// mutex rejects. Instants are virtual ms, and two events in one millisecond are concurrent.
nlohmann::json CommitClaimsAsMutex(const std::vector<Op>& ops, const std::string& draft);

// "client 0 commit from +10ms to +230ms -> ok {...}"
std::string Describe(const Op& o);
std::string Show(const model::HandleAnswer& a);
bool Same(const model::HandleAnswer& got, const model::HandleAnswer& want);

}  // namespace testbed::props::handles
