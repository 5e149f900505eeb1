// Internal to model-matches-implementation (properties/state/model_matches_implementation*.cc):
// the sequential client, split in two files: its draws and calls
// (model_matches_implementation.cc, with the property), and its judging against the models
// (model_matches_implementation_judge.cc).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/state_store.h"
#include "properties/state/state_workload.h"

namespace testbed::props::state::model_matches {

std::string ShowEntry(const std::optional<model::StoreEntry>& e);

std::optional<model::StoreEntry> FromImpl(const std::optional<real::state::StateValue>& v);

// Entries agree when every field a caller sees agrees: key, value, version, createdAt,
// updatedAt and expiresAt.
bool Same(const std::optional<model::StoreEntry>& a, const std::optional<model::StoreEntry>& b);

// How well the implementation's entry matches a model's: 2 exactly, 1 but for a value cjson
// bent (value-read-back judges that on its own), 0 not.
int MatchLevel(const std::optional<model::StoreEntry>& impl,
               const std::optional<model::StoreEntry>& modelled);

// The key's real lifetime on the server against the expiry its envelope states (PTTL read
// straight from the backend, outside the trace): "" when they agree, else what differs. The
// run is sequential and fault-free, so the writer's clock is the server's and the two must be
// the same millisecond.
std::string LifetimeDiffers(sim::World& world, const std::string& redis_key,
                            const std::optional<model::StoreEntry>& written, int64_t now);

// One call of the run: what was drawn for it, what the implementation answered, and how a
// model's answer is judged against that. The models' calls capture it by reference, so it
// stays where it was made.
struct Step {
  Step() = default;
  Step(const Step&) = delete;
  Step& operator=(const Step&) = delete;

  int i = 0;
  int64_t now = 0;     // when the call began
  int64_t when = 0;    // the instant the models answer at: now, or where a call that took time
                       // took effect
  int64_t end_ms = 0;  // when it returned
  std::optional<std::string> connection;
  std::string ns_name, key, who, at;
  real::state::NamespaceOptions so;
  model::StoreNamespaceOptions mo;
  uint64_t roll = 0;  // which call: see Call()
  std::optional<int64_t> ttl;
  real::state::Json value;
  int64_t slow = 0;  // every reply this many ms late
  std::string what, got, lifetime;
  std::optional<model::StoreEntry> written;  // what a set, compareAndSet or increment answered
  // The call on a model, and how well the implementation's answer matches a model's answer
  // (MatchLevel: 2 exactly, 1 but for a value cjson bent, 0 not), with how to show one.
  std::function<model::StoreResult(model::StateStoreModel&)> call;
  std::function<int(const model::StoreResult&)> judge;
  std::function<std::string(const model::StoreResult&)> show = [](const model::StoreResult& r) {
    return r.error.empty() ? ShowEntry(r.entry) : r.error + " error";
  };
  model::StoreResult r, d;  // the contract's answer, and the claim as built's
  bool is_list() const { return roll >= 68 && roll < 80; }
};

// How well each way of reading the call explains the implementation's answer (MatchLevel's
// levels), the fewest explanations first: the contract (none), the claim as built, the contract
// by the index's view of the instant, the claim by it, the contract with the quota alone by it.
struct Route {
  int level;
  bool claim, instant, quota = false;
};

// The sequential client: one caller, in sequence, fault-free, so that every call has one
// instant; each result must be what model/state_store answers at that instant. Each call is
// drawn (Pause, then Draw after the pause), made (Call), placed at an instant of its span
// (Place) and judged (Judge); the draws come in the same order from the same streams of the
// seed as ever, so a saved scenario replays the same calls.
class SequentialClient {
 public:
  SequentialClient(const StateWorkload& w, const real::state::VersionScripts& scripts,
                   Recorder* rec);

  sim::Task<void> Run(sim::Ctx& ctx);

 private:
  model::StateStoreModel::Variant Variant() const;

  // The pause before a call: compact runs aim a third of them at the millisecond before, at or
  // after the end of an entry written so far; edge-dense runs make a quarter of their calls in
  // the millisecond of the one before (a full scope at an entry's expiry millisecond, then
  // another call there).
  int64_t Pause(sim::Prng& rng, sim::Prng& side) const;

