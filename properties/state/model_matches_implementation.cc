// Property "model-matches-implementation" of the state store: one client, fault-free, random
// operations across connections, scopes, namespaces, TTLs and quota (and old-pod writes for
// beta.24), each compared with model/state_store at one instant of the call (a call on a slow
// network takes effect at one instant of its span). On beta.24 a second model,
// the claim as built, names the disagreements the claim explains (answers-as-the-v1-claim),
// and the run goes on judging after them.
#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/state_store.h"
#include "properties/state/state_workload.h"
#include "sim/clock.h"

namespace testbed::props::state {
namespace {

std::string ShowEntry(const std::optional<model::StoreEntry>& e) {
  if (!e) return "null";
  return e->key + "=" + real::state::Stringify(e->value) + " v" + std::to_string(e->version) +
         " createdAt " + real::state::IsoTime(e->created_at) + " expiresAt " +
         real::state::IsoTime(e->expires_at);
}

std::optional<model::StoreEntry> FromImpl(const std::optional<real::state::StateValue>& v) {
  if (!v) return std::nullopt;
  model::StoreEntry e;
  e.key = v->key;
  e.value = v->value;
  e.version = v->version;
  e.expires_at = real::state::ParseIsoTime(v->expires_at).value_or(-1);
  e.created_at = real::state::ParseIsoTime(v->created_at).value_or(-1);
  e.updated_at = real::state::ParseIsoTime(v->updated_at).value_or(-1);
  return e;
}

// Entries agree when every field a caller sees agrees: key, value, version, createdAt,
// updatedAt and expiresAt.
bool Same(const std::optional<model::StoreEntry>& a, const std::optional<model::StoreEntry>& b) {
  if (!a || !b) return !a && !b;
  return a->key == b->key && a->value == b->value && a->version == b->version &&
         a->created_at == b->created_at && a->updated_at == b->updated_at &&
         a->expires_at == b->expires_at;
}

// How well the implementation's entry matches a model's: 2 exactly, 1 but for a value cjson
// bent (value-read-back judges that on its own), 0 not.
int MatchLevel(const std::optional<model::StoreEntry>& impl,
               const std::optional<model::StoreEntry>& modelled) {
  if (Same(impl, modelled)) return 2;
  if (!impl || !modelled) return 0;
  model::StoreEntry unbent = *modelled;
  unbent.value = impl->value;
  return Same(impl, unbent) && BentOnlyAsCjsonDoes(modelled->value, impl->value) ? 1 : 0;
}

// The key's real lifetime on the server against the expiry its envelope states (PTTL read
// straight from the backend, outside the trace): "" when they agree, else what differs. The
// run is sequential and fault-free, so the writer's clock is the server's and the two must be
// the same millisecond.
std::string LifetimeDiffers(sim::World& world, const std::string& redis_key,
                            const std::optional<model::StoreEntry>& written, int64_t now) {
  if (!written) return "";
  const sim::Reply pttl = world.backend().execute({"PTTL", redis_key}, now);
  const int64_t stated = written->expires_at - now;
  if (pttl.integer == stated || (stated < 0 && pttl.integer == -2)) return "";  // ended by now
  return "the key's expiry on the server is " +
         (pttl.integer == -1   ? std::string("none (it never expires)")
          : pttl.integer == -2 ? std::string("gone (no key)")
                               : std::to_string(pttl.integer) + " ms away") +
         ", where the envelope states expiresAt " + real::state::IsoTime(written->expires_at) +
         " (" + std::to_string(stated) + " ms away)";
}

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
                   Recorder* rec)
      : w_(w),
        scripts_(scripts),
        rec_(rec),
        legacy_(w.version == "beta24"),
        m_(Variant()),
        // Legacy-dense runs, half of beta.24's (a side stream of the seed, so the other half
        // draw as before): one namespace and one connection mostly, three keys, maxEntries 2,
        // entries that live 80 ms by default, an old pod's write in about a third of the calls,
        // compareAndSet at a stale version half the time, a third of the calls on the key an
        // old pod wrote last, and a third of the pauses aimed at the millisecond before, at or
        // after the end of an entry written so far. They reach what the claim does in a full
        // scope, a claim at the v1 key's expiry millisecond, and compareAndSet's own claim.
        dense_(legacy_ && sim::Prng(w.seed ^ 0x6c6567616379ULL).chance({1, 2})),
        // Edge-dense runs, half of every other version's (their own side stream): the same
        // small shape and pauses aimed at entries' ends, without old pods. They reach a full
        // scope at an entry's expiry millisecond, where the key still lives and the index no
        // longer counts it.
        edges_(!legacy_ && sim::Prng(w.seed ^ 0x6564676573ULL).chance({1, 2})),
        compact_(dense_ || edges_),
        // Half of the edge-dense runs hold one entry per scope: a full scope then needs only
        // one key.
        compact_max_(edges_ && sim::Prng(w.seed ^ 0x6f6e65ULL).chance({1, 2}) ? 1 : 2) {
    // beta.24's claim as built, beside the contract: it names the disagreements the claim
    // explains (model/state_store.h, Variant::as_built_claim), and the run goes on after them.
    if (real::state::ClaimsLegacy(w.version)) {
      model::StateStoreModel::Variant as_built = Variant();
      as_built.as_built_claim = true;
      design_.emplace(as_built);
    }
  }

