// a2's sequential workload, which its sequential properties share (properties/a2/*.cc): one
// client, no faults, every call of the port (real/a2/) compared with the pure model of the
// store's contract (model/a2.h) at the same instant, or with the same calls under other names.
// The client plays several workers (holders w1, w2) and a producer, a snapshot writer and
// presence writers in one sequence of calls, with pauses around the lease (100 ms) so leases
// expire between calls. Each property brings its mix of calls and how it classifies a call
// whose two answers differ.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "model/a2.h"
#include "properties/a2/a2_workload.h"
#include "sim/prng.h"
#include "sim/task.h"

namespace testbed::props::a2 {

// One ttlMs for every presence write (model choice).
inline constexpr int64_t kPresenceTtlMs = 1000;

// What a sequential property's client does.
struct Mix {
  // Weights of the calls: append, claim, renew, complete, fail, read, readEvents, readState,
  // putSnapshot, presenceSet, presenceRead, listSessions, listSnapshots, markWatched.
  std::vector<int> weights;
  std::vector<std::string> sessions, reducers, namespaces;
  bool late = true;            // complete/fail/renew also with stale claims and after pauses
  bool adversarial = false;    // payloads, states and presence values from the adversarial cases
  bool past_frontier = false;  // putSnapshot sometimes past the session's frontier
  // complete, fail and caused appends also from the client's own current attempt after its
  // lease expired (property fencing reports those, concurrently): off, the client sends them
  // only from live claims or from attempts another claim superseded.
  bool expired_own = false;
  // Reach (issue 28): renew sometimes names the other holder; fail counts sometimes land on
  // the dead-letter limit (maxFailures 1, 2 or 3 around the event's failures); presence
  // stamps sometimes repeat the field's last stamp (an LWW tie); in some runs
  // (Memory::empty_lane), lanes include "". Off: the
  // draws are those of the mixes made before them.
  bool boundaries = false;
  // Reach at expiry edges (issue 28): a quarter of the renews come with ttl 0 (a renewal to now,
  // which must not shorten the lease), and a quarter land 1 ms before, at or after the renewed
  // claim's lease end (a lease is live while now < expiry); half the presence reads land 1 ms
  // before, at or after a row's expiresAt. Drawn from a PRNG of their own, so every other draw
  // of a run stays what it was.
  bool expiry_edges = false;
};

// One planned call (model/a2.h names its op).
struct Plan {
  std::string op;
  std::string session, reducer, ns, holder;
  std::vector<real::a2::NewEvent> events;      // append (ids may be missing: generated)
  std::vector<real::a2::ChildEvent> children;  // complete
  int64_t index = 0, attempt = 0, after = 0;
  std::optional<int64_t> through;
  std::vector<int64_t> exclude;
  std::vector<real::a2::ClaimRef> refs;
  Json state;
  std::string participant;
  std::vector<std::pair<std::string, Json>> values;
  int64_t seen = 0, at = 0, limit = 0, ttl = 0;
  int64_t max_failures = 2;  // fail
  // claim: the lease asked for; fail: the error text. The workloads keep the defaults; a call
  // rebuilt from a recorded trace (properties/a2/a2_trace_ops.cc) has the caller's own.
  int64_t lease = kLeaseMs;
  std::string error = "boom";
  std::optional<std::string> cursor;
};

struct Held {
  std::string session, holder;
  int64_t index = 0, attempt = 0;
  int64_t claimed_at = 0;  // the client's clock
};

// What the client remembers to plan its next call.
struct Memory {
  std::vector<std::pair<std::string, std::vector<real::a2::NewEvent>>> batches;  // sent appends
  std::vector<Held> held;
  std::map<std::pair<std::string, int64_t>, std::vector<real::a2::ChildEvent>> completions;
  std::optional<std::string> cursor;
  int fresh = 0;
  std::map<std::pair<std::string, std::string>, int64_t> stamps;  // presence: last `at` sent
  bool empty_lane = false;  // Mix::boundaries: this run also appends to the lane ""
  // Mix::boundaries: a deep run. Renews name every claim the client holds in the session (the
  // wrong holder's and stale ones among them), shuffled, sometimes with ttl 0; completions carry
  // up to four children, some with ids the store already holds or the type "cause"; appends go
  // mostly to lane L1, settled one time in three, so that a lane holds runs of processed events
  // behind its head and claims meet several busy events; some completes, fails and causes name
  // no event (index 0 or past the frontier); and some ids spell another argument of the call
  // (the session, a type, "0", "1").
  bool deep = false;
  // Mix::expiry_edges: the presence rows the store's answers show it holds, (participant,
  // field) -> {stamp, expiresAt}, and when each namespace's key ends (the last applied write's
  // now + ttl: PRESENCE_SET_LUA's PEXPIRE; Redis keeps a key through that millisecond).
  std::map<std::pair<std::string, std::string>, std::pair<int64_t, int64_t>> presence_rows;
  std::map<std::string, int64_t> presence_key_end;
  // The last call wrote the sessions index (an append or a completion the store accepted).
  bool wrote_sessions = false;
  // The rows the last call, a presence read, found expired: (ns, participant, field, stamp).
  // The read prunes them, and their stamps with them.
  std::vector<std::tuple<std::string, std::string, std::string, int64_t>> pruned;
};

// The next call a client makes, from what it remembers and what `model` (a planning view of
// the store: its answers are not judged) says of frontiers and expiries. `i` numbers the
// call: ids and values are made from it.
Plan MakePlan(sim::Prng& rng, const Mix& mix, Memory& mem, const model::a2::Model& model, int i,
              int64_t now);
// The call as a line: op(arguments).
std::string Describe(const Plan& p);
// What the store's notify hook said during a call (the session's new event count).
struct Notified {
  std::optional<int64_t> count;
};
// The call on the port, the answer in model/a2.h's shape (an error as {"error": code}; a
// failure in transport sets *transport). With `notified` (the hook's record for this store),
// an append or a completion that wrote answers "notified" too (null: no notification).
sim::Task<nlohmann::json> PerformCall(real::a2::Store& store, const Plan& p, bool* transport,
                                      Notified* notified = nullptr);
// The model's answer to the same call; `generated`: the ids the port drew for events without
// one, in order.
nlohmann::json ModelAnswer(model::a2::Model& model, const Plan& p,
                           const std::vector<std::string>& generated, int64_t now);
// Orders what the contract leaves unordered: a read's presence rows, a page's sessions.
void Normalize(const std::string& op, nlohmann::json& answer);
// The client's memory learns from the store's answers (what a caller sees).
void Learn(Memory& mem, const Plan& p, const nlohmann::json& answer, int64_t now);

// What each call's store answer is compared with: the model's answer, or the store's answer
// to the same call under plain names (a second key prefix; the names mapped back).
enum class Against { kModel, kPlainNames };

// One call: what was asked, when, and the two answers (JSON, model/a2.h's shapes).
struct SequentialStep {
  std::string op;    // "append", "claim", ..., as model/a2.h names the calls
  std::string call;  // the call as a line: op(arguments)
  int64_t at = 0;    // virtual ms since the run's start
  nlohmann::json store, model;
  // The call itself, as the port got it: the plan, the client's clock and the ids the port drew
  // (for the seed's own code to make the same call: tests/port_fidelity_test.cc), and where its
  // Redis calls are in the world's trace ([trace_from, trace_to)).
  Plan plan;
  int64_t now = 0;
  std::vector<std::string> generated;
  size_t trace_from = 0, trace_to = 0;
};

struct SequentialLog {
  std::vector<SequentialStep> steps;
};

sim::Task<void> SequentialClient(sim::Ctx& ctx, const RunSpec& spec,
                                 const real::a2::Scripts& scripts, const Mix& mix, Against against,
                                 SequentialLog* log);

// A property's reading of one call, steps[k], with the calls before it: the class of its
// disagreement, "" when it has none it judges, or kDiverged when the two answers differ in a
// way the property does not judge (the model no longer describes the store: the judging stops
// there).
using Classify = std::string (*)(const std::vector<SequentialStep>& steps, size_t k);
inline constexpr const char* kDiverged = "diverged";

// A sequential run: client0 makes the calls; the first call the property classifies is its
// one finding, with the calls before it.
class SequentialRun : public PropertyRun {
 public:
  SequentialRun(const A2Env& env, const Mix& mix, Against against, Classify classify)
      : env_(env), mix_(mix), against_(against), classify_(classify) {}
  void Start(sim::World& world) override;
  void Check(sim::World& world, RunOutcome& out) override;

 private:
  const A2Env& env_;
  const Mix& mix_;
  Against against_;
  Classify classify_;
  SequentialLog log_;
};

// A property's `make` for the sequential workload.
template <const Mix& M, Classify C, Against A = Against::kModel>
std::unique_ptr<PropertyRun> Sequential(const A2Env& env) {
  return std::make_unique<SequentialRun>(env, M, A, C);
}

// One class per call: "<prefix><call>", with `more` before them.
std::vector<AnomalyClass> Disagreements(const std::string& prefix, const std::string& what,
                                        std::vector<AnomalyClass> more);

}  // namespace testbed::props::a2
