// The handles workloads, which the handles properties share (properties/handles/*.cc): app
// servers (clients) create drafts, read, update, discard and commit them under a renewed lease
// while upstream work runs (the drafts workload); or one client's calls compared with the
// model or with the memory backend (sequential, lockstep); or quota probes. What the callers
// saw goes into a Recorder, which each property judges in its own file.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/handles.h"
#include "properties/property.h"
#include "real/handles/handle.h"
#include "real/state/state_api.h"
#include "sim/runtime.h"

namespace testbed::props::handles {

using real::handles::HandleError;
using real::handles::Json;

constexpr int64_t kNever = INT64_MAX;
// The commit lease: the seed's commitLeaseMs option (default 5 minutes), shortened so that the
// drafts' deadlines, upstream work and the lease are all of one scale in virtual time: work
// takes 0 to 500 ms, so the renewal loop (every lease / 2) runs in most commits.
constexpr int64_t kLeaseMs = 200;
constexpr int64_t kHorizonMs = 4000;

// A bound draft kind with small TTLs: idle 400 ms, hard 1.5 s, results replay for 1 s.
const real::handles::HandleKind& DraftKind();

// One call a client made, as it saw it. Times are virtual ms since the run's start.
struct Op {
  std::string draft, op;  // op: create, read, update, commit, discard, foreign-read
  int actor = 0;
  int64_t inv = 0, ret = kNever;  // kNever: never returned (its actor crashed)
  std::string outcome = "";       // "ok", "replayed", or the HandleError code
  bool transport = false;
  Json value = Json();  // commit: the result; read and update: the data
};

// The calls an operation made, for the timeline's highlights.
Involved Involve(const Op& o);

struct Draft {
  int effects = 0;                      // upstream side effects of work()
  std::vector<std::string> effect_log;  // who ran it, when
};

struct Recorder {
  sim::World* world = nullptr;
  std::vector<std::string> pool;  // drafts every client may use
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
  int64_t now() const { return world->now_ms() - sim::kDefaultEpochMs; }
  size_t begin(const std::string& draft, const std::string& op, int actor) {
    ops.push_back({draft, op, actor, now()});
    return ops.size() - 1;
  }
  void end(size_t i, const std::string& outcome, bool transport = false, Json value = Json()) {
    ops[i].ret = now();
    ops[i].outcome = outcome;
    ops[i].transport = transport;
    ops[i].value = std::move(value);
  }
};

// What every handles property's run is made from: the spec and the state store's scripts.
// The provider runtime state the handle runtime is given (options.state): the port of the
// version's RedisProviderRuntimeState, or a deliberately broken one in a negative test.
using StateFactory = std::unique_ptr<real::handles::HandleState> (*)(
    const std::string& version, sim::Ctx& ctx, const real::state::VersionScripts& scripts,
    std::string provider_id);

struct HandlesEnv {
  HandlesEnv(const RunSpec& spec, const real::ScriptCatalog& scripts)
      : spec(spec), bodies(scripts) {}
  RunSpec spec;
  real::state::VersionScripts bodies;
  StateFactory make_state = real::handles::RedisState;
};
using HandlesProperty = Property<HandlesEnv>;

enum class Workload {
  kDrafts,          // every client: creates, reads, updates, commits, discards, foreign reads
  kSequential,      // client0 alone, each call compared with model/handles
  kMemoryLockstep,  // client0 on Redis and client1 on the memory backend, the same calls
  kQuota,           // quota probes: maxEntries 2, two drafts gone, a third create
};

// A run of one workload, judged by `judge` over what the callers saw (and the trace).
class HandlesRun : public PropertyRun {
 public:
  using Judge = std::vector<Finding> (*)(const Recorder&, const sim::Trace&);
  HandlesRun(const HandlesEnv& env, Workload workload, Judge judge)
      : env_(env), workload_(workload), judge_(judge) {}
  void Start(sim::World& world) override;
  void Check(sim::World&, RunOutcome& out) override { out.findings = judge_(rec_, out.trace); }

 private:
  const HandlesEnv& env_;
  Workload workload_;
  Judge judge_;
  Recorder rec_;
};

template <HandlesRun::Judge J, Workload W = Workload::kDrafts>
std::unique_ptr<PropertyRun> Run(const HandlesEnv& env) {
  return std::make_unique<HandlesRun>(env, W, J);
}

// The findings a sequential, lockstep or quota workload made itself.
inline std::vector<Finding> WorkloadFindings(const Recorder& r, const sim::Trace&) {
  return r.findings;
}

// The properties about replies and reads set LosesWrites() aside (a replica behind, a store
// rebuilt from a prefix), while work-at-most-once and updates-exactly-once keep those faults, to
// show what the lease design does when Redis loses a claim or a finalize.

// "client 0 commit from +10ms to +230ms -> ok {...}"
std::string Describe(const Op& o);
std::string Show(const model::HandleAnswer& a);
bool Same(const model::HandleAnswer& got, const model::HandleAnswer& want);

}  // namespace testbed::props::handles
