// a2's concurrent workload, which its concurrent properties share (properties/a2/*.cc): a
// producer (client0) appends events (some in ordered lanes, some settled), workers (the other
// clients) claim them under short leases, renew, work (sometimes longer than the lease) and
// complete (with child events) or fail them; or, for presence, writers stamp fields with
// their own clocks and deliver them out of order. What the callers saw goes into a Recorder,
// which each property judges in its own file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checker/linearizability.h"
#include "harness/property.h"
#include "real/a2/store.h"
#include "sim/runtime.h"

namespace testbed::props::a2 {

using real::a2::Json;

// What every a2 property's run is made from: the spec and the version's scripts.
struct A2Env {
  A2Env(const RunSpec& spec, const real::ScriptCatalog& scripts)
      : spec(spec), bodies(scripts, spec.version) {}
  RunSpec spec;
  real::a2::Scripts bodies;
};
using A2Property = Property<A2Env>;

// A short lease, so that work (20 ms to 2.5 leases), renewals, pauses and skews are all of one
// scale in virtual time.
constexpr int64_t kLeaseMs = 100;
constexpr int64_t kHorizonMs = 4000;
constexpr int64_t kMaxFailures = 3;
constexpr const char* kSession = "session-1";
constexpr const char* kPrefix = "a2";
constexpr const char* kPresenceNs = "room-1";

// Times are the world's (real, virtual) ms since the run's start.
struct ClaimRec {
  int actor = 0;
  int64_t index = 0, attempt = 0;
  int64_t inv = 0, ret = 0;
  int64_t lease_end = 0;  // real time: the expiry asked for, then extended by renewals
};
struct SettleRec {
  int actor = 0;
  std::string op;  // complete, fail
  int64_t index = 0, attempt = 0;
  int64_t inv = 0, ret = checker::kNever;
  std::string outcome;   // completed, superseded, failed, dead_lettered, or an error code
  bool unknown = false;  // failed in transport: it may have taken effect
};
struct AppendRec {
  int actor = 0;
  std::string id, type;
  Json payload;
  std::optional<std::string> lane;
  bool settled = false;
  int64_t index = 0;
  int64_t inv = 0, ret = 0;
};
struct PresenceWrite {
  int actor = 0;
  std::string field;
  Json value;  // null: a delete
  int64_t at = 0;
  int64_t inv = 0, ret = checker::kNever;
  bool acked = false;
};

struct Recorder {
  sim::World* world = nullptr;
  std::vector<ClaimRec> claims;
  std::vector<SettleRec> settles;
  std::vector<AppendRec> appends;
  std::optional<std::vector<real::a2::StoredEvent>> final_read;
  int64_t final_read_inv = 0;
  int final_reader = 0;
  std::vector<PresenceWrite> presence;
  std::optional<std::vector<real::a2::PresenceRow>> presence_read;
  int64_t presence_read_inv = 0;
  int64_t now() const { return world->now_ms() - world->start_ms(); }
};

// Which clients run what: the producer and workers, the same with workers that first append
// an event caused by their attempt (a progress note) half of the time, or presence writers.
enum class Workload { kEvents, kEventsWithCausedAppends, kPresence };

// A run of the concurrent workload, judged by `judge` over what the callers saw.
class ConcurrentRun : public PropertyRun {
 public:
  using Judge = std::vector<Finding> (*)(const Recorder&);
  ConcurrentRun(const A2Env& env, Workload workload, Judge judge)
      : env_(env), workload_(workload), judge_(judge) {}
  void Start(sim::World& world) override;
  void Check(sim::World&, RunOutcome& out) override { out.findings = judge_(rec_); }

 private:
  sim::Task<void> Client(sim::Ctx& ctx, int id);
  const A2Env& env_;
  Workload workload_;
  Judge judge_;
  Recorder rec_;
};

// A property's `make` for the concurrent workload.
template <ConcurrentRun::Judge J, Workload W = Workload::kEvents>
std::unique_ptr<PropertyRun> Concurrent(const A2Env& env) {
  return std::make_unique<ConcurrentRun>(env, W, J);
}

// Every concurrent property sets LosesWrites() aside (Redis persistence and replication are
// asynchronous), so what remains is the store's own logic.

std::string Actor(int id);  // "client<id>", as the trace names actors
Involved Involve(int actor, int64_t from, int64_t to, const std::string& op = "");
// A claim's lease end, as a timeline draws it.
Deadline LeaseEnd(const ClaimRec& c);
std::string Ms(int64_t t);  // "+12ms"
std::string ClaimText(const ClaimRec& c);
// When a claim's holder let go of it: the first complete or fail it sent for that attempt.
int64_t ReleasedAt(const Recorder& r, const ClaimRec& c);

}  // namespace testbed::props::a2