  sim::Task<void> Run(sim::Ctx& ctx) {
    for (int i = 0; i < w_.ops; ++i) {
      if (w_.skip.count({0, i})) continue;  // shrunk away
      sim::Prng rng(sim::OpSeed(w_.seed, 0, i));
      sim::Prng side(sim::OpSeed(w_.seed, 0, i) ^ 0x64656e7365ULL);
      co_await ctx.sleep(Pause(rng, side));
      Step s;
      s.i = i;
      Draw(s, rng, side);
      ctx.set_reply_latency(s.slow);
      // The models as they were before this call (the index's view of an instant starts there).
      const model::StateStoreModel m_before = m_;
      const std::optional<model::StateStoreModel> design_before = design_;
      co_await Call(ctx, s, rng, side, m_before);
      ctx.set_reply_latency(0);
      s.end_ms = rec_->world->now_ms();
      Place(s, m_before);
      if (Judge(s, m_before, design_before)) co_return;
    }
  }

 private:
  model::StateStoreModel::Variant Variant() const {
    return {.scoped = real::state::HasConnectionScopes(w_.version),
            .legacy = legacy_,
            .max_ttl = w_.version != "beta3"};
  }

  // The pause before a call: compact runs aim a third of them at the millisecond before, at or
  // after the end of an entry written so far; edge-dense runs make a quarter of their calls in
  // the millisecond of the one before (a full scope at an entry's expiry millisecond, then
  // another call there).
  int64_t Pause(sim::Prng& rng, sim::Prng& side) const {
    const int64_t now = rec_->world->now_ms();
    int64_t pause = rng.range(0, 25);
    if (compact_ && side.chance({1, 3})) {
      std::vector<int64_t> ahead;
      for (int64_t e : ends_)
        if (e + 1 >= now) ahead.push_back(e);
      if (!ahead.empty())
        pause = std::max<int64_t>(0, ahead[side.below(ahead.size())] + side.range(-1, 1) - now);
    }
    if (edges_ && side.chance({1, 4})) pause = 0;
    return pause;
  }

