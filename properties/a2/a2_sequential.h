// a2's sequential workload, which its sequential properties share (properties/a2/*.cc): one
// client, no faults, every call of the port (real/a2/) compared with the pure model of the
// store's contract (model/a2.h) at the same instant, or with the same calls under other names.
// The client plays several workers (holders w1, w2) and a producer, a snapshot writer and
// presence writers in one sequence of calls, with pauses around the lease (100 ms) so leases
// expire between calls. Each property brings its mix of calls and how it classifies a call
// whose two answers differ.
#pragma once

#include <string>
#include <vector>

#include "model/a2.h"
#include "properties/a2/a2_workload.h"
#include "sim/task.h"

namespace testbed::props::a2 {

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
};

// What each call's store answer is compared with: the model's answer, or the store's answer
// to the same call under plain names (a second key prefix; the names mapped back).
enum class Against { kModel, kPlainNames };

// One call: what was asked, when, and the two answers (JSON, model/a2.h's shapes).
struct SequentialStep {
  std::string op;    // "append", "claim", ..., as model/a2.h names the calls
  std::string call;  // the call as a line: op(arguments)
  int64_t at = 0;    // virtual ms since the run's start
  nlohmann::json store, model;
};

struct SequentialLog {
  std::vector<SequentialStep> steps;
};

sim::Task<void> SequentialClient(sim::Ctx& ctx, const RunSpec& spec,
                                 const real::a2::Scripts& scripts, const Mix& mix, Against against,
                                 SequentialLog* log);

// A property's reading of one call: the class of its disagreement, "" when it has none it
// judges, or kDiverged when the two answers differ in a way the property does not judge
// (the model no longer describes the store: the judging stops there).
using Classify = std::string (*)(const SequentialStep& step);
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
