// a2's concurrent calls workload, which calls-linearizable and durability share
// (properties/a2/*.cc): every client plans its calls as the sequential client does
// (properties/a2/a2_sequential.h: stale claims, pauses past the lease, retried batches and
// completions, renewals from the wrong holder, fail limits around the failure count, presence
// stamps that tie, the lane "" in a quarter of the runs) on one session and one presence
// namespace, all at once. An inspecting property (calls-linearizable) also lists sessions and
// marks the session watched in a quarter of its runs, and follows notifications there. Each call is
// recorded whole, with the `now` its caller's clock gave the store, its window and its answer; a
// property judges the list.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "properties/a2/a2_sequential.h"
#include "checker/linearizability.h"

namespace testbed::props::a2 {

// One call of a run.
struct Call {
  int actor = 0;
  Plan plan;
  std::string line;                              // Describe(plan)
  std::vector<std::string> generated;            // ids the port drew for events without one
  int64_t now = 0;                               // the caller's clock, as the store got it
  int64_t ahead = 0;                             // how far that clock was ahead of Redis's
  int64_t invoke = 0, ret = checker::kNever;     // real-time order of events
  int64_t inv_ms = 0, ret_ms = checker::kNever;  // virtual ms since the run's start
  bool ambiguous = true;                         // no reply, or a failure in transport
  bool resent = false;                           // re-sent after a reconnect: it may have run twice
  // The caller follows notifications (an inspecting run): the answer keeps "notified", judged
  // by the storage clock's instants the call may have run at.
  bool notify = false;
  // The calls of every session are one partition of the history (a recorded trace's
  // listSessions spans sessions whose calls the trace holds).
  bool all_sessions = false;
  int64_t storage_now = 0;  // Redis's clock when the call was sent (absolute ms)
  Json answer;              // normalized; "notified" only with `notify`
};

// The workload's session; an inspecting run's two, which its listSessions calls span (their
// order, pages and cursors are judged by the model of both).
inline constexpr const char* kInspectedSession = "s1";
inline const std::vector<std::string> kInspectedSessions = {kInspectedSession, "s2"};

bool ReadOnly(const std::string& op);
// The rows of an answer (a read's array, or the "events" of an append, claim or completion);
// null when it has none.
const nlohmann::json* RowList(const nlohmann::json& answer);
std::string Short(const nlohmann::json& j);  // a JSON text, cut past 240 bytes
std::string CallText(const Call& c);         // "client1 +12ms..+15ms append(...) -> {...}"

// a2's lease of one event (session, index) as Knossos's mutex (issue 29, Jepsen output): a claim
// answered with the event is an acquire, a completion or failure of one of its attempts that the
// store accepted a release (without a reply: :info); renewals are not operations of a mutex and
// are left out, but move the lease's end. {"fits", "history", "unfit"} as
// checker/jepsen_history.h's projections. Attempt k claimed with no release of attempt k - 1
// before its lease end (by the `now` the scripts compare it with) is an acquire of a held lock,
// which the mutex rejects (two holders); what does not fit is a lease that lapsed (attempt k
// claimed after attempt k - 1's lease ran out: the store frees the lock by time, without an
// operation), a lease whose end the calls do not show (a claim or renewal without a reply), a
// release acknowledged twice (the store replays a repeated completion), and a release of an
// attempt whose claim got no reply.
nlohmann::json LeaseAsMutex(const std::vector<Call>& calls, const std::string& session,
                            int64_t index);

// calls-linearizable's judge of a run's calls (properties/a2/calls_linearizable.cc).
void JudgeCalls(const std::vector<Call>& calls, RunOutcome& out);

// A recorded trace's operations (properties/a2/a2_trace_ops.cc), which a run's clients make in
// place of the workload's (testbed explore): client c's i-th, after the pause the capture shows
// before it, with what the recorded client was answered.
struct TracePlans {
  struct Op {
    Plan plan;
    int64_t gap_ms = 0;
    Json answer;
  };
  std::vector<std::vector<Op>> clients;
  bool all_sessions = false;  // Call::all_sessions for every call (the trace lists sessions)
};

// A run of the workload, judged by `judge` over the calls.
class CallsRun : public PropertyRun {
 public:
  using Judge = void (*)(const std::vector<Call>& calls, RunOutcome& out);
  // inspect: a quarter of the runs (by seed) also call listSessions and markWatched, and follow
  // notifications (model/a2.h promises 11 and 12). trace: the operations a recorded trace's
  // clients made, made again in place of the workload's (nullptr: the workload).
  CallsRun(const A2Env& env, Judge judge, bool inspect,
           std::shared_ptr<const TracePlans> trace = nullptr)
      : env_(env), judge_(judge), inspect_(inspect), trace_(std::move(trace)) {}
  void Start(sim::World& world) override;
  void Check(sim::World&, RunOutcome& out) override { judge_(calls_, out); }

 private:
  sim::Task<void> Client(sim::Ctx& ctx, int id);
  int64_t Now() const { return world_->now_ms() - world_->start_ms(); }

  const A2Env& env_;
  Judge judge_;
  bool inspect_ = false;
  std::shared_ptr<const TracePlans> trace_;
  sim::World* world_ = nullptr;
  std::vector<Call> calls_;
  int64_t seq_ = 0;
  model::a2::Model planning_;  // what the clients plan with; its answers are not judged
};

// A property's `make` for the workload.
template <CallsRun::Judge J, bool Inspect = false>
std::unique_ptr<PropertyRun> Calls(const A2Env& env) {
  return std::make_unique<CallsRun>(env, J, Inspect);
}

}  // namespace testbed::props::a2