  // Who calls, in which namespace, on which key, which call, with which TTL and value, and on
  // how slow a network.
  void Draw(Step& s, sim::Prng& rng, sim::Prng& side) const {
    s.now = s.when = rec_->world->now_ms();
    uint64_t c = rng.below(3);
    if (dense_) {  // conn-a half the time, conn-b and the missing connection a quarter each
      const uint64_t pick = side.below(4);
      c = pick < 2 ? 0 : pick - 1;
    }
    s.connection = c == 2 ? std::nullopt : std::optional<std::string>(c == 0 ? "conn-a" : "conn-b");
    bool provider_ns = rng.chance({1, 4});
    if (compact_) provider_ns = side.chance({1, 8});
    s.ns_name = provider_ns ? "shared" : "ns";
    const int64_t max_entries = compact_ ? compact_max_ : 3, default_ttl = compact_ ? 80 : 40;
    s.so = {.provider_scope = provider_ns,
            .default_ttl_ms = default_ttl,
            .max_ttl_ms = 100,
            .max_entries = max_entries,
            .max_value_bytes = 256};
    s.mo = {provider_ns, default_ttl, 100, max_entries, 256};
    const uint64_t key_draw = rng.below(4);
    s.key = "k" + std::to_string(compact_ ? key_draw % 3 : key_draw);
    if (dense_ && !old_key_.empty() && side.chance({1, 3})) s.key = old_key_;  // old pods wrote
    if (edges_ && side.chance({1, 2}))  // half the calls at a key's expiry millisecond go to it
      for (const auto& [k, end] : key_end_)
        if (end == s.now) s.key = k;
    s.roll = rng.below(100);
    if (!legacy_ && s.roll >= 88) s.roll = rng.below(20) + 25;      // no old pods: a set instead
    if (dense_ && s.roll < 88 && side.chance({1, 4})) s.roll = 88;  // an old pod's write
    const uint64_t ttl_roll = rng.below(10);
    s.ttl = ttl_roll < 3    ? std::optional<int64_t>(rng.range(1, 60))
            : ttl_roll == 3 ? std::optional<int64_t>(150)
                            : std::nullopt;
    s.value = rng.chance({1, 3}) ? TrickyValue(rng) : real::state::Json::object();
    if (s.value.is_object() && s.value.empty()) s.value["n"] = s.i;
    s.who = (s.connection ? *s.connection : std::string("missing connection")) + " " + s.ns_name;
    s.at = "+" + std::to_string(s.now - sim::kDefaultEpochMs) + "ms ";
    // Edge-dense runs make a quarter of their calls on a slow network (every reply 1 to 3 ms
    // late): a call's own steps (beta.23's backfill, its read, its script) then run at
    // different instants, and an entry may expire between them.
    s.slow = edges_ && side.chance({1, 4}) ? side.range(1, 3) : 0;
  }

  // The call on both models (called again when the call is placed at another instant).
  void RunModels(Step& s, std::function<model::StoreResult(model::StateStoreModel&)> f) {
    s.call = std::move(f);
    s.r = s.call(m_);
    if (design_) s.d = s.call(*design_);
  }

  static void JudgeEntry(Step& s, const std::optional<model::StoreEntry>& v) {
    s.judge = [v](const model::StoreResult& x) {
      return x.error.empty() ? MatchLevel(v, x.entry) : 0;
    };
  }

