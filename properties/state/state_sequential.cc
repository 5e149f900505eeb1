// Property model-matches-implementation: see state_workload.h.
#include "properties/state/state_workload.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <cstdio>

#include "model/state_store.h"
#include "sim/clock.h"

namespace testbed::props::state {

using model::RegisterOp;

namespace {

// model-matches-implementation: one client, in sequence, fault-free, so that every call has
// one instant; each result must be what model/state_store answers at that instant.
std::string ErrorKind(const real::state::StateError& e) {
  if (e.quota()) return "quota";
  if (e.transport()) return "transport";
  return "policy";
}

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

}  // namespace

sim::Task<void> SequentialClient(sim::Ctx& ctx, const StateWorkload& w,
                                 const real::state::VersionScripts& scripts, Recorder* rec) {
  sim::Prng rng(w.seed * 1000003);
  const bool legacy = w.version == "beta24";
  const model::StateStoreModel::Variant variant{
      .scoped = real::state::HasConnectionScopes(w.version),
      .legacy = legacy,
      .max_ttl = w.version != "beta3"};
  model::StateStoreModel m(variant);
  // beta.24's claim as built, beside the contract: it names the disagreements the claim
  // explains (model/state_store.h, Variant::as_built_claim), and the run goes on after them.
  std::optional<model::StateStoreModel> design;
  if (real::state::ClaimsLegacy(w.version)) {
    model::StateStoreModel::Variant as_built = variant;
    as_built.as_built_claim = true;
    design.emplace(as_built);
  }
  std::set<std::string> explained;  // the classes of the disagreements explained so far
  std::vector<std::string> log;
  const std::string provider = "provider-under-test";
  const auto want_of = [](const model::StoreResult& r) {
    return r.error.empty() ? ShowEntry(r.entry) : r.error + " error";
  };
  // Legacy-dense runs, half of beta.24's (a side stream of the seed, so the other half draw as
  // before): one namespace and one connection mostly, three keys, maxEntries 2, entries that
  // live 80 ms by default, an old pod's write in about a third of the calls, compareAndSet at
  // a stale version half the time, a third of the calls on the key an old pod wrote last, and a
  // third of the pauses aimed at the millisecond before, at or after the end of an entry written
  // so far. They reach what the claim does in a full scope,
  // a claim at the v1 key's expiry millisecond, and compareAndSet's own claim.
  const bool dense = legacy && sim::Prng(w.seed ^ 0x6c6567616379ULL).chance({1, 2});
  // Edge-dense runs, half of every other version's (their own side stream): the same small
  // shape and pauses aimed at entries' ends, without old pods. They reach a full scope at an
  // entry's expiry millisecond, where the key still lives and the index no longer counts it.
  const bool edges = !legacy && sim::Prng(w.seed ^ 0x6564676573ULL).chance({1, 2});
  const bool compact = dense || edges;  // the small shape of either
  // Half of the edge-dense runs hold one entry per scope: a full scope then needs only one key.
  const int64_t compact_max = edges && sim::Prng(w.seed ^ 0x6f6e65ULL).chance({1, 2}) ? 1 : 2;
  std::vector<int64_t> ends;  // compact: when each entry written so far ends (server time)
  std::map<std::string, int64_t> key_end;  // edges: when each key's last written entry ends
  std::string old_key;                     // dense: the key an old pod wrote last
  for (int i = 0; i < w.ops; ++i) {
    if (w.skip.count({0, i})) continue;  // shrunk away
    rng = sim::Prng(sim::OpSeed(w.seed, 0, i));
    sim::Prng side(sim::OpSeed(w.seed, 0, i) ^ 0x64656e7365ULL);
    int64_t pause = rng.range(0, 25);
    if (compact && side.chance({1, 3})) {
      std::vector<int64_t> ahead;
      for (int64_t e : ends)
        if (e + 1 >= rec->world->now_ms()) ahead.push_back(e);
      if (!ahead.empty())
        pause = std::max<int64_t>(
            0, ahead[side.below(ahead.size())] + side.range(-1, 1) - rec->world->now_ms());
    }
    // Edge-dense runs also make a quarter of their calls in the millisecond of the one before
    // (a full scope at an entry's expiry millisecond, then another call there).
    if (edges && side.chance({1, 4})) pause = 0;
    co_await ctx.sleep(pause);
    const int64_t now = rec->world->now_ms();
    uint64_t c = rng.below(3);
    if (dense) {  // conn-a half the time, conn-b and the missing connection a quarter each
      const uint64_t pick = side.below(4);
      c = pick < 2 ? 0 : pick - 1;
    }
    const std::optional<std::string> connection =
        c == 2 ? std::nullopt : std::optional<std::string>(c == 0 ? "conn-a" : "conn-b");
    bool provider_ns = rng.chance({1, 4});
    if (compact) provider_ns = side.chance({1, 8});
    const std::string ns_name = provider_ns ? "shared" : "ns";
    const int64_t max_entries = compact ? compact_max : 3, default_ttl = compact ? 80 : 40;
    real::state::NamespaceOptions so{.provider_scope = provider_ns,
                                     .default_ttl_ms = default_ttl,
                                     .max_ttl_ms = 100,
                                     .max_entries = max_entries,
                                     .max_value_bytes = 256};
    model::StoreNamespaceOptions mo{provider_ns, default_ttl, 100, max_entries, 256};
    const uint64_t key_draw = rng.below(4);
    std::string key = "k" + std::to_string(compact ? key_draw % 3 : key_draw);
    if (dense && !old_key.empty() && side.chance({1, 3})) key = old_key;  // what old pods wrote
    if (edges && side.chance({1, 2}))  // half the calls at a key's expiry millisecond go to it
      for (const auto& [k, end] : key_end)
        if (end == now) key = k;
    uint64_t roll = rng.below(100);
    if (!legacy && roll >= 88) roll = rng.below(20) + 25;      // no old pods: a set instead
    if (dense && roll < 88 && side.chance({1, 4})) roll = 88;  // an old pod's write
    const uint64_t ttl_roll = rng.below(10);
    const std::optional<int64_t> ttl = ttl_roll < 3    ? std::optional<int64_t>(rng.range(1, 60))
                                       : ttl_roll == 3 ? std::optional<int64_t>(150)
                                                       : std::nullopt;
    real::state::Json value = rng.chance({1, 3}) ? TrickyValue(rng) : real::state::Json::object();
    if (value.is_object() && value.empty()) value["n"] = i;
    auto ns =
        real::state::MakeNamespace(w.version, ctx, scripts, provider, ns_name, so, connection);
    const std::string who =
        (connection ? *connection : std::string("missing connection")) + " " + ns_name;
    std::string at = "+" + std::to_string(now - sim::kDefaultEpochMs) + "ms ";
    // The instant the models answer at: now, or where a call that took time took effect.
    int64_t when = now;
    // Edge-dense runs make a quarter of their calls on a slow network (every reply 1 to 3 ms
    // late): a call's own steps (beta.23's backfill, its read, its script) then run at
    // different instants, and an entry may expire between them.
    const int64_t slow = edges && side.chance({1, 4}) ? side.range(1, 3) : 0;
    ctx.set_reply_latency(slow);
    // The models as they were before this call (the index's view of an instant starts there).
    const model::StateStoreModel m_before = m;
    const std::optional<model::StateStoreModel> design_before = design;
    std::string what, got, lifetime;
    std::optional<model::StoreEntry> written;  // what a set, compareAndSet or increment answered
    // The call on a model, and how well the implementation's answer matches a model's answer
    // (MatchLevel: 2 exactly, 1 but for a value cjson bent, 0 not), with how to show one.
    std::function<model::StoreResult(model::StateStoreModel&)> call;
    std::function<int(const model::StoreResult&)> judge;
    std::function<std::string(const model::StoreResult&)> show = want_of;
    model::StoreResult r, d;  // the contract's answer, and the claim as built's
    const auto run_models = [&](auto f) {
      call = f;
      r = call(m);
      if (design) d = call(*design);
    };
    const auto judge_entry = [&](const std::optional<model::StoreEntry>& v) {
      judge = [v](const model::StoreResult& x) {
        return x.error.empty() ? MatchLevel(v, x.entry) : 0;
      };
    };
    try {
      if (roll < 25) {
        what = "get(" + key + ")";
        run_models(
            [&](model::StateStoreModel& x) { return x.get(connection, ns_name, mo, key, when); });
        std::optional<model::StoreEntry> v = FromImpl(co_await ns->get(key));
        judge_entry(v);
        got = ShowEntry(v);
      } else if (roll < 45) {
        what = "set(" + key + ", " + value.dump() + ", ttl " +
               (ttl ? std::to_string(*ttl) : "default") + ")";
        run_models([&](model::StateStoreModel& x) {
          return x.set(connection, ns_name, mo, key, value, ttl, when);
        });
        std::optional<model::StoreEntry> v = FromImpl(co_await ns->set(key, value, ttl));
        judge_entry(v);
        written = v;
        got = ShowEntry(v);
        lifetime = LifetimeDiffers(*rec->world, ns->redis_key(key), v, rec->world->now_ms());
      } else if (roll < 60) {
        const std::optional<model::StoreEntry> seen = m.peek(connection, ns_name, mo, key, now);
        bool as_seen = rng.chance({3, 4});
        if (compact) as_seen = side.chance({1, 2});
        const int64_t expected = as_seen ? (seen ? seen->version : 0) : rng.range(0, 3);
        what = "compareAndSet(" + key + ", " + std::to_string(expected) + ", " + value.dump() + ")";
        run_models([&, expected](model::StateStoreModel& x) {  // called again below
          return x.compare_and_set(connection, ns_name, mo, key, expected, value, ttl, when);
        });
        show = [](const model::StoreResult& x) {
          return x.error.empty() ? (x.ok ? "ok " : "fail ") + ShowEntry(x.entry)
                                 : x.error + " error";
        };
        real::state::CasResult c2 = co_await ns->compare_and_set(key, expected, value, ttl);
        std::optional<model::StoreEntry> v = FromImpl(c2.ok ? c2.value : c2.current);
        got = (c2.ok ? "ok " : "fail ") + ShowEntry(v);
        // The entry at the instant the model answers at (`when`, the call's span).
        const auto seen_then = [&] { return m_before.peek(connection, ns_name, mo, key, when); };
        judge = [v, ok = c2.ok, expected, seen_then](const model::StoreResult& x) {
          // Rule 9 of the model: a stale expectation may win over the policy error.
          const std::optional<model::StoreEntry> then = seen_then();
          const bool stale = (then ? then->version : 0) != expected;
          if (x.error == "policy" && !ok && stale && Same(v, then)) return 2;
          return x.error.empty() && x.ok == ok ? MatchLevel(v, x.entry) : 0;
        };
        if (c2.ok) {
          written = v;
          lifetime = LifetimeDiffers(*rec->world, ns->redis_key(key), v, rec->world->now_ms());
        }
      } else if (roll < 68) {
        what = "delete(" + key + ")";
        run_models(
            [&](model::StateStoreModel& x) { return x.del(connection, ns_name, mo, key, when); });
        co_await ns->del(key);
        got = "done";
        show = [](const model::StoreResult&) { return std::string("done"); };
        judge = [](const model::StoreResult&) { return 2; };
      } else if (roll < 80) {
        const std::optional<std::string> prefix =
            rng.chance({1, 2}) ? std::optional<std::string>(key) : std::nullopt;
        const std::optional<int64_t> limit =
            rng.chance({1, 4}) ? std::optional<int64_t>(rng.range(0, 2)) : std::nullopt;
        what = "list(prefix " + prefix.value_or("-") + ", limit " +
               (limit ? std::to_string(*limit) : "default") + ")";
        run_models([&, prefix](model::StateStoreModel& x) {  // called again below
          // Every live row: past an overfill the scope holds more than maxEntries, and
          // which of them list() returns is not promised.
          return x.list(connection, ns_name, mo, prefix, std::numeric_limits<int64_t>::max(), when);
        });
        std::vector<real::state::StateValue> rows = co_await ns->list(limit, prefix);
        // The rows match when there are as many as the limit lets through, each one of the
        // model's (list() promises no order).
        const int64_t lets_through = std::max<int64_t>(0, limit.value_or(mo.max_entries));
        judge = [rows, lets_through](const model::StoreResult& all) {
          const int64_t n = std::min<int64_t>(all.matching, lets_through);
          int ok = static_cast<int64_t>(rows.size()) == n ? 2 : 0;
          for (const auto& row : rows) {
            int found = 0;
            for (const auto& x : all.rows) found = std::max(found, MatchLevel(FromImpl(row), x));
            ok = std::min(ok, found);
          }
          return ok;
        };
        show = [lets_through](const model::StoreResult& all) {
          std::string shown =
              std::to_string(std::min<int64_t>(all.matching, lets_through)) + " of: ";
          for (const auto& x : all.rows) shown += ShowEntry(x) + "; ";
          return shown;
        };
        for (const auto& row : rows) got += ShowEntry(FromImpl(row)) + "; ";
      } else if (roll < 88) {
        what = "increment(" + key + ", \"n\", 2)";
        run_models([&](model::StateStoreModel& x) {
          return x.increment(connection, ns_name, mo, key, "n", 2, ttl, when);
        });
        std::optional<model::StoreEntry> v = FromImpl(co_await ns->increment(key, "n", 2, ttl));
        judge_entry(v);
        written = v;
        got = ShowEntry(v);
        lifetime = LifetimeDiffers(*rec->world, ns->redis_key(key), v, rec->world->now_ms());
      } else {
        what = "an old pod (beta23) sets " + key + " in " + ns_name + " to " + value.dump();
        auto old =
            real::state::MakeNamespace("beta23", ctx, scripts, provider, ns_name, so, connection);
        run_models([&](model::StateStoreModel& x) {
          return x.legacy_write(ns_name, mo, key, value, so.default_ttl_ms, when);
        });
        show = [](const model::StoreResult& x) {
          return x.error.empty() ? std::string("done") : x.error + " error";
        };
        co_await old->set(key, value, std::nullopt);
        got = "done";
        judge = [](const model::StoreResult& x) { return x.error.empty() ? 2 : 0; };
      }
    } catch (const real::state::StateError& e) {
      got = ErrorKind(e) + " error (" + e.what() + ")";
      judge = [kind = ErrorKind(e)](const model::StoreResult& x) {
        return x.error == kind ? 2 : 0;
      };
    }
    ctx.set_reply_latency(0);
    // A model as the index sees an instant: counting by it, or (quota_only) asking it alone
    // whether a write needs a slot (model/state_store.h, Variant).
    const auto viewed = [](model::StateStoreModel x, bool quota_only) {
      if (quota_only)
        x.quota_by_index(true);
      else
        x.count_by_index(true);
      return x;
    };
    // A call that took time takes effect at one instant of its span (it is the only caller):
    // the models answer at the instant that matches the implementation best, the earliest of
    // equals, and go on from there.
    const int64_t end_ms = rec->world->now_ms();
    if (end_ms != now && !design) {
      int best_level = judge(r);
      int64_t best_t = now;
      for (int64_t t = now + 1; t <= end_ms && best_level < 2; ++t) {
        when = t;
        model::StateStoreModel x = m_before;
        const model::StoreResult y = call(x);
        if (const int level = judge(y); level > best_level) {
          best_level = level;
          best_t = t;
          m = std::move(x);
          r = y;
        }
      }
      // No instant explains it by the contract: the instant whose index's view (the routes
      // below) explains it best is the one they answer at.
      for (int64_t t = now, view_level = best_level; t <= end_ms && best_level < 2; ++t)
        for (const bool quota_only : {false, true}) {
          model::StateStoreModel x = viewed(m_before, quota_only);
          when = t;
          if (const int level = judge(call(x)); level > view_level) {
            view_level = level;
            best_t = t;
          }
        }
      when = best_t;
      at = "+" + std::to_string(now - sim::kDefaultEpochMs) + "..+" +
           std::to_string(end_ms - sim::kDefaultEpochMs) + "ms ";
    }
    int same = judge(r), same_design = design ? judge(d) : 0;
    std::string want = show(r);
    const std::string want_design = design ? show(d) : "";
    // The index's view of an instant: the index is trimmed up to now, inclusive, so list() and
    // the quota count an entry as gone at its expiry millisecond, while the key (and get())
    // still has it. Explained when the models, counting by the index at this instant, answer as
    // the implementation did; they then go on from that answer.
    // Each model that misses the implementation's answer tries the index's view; the one that
    // then matches better goes on from there (so neither drifts from what the implementation
    // did). The call is judged by the best route, the fewest explanations first: the contract
    // (none), the claim as built, the contract by the index's view, the claim by it.
    const int contract_plain = same, design_plain = same_design;
    const auto by_index = [&](const model::StateStoreModel& before, model::StateStoreModel& now_m,
                              int& level) {
      model::StateStoreModel x = viewed(before, false);
      const int viewed_level = judge(call(x));
      if (viewed_level <= level) return;
      level = viewed_level;
      now_m = std::move(x);
      now_m.count_by_index(false);
    };
    if (same < 2) by_index(m_before, m, same);
    if (design && same_design < 2) by_index(*design_before, *design, same_design);
    // Last, the contract with the quota alone by the index's view (Variant::index_quota): a
    // write of a key at its expiry millisecond that the quota refuses as a new entry.
    int same_quota = 0;
    if (same < 2) {
      model::StateStoreModel x = viewed(m_before, true);
      same_quota = judge(call(x));
      if (same_quota > same) {
        m = std::move(x);
        m.quota_by_index(false);
      }
    }
    struct Route {
      int level;
      bool claim, instant, quota = false;
    };
    Route best{contract_plain, false, false};
    for (const Route& x : {Route{design_plain, true, false}, Route{same, false, true},
                           Route{same_design, true, true}, Route{same_quota, false, true, true}})
      if (x.level > best.level) best = x;
    log.push_back(at + who + ": " + what + " -> " + got);
    for (const model::StoreResult* x : {&r, &d})  // the claim's copy may outlive the contract's
      if (compact && x->error.empty() && x->entry)
        ends.push_back(std::max(x->entry->expires_at, x->entry->alive_until));
    if (edges && r.error.empty() && r.entry) key_end[key] = r.entry->expires_at;
    if (dense && roll >= 88) old_key = key;
    const auto last_ops = [&](std::string out) {
      for (size_t k = log.size() > 8 ? log.size() - 8 : 0; k < log.size(); ++k)
        out += "\n    " + log[k];
      return out;
    };
    // A disagreement a known cause explains is reported once per class, and the run is judged
    // on: the claim as built answers as the implementation does, a value differs only as cjson
    // bends it, or the index's view of an expiry instant answers so.
    const auto explain = [&](const std::string& cls, const std::string& text) {
      if (!explained.insert(cls).second) return;
      rec->findings.push_back(
          {cls, last_ops(text + "; the last operations:") + "\n    the model answers: " + want});
    };
    same = contract_plain;
    if (same < 2 && best.level > 0) {
      if (best.claim)
        explain(kAnswersAsTheV1Claim,
                "the implementation answers as beta.24's claim is built (the first concrete "
                "scope adopts a v1 value, others lose it), not as the contract");
      if (best.instant && roll >= 68 && roll < 80)
        explain("list-drops-at-expiry-instant",
                "list() leaves out an entry at its expiry millisecond, while get() still "
                "returns it (the index is trimmed up to now, inclusive)");
      if (best.quota)
        explain("update-refused-at-expiry-instant",
                "a write of a live entry at its expiry millisecond is refused as quota "
                "exceeded: the index no longer holds the key, so the update asks for a new "
                "slot in a full scope, while get() still returns the entry");
      else if (best.instant && !(roll >= 68 && roll < 80))
        explain(kQuotaFreesSlotAtExpiryInstant,
                "the quota counts an entry as gone at its expiry millisecond, while get() still "
                "returns it (the index is trimmed up to now, inclusive)");
      if (best.level == 1)
        explain(kValueBentByCjson,
                "a value comes back as cjson re-encodes it (numbers to 14 digits, an empty "
                "array as an object), otherwise as the model answers");
      same = 2;
    }
    if (same == 2 && !lifetime.empty()) {
      rec->findings.push_back(
          {"server-expiry-differs-from-stated",
           last_ops("a write's key lives on the server for another span than it states:") +
               "\n    " + lifetime});
      co_return;
    }
    if (same < 2) {
      std::string out =
          last_ops("the implementation and model/state_store disagree; the last operations:") +
          "\n    the model answers: " + want;
      if (explained.count(kAnswersAsTheV1Claim))
        out += "\n    and beta.24's claim as built answers: " + want_design;
      // The class: the kind of call the two disagree on, or a call whose steps straddled its
      // key's expiry (it took time, the key's entry was live when it began and had ended when
      // it returned) and answered as no instant of it does: a write numbered on from the
      // expired entry, a compareAndSet checked against the expired entry that wrote a new
      // one, or an increment that carried the expired value into a new entry.
      const std::string op = roll >= 88 ? "legacy-write" : what.substr(0, what.find('('));
      const std::optional<model::StoreEntry> before =
          m_before.peek(connection, ns_name, mo, key, now);
      const bool straddled =
          before && !m_before.peek(connection, ns_name, mo, key, end_ms) && written && roll < 88;
      std::string cls = "disagrees-on-" + op;
      const bool continued = straddled && written->version == before->version + 1 &&
                             written->created_at == before->created_at;
      if (continued && op == "set")
        cls = kVersionContinuesAfterExpiry;
      else if (continued && op == "compareAndSet")
        cls = kStaleCasSucceedsAfterExpiry;
      else if (straddled)
        cls = op + "-straddles-expiry";
      if (cls != "disagrees-on-" + op)
        out += "\n    the call ran from +" + std::to_string(now - sim::kDefaultEpochMs) + " to +" +
               std::to_string(end_ms - sim::kDefaultEpochMs) + " ms, and " + key +
               "'s entry (version " + std::to_string(before->version) + ") ended at +" +
               std::to_string(before->expires_at - sim::kDefaultEpochMs) + " ms within it";
      rec->findings.push_back({cls, out});
      co_return;
    }
  }
}

}  // namespace testbed::props::state

