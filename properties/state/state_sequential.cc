// Property model-matches-implementation: see state_workloads.h.
#include "properties/state/state_workloads.h"

#include <algorithm>
#include <cstdio>

#include "model/state_store.h"
#include "sim/clock.h"

namespace testbed::props::detail {

using model::RegisterOp;

namespace {

// model-matches-implementation: one client, in sequence, fault-free, so that every call has
// one instant; each result must be what model/state_store answers at that instant.
std::string ErrorKind(const state::StateError& e) {
  if (e.quota()) return "quota";
  if (e.transport()) return "transport";
  return "policy";
}

std::string ShowEntry(const std::optional<model::StoreEntry>& e) {
  if (!e) return "null";
  return e->key + "=" + state::Stringify(e->value) + " v" + std::to_string(e->version) +
         " createdAt " + state::IsoTime(e->created_at) + " expiresAt " +
         state::IsoTime(e->expires_at);
}

std::optional<model::StoreEntry> FromImpl(const std::optional<state::StateValue>& v) {
  if (!v) return std::nullopt;
  model::StoreEntry e;
  e.key = v->key;
  e.value = v->value;
  e.version = v->version;
  e.expires_at = state::ParseIsoTime(v->expires_at).value_or(-1);
  e.created_at = state::ParseIsoTime(v->created_at).value_or(-1);
  e.updated_at = state::ParseIsoTime(v->updated_at).value_or(-1);
  return e;
}

// Entries agree when key, value, version, createdAt and expiresAt agree.
bool Same(const std::optional<model::StoreEntry>& a, const std::optional<model::StoreEntry>& b) {
  if (!a || !b) return !a && !b;
  return a->key == b->key && a->value == b->value && a->version == b->version &&
         a->created_at == b->created_at && a->expires_at == b->expires_at;
}

}  // namespace

Task<void> SequentialClient(sim::Ctx& ctx, const StateWorkload& w,
                            const state::VersionScripts& scripts, Recorder* rec) {
  Prng rng(w.seed * 1000003);
  const bool legacy = w.version == "beta24";
  model::StateStoreModel m({.scoped = state::HasConnectionScopes(w.version),
                            .legacy_claim = legacy,
                            .max_ttl = w.version != "beta3"});
  std::vector<std::string> log;
  const std::string provider = "provider-under-test";
  for (int i = 0; i < w.ops; ++i) {
    if (w.skip.count({0, i})) continue;  // shrunk away
    rng = Prng(OpSeed(w.seed, 0, i));
    co_await ctx.sleep(rng.range(0, 25));
    const int64_t now = rec->world->now_ms();
    const uint64_t c = rng.below(3);
    const std::optional<std::string> connection =
        c == 2 ? std::nullopt : std::optional<std::string>(c == 0 ? "conn-a" : "conn-b");
    const bool provider_ns = rng.chance({1, 4});
    const std::string ns_name = provider_ns ? "shared" : "ns";
    state::NamespaceOptions so{.provider_scope = provider_ns,
                               .default_ttl_ms = 40,
                               .max_ttl_ms = 100,
                               .max_entries = 3,
                               .max_value_bytes = 256};
    model::StoreNamespaceOptions mo{provider_ns, 40, 100, 3, 256};
    const std::string key = "k" + std::to_string(rng.below(4));
    uint64_t roll = rng.below(100);
    if (!legacy && roll >= 88) roll = rng.below(20) + 25;  // no old pods: a set instead
    const uint64_t ttl_roll = rng.below(10);
    const std::optional<int64_t> ttl = ttl_roll < 3    ? std::optional<int64_t>(rng.range(1, 60))
                                       : ttl_roll == 3 ? std::optional<int64_t>(150)
                                                       : std::nullopt;
    state::Json value = rng.chance({1, 3}) ? TrickyValue(rng) : state::Json::object();
    if (value.is_object() && value.empty()) value["n"] = i;
    auto ns = state::MakeNamespace(w.version, ctx, scripts, provider, ns_name, so, connection);
    const std::string who =
        (connection ? *connection : std::string("missing connection")) + " " + ns_name;
    const std::string at = "+" + std::to_string(now - kDefaultEpochMs) + "ms ";
    std::string what, got, want;
    bool same = true;
    try {
      if (roll < 25) {
        what = "get(" + key + ")";
        model::StoreResult r = m.get(connection, ns_name, mo, key, now);
        std::optional<model::StoreEntry> v = FromImpl(co_await ns->get(key));
        same = r.error.empty() && Same(v, r.entry);
        got = ShowEntry(v);
        want = r.error.empty() ? ShowEntry(r.entry) : r.error + " error";
      } else if (roll < 45) {
        what = "set(" + key + ", " + value.dump() + ", ttl " +
               (ttl ? std::to_string(*ttl) : "default") + ")";
        model::StoreResult r = m.set(connection, ns_name, mo, key, value, ttl, now);
        want = r.error.empty() ? ShowEntry(r.entry) : r.error + " error";
        std::optional<model::StoreEntry> v = FromImpl(co_await ns->set(key, value, ttl));
        same = r.error.empty() && Same(v, r.entry);
        got = ShowEntry(v);
      } else if (roll < 60) {
        const std::optional<model::StoreEntry> seen = m.peek(connection, ns_name, mo, key, now);
        const int64_t expected = rng.chance({3, 4}) ? (seen ? seen->version : 0) : rng.range(0, 3);
        what = "compareAndSet(" + key + ", " + std::to_string(expected) + ", " + value.dump() + ")";
        model::StoreResult r =
            m.compare_and_set(connection, ns_name, mo, key, expected, value, ttl, now);
        want = r.error.empty() ? (r.ok ? "ok " : "fail ") + ShowEntry(r.entry) : r.error + " error";
        state::CasResult c2 = co_await ns->compare_and_set(key, expected, value, ttl);
        std::optional<model::StoreEntry> v = FromImpl(c2.ok ? c2.value : c2.current);
        got = (c2.ok ? "ok " : "fail ") + ShowEntry(v);
        same = r.error.empty() && r.ok == c2.ok && Same(v, r.entry);
        // Rule 9 of the model: a stale expectation may win over the policy error.
        if (r.error == "policy" && !c2.ok && (seen ? seen->version : 0) != expected &&
            Same(v, seen))
          same = true;
      } else if (roll < 68) {
        what = "delete(" + key + ")";
        m.del(connection, ns_name, mo, key, now);
        co_await ns->del(key);
        got = want = "done";
      } else if (roll < 80) {
        const std::optional<std::string> prefix =
            rng.chance({1, 2}) ? std::optional<std::string>(key) : std::nullopt;
        const std::optional<int64_t> limit =
            rng.chance({1, 4}) ? std::optional<int64_t>(rng.range(0, 2)) : std::nullopt;
        what = "list(prefix " + prefix.value_or("-") + ", limit " +
               (limit ? std::to_string(*limit) : "default") + ")";
        model::StoreResult all = m.list(connection, ns_name, mo, prefix, std::nullopt, now);
        const int64_t n =
            std::min<int64_t>(all.matching, std::max<int64_t>(0, limit.value_or(mo.max_entries)));
        std::vector<state::StateValue> rows = co_await ns->list(limit, prefix);
        same = static_cast<int64_t>(rows.size()) == n;
        for (const auto& row : rows) {
          auto e = FromImpl(row);
          bool found = false;
          for (const auto& x : all.rows) found |= Same(e, x);
          same &= found;
          got += ShowEntry(e) + "; ";
        }
        want = std::to_string(n) + " of: ";
        for (const auto& x : all.rows) want += ShowEntry(x) + "; ";
      } else if (roll < 88) {
        what = "increment(" + key + ", \"n\", 2)";
        model::StoreResult r = m.increment(connection, ns_name, mo, key, "n", 2, ttl, now);
        want = r.error.empty() ? ShowEntry(r.entry) : r.error + " error";
        std::optional<model::StoreEntry> v = FromImpl(co_await ns->increment(key, "n", 2, ttl));
        same = r.error.empty() && Same(v, r.entry);
        got = ShowEntry(v);
      } else {
        what = "an old pod (beta23) sets " + key + " in " + ns_name + " to " + value.dump();
        auto old = state::MakeNamespace("beta23", ctx, scripts, provider, ns_name, so, connection);
        co_await old->set(key, value, std::nullopt);
        m.legacy_write(ns_name, key, value, so.default_ttl_ms, now);
        got = want = "done";
      }
    } catch (const state::StateError& e) {
      got = ErrorKind(e) + " error (" + e.what() + ")";
      same = want.rfind(ErrorKind(e) + " error", 0) == 0;
    }
    log.push_back(at + who + ": " + what + " -> " + got);
    if (!same || rec->world->now_ms() != now) {
      if (rec->world->now_ms() != now)
        want += " (the call took virtual time: run this property without faults)";
      std::string out = "the implementation and model/state_store disagree; the last operations:";
      for (size_t k = log.size() > 8 ? log.size() - 8 : 0; k < log.size(); ++k)
        out += "\n    " + log[k];
      out += "\n    the model answers: " + want;
      // The class: the kind of call the two disagree on.
      const std::string op = roll >= 88 ? "legacy-write" : what.substr(0, what.find('('));
      rec->model_violations.push_back({"disagrees-on-" + op, out});
      co_return;
    }
  }
}

}  // namespace testbed::props::detail