  // The call on the implementation and the models: get (roll < 25), set (< 45), compareAndSet
  // (< 60), delete (< 68), list (< 80), increment (< 88), else an old pod's write.
  sim::Task<void> Call(sim::Ctx& ctx, Step& s, sim::Prng& rng, sim::Prng& side,
                       const model::StateStoreModel& m_before) {
    auto ns = real::state::MakeNamespace(w_.version, ctx, scripts_, kProvider, s.ns_name, s.so,
                                         s.connection);
    try {
      if (s.roll < 25) {
        s.what = "get(" + s.key + ")";
        RunModels(s, [&s](model::StateStoreModel& x) {
          return x.get(s.connection, s.ns_name, s.mo, s.key, s.when);
        });
        Written(s, co_await ns->get(s.key), nullptr);
      } else if (s.roll < 45) {
        s.what = "set(" + s.key + ", " + s.value.dump() + ", ttl " +
                 (s.ttl ? std::to_string(*s.ttl) : "default") + ")";
        RunModels(s, [&s](model::StateStoreModel& x) {
          return x.set(s.connection, s.ns_name, s.mo, s.key, s.value, s.ttl, s.when);
        });
        Written(s, co_await ns->set(s.key, s.value, s.ttl), ns.get());
      } else if (s.roll < 60) {
        co_await CompareAndSet(s, *ns, rng, side, m_before);
      } else if (s.roll < 68) {
        s.what = "delete(" + s.key + ")";
        RunModels(s, [&s](model::StateStoreModel& x) {
          return x.del(s.connection, s.ns_name, s.mo, s.key, s.when);
        });
        co_await ns->del(s.key);
        s.got = "done";
        s.show = [](const model::StoreResult&) { return std::string("done"); };
        s.judge = [](const model::StoreResult&) { return 2; };
      } else if (s.roll < 80) {
        co_await List(s, *ns, rng);
      } else if (s.roll < 88) {
        s.what = "increment(" + s.key + ", \"n\", 2)";
        RunModels(s, [&s](model::StateStoreModel& x) {
          return x.increment(s.connection, s.ns_name, s.mo, s.key, "n", 2, s.ttl, s.when);
        });
        Written(s, co_await ns->increment(s.key, "n", 2, s.ttl), ns.get());
      } else {
        s.what = "an old pod (beta23) sets " + s.key + " in " + s.ns_name + " to " + s.value.dump();
        auto old = real::state::MakeNamespace("beta23", ctx, scripts_, kProvider, s.ns_name, s.so,
                                              s.connection);
        RunModels(s, [&s](model::StateStoreModel& x) {
          return x.legacy_write(s.ns_name, s.mo, s.key, s.value, s.so.default_ttl_ms, s.when);
        });
        s.show = [](const model::StoreResult& x) {
          return x.error.empty() ? std::string("done") : x.error + " error";
        };
        co_await old->set(s.key, s.value, std::nullopt);
        s.got = "done";
        s.judge = [](const model::StoreResult& x) { return x.error.empty() ? 2 : 0; };
      }
    } catch (const real::state::StateError& e) {
      s.got = ErrorKind(e) + " error (" + e.what() + ")";
      s.judge = [kind = ErrorKind(e)](const model::StoreResult& x) {
        return x.error == kind ? 2 : 0;
      };
    }
  }

  // What a get, set or increment answered; `writer` (a write's namespace) also reads the key's
  // lifetime on the server.
  void Written(Step& s, const std::optional<real::state::StateValue>& answer,
               real::state::StateNamespace* writer) {
    const std::optional<model::StoreEntry> v = FromImpl(answer);
    JudgeEntry(s, v);
    s.got = ShowEntry(v);
    if (!writer) return;
    s.written = v;
    s.lifetime = LifetimeDiffers(*rec_->world, writer->redis_key(s.key), v, rec_->world->now_ms());
  }