namespace testbed::props::state {

namespace {

// names-are-opaque: the names one run uses. Index i means the same thing under both name
// sets; the adversarial set is drawn once per run from its own stream of the seed.
struct NameSet {
  std::string provider;
  std::string connections[2];
  // [0] and [2] are provider-scoped namespaces, [1] a connection-scoped one.
  std::string namespaces[3];
  std::string keys[4];
};

NameSet PlainNames() {
  return {"plain-provider",
          {"conn-a", "conn-b"},
          {"shared", "ns", "shared2"},
          {"k0", "k1", "k2", "k3"}};
}

// Names a caller may pass (the API takes any string) that a key-building or glob-matching
// store may mistake: separators that let two (namespace, key) pairs build one Redis key ("n" +
// "a:k0" and "n:a" + "k0"; "n" + "scope:provider:k0" and "n:scope:provider" + "k0"), glob
// characters that KEYS and SCAN MATCH expand, the empty string, backslashes and unicode.
NameSet AdversarialNames(uint64_t seed) {
  sim::Prng rng(seed * 0x9E3779B97F4A7C15ULL + 0x6e616d6573ULL);
  auto pick = [&rng](std::initializer_list<const char*> options) {
    return std::string(options.begin()[rng.below(options.size())]);
  };
  NameSet n;
  n.provider = pick({"provider-under-test", "p:q", "p*"});
  n.connections[0] = pick({"c:1", "c*"});
  n.connections[1] = pick({"", "\xC3\xBC\xF0\x9F\x99\x82"});  // "ü🙂"
  n.namespaces[0] = "n";
  n.namespaces[1] = pick({"n:a", "n*", "", "n?[\\]"});
  n.namespaces[2] = "n:scope:provider";
  n.keys[0] = "k0";
  n.keys[1] = "a:k0";
  n.keys[2] = pick({"scope:provider:k0", "*", "?"});
  n.keys[3] = pick({"", "\xC3\xA9\xF0\x9F\x99\x82", "k\\[x]"});  // "é🙂"
  return n;
}

std::string Quote(const std::string& s) { return "\"" + s + "\""; }

std::string Describe(const NameSet& n) {
  std::string out = "provider " + Quote(n.provider) + ", connections " + Quote(n.connections[0]) +
                    " " + Quote(n.connections[1]) + ", namespaces " + Quote(n.namespaces[0]) + " " +
                    Quote(n.namespaces[1]) + " " + Quote(n.namespaces[2]) + ", keys";
  for (const auto& k : n.keys) out += " " + Quote(k);
  return out;
}

// An entry with its key written as the index of the name set ("key#1"), so that the two runs
// compare; a key outside the set is shown as it is.
std::string Normal(const NameSet& n, const std::optional<real::state::StateValue>& v) {
  if (!v) return "null";
  std::string key = Quote(v->key);
  for (int i = 0; i < 4; ++i)
    if (v->key == n.keys[i]) key = "key#" + std::to_string(i);
  return key + "=" + real::state::Stringify(v->value) + " v" + std::to_string(v->version) +
         " createdAt " + v->created_at + " expiresAt " + v->expires_at;
}

struct OpSpec {
  uint64_t roll = 0;
  int connection = 0;  // 0, 1, or 2: the missing connection
  int ns = 0;
  int key = 0;
  std::optional<int64_t> ttl;
  real::state::Json value;
  int64_t expected = 0;  // compareAndSet; -1: the version the same call's get reads
  bool list_by_prefix = false;
  std::optional<int64_t> limit;
};

// One operation under one name set; what it answered, with names as indexes.
sim::Task<std::string> RunOp(sim::Ctx& ctx, const StateWorkload& w,
                             const real::state::VersionScripts& scripts, const NameSet& n,
                             const OpSpec& op) {
  const bool provider_ns = op.ns != 1;
  real::state::NamespaceOptions so{.provider_scope = provider_ns,
                                   .default_ttl_ms = 40,
                                   .max_ttl_ms = 100,
                                   .max_entries = 3,
                                   .max_value_bytes = 256};
  const std::optional<std::string> connection =
      op.connection == 2 ? std::nullopt : std::optional<std::string>(n.connections[op.connection]);
  const std::string& key = n.keys[op.key];
  auto ns = real::state::MakeNamespace(w.version, ctx, scripts, n.provider, n.namespaces[op.ns], so,
                                       connection);
  std::string out;
  try {
    if (op.roll < 25) {
      out = Normal(n, co_await ns->get(key));
    } else if (op.roll < 45) {
      out = Normal(n, co_await ns->set(key, op.value, op.ttl));
    } else if (op.roll < 60) {
      int64_t expected = op.expected;
      if (expected < 0) {
        std::optional<real::state::StateValue> seen = co_await ns->get(key);
        expected = seen ? seen->version : 0;
      }
      real::state::CasResult r = co_await ns->compare_and_set(key, expected, op.value, op.ttl);
      out = (r.ok ? "ok " : "fail ") + Normal(n, r.ok ? r.value : r.current);
    } else if (op.roll < 68) {
      co_await ns->del(key);
      out = "done";
    } else if (op.roll < 80) {
      const std::optional<std::string> prefix =
          op.list_by_prefix ? std::optional<std::string>(key) : std::nullopt;
      std::vector<real::state::StateValue> rows = co_await ns->list(op.limit, prefix);
      std::vector<std::string> shown;
      for (const auto& r : rows) shown.push_back(Normal(n, r));
      std::sort(shown.begin(), shown.end());  // list() promises no order
      out = std::to_string(rows.size()) + " rows:";
      for (const auto& s : shown) out += " " + s + ";";
    } else if (op.roll < 88) {
      out = Normal(n, co_await ns->increment(key, "n", 2, op.ttl));
    } else {
      auto old = real::state::MakeNamespace("beta23", ctx, scripts, n.provider, n.namespaces[op.ns],
                                            so, connection);
      co_await old->set(key, op.value, std::nullopt);
      out = "done";
    }
  } catch (const real::state::StateError& e) {
    out = ErrorKind(e) + " error";
  }
  co_return out;
}

std::string Show(const NameSet& n, const OpSpec& op) {
  static const char* kOps[] = {"get", "set", "compareAndSet", "delete", "list", "increment"};
  const int kind = op.roll < 25   ? 0
                   : op.roll < 45 ? 1
                   : op.roll < 60 ? 2
                   : op.roll < 68 ? 3
                   : op.roll < 80 ? 4
                   : op.roll < 88 ? 5
                                  : 6;
  const std::string who =
      (op.connection == 2 ? std::string("missing connection")
                          : "connection " + Quote(n.connections[op.connection])) +
      ", namespace " + Quote(n.namespaces[op.ns]) + ": ";
  if (kind == 6) return who + "an old pod (beta23) sets " + Quote(n.keys[op.key]);
  if (kind == 4)
    return who + "list(prefix " + (op.list_by_prefix ? Quote(n.keys[op.key]) : "-") + ")";
  return who + kOps[kind] + "(" + Quote(n.keys[op.key]) + ")";
}

}  // namespace

sim::Task<void> NamesLockstepClient(sim::Ctx& ctx, const StateWorkload& w,
                                    const real::state::VersionScripts& scripts, Recorder* rec) {
  const NameSet plain = PlainNames(), odd = AdversarialNames(w.seed);
  const bool legacy = w.version == "beta24";
  std::vector<std::string> log;
  for (int i = 0; i < w.ops; ++i) {
    if (w.skip.count({0, i})) continue;  // shrunk away
    sim::Prng rng(sim::OpSeed(w.seed, 0, i));
    co_await ctx.sleep(rng.range(0, 25));
    OpSpec op;
    op.connection = static_cast<int>(rng.below(3));
    op.ns = static_cast<int>(rng.below(3));
    op.key = static_cast<int>(rng.below(4));
    op.roll = rng.below(100);
    if (!legacy && op.roll >= 88) op.roll = rng.below(20) + 25;  // no old pods: a set instead
    const uint64_t ttl_roll = rng.below(10);
    op.ttl = ttl_roll < 3    ? std::optional<int64_t>(rng.range(1, 60))
             : ttl_roll == 3 ? std::optional<int64_t>(150)
                             : std::nullopt;
    op.value = rng.chance({1, 3}) ? TrickyValue(rng) : real::state::Json::object();
    if (op.value.is_object() && op.value.empty()) op.value["n"] = i;
    op.expected = rng.chance({3, 4}) ? -1 : rng.range(0, 3);
    // list(prefix ""): every key, as no prefix; under plain names that would be a real prefix.
    op.list_by_prefix = rng.chance({1, 2}) && !odd.keys[op.key].empty();
    if (rng.chance({1, 4})) op.limit = rng.range(0, 2);
    const int64_t now = rec->world->now_ms();
    const std::string a = co_await RunOp(ctx, w, scripts, plain, op);
    const std::string b = co_await RunOp(ctx, w, scripts, odd, op);
    log.push_back("+" + std::to_string(now - sim::kDefaultEpochMs) + "ms " + Show(odd, op) +
                  " -> " + b);
    if (a == b) continue;
    std::string out = "the same calls under plain names and under " + Describe(odd) +
                      " answer differently; the last operations (the odd names):";
    for (size_t k = log.size() > 8 ? log.size() - 8 : 0; k < log.size(); ++k)
      out += "\n    " + log[k];
    out += "\n    under plain names (" + Show(plain, op) + "): " + a;
    const std::string what = Show(plain, op);
    const size_t colon = what.rfind(": ");
    std::string kind = what.substr(colon + 2);
    kind = kind.substr(0, kind.find('('));
    if (kind.rfind("an old pod", 0) == 0) kind = "legacy-write";
    rec->findings.push_back({"names-change-" + kind, out});
    co_return;
  }
}

}  // namespace testbed::props::state