  // Who calls, in which namespace, on which key, which call, with which TTL and value, and on
  // how slow a network.
  void Draw(Step& s, sim::Prng& rng, sim::Prng& side) const;

  // The call on both models (called again when the call is placed at another instant).
  void RunModels(Step& s, std::function<model::StoreResult(model::StateStoreModel&)> f);

  static void JudgeEntry(Step& s, const std::optional<model::StoreEntry>& v);

  // The call on the implementation and the models: get (roll < 25), set (< 45), compareAndSet
  // (< 60), delete (< 68), list (< 80), increment (< 88), else an old pod's write.
  sim::Task<void> Call(sim::Ctx& ctx, Step& s, sim::Prng& rng, sim::Prng& side,
                       const model::StateStoreModel& m_before);

  // What a get, set or increment answered; `writer` (a write's namespace) also reads the key's
  // lifetime on the server.
  void Written(Step& s, const std::optional<real::state::StateValue>& answer,
               real::state::StateNamespace* writer);

  sim::Task<void> CompareAndSet(Step& s, real::state::StateNamespace& ns, sim::Prng& rng,
                                sim::Prng& side, const model::StateStoreModel& m_before);

  sim::Task<void> List(Step& s, real::state::StateNamespace& ns, sim::Prng& rng);

  // A model as the index sees an instant: counting by it, or (quota_only) asking it alone
  // whether a write needs a slot (model/state_store.h, Variant).
  static model::StateStoreModel Viewed(model::StateStoreModel x, bool quota_only);

  // A call that took time takes effect at one instant of its span (it is the only caller): the
  // models answer at the instant that matches the implementation best, the earliest of equals,
  // and go on from there.
  void Place(Step& s, const model::StateStoreModel& m_before);

  // The index's view of an instant: the index is trimmed up to now, inclusive, so list() and
  // the quota count an entry as gone at its expiry millisecond, while the key (and get()) still
  // has it. Explained when the models, counting by the index at this instant, answer as the
  // implementation did; they then go on from that answer.
  // Each model that misses the implementation's answer tries the index's view; the one that
  // then matches better goes on from there (so neither drifts from what the implementation
  // did). The call is judged by the best route, the fewest explanations first.
  Route BestRoute(Step& s, const model::StateStoreModel& m_before,
                  const std::optional<model::StateStoreModel>& design_before);

  std::string LastOps(std::string out) const;

  // A disagreement a known cause explains is reported once per class, and the run is judged
  // on: the claim as built answers as the implementation does, a value differs only as cjson
  // bends it, or the index's view of an expiry instant answers so.
  void Explain(const Step& s, const Route& best, const std::string& want);

  // The call judged: true when it ends the run with a finding.
  bool Judge(Step& s, const model::StateStoreModel& m_before,
             const std::optional<model::StateStoreModel>& design_before);

  // The class: the kind of call the two disagree on, or a call whose steps straddled its key's
  // expiry (it took time, the key's entry was live when it began and had ended when it
  // returned) and answered as no instant of it does: a write numbered on from the expired
  // entry, a compareAndSet checked against the expired entry that wrote a new one, or an
  // increment that carried the expired value into a new entry.
  void Disagreement(const Step& s, const model::StateStoreModel& m_before, const std::string& want,
                    const std::string& want_design);

  static constexpr char kProvider[] = "provider-under-test";
  const StateWorkload& w_;
  const real::state::VersionScripts& scripts_;
  Recorder* rec_;
  const bool legacy_;
  model::StateStoreModel m_;
  std::optional<model::StateStoreModel> design_;
  std::set<std::string> explained_;  // the classes of the disagreements explained so far
  std::vector<std::string> log_;
  const bool dense_, edges_, compact_;
  const int64_t compact_max_;
  std::vector<int64_t> ends_;               // compact: when each entry written so far ends
  std::map<std::string, int64_t> key_end_;  // edges: when each key's last written entry ends
  std::string old_key_;                     // dense: the key an old pod wrote last
};

}  // namespace testbed::props::state::model_matches