  sim::Task<void> CompareAndSet(Step& s, real::state::StateNamespace& ns, sim::Prng& rng,
                                sim::Prng& side, const model::StateStoreModel& m_before) {
    const std::optional<model::StoreEntry> seen =
        m_.peek(s.connection, s.ns_name, s.mo, s.key, s.now);
    bool as_seen = rng.chance({3, 4});
    if (compact_) as_seen = side.chance({1, 2});
    const int64_t expected = as_seen ? (seen ? seen->version : 0) : rng.range(0, 3);
    s.what =
        "compareAndSet(" + s.key + ", " + std::to_string(expected) + ", " + s.value.dump() + ")";
    RunModels(s, [&s, expected](model::StateStoreModel& x) {
      return x.compare_and_set(s.connection, s.ns_name, s.mo, s.key, expected, s.value, s.ttl,
                               s.when);
    });
    s.show = [](const model::StoreResult& x) {
      return x.error.empty() ? (x.ok ? "ok " : "fail ") + ShowEntry(x.entry) : x.error + " error";
    };
    real::state::CasResult c2 = co_await ns.compare_and_set(s.key, expected, s.value, s.ttl);
    std::optional<model::StoreEntry> v = FromImpl(c2.ok ? c2.value : c2.current);
    s.got = (c2.ok ? "ok " : "fail ") + ShowEntry(v);
    // The entry at the instant the model answers at (`when`, the call's span).
    const auto seen_then = [&s, &m_before] {
      return m_before.peek(s.connection, s.ns_name, s.mo, s.key, s.when);
    };
    s.judge = [v, ok = c2.ok, expected, seen_then](const model::StoreResult& x) {
      // Rule 9 of the model: a stale expectation may win over the policy error.
      const std::optional<model::StoreEntry> then = seen_then();
      const bool stale = (then ? then->version : 0) != expected;
      if (x.error == "policy" && !ok && stale && Same(v, then)) return 2;
      return x.error.empty() && x.ok == ok ? MatchLevel(v, x.entry) : 0;
    };
    if (c2.ok) {
      s.written = v;
      s.lifetime = LifetimeDiffers(*rec_->world, ns.redis_key(s.key), v, rec_->world->now_ms());
    }
  }

  sim::Task<void> List(Step& s, real::state::StateNamespace& ns, sim::Prng& rng) {
    const std::optional<std::string> prefix =
        rng.chance({1, 2}) ? std::optional<std::string>(s.key) : std::nullopt;
    const std::optional<int64_t> limit =
        rng.chance({1, 4}) ? std::optional<int64_t>(rng.range(0, 2)) : std::nullopt;
    s.what = "list(prefix " + prefix.value_or("-") + ", limit " +
             (limit ? std::to_string(*limit) : "default") + ")";
    RunModels(s, [&s, prefix](model::StateStoreModel& x) {
      // Every live row: past an overfill the scope holds more than maxEntries, and which of
      // them list() returns is not promised.
      return x.list(s.connection, s.ns_name, s.mo, prefix, std::numeric_limits<int64_t>::max(),
                    s.when);
    });
    std::vector<real::state::StateValue> rows = co_await ns.list(limit, prefix);
    // The rows match when there are as many as the limit lets through, each one of the model's
    // (list() promises no order).
    const int64_t lets_through = std::max<int64_t>(0, limit.value_or(s.mo.max_entries));
    s.judge = [rows, lets_through](const model::StoreResult& all) {
      const int64_t n = std::min<int64_t>(all.matching, lets_through);
      int ok = static_cast<int64_t>(rows.size()) == n ? 2 : 0;
      for (const auto& row : rows) {
        int found = 0;
        for (const auto& x : all.rows) found = std::max(found, MatchLevel(FromImpl(row), x));
        ok = std::min(ok, found);
      }
      return ok;
    };
    s.show = [lets_through](const model::StoreResult& all) {
      std::string shown = std::to_string(std::min<int64_t>(all.matching, lets_through)) + " of: ";
      for (const auto& x : all.rows) shown += ShowEntry(x) + "; ";
      return shown;
    };
    for (const auto& row : rows) s.got += ShowEntry(FromImpl(row)) + "; ";
  }

  // A model as the index sees an instant: counting by it, or (quota_only) asking it alone
  // whether a write needs a slot (model/state_store.h, Variant).
  static model::StateStoreModel Viewed(model::StateStoreModel x, bool quota_only) {
    if (quota_only)
      x.quota_by_index(true);
    else
      x.count_by_index(true);
    return x;
  }

