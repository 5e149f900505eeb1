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
#include "properties/state/model_matches_implementation.h"
#include "properties/state/state_workload.h"
#include "sim/clock.h"

namespace testbed::props::state {
namespace model_matches {

SequentialClient::SequentialClient(const StateWorkload& w,
                                   const real::state::VersionScripts& scripts, Recorder* rec)
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

sim::Task<void> SequentialClient::Run(sim::Ctx& ctx) {
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

model::StateStoreModel::Variant SequentialClient::Variant() const {
  return {.scoped = real::state::HasConnectionScopes(w_.version),
          .legacy = legacy_,
          .max_ttl = w_.version != "beta3"};
}

int64_t SequentialClient::Pause(sim::Prng& rng, sim::Prng& side) const {
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

void SequentialClient::Draw(Step& s, sim::Prng& rng, sim::Prng& side) const {
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

void SequentialClient::RunModels(Step& s,
                                 std::function<model::StoreResult(model::StateStoreModel&)> f) {
  s.call = std::move(f);
  s.r = s.call(m_);
  if (design_) s.d = s.call(*design_);
}

void SequentialClient::JudgeEntry(Step& s, const std::optional<model::StoreEntry>& v) {
  s.judge = [v](const model::StoreResult& x) {
    return x.error.empty() ? MatchLevel(v, x.entry) : 0;
  };
}

sim::Task<void> SequentialClient::Call(sim::Ctx& ctx, Step& s, sim::Prng& rng, sim::Prng& side,
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

void SequentialClient::Written(Step& s, const std::optional<real::state::StateValue>& answer,
                               real::state::StateNamespace* writer) {
  const std::optional<model::StoreEntry> v = FromImpl(answer);
  JudgeEntry(s, v);
  s.got = ShowEntry(v);
  if (!writer) return;
  s.written = v;
  s.lifetime = LifetimeDiffers(*rec_->world, writer->redis_key(s.key), v, rec_->world->now_ms());
}

sim::Task<void> SequentialClient::CompareAndSet(Step& s, real::state::StateNamespace& ns,
                                                sim::Prng& rng, sim::Prng& side,
                                                const model::StateStoreModel& m_before) {
  const std::optional<model::StoreEntry> seen =
      m_.peek(s.connection, s.ns_name, s.mo, s.key, s.now);
  bool as_seen = rng.chance({3, 4});
  if (compact_) as_seen = side.chance({1, 2});
  const int64_t expected = as_seen ? (seen ? seen->version : 0) : rng.range(0, 3);
  s.what = "compareAndSet(" + s.key + ", " + std::to_string(expected) + ", " + s.value.dump() + ")";
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

sim::Task<void> SequentialClient::List(Step& s, real::state::StateNamespace& ns, sim::Prng& rng) {
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

}  // namespace model_matches

namespace {

class ModelMatchesImplementationRunner : public StateRun {
 public:
  using StateRun::StateRun;

 private:
  sim::Task<void> Client(sim::Ctx& ctx, int id) override {
    if (id == 0) co_await model_matches::SequentialClient(w, scripts, &rec).Run(ctx);
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
      MakeRun<ModelMatchesImplementationRunner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