  // A call that took time takes effect at one instant of its span (it is the only caller): the
  // models answer at the instant that matches the implementation best, the earliest of equals,
  // and go on from there.
  void Place(Step& s, const model::StateStoreModel& m_before) {
    if (s.end_ms == s.now || design_) return;
    int best_level = s.judge(s.r);
    int64_t best_t = s.now;
    for (int64_t t = s.now + 1; t <= s.end_ms && best_level < 2; ++t) {
      s.when = t;
      model::StateStoreModel x = m_before;
      const model::StoreResult y = s.call(x);
      if (const int level = s.judge(y); level > best_level) {
        best_level = level;
        best_t = t;
        m_ = std::move(x);
        s.r = y;
      }
    }
    // No instant explains it by the contract: the instant whose index's view (the routes below)
    // explains it best is the one they answer at.
    for (int64_t t = s.now, view_level = best_level; t <= s.end_ms && best_level < 2; ++t)
      for (const bool quota_only : {false, true}) {
        model::StateStoreModel x = Viewed(m_before, quota_only);
        s.when = t;
        if (const int level = s.judge(s.call(x)); level > view_level) {
          view_level = level;
          best_t = t;
        }
      }
    s.when = best_t;
    s.at = "+" + std::to_string(s.now - sim::kDefaultEpochMs) + "..+" +
           std::to_string(s.end_ms - sim::kDefaultEpochMs) + "ms ";
  }

  // The index's view of an instant: the index is trimmed up to now, inclusive, so list() and
  // the quota count an entry as gone at its expiry millisecond, while the key (and get()) still
  // has it. Explained when the models, counting by the index at this instant, answer as the
  // implementation did; they then go on from that answer.
  // Each model that misses the implementation's answer tries the index's view; the one that
  // then matches better goes on from there (so neither drifts from what the implementation
  // did). The call is judged by the best route, the fewest explanations first.
  Route BestRoute(Step& s, const model::StateStoreModel& m_before,
                  const std::optional<model::StateStoreModel>& design_before) {
    int same = s.judge(s.r), same_design = design_ ? s.judge(s.d) : 0;
    const int contract_plain = same, design_plain = same_design;
    const auto by_index = [&s](const model::StateStoreModel& before, model::StateStoreModel& now_m,
                               int& level) {
      model::StateStoreModel x = Viewed(before, false);
      const int viewed_level = s.judge(s.call(x));
      if (viewed_level <= level) return;
      level = viewed_level;
      now_m = std::move(x);
      now_m.count_by_index(false);
    };
    if (same < 2) by_index(m_before, m_, same);
    if (design_ && same_design < 2) by_index(*design_before, *design_, same_design);
    // Last, the contract with the quota alone by the index's view (Variant::index_quota): a
    // write of a key at its expiry millisecond that the quota refuses as a new entry.
    int same_quota = 0;
    if (same < 2) {
      model::StateStoreModel x = Viewed(m_before, true);
      same_quota = s.judge(s.call(x));
      if (same_quota > same) {
        m_ = std::move(x);
        m_.quota_by_index(false);
      }
    }
    Route best{contract_plain, false, false};
    for (const Route& x : {Route{design_plain, true, false}, Route{same, false, true},
                           Route{same_design, true, true}, Route{same_quota, false, true, true}})
      if (x.level > best.level) best = x;
    return best;
  }

  std::string LastOps(std::string out) const {
    for (size_t k = log_.size() > 8 ? log_.size() - 8 : 0; k < log_.size(); ++k)
      out += "\n    " + log_[k];
    return out;
  }

  // A disagreement a known cause explains is reported once per class, and the run is judged
  // on: the claim as built answers as the implementation does, a value differs only as cjson
  // bends it, or the index's view of an expiry instant answers so.
  void Explain(const Step& s, const Route& best, const std::string& want) {
    const auto explain = [&](const std::string& cls, const std::string& text) {
      if (!explained_.insert(cls).second) return;
      rec_->findings.push_back(
          {cls, LastOps(text + "; the last operations:") + "\n    the model answers: " + want});
    };
    if (best.claim)
      explain(kAnswersAsTheV1Claim,
              "the implementation answers as beta.24's claim is built (the first concrete "
              "scope adopts a v1 value, others lose it), not as the contract");
    if (best.instant && s.is_list())
      explain("list-drops-at-expiry-instant",
              "list() leaves out an entry at its expiry millisecond, while get() still "
              "returns it (the index is trimmed up to now, inclusive)");
    if (best.quota)
      explain("update-refused-at-expiry-instant",
              "a write of a live entry at its expiry millisecond is refused as quota "
              "exceeded: the index no longer holds the key, so the update asks for a new "
              "slot in a full scope, while get() still returns the entry");
    else if (best.instant && !s.is_list())
      explain(kQuotaFreesSlotAtExpiryInstant,
              "the quota counts an entry as gone at its expiry millisecond, while get() still "
              "returns it (the index is trimmed up to now, inclusive)");
    if (best.level == 1)
      explain(kValueBentByCjson,
              "a value comes back as cjson re-encodes it (numbers to 14 digits, an empty "
              "array as an object), otherwise as the model answers");
  }

  // The call judged: true when it ends the run with a finding.
  bool Judge(Step& s, const model::StateStoreModel& m_before,
             const std::optional<model::StateStoreModel>& design_before) {
    const int contract_plain = s.judge(s.r);
    const std::string want = s.show(s.r);
    const std::string want_design = design_ ? s.show(s.d) : "";
    const Route best = BestRoute(s, m_before, design_before);
    log_.push_back(s.at + s.who + ": " + s.what + " -> " + s.got);
    for (const model::StoreResult* x : {&s.r, &s.d})  // the claim's copy may outlive the contract's
      if (compact_ && x->error.empty() && x->entry)
        ends_.push_back(std::max(x->entry->expires_at, x->entry->alive_until));
    if (edges_ && s.r.error.empty() && s.r.entry) key_end_[s.key] = s.r.entry->expires_at;
    if (dense_ && s.roll >= 88) old_key_ = s.key;
    int same = contract_plain;
    if (same < 2 && best.level > 0) {
      Explain(s, best, want);
      same = 2;
    }
    if (same == 2 && !s.lifetime.empty()) {
      rec_->findings.push_back(
          {"server-expiry-differs-from-stated",
           LastOps("a write's key lives on the server for another span than it states:") +
               "\n    " + s.lifetime});
      return true;
    }
    if (same == 2) return false;
    Disagreement(s, m_before, want, want_design);
    return true;
  }

  // The class: the kind of call the two disagree on, or a call whose steps straddled its key's
  // expiry (it took time, the key's entry was live when it began and had ended when it
  // returned) and answered as no instant of it does: a write numbered on from the expired
  // entry, a compareAndSet checked against the expired entry that wrote a new one, or an
  // increment that carried the expired value into a new entry.
  void Disagreement(const Step& s, const model::StateStoreModel& m_before, const std::string& want,
                    const std::string& want_design) {
    std::string out =
        LastOps("the implementation and model/state_store disagree; the last operations:") +
        "\n    the model answers: " + want;
    if (explained_.count(kAnswersAsTheV1Claim))
      out += "\n    and beta.24's claim as built answers: " + want_design;
    const std::string op = s.roll >= 88 ? "legacy-write" : s.what.substr(0, s.what.find('('));
    const std::optional<model::StoreEntry> before =
        m_before.peek(s.connection, s.ns_name, s.mo, s.key, s.now);
    const bool straddled = before &&
                           !m_before.peek(s.connection, s.ns_name, s.mo, s.key, s.end_ms) &&
                           s.written && s.roll < 88;
    std::string cls = "disagrees-on-" + op;
    const bool continued = straddled && s.written->version == before->version + 1 &&
                           s.written->created_at == before->created_at;
    if (continued && op == "set")
      cls = kVersionContinuesAfterExpiry;
    else if (continued && op == "compareAndSet")
      cls = kStaleCasSucceedsAfterExpiry;
    else if (straddled)
      cls = op + "-straddles-expiry";
    if (cls != "disagrees-on-" + op)
      out += "\n    the call ran from +" + std::to_string(s.now - sim::kDefaultEpochMs) + " to +" +
             std::to_string(s.end_ms - sim::kDefaultEpochMs) + " ms, and " + s.key +
             "'s entry (version " + std::to_string(before->version) + ") ended at +" +
             std::to_string(before->expires_at - sim::kDefaultEpochMs) + " ms within it";
    rec_->findings.push_back({cls, out});
  }

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

class Runner : public StateRun {
 public:
  using StateRun::StateRun;

 private:
  sim::Task<void> Client(sim::Ctx& ctx, int id) override {
    if (id == 0) co_await SequentialClient(w, scripts, &rec).Run(ctx);
  }
};

}  // namespace

const StateProperty& ModelMatchesImplementation() {
  static const StateProperty kProperty = {
      {"model-matches-implementation",
       "a sequential, fault-free run answers every call as the pure model of the whole contract "
       "(model/state_store.h) does at one instant of the call (some calls run on a slow "
       "network, so that their steps span an entry's expiry)",
       Always,
       sim::FaultSet::All(),
       {{"disagrees-on-get", "get() answers other than the model"},
        {"disagrees-on-set", "set() answers other than the model"},
        {"disagrees-on-compareAndSet", "compareAndSet() answers other than the model"},
        {"disagrees-on-delete", "delete() answers other than the model"},
        {"disagrees-on-list", "list() answers other than the model"},
        {"disagrees-on-increment", "increment() answers other than the model"},
        {"disagrees-on-legacy-write", "an old pod's write leaves a state the model does not"},
        {kAnswersAsTheV1Claim,
         "a call answers as beta.24's claim is built (the first concrete scope adopts a v1 "
         "value and others lose it), not as the contract (rule 7); the run is judged on"},
        {kValueBentByCjson,
         "a value comes back as cjson re-encodes it (numbers to 14 digits, an empty array as "
         "an object; value-read-back's finding), otherwise as the model answers; the run is "
         "judged on"},
        {kQuotaFreesSlotAtExpiryInstant,
         "the quota counts an entry as gone at its expiry millisecond while get() still returns "
         "it (quota-safety's expiry-instant-overfill), otherwise as the model answers; the run "
         "is judged on"},
        {kVersionContinuesAfterExpiry,
         "a write whose read and write straddle its key's expiry (the call took time) numbers "
         "itself on from the expired entry and keeps its createdAt, as no single instant of "
         "the call answers"},
        {kStaleCasSucceedsAfterExpiry,
         "a compareAndSet() whose check and write straddle its key's expiry (the call took "
         "time) succeeds on top of the expired entry, numbered on from it"},
        {"set-straddles-expiry",
         "a set() whose steps straddle its key's expiry (the call took time) answers as no "
         "single instant of the call does"},
        {"compareAndSet-straddles-expiry",
         "a compareAndSet() whose steps straddle its key's expiry (the call took time) answers "
         "as no single instant of the call does: checked against the expired entry, it "
         "reports success and writes a new entry at version 1"},
        {"increment-straddles-expiry",
         "an increment whose steps straddle its key's expiry (the call took time) answers as "
         "no single instant of the call does: it carries the expired value into a new entry, "
         "or numbers on from it"},
        {"update-refused-at-expiry-instant",
         "a write of a live entry at its expiry millisecond is refused as quota exceeded (the "
         "index no longer holds the key, so the update asks for a new slot in a full scope), "
         "otherwise as the model answers; the run is judged on"},
        {"list-drops-at-expiry-instant",
         "list() leaves out an entry at its expiry millisecond while get() still returns it "
         "(expiry-boundary-get-list's finding), otherwise as the model answers; the run is "
         "judged on"}}},
      MakeRun<Runner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
