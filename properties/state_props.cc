#include "properties/state_props.h"

#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <nlohmann/json.hpp>
#include <cstdio>
#include <stdexcept>

#include "model/state_register.h"
#include "model/state_store.h"
#include "real/real_backend.h"
#include "real/state/namespace.h"
#include "real/state/memory_beta30.h"
#include "sim/clock.h"
#include "sim/prng.h"
#include "sim/strategies.h"

namespace testbed::props {
namespace {

using model::RegisterOp;
using Op = lin::Operation<RegisterOp>;

// acknowledged-writes-visible: one operation, as the checker needs it.
struct AckOp {
  enum class Kind { kSet, kGet, kList, kDelete } kind = Kind::kGet;
  std::string key;
  int actor = 0;
  int64_t inv_seq = 0, ret_seq = 0, inv_ms = 0, ret_ms = 0;
  bool ambiguous = false;  // a transport error: it may or may not have happened
  bool found = false;      // get/list: the key was there
  int64_t exp_lo = 0;      // set: the earliest instant the entry may expire (server time)
  std::optional<int64_t> ttl;
};

// legacy-readable: a v1 value an old pod wrote, and what each connection read of it.
struct LegacyKey {
  std::string value;       // JSON of what the old pod wrote
  int64_t acked_ms = -1;   // when the old pod's set returned (-1: it did not)
  std::string old_version;
  struct Read {
    std::string connection;
    int64_t inv_ms, ret_ms;
    std::optional<std::string> got;  // JSON of the value read; nullopt: null
    bool done = false;               // false: it failed or never returned (a claim may have run)
  };
  std::vector<Read> reads;
};

struct Recorder {
  sim::World* world = nullptr;
  int64_t seq = 0;
  lin::RegisterHistory history;
  std::vector<std::string> boundary_violations;
  std::vector<std::string> read_back_violations;
  std::vector<std::string> quota_violations;
  std::vector<std::string> memory_violations;
  std::vector<std::string> isolation_violations;
  std::vector<std::string> liveness_violations;
  std::vector<std::string> read_quota_violations;
  std::vector<std::string> adoption_violations;
  std::vector<std::string> rolling_violations;
  std::vector<std::string> model_violations;
  std::set<std::string> memory_desynced;  // memory-matches-redis: keys an unknown outcome hit
  std::vector<AckOp> ack_ops;
  std::map<std::string, LegacyKey> legacy_keys;       // legacy-readable, by key
  std::map<std::string, std::set<std::string>> adopters;  // legacy-adopted-once: v1 origin -> scopes
};

std::string Show(const std::optional<state::StateValue>& v) {
  return v ? state::Stringify(v->value) + " v" + std::to_string(v->version) : "null";
}

// One operation on both backends at the same instant; the first disagreement is recorded.
Task<void> MemoryLockstep(sim::Ctx& ctx, state::StateNamespace& redis,
                          state::memory_beta30::Namespace& memory, const std::string& key,
                          Prng& rng, int i, int64_t ttl_max, Recorder* rec) {
  const uint64_t roll = rng.below(100);
  state::Json value = state::Json::object();
  value["n"] = i;
  const std::optional<int64_t> ttl =
      ttl_max > 0 ? std::optional<int64_t>(rng.range(1, ttl_max)) : std::nullopt;
  const int64_t t = rec->world->now_ms() - kDefaultEpochMs;
  std::string what, from_redis, from_memory;
  try {
    if (roll < 40) {
      what = "get(\"" + key + "\")";
      std::optional<state::StateValue> r = co_await redis.get(key);
      from_redis = Show(r);
      from_memory = Show(memory.get(key));
    } else if (roll < 70) {
      what = "set(\"" + key + "\", ttl " + (ttl ? std::to_string(*ttl) : "default") + ")";
      state::StateValue r = co_await redis.set(key, value, ttl);
      from_redis = "v" + std::to_string(r.version);
      from_memory = "v" + std::to_string(memory.set(key, value, ttl).version);
    } else if (roll < 90) {
      const std::optional<state::StateValue> seen = memory.get(key);
      const int64_t expected = seen ? seen->version : 0;
      what = "compareAndSet(\"" + key + "\", " + std::to_string(expected) + ")";
      state::CasResult r = co_await redis.compare_and_set(key, expected, value, ttl);
      state::CasResult m = memory.compare_and_set(key, expected, value, ttl);
      from_redis = r.ok ? "ok v" + std::to_string(r.value->version) : "fail " + Show(r.current);
      from_memory = m.ok ? "ok v" + std::to_string(m.value->version) : "fail " + Show(m.current);
    } else {
      what = "delete(\"" + key + "\")";
      co_await redis.del(key);
      memory.del(key);
      from_redis = from_memory = "done";
    }
  } catch (const state::StateError& e) {
    // Redis may or may not have applied it, the memory backend did not see it: from here on
    // the two backends are not comparable for this key.
    if (e.transport()) rec->memory_desynced.insert(key);
    co_return;
  }
  if (rec->memory_desynced.count(key)) co_return;
  if (from_redis != from_memory && rec->world->now_ms() - kDefaultEpochMs == t)
    rec->memory_violations.push_back("at +" + std::to_string(t) + "ms " + what + ": redis " +
                                     from_redis + ", memory " + from_memory);
}

// The values whose JSON a store could bend: empty containers, integers past 1e14, binary
// fractions, escapes, unicode, nesting.
state::Json TrickyValue(Prng& rng) {
  static const std::vector<std::string> values = {
      R"({"list":[]})", R"({"n":1234567890123456})", R"({"f":0.30000000000000004})",
      R"({"path":"a/b"})", R"({"s":"caf\u00e9 \ud83d\ude00"})", R"({"nested":{"a":[1,[2,{}]]}})",
      R"({"neg":-0.5,"big":9007199254740991})", R"({"empty":{}})", R"([1,2,3])", R"("text")"};
  return state::Json::parse(values[rng.below(values.size())]);
}

Task<void> ReadBackProbe(sim::Ctx& ctx, state::StateNamespace& ns, const std::string& key,
                         state::Json value, Recorder* rec) {
  try {
    state::Json first = state::Json::object();
    first["first"] = true;
    co_await ns.set(key, first, std::nullopt);
    state::CasResult r = co_await ns.compare_and_set(key, 1, value, std::nullopt);
    std::optional<state::StateValue> got = co_await ns.get(key);
    if (r.ok && got && got->value != value)
      rec->read_back_violations.push_back("compareAndSet(\"" + key + "\", 1, " + state::Stringify(value) +
                                          ") then get() read back " + state::Stringify(got->value));
  } catch (const state::StateError&) {
  }
}

Task<void> QuotaProbe(sim::Ctx& ctx, const StateWorkload& w, const state::VersionScripts& scripts,
                      int id, int i, int64_t ttl, Recorder* rec) {
  state::NamespaceOptions one{.default_ttl_ms = 60000, .max_ttl_ms = 120000, .max_entries = 1};
  auto ns_ptr = state::MakeNamespace(w.version, ctx, scripts, std::string("provider-under-test"),
                                     "quota" + std::to_string(id) + "-" + std::to_string(i), one,
                                     std::string("conn"));
  state::StateNamespace& ns = *ns_ptr;
  try {
    state::Json value = state::Json::object();
    value["n"] = 1;
    co_await ns.set("a", value, ttl);
    co_await ctx.sleep(ttl);
    const int64_t t0 = rec->world->now_ms();
    co_await ns.set("b", value, std::nullopt);
    std::optional<state::StateValue> a = co_await ns.get("a");
    std::optional<state::StateValue> b = co_await ns.get("b");
    if (a && b && rec->world->now_ms() == t0)
      rec->quota_violations.push_back(
          "at +" + std::to_string(t0 - kDefaultEpochMs) + "ms, the expiry instant of a (TTL " +
          std::to_string(ttl) + " ms), set(b) was accepted and get(a), get(b) both return a value: "
          "2 live entries in a namespace with maxEntries 1");
  } catch (const state::StateError&) {
  }
}

// set(key, ttl); sleep(ttl); then get() and list() in the same millisecond of virtual time.
Task<void> ExpiryProbe(sim::Ctx& ctx, state::StateNamespace& ns, const std::string& key,
                       int64_t ttl, Recorder* rec) {
  try {
    state::Json value = state::Json::object();
    value["probe"] = ttl;
    co_await ns.set(key, value, ttl);
    co_await ctx.sleep(ttl);
    const int64_t t_get = rec->world->now_ms();
    std::optional<state::StateValue> got = co_await ns.get(key);
    std::vector<state::StateValue> listed = co_await ns.list(std::nullopt, key);
    const int64_t t_list = rec->world->now_ms();
    bool in_list = false;
    for (const auto& v : listed) in_list |= v.key == key;
    if (got && t_get == t_list && !in_list)
      rec->boundary_violations.push_back(
          "at +" + std::to_string(t_get - kDefaultEpochMs) + "ms (the expiry instant of a " +
          std::to_string(ttl) + " ms TTL) get(\"" + key + "\") returned version " +
          std::to_string(got->version) + " but list() did not include it");
  } catch (const state::StateError&) {
    // Faults may fail the probe; it then says nothing.
  }
}

// Each operation draws from its own stream, so that shrinking one away (StateWorkload::skip)
// leaves every other operation as it was.
uint64_t OpSeed(uint64_t seed, int client, int op) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(client) * 0xBF58476D1CE4E5B9ULL +
               static_cast<uint64_t>(op) * 0x94D049BB133111EBULL + 1;
  x ^= x >> 31;
  return x;
}

Task<void> SleepUntil(sim::Ctx& ctx, Recorder* rec, int64_t t) {
  const int64_t now = rec->world->now_ms();
  if (t > now) co_await ctx.sleep(t - now);
}

bool LosesWrites(const sim::FaultOptions& f) {
  // A restart or a failover loses acknowledged writes by itself (Redis without fsync): the
  // properties about acknowledged writes then say nothing.
  return f.restart || f.failover_lag_commands >= 0;
}

bool MovesClocks(const sim::FaultOptions& f) {
  return f.clock_skew_ms_max > 0 || f.clock_jump.numerator > 0;
}

std::unique_ptr<state::StateNamespace> OldPod(sim::Ctx& ctx, const StateWorkload& w,
                                              const state::VersionScripts& scripts,
                                              const std::string& name, state::NamespaceOptions o,
                                              const std::string& connection) {
  if (w.old_version.empty()) return nullptr;
  return state::MakeNamespace(w.old_version, ctx, scripts, std::string("provider-under-test"), name, o,
                              connection);
}

// quota-safety, concurrently: at one instant every client sets its own key in a shared
// maxEntries-1 namespace; 100 ms later client 0 reads them all in one millisecond.
Task<void> QuotaRace(sim::Ctx& ctx, const StateWorkload& w, const state::VersionScripts& scripts,
                     int id, int i, Recorder* rec) {
  if (w.clients < 2) co_return;
  state::NamespaceOptions one{.default_ttl_ms = 60000, .max_ttl_ms = 120000, .max_entries = 1};
  const std::string name = "race-" + std::to_string(i);
  auto ns = state::MakeNamespace(w.version, ctx, scripts, std::string("provider-under-test"), name, one,
                                 std::string("conn"));
  const int64_t slot = kDefaultEpochMs + 1000 * (i + 1);
  co_await SleepUntil(ctx, rec, slot);
  state::Json value = state::Json::object();
  value["client"] = id;
  try {
    co_await ns->set("c" + std::to_string(id), value, std::nullopt);
  } catch (const state::StateError&) {
  }
  if (id != 0) co_return;
  co_await SleepUntil(ctx, rec, slot + 100);
  const int64_t t0 = rec->world->now_ms();
  int live = 0;
  try {
    for (int c = 0; c < w.clients; ++c) {
      std::optional<state::StateValue> got = co_await ns->get("c" + std::to_string(c));
      live += got ? 1 : 0;
    }
  } catch (const state::StateError&) {
    co_return;
  }
  if (live > 1 && rec->world->now_ms() == t0)
    rec->quota_violations.push_back(
        std::to_string(w.clients) + " clients each set their own key at +" +
        std::to_string(slot - kDefaultEpochMs) + "ms in namespace " + name +
        " (maxEntries 1); at +" + std::to_string(t0 - kDefaultEpochMs) + "ms " +
        std::to_string(live) + " of those keys are live");
}

// acknowledged-writes-visible: one random operation on a shared key, recorded.
Task<void> AckStep(sim::Ctx& ctx, state::StateNamespace& ns, int id, int i, Prng& rng, Recorder* rec) {
  AckOp a;
  a.key = "a" + std::to_string(rng.below(2));
  a.actor = id;
  const uint64_t roll = rng.below(100);
  a.ttl = rng.chance({1, 2}) ? std::optional<int64_t>(rng.range(10, 300)) : std::nullopt;
  state::Json value = state::Json::object();
  value["client"] = id;
  value["n"] = i;
  a.inv_seq = rec->seq++;
  a.inv_ms = rec->world->now_ms();
  bool rejected = false;
  try {
    if (roll < 40) {
      a.kind = AckOp::Kind::kSet;
      co_await ns.set(a.key, value, a.ttl);
    } else if (roll < 65) {
      a.kind = AckOp::Kind::kGet;
      std::optional<state::StateValue> v = co_await ns.get(a.key);
      a.found = v.has_value();
    } else if (roll < 90) {
      a.kind = AckOp::Kind::kList;
      std::vector<state::StateValue> rows = co_await ns.list(std::nullopt, a.key);
      for (const auto& r : rows) a.found |= r.key == a.key;
    } else {
      a.kind = AckOp::Kind::kDelete;
      co_await ns.del(a.key);
    }
  } catch (const state::StateError& e) {
    if (e.transport()) {
      a.ambiguous = true;
    } else {
      rejected = true;  // quota and policy errors write nothing
    }
  }
  a.ret_seq = rec->seq++;
  a.ret_ms = rec->world->now_ms();
  a.exp_lo = ns.expiry_is_relative() ? a.inv_ms + ns.last_ttl_ms() : ns.last_expires_at_ms();
  if (!rejected) rec->ack_ops.push_back(a);
  co_await ctx.sleep(rng.range(0, 20));
}

// quota-liveness: fill a maxEntries-2 namespace, free one entry (delete by this pod or an old
// pod, or expiry), then a third key must be accepted.
Task<void> LivenessProbe(sim::Ctx& ctx, const StateWorkload& w, const state::VersionScripts& scripts,
                         int id, int i, Prng& rng, Recorder* rec) {
  state::NamespaceOptions two{.default_ttl_ms = 60000, .max_ttl_ms = 120000, .max_entries = 2};
  const std::string name = "live" + std::to_string(id) + "-" + std::to_string(i);
  auto ns = state::MakeNamespace(w.version, ctx, scripts, std::string("provider-under-test"), name,
                                 two, std::string("conn"));
  auto old = OldPod(ctx, w, scripts, name, two, "conn");
  const bool by_expiry = rng.chance({1, 3});
  const bool old_deletes = old && rng.chance({1, 2});
  const int64_t ttl = rng.range(5, 40);
  state::Json value = state::Json::object();
  value["n"] = i;
  try {
    const std::optional<int64_t> ttl_a = by_expiry ? std::optional<int64_t>(ttl) : std::nullopt;
    co_await ns->set("a", value, ttl_a);
    co_await ns->set("b", value, std::nullopt);
    std::string how;
    if (by_expiry) {
      co_await ctx.sleep(ttl + 1);
      how = "a expired (TTL " + std::to_string(ttl) + " ms)";
    } else if (old_deletes) {
      co_await old->del("a");
      how = "an old pod (" + w.old_version + ") deleted a";
    } else {
      co_await ns->del("a");
      how = "delete(a)";
    }
    const int64_t t = rec->world->now_ms() - kDefaultEpochMs;
    std::string refused;
    try {
      co_await ns->set("c", value, std::nullopt);
    } catch (const state::StateError& e) {
      if (e.quota() && !MovesClocks(w.faults) && !LosesWrites(w.faults)) refused = e.what();
    }
    if (!refused.empty()) {
      // co_await is not allowed in a handler: what get(a) says now, outside it.
      std::optional<state::StateValue> a = co_await ns->get("a");
      rec->liveness_violations.push_back(
          "namespace " + name + " (maxEntries 2): set(a), set(b), then " + how + "; at +" +
          std::to_string(t) + "ms set(c) failed with \"" + refused + "\"; get(a) now returns " +
          (a ? "its value: the delete was lost" : "null: only b is live"));
    }
  } catch (const state::StateError&) {
  }
}

// reads-never-quota-error: an old pod writes two v1 values, a new pod fills its scope of a
// maxEntries-2 namespace, then reads everything.
Task<void> ReadQuotaProbe(sim::Ctx& ctx, const StateWorkload& w, const state::VersionScripts& scripts,
                          int id, int i, Recorder* rec) {
  state::NamespaceOptions two{.default_ttl_ms = 60000, .max_ttl_ms = 120000, .max_entries = 2};
  const std::string name = "rq" + std::to_string(id) + "-" + std::to_string(i);
  auto ns = state::MakeNamespace(w.version, ctx, scripts, std::string("provider-under-test"), name,
                                 two, std::string("conn"));
  auto old = OldPod(ctx, w, scripts, name, two, "conn");
  state::Json value = state::Json::object();
  value["n"] = i;
  try {
    if (old) {
      co_await old->set("old1", value, std::nullopt);
      co_await old->set("old2", value, std::nullopt);
    }
    co_await ns->set("new1", value, std::nullopt);
    co_await ns->set("new2", value, std::nullopt);
  } catch (const state::StateError&) {
    // A full namespace may refuse these writes; the reads below must still work.
  }
  static const char* kKeys[] = {"old1", "old2", "new1"};
  for (const char* key : kKeys) {
    const int64_t t = rec->world->now_ms() - kDefaultEpochMs;
    try {
      co_await ns->get(key);
    } catch (const state::StateError& e) {
      if (e.quota())
        rec->read_quota_violations.push_back(
            "namespace " + name + " (maxEntries 2)" +
            (old ? ", an old pod (" + w.old_version + ") wrote old1 and old2" : std::string()) +
            ", this pod wrote new1 and new2; at +" + std::to_string(t) + "ms get(\"" + key +
            "\") failed with \"" + e.what() + "\"");
    }
  }
  try {
    co_await ns->list(std::nullopt, std::nullopt);
  } catch (const state::StateError& e) {
    if (e.quota())
      rec->read_quota_violations.push_back("namespace " + name + ": list() failed with \"" +
                                           std::string(e.what()) + "\"");
  }
}

// rolling-deploy-writes-visible: what this client last wrote to its key, through either pod.
struct RollingState {
  bool known = true;                    // false after an ambiguous write, until the next one
  std::optional<std::string> expected;  // JSON of the last acknowledged value; nullopt: none
  int64_t alive_until = 0;              // the entry's expiry (server time)
  std::string last;                     // the acknowledged write, described
  std::vector<std::string> log;         // every step so far, described
};

// One step on key r<id>: a set / get / list / delete through the old or the new pod, in
// sequence, so the last acknowledged write is what any read must return.
Task<void> RollingStep(sim::Ctx& ctx, int id, int i, const StateWorkload& w, state::StateNamespace& ns,
                       state::StateNamespace* old, Prng& rng, RollingState* st, Recorder* rec) {
  const bool use_old = old && rng.chance({1, 2});
  state::StateNamespace& pod = use_old ? *old : ns;
  const std::string who = use_old ? "old pod (" + w.old_version + ")" : "new pod (" + w.version + ")";
  const std::string key = "r" + std::to_string(id);
  const uint64_t roll = rng.below(100);
  state::Json value = state::Json::object();
  value["w"] = i;
  value["by"] = use_old ? "old" : "new";
  const int64_t t = rec->world->now_ms() - kDefaultEpochMs;
  try {
    if (roll < 40) {
      co_await pod.set(key, value, std::nullopt);
      st->known = true;
      st->expected = state::Stringify(value);
      st->alive_until = rec->world->now_ms() + w.ns.default_ttl_ms - 50;
      st->last = "at +" + std::to_string(t) + "ms the " + who + " set " + key + " to " + *st->expected;
      st->log.push_back(st->last);
    } else if (roll < 85) {
      const bool by_list = roll >= 70;
      std::optional<std::string> got;
      if (by_list) {
        std::vector<state::StateValue> rows = co_await pod.list(std::nullopt, key);
        for (const auto& r : rows)
          if (r.key == key) got = state::Stringify(r.value);
      } else {
        std::optional<state::StateValue> v = co_await pod.get(key);
        if (v) got = state::Stringify(v->value);
      }
      const bool expired = st->expected && rec->world->now_ms() > st->alive_until;
      const std::string step = "at +" + std::to_string(t) + "ms the " + who + " " +
                               (by_list ? "list()" : "get(\"" + key + "\")") + " read " + got.value_or("null");
      st->log.push_back(step);
      if (st->known && !expired && got != st->expected && !LosesWrites(w.faults) && rec->rolling_violations.size() < 3) {
        std::string steps;
        for (const auto& l : st->log) steps += "\n    " + l;
        rec->rolling_violations.push_back(
            "client " + std::to_string(id) + ", in sequence on " + key + ":" + steps +
            "\n    expected " + st->expected.value_or("null") + " (" +
            (st->last.empty() ? "nothing was written" : st->last) + ")");
      }
    } else {
      co_await pod.del(key);
      st->known = true;
      st->expected.reset();
      st->last = "at +" + std::to_string(t) + "ms the " + who + " deleted " + key;
      st->log.push_back(st->last);
    }
  } catch (const state::StateError& e) {
    if (e.transport() && roll < 40) st->known = false;
    if (e.transport() && roll >= 85) st->known = false;
  }
  co_await ctx.sleep(rng.range(0, 10));
}

// model-matches-implementation: one client, in sequence, fault-free, so that every call has
// one instant; each result must be what model/state_store answers at that instant.
std::string ErrorKind(const state::StateError& e) {
  if (e.quota()) return "quota";
  if (e.transport()) return "transport";
  return "policy";
}

std::string ShowEntry(const std::optional<model::StoreEntry>& e) {
  if (!e) return "null";
  return e->key + "=" + state::Stringify(e->value) + " v" + std::to_string(e->version) + " createdAt " +
         state::IsoTime(e->created_at) + " expiresAt " + state::IsoTime(e->expires_at);
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

Task<void> SequentialClient(sim::Ctx& ctx, const StateWorkload& w, const state::VersionScripts& scripts,
                            Recorder* rec) {
  Prng rng(w.seed * 1000003);
  const bool legacy = w.version == "beta24";
  model::StateStoreModel m({.scoped = state::HasConnectionScopes(w.version), .legacy_claim = legacy,
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
    state::NamespaceOptions so{.provider_scope = provider_ns, .default_ttl_ms = 40, .max_ttl_ms = 100,
                               .max_entries = 3, .max_value_bytes = 256};
    model::StoreNamespaceOptions mo{provider_ns, 40, 100, 3, 256};
    const std::string key = "k" + std::to_string(rng.below(4));
    uint64_t roll = rng.below(100);
    if (!legacy && roll >= 88) roll = rng.below(20) + 25;  // no old pods: a set instead
    const uint64_t ttl_roll = rng.below(10);
    const std::optional<int64_t> ttl = ttl_roll < 3   ? std::optional<int64_t>(rng.range(1, 60))
                                       : ttl_roll == 3 ? std::optional<int64_t>(150)
                                                       : std::nullopt;
    state::Json value = rng.chance({1, 3}) ? TrickyValue(rng) : state::Json::object();
    if (value.is_object() && value.empty()) value["n"] = i;
    auto ns = state::MakeNamespace(w.version, ctx, scripts, provider, ns_name, so, connection);
    const std::string who = (connection ? *connection : std::string("missing connection")) + " " + ns_name;
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
        what = "set(" + key + ", " + value.dump() + ", ttl " + (ttl ? std::to_string(*ttl) : "default") + ")";
        model::StoreResult r = m.set(connection, ns_name, mo, key, value, ttl, now);
        want = r.error.empty() ? ShowEntry(r.entry) : r.error + " error";
        std::optional<model::StoreEntry> v = FromImpl(co_await ns->set(key, value, ttl));
        same = r.error.empty() && Same(v, r.entry);
        got = ShowEntry(v);
      } else if (roll < 60) {
        const std::optional<model::StoreEntry> seen = m.peek(connection, ns_name, mo, key, now);
        const int64_t expected = rng.chance({3, 4}) ? (seen ? seen->version : 0) : rng.range(0, 3);
        what = "compareAndSet(" + key + ", " + std::to_string(expected) + ", " + value.dump() + ")";
        model::StoreResult r = m.compare_and_set(connection, ns_name, mo, key, expected, value, ttl, now);
        want = r.error.empty() ? (r.ok ? "ok " : "fail ") + ShowEntry(r.entry) : r.error + " error";
        state::CasResult c2 = co_await ns->compare_and_set(key, expected, value, ttl);
        std::optional<model::StoreEntry> v = FromImpl(c2.ok ? c2.value : c2.current);
        got = (c2.ok ? "ok " : "fail ") + ShowEntry(v);
        same = r.error.empty() && r.ok == c2.ok && Same(v, r.entry);
        // Rule 9 of the model: a stale expectation may win over the policy error.
        if (r.error == "policy" && !c2.ok && (seen ? seen->version : 0) != expected && Same(v, seen)) same = true;
      } else if (roll < 68) {
        what = "delete(" + key + ")";
        m.del(connection, ns_name, mo, key, now);
        co_await ns->del(key);
        got = want = "done";
      } else if (roll < 80) {
        const std::optional<std::string> prefix = rng.chance({1, 2}) ? std::optional<std::string>(key) : std::nullopt;
        const std::optional<int64_t> limit = rng.chance({1, 4}) ? std::optional<int64_t>(rng.range(0, 2)) : std::nullopt;
        what = "list(prefix " + prefix.value_or("-") + ", limit " + (limit ? std::to_string(*limit) : "default") + ")";
        model::StoreResult all = m.list(connection, ns_name, mo, prefix, std::nullopt, now);
        const int64_t n = std::min<int64_t>(all.matching, std::max<int64_t>(0, limit.value_or(mo.max_entries)));
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
      if (rec->world->now_ms() != now) want += " (the call took virtual time: run this property without faults)";
      std::string out = "the implementation and model/state_store disagree; the last operations:";
      for (size_t k = log.size() > 8 ? log.size() - 8 : 0; k < log.size(); ++k) out += "\n    " + log[k];
      out += "\n    the model answers: " + want;
      rec->model_violations.push_back(out);
      co_return;
    }
  }
}

// legacy-readable, legacy-adopted-once and rolling-deploy-writes-visible. Client 0 is the old
// pod in the first two; every client runs both versions in the third.
Task<void> LegacyClient(sim::Ctx& ctx, int id, const StateWorkload& w,
                        const state::VersionScripts& scripts, Recorder* rec) {
  Prng rng(w.seed * 1000003 + static_cast<uint64_t>(id));
  const std::string connection = "conn" + std::to_string(id);
  auto ns = state::MakeNamespace(w.version, ctx, scripts, std::string("provider-under-test"), "ns",
                                 w.ns, connection);
  auto old = OldPod(ctx, w, scripts, "ns", w.ns, connection);
  const int64_t start = kDefaultEpochMs;
  RollingState rolling;
  for (int i = 0; i < w.ops; ++i) {
    if (w.skip.count({id, i})) continue;  // shrunk away
    rng = Prng(OpSeed(w.seed, id, i));
    if (w.legacy_read_probes) {
      // At T the old pod writes L<i>; each client reads it twice, at T+50.. and T+120..
      const std::string key = "L" + std::to_string(i);
      const int64_t slot = start + 200 * i;
      co_await SleepUntil(ctx, rec, slot);
      if (id == 0 && old) {
        state::Json value = state::Json::object();
        value["v1"] = i;
        rec->legacy_keys[key].value = state::Stringify(value);
        rec->legacy_keys[key].old_version = w.old_version;
        try {
          co_await old->set(key, value, std::nullopt);
          rec->legacy_keys[key].acked_ms = rec->world->now_ms();
        } catch (const state::StateError&) {
        }
      }
      const int64_t first = slot + 50 + rng.range(0, 20);
      const int64_t second = slot + 120 + rng.range(0, 20);
      const int64_t times[2] = {first, second};
      for (int64_t at : times) {
        co_await SleepUntil(ctx, rec, at);
        auto& reads = rec->legacy_keys[key].reads;
        reads.push_back(LegacyKey::Read{connection, rec->world->now_ms(), 0, std::nullopt, false});
        const size_t mine = reads.size() - 1;
        try {
          std::optional<state::StateValue> got = co_await ns->get(key);
          LegacyKey::Read& r = rec->legacy_keys[key].reads[mine];
          if (got) r.got = state::Stringify(got->value);
          r.ret_ms = rec->world->now_ms();
          r.done = true;
        } catch (const state::StateError&) {
          // Unknown outcome: the claim may have adopted the value for this connection.
        }
      }
      continue;
    }
    if (w.adoption_probes) {
      state::Json value = state::Json::object();
      try {
        if (id == 0 && old) {
          value["origin"] = "v1-" + std::to_string(i);
          co_await old->set("A", value, std::nullopt);
        } else {
          // Six connections share the new pods, so that fresh scopes keep meeting v1 values.
          const std::string scope = "c" + std::to_string(rng.below(6));
          auto pod = state::MakeNamespace(w.version, ctx, scripts, std::string("provider-under-test"),
                                          "ns", w.ns, scope);
          const uint64_t roll = rng.below(100);
          value["origin"] = "s" + std::to_string(id) + "-" + std::to_string(i);
          std::optional<state::StateValue> seen;
          if (roll < 60) {
            seen = co_await pod->get("A");
          } else if (roll < 75) {
            co_await pod->set("A", value, std::nullopt);
          } else if (roll < 90) {
            state::CasResult r = co_await pod->compare_and_set("A", rng.range(0, 2), value, std::nullopt);
            seen = r.ok ? r.value : r.current;
          } else {
            co_await pod->del("A");
          }
          const std::string origin = seen && seen->value.is_object() ? seen->value.value("origin", "") : "";
          if (origin.rfind("v1-", 0) == 0) rec->adopters[origin].insert(scope);
        }
      } catch (const state::StateError&) {
      }
      co_await ctx.sleep(rng.range(0, 30));
      continue;
    }
    if (w.rolling_probes) {
      co_await RollingStep(ctx, id, i, w, *ns, old.get(), rng, &rolling, rec);
      continue;
    }
  }
}

Task<void> Client(sim::Ctx& ctx, int id, StateWorkload w, const state::VersionScripts* scripts,
                  Recorder* rec) {
  // The workload's own choices come from a stream of the seed per client, so they do not
  // depend on the schedule.
  Prng rng(w.seed * 1000003 + static_cast<uint64_t>(id));
  // Isolation probes give each client its own connection; the other workloads share one.
  const std::string connection =
      w.isolation_probes && !w.broken_scope_for_negative_test ? "conn" + std::to_string(id) : "conn";
  if (w.model_probes) {
    if (id == 0) co_await SequentialClient(ctx, w, *scripts, rec);
    co_return;
  }
  if (w.legacy_read_probes || w.adoption_probes || w.rolling_probes) {
    co_await LegacyClient(ctx, id, w, *scripts, rec);
    co_return;
  }
  auto ns_ptr = state::MakeNamespace(w.version, ctx, *scripts, std::string("provider-under-test"),
                                     "ns", w.ns, connection);
  state::StateNamespace& ns = *ns_ptr;
  std::map<std::string, int64_t> seen_version;
  auto memory = std::make_unique<state::memory_beta30::Namespace>(ctx.clock(), w.ns);
  for (int i = 0; i < w.ops; ++i) {
    if (w.skip.count({id, i})) continue;  // shrunk away
    rng = Prng(OpSeed(w.seed, id, i));
    if (w.isolation_probes) {
      try {
        if (rng.chance({1, 2})) {
          state::Json mine = state::Json::object();
          mine["owner"] = id;
          co_await ns.set("shared", mine, std::nullopt);
        } else {
          std::optional<state::StateValue> got = co_await ns.get("shared");
          if (got && got->value.value("owner", -1) != id)
            rec->isolation_violations.push_back(
                "client " + std::to_string(id) + " (connection " + connection + ") read " +
                state::Stringify(got->value) + ", written by another connection");
        }
      } catch (const state::StateError&) {
      }
      co_await ctx.sleep(rng.range(0, 5));
      continue;
    }
    if (w.memory_probes) {
      const std::string key = "mm" + std::to_string(id);
      co_await MemoryLockstep(ctx, ns, *memory, key, rng, i, w.probe_ttl_max_ms, rec);
      if (!rec->memory_violations.empty()) co_return;  // the first disagreement says it all
      co_await ctx.sleep(rng.range(0, 30));
      continue;
    }
    if (w.read_back_probes) {
      const std::string probe_key = "rb" + std::to_string(id) + "-" + std::to_string(i);
      co_await ReadBackProbe(ctx, ns, probe_key, TrickyValue(rng), rec);
      continue;
    }
    if (w.quota_probes) {
      co_await QuotaProbe(ctx, w, *scripts, id, i, rng.range(1, 50), rec);
      co_await QuotaRace(ctx, w, *scripts, id, i, rec);
      continue;
    }
    if (w.liveness_probes) {
      co_await LivenessProbe(ctx, w, *scripts, id, i, rng, rec);
      continue;
    }
    if (w.read_quota_probes) {
      co_await ReadQuotaProbe(ctx, w, *scripts, id, i, rec);
      continue;
    }
    if (w.ack_probes) {
      co_await AckStep(ctx, ns, id, i, rng, rec);
      continue;
    }
    if (w.expiry_probes) {
      // Keys of their own, so that other clients' writes do not blur the boundary.
      const std::string probe_key = "probe" + std::to_string(id) + "-" + std::to_string(i);
      co_await ExpiryProbe(ctx, ns, probe_key, rng.range(1, 50), rec);
      continue;
    }
    const std::string key = "k" + std::to_string(rng.below(w.keys));
    uint64_t roll = rng.below(100);
    if (w.cas_only && roll >= 35 && roll < 60) roll += 25;  // a set becomes a compareAndSet
    Op o;
    o.partition = key;
    o.actor = id;
    o.invoke = rec->seq++;
    o.invoke_ms = rec->world->now_ms();
    const state::Json value = {{"client", id}, {"n", i}};
    const std::optional<int64_t> ttl =
        rng.chance({1, 3}) ? std::optional<int64_t>(rng.range(5, 200)) : std::nullopt;
    bool keep = true;
    try {
      if (roll < 35) {
        o.op.kind = RegisterOp::Kind::kGet;
        std::optional<state::StateValue> v = co_await ns.get(key);
        o.op.ok = v.has_value();
        if (v) {
          o.op.out_value = state::Stringify(v->value);
          o.op.out_version = v->version;
          seen_version[key] = v->version;
        }
      } else if (roll < 60) {
        o.op.kind = RegisterOp::Kind::kSet;
        o.op.value = state::Stringify(value);
        state::StateValue v = co_await ns.set(key, value, ttl);
        o.op.out_version = v.version;
        seen_version[key] = v.version;
      } else if (roll < 90) {
        o.op.kind = RegisterOp::Kind::kCas;
        o.op.value = state::Stringify(value);
        o.op.expected = rng.chance({3, 4}) ? seen_version[key] : rng.range(0, 3);
        state::CasResult r = co_await ns.compare_and_set(key, o.op.expected, value, ttl);
        o.op.ok = r.ok;
        if (r.ok) {
          o.op.out_version = r.value->version;
        } else if (r.current) {
          o.op.out_version = r.current->version;
          o.op.out_value = state::Stringify(r.current->value);
        }
        seen_version[key] = o.op.out_version;
      } else {
        o.op.kind = RegisterOp::Kind::kDelete;
        co_await ns.del(key);
        seen_version[key] = 0;
      }
    } catch (const state::StateError& e) {
      if (e.transport()) {
        o.ambiguous = true;  // the outcome is unknown
      } else {
        keep = false;        // quota and policy errors write nothing
      }
    }
    o.op.expires_at_ms = ns.last_expires_at_ms();
    if (ns.expiry_is_relative() && (o.op.kind == RegisterOp::Kind::kSet || o.op.kind == RegisterOp::Kind::kCas)) {
      // beta.3: SET ... PX ttl runs somewhere inside the operation (server time).
      o.op.expires_at_ms = o.invoke_ms + ns.last_ttl_ms();
      o.op.expires_hi_ms = (o.ambiguous ? o.invoke_ms + 600000 : rec->world->now_ms()) + ns.last_ttl_ms();
    }
    if (!o.ambiguous) {
      o.ret = rec->seq++;
      o.ret_ms = rec->world->now_ms();
    }
    if (keep) rec->history.push_back(o);
    const int64_t pause = rng.range(0, 15);
    co_await ctx.sleep(pause);
  }
}


// acknowledged-writes-visible: a read that found nothing although an acknowledged write
// returned before it began, outlives it, and no other operation that could remove the entry
// (a delete, an ambiguous write, a write that expires sooner) overlaps the gap.
std::vector<std::string> CheckAcknowledgedWrites(const std::vector<AckOp>& ops) {
  using K = AckOp::Kind;
  for (const AckOp& r : ops) {
    if ((r.kind != K::kGet && r.kind != K::kList) || r.ambiguous || r.found) continue;
    for (const AckOp& w : ops) {
      if (w.kind != K::kSet || w.ambiguous || w.key != r.key || w.ret_seq >= r.inv_seq) continue;
      if (w.exp_lo < r.ret_ms) continue;
      bool removable = false;
      for (const AckOp& o : ops) {
        if (&o == &w || o.key != r.key || (o.kind != K::kSet && o.kind != K::kDelete)) continue;
        const bool overlaps = o.inv_seq < r.ret_seq && (o.ambiguous || o.ret_seq > w.inv_seq);
        if (overlaps && (o.kind == K::kDelete || o.ambiguous || o.exp_lo < r.ret_ms)) removable = true;
      }
      if (removable) continue;
      auto at = [](int64_t ms) { return "+" + std::to_string(ms - kDefaultEpochMs) + "ms"; };
      auto set_of = [&](const AckOp& x) {
        return "client " + std::to_string(x.actor) + " set(\"" + x.key + "\", ttl " +
               (x.ttl ? std::to_string(*x.ttl) : std::string("default")) + ") acknowledged at " +
               at(x.ret_ms) + " (alive through " + at(x.exp_lo) + ")";
      };
      std::string later;
      for (const AckOp& o : ops)
        if (&o != &w && o.key == r.key && o.kind == K::kSet && o.ret_seq > w.inv_seq && o.inv_seq < r.ret_seq)
          later += ", then " + set_of(o);
      return {set_of(w) + later + "; then client " + std::to_string(r.actor) + "'s " +
              (r.kind == K::kGet ? "get" : "list") + " from " + at(r.inv_ms) + " to " + at(r.ret_ms) +
              " found nothing, though no delete ran and every write keeps the key alive through " +
              at(r.ret_ms)};
    }
  }
  return {};
}

// legacy-readable: someone reads each live v1 value, and whoever read it keeps reading it.
std::vector<std::string> CheckLegacyReads(const std::map<std::string, LegacyKey>& keys) {
  std::vector<std::string> out;
  auto at = [](int64_t ms) { return "+" + std::to_string(ms - kDefaultEpochMs) + "ms"; };
  for (const auto& [key, k] : keys) {
    if (k.acked_ms < 0) continue;
    std::vector<LegacyKey::Read> after;
    bool unknown = false;  // a read failed or never returned: it may have adopted the value
    for (const auto& r : k.reads) {
      if (!r.done) unknown = true;  // even one that began before the write was acknowledged
      if (r.done && r.inv_ms > k.acked_ms) after.push_back(r);
    }
    if (after.empty()) continue;
    // A read that overlapped the write and returned it counts too: it adopted the value.
    bool anyone = false;
    std::map<std::string, bool> had;
    for (const auto& r : k.reads)
      if (r.done && r.inv_ms <= k.acked_ms && r.got == k.value) anyone = had[r.connection] = true;
    std::set<std::string> readers;
    for (const auto& r : after) readers.insert(r.connection);
    for (const auto& r : after) {
      if (r.got && *r.got != k.value) {
        out.push_back("connection " + r.connection + " read " + key + " as " + *r.got +
                      " at " + at(r.inv_ms) + "; the old pod wrote " + k.value);
        break;
      }
      if (r.got) anyone = had[r.connection] = true;
      if (!r.got && had[r.connection]) {
        out.push_back("connection " + r.connection + " read the v1 value of " + key +
                      ", then null at " + at(r.inv_ms) + " while it was live");
        break;
      }
    }
    if (!anyone && !unknown)
      out.push_back("an old pod (" + k.old_version + ") wrote " + key + " = " + k.value + " at " +
                    at(k.acked_ms) + " (live for the namespace's 2000 ms default TTL); all " +
                    std::to_string(after.size()) + " reads after it, by " +
                    std::to_string(readers.size()) + " connections of the new version, returned null");
    if (out.size() >= 3) break;
  }
  return out;
}

}  // namespace

std::vector<std::string> StateVersions() { return state::PortedVersions(); }

std::string FirstCompileError(const ScriptCatalog& scripts, const std::string& version) {
  sim::EmulatorBackend emulator;
  for (const auto& f : scripts.all()) {
    if (f.file.rfind("state/" + version + "/", 0) != 0) continue;
    const Reply r = emulator.execute({"SCRIPT", "LOAD", f.body}, kDefaultEpochMs);
    if (r.is_error()) return f.file + ": " + r.str;
  }
  return "";
}

std::string RollingFrom(const std::string& version) {
  if (version == "beta23") return "beta3";
  if (version == "beta24") return "beta23";
  if (version == "beta30") return "beta3";
  return "";
}

bool Applies(const std::string& property, const std::string& version, const std::string& old_version) {
  const bool old_is_v1 = old_version == "beta3" || old_version == "beta23";
  if (property == "memory-matches-redis") return version == "beta30";
  if (property == "connection-isolation") return state::HasConnectionScopes(version);
  if (property == "legacy-readable") return old_is_v1;
  if (property == "legacy-adopted-once") return old_is_v1 && state::HasConnectionScopes(version);
  if (property == "rolling-deploy-writes-visible") return !old_version.empty();
  return true;
}

std::vector<std::string> StateProperties() {
  return {"cas-versions-linearizable", "expiry-boundary-get-list", "value-read-back",
          "quota-safety", "memory-matches-redis", "connection-isolation",
          "acknowledged-writes-visible", "quota-liveness", "reads-never-quota-error",
          "legacy-readable", "legacy-adopted-once", "rolling-deploy-writes-visible",
          "model-matches-implementation"};
}

std::string FaultsSetAside(const std::string& property) {
  if (property == "acknowledged-writes-visible" || property == "legacy-readable" ||
      property == "legacy-adopted-once" || property == "rolling-deploy-writes-visible")
    return "restart, failover";  // they lose acknowledged writes by themselves
  if (property == "quota-liveness") return "restart, failover, skew, clock-jump";
  if (property == "expiry-boundary-get-list" || property == "quota-safety" ||
      property == "memory-matches-redis")
    return "latency, delay, pause, skew, clock-jump";  // the probes aim at one exact millisecond
  if (property == "model-matches-implementation") return "all";
  return "";
}

namespace {
void SetAside(sim::FaultOptions& f, const std::string& which) {
  if (which == "all") {
    f = sim::FaultOptions{};
    return;
  }
  if (which.find("restart") != std::string::npos) f.restart = false;
  if (which.find("failover") != std::string::npos) f.failover_lag_commands = -1;
  if (which.find("skew") != std::string::npos) f.clock_skew_ms_max = 0;
  if (which.find("clock-jump") != std::string::npos) f.clock_jump = Ratio{0, 1};
  if (which.find("latency") != std::string::npos) f.latency_ms_min = f.latency_ms_max = 0;
  if (which.find("delay") != std::string::npos) f.delayed_request = Ratio{0, 1};
  if (which.find("pause") != std::string::npos) f.actor_pause = Ratio{0, 1};
}
}  // namespace

StateWorkload ForProperty(StateWorkload w, const std::string& property) {
  SetAside(w.faults, FaultsSetAside(property));
  if (property == "cas-versions-linearizable") return w;
  if (property == "expiry-boundary-get-list") {
    w.expiry_probes = true;
    return w;
  }
  if (property == "value-read-back") {
    w.read_back_probes = true;
    return w;
  }
  if (property == "quota-safety") {
    w.quota_probes = true;
    return w;
  }
  if (property == "memory-matches-redis") {
    w.memory_probes = true;
    return w;
  }
  if (property == "connection-isolation") {
    w.isolation_probes = true;
    return w;
  }
  if (property == "acknowledged-writes-visible") {
    w.ack_probes = true;
    return w;
  }
  if (property == "quota-liveness") {
    w.liveness_probes = true;
    return w;
  }
  if (property == "reads-never-quota-error") {
    w.read_quota_probes = true;
    return w;
  }
  if (property == "legacy-readable") {
    w.legacy_read_probes = true;
    return w;
  }
  if (property == "legacy-adopted-once") {
    w.adoption_probes = true;
    return w;
  }
  if (property == "rolling-deploy-writes-visible") {
    w.rolling_probes = true;
    return w;
  }
  if (property == "model-matches-implementation") {
    w.model_probes = true;  // fault-free: one instant per call, see SequentialClient
    return w;
  }
  throw std::invalid_argument("unknown property '" + property + "'");
}

namespace {
const std::vector<std::string>* ProbeFindings(const StateRun& r, const std::string& property) {
  if (property == "expiry-boundary-get-list") return &r.boundary_violations;
  if (property == "value-read-back") return &r.read_back_violations;
  if (property == "quota-safety") return &r.quota_violations;
  if (property == "memory-matches-redis") return &r.memory_violations;
  if (property == "connection-isolation") return &r.isolation_violations;
  if (property == "acknowledged-writes-visible") return &r.ack_violations;
  if (property == "quota-liveness") return &r.liveness_violations;
  if (property == "reads-never-quota-error") return &r.read_quota_violations;
  if (property == "legacy-readable") return &r.legacy_read_violations;
  if (property == "legacy-adopted-once") return &r.adoption_violations;
  if (property == "rolling-deploy-writes-visible") return &r.rolling_violations;
  if (property == "model-matches-implementation") return &r.model_violations;
  return nullptr;
}
}  // namespace

bool Violates(const StateRun& r, const std::string& property) {
  const auto* findings = ProbeFindings(r, property);
  return findings ? !findings->empty() : !r.verdict.ok;
}

std::string DescribeViolation(const StateRun& r, const std::string& property) {
  if (const auto* findings = ProbeFindings(r, property)) {
    std::string out;
    for (const auto& v : *findings) out += "  " + v + "\n";
    return out;
  }
  return "  on key " + r.verdict.partition + ":\n  actor invoke return invoke_ms return_ms operation -> result\n" +
         FormatCounterexample(r);
}

std::set<std::pair<int, int>> ParseSkip(const std::string& list) {
  std::set<std::pair<int, int>> out;
  for (size_t start = 0; start < list.size();) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    const std::string item = list.substr(start, end - start);
    int c = -1, i = -1;
    char tail = 0;
    if (std::sscanf(item.c_str(), "%d:%d%c", &c, &i, &tail) != 2 || c < 0 || i < 0)
      throw std::invalid_argument("--skip takes CLIENT:OP pairs such as 0:1,2:3, not '" + item + "'");
    out.insert({c, i});
    start = end + 1;
  }
  return out;
}

std::string FormatSkip(const std::set<std::pair<int, int>>& skip) {
  std::string out;
  for (const auto& [c, i] : skip) out += (out.empty() ? "" : ",") + std::to_string(c) + ":" + std::to_string(i);
  return out;
}

Scenario LoadScenario(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("cannot read scenario " + path);
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw std::invalid_argument(path + " is not a JSON object");
  Scenario s;
  try {
    if (j.at("system") != "state") throw std::invalid_argument("only system \"state\" scenarios exist");
    s.name = j.at("name");
    s.property = j.at("property");
    s.trigger = j.value("trigger", "");
    s.severity = j.value("severity", "");
    s.expect = j.value("expect", "violated");
    s.faults = j.value("faults", "none");
    s.version = j.at("version");
    s.workload.version = s.version;
    s.old_version = j.value("old_version", "");
    s.workload.old_version = s.old_version;
    s.workload.seed = j.at("seed").get<uint64_t>();
    s.workload.clients = j.at("clients").get<int>();
    s.workload.ops = j.at("ops").get<int>();
    s.workload.cas_only = j.value("ops_mix", "all") == "cas";
    s.workload.skip = ParseSkip(j.value("skip", ""));
    s.workload.faults = sim::FaultOptions::Parse(s.faults);
    s.workload = ForProperty(s.workload, s.property);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(path + ": " + e.what());
  }
  if (s.workload.clients < 1 || s.workload.ops < 1)
    throw std::invalid_argument(path + ": clients and ops must be at least 1");
  return s;
}

StateRun RunStateWorkload(const StateWorkload& w, const ScriptCatalog& scripts, RedisServer* server) {
  if (!state::IsPorted(w.version) || (!w.old_version.empty() && !state::IsPorted(w.old_version)))
    throw std::invalid_argument("state version '" + w.version + "' or '" + w.old_version +
                                "' has no client port (ported: beta3, beta23, beta24, beta30)");
  auto bodies = std::make_unique<state::VersionScripts>(scripts);
  std::unique_ptr<sim::Backend> backend;
  if (server) {
    backend = std::make_unique<RealBackend>(*server);
  } else {
    backend = std::make_unique<sim::EmulatorBackend>();
  }
  sim::RandomWalk walk;
  sim::WorldOptions o;
  o.seed = w.seed;
  o.horizon_ms = 600000;
  o.faults = w.faults;
  sim::World world(o, *backend, walk);
  Recorder rec;
  rec.world = &world;
  for (int c = 0; c < w.clients; ++c)
    world.add_actor("client" + std::to_string(c),
                    [&, c](sim::Ctx& ctx) { return Client(ctx, c, w, bodies.get(), &rec); });
  StateRun out;
  out.run = world.run();
  out.trace = world.trace();
  if (!out.run.error.empty()) throw std::runtime_error(out.run.error);
  out.history = rec.history;
  out.boundary_violations = rec.boundary_violations;
  out.read_back_violations = rec.read_back_violations;
  out.quota_violations = rec.quota_violations;
  out.memory_violations = rec.memory_violations;
  out.isolation_violations = rec.isolation_violations;
  out.liveness_violations = rec.liveness_violations;
  out.read_quota_violations = rec.read_quota_violations;
  out.rolling_violations = rec.rolling_violations;
  out.model_violations = rec.model_violations;
  for (const auto& line : out.trace)
    if (line.find(" exec \"EVAL") != std::string::npos && line.find("-> (error) ") != std::string::npos)
      out.script_errors.push_back(line);
  if (!LosesWrites(w.faults)) {
    out.ack_violations = CheckAcknowledgedWrites(rec.ack_ops);
    out.legacy_read_violations = CheckLegacyReads(rec.legacy_keys);
  }
  for (const auto& [origin, scopes] : rec.adopters)
    if (scopes.size() > 1) {
      std::string list;
      for (const auto& c : scopes) list += (list.empty() ? "" : ", ") + c;
      out.adoption_violations.push_back("the old pod's write " + origin + " of A was read by " +
                                        std::to_string(scopes.size()) + " connections: " + list);
    }
  model::StateRegisterModel model;
  out.verdict = lin::Checker<model::StateRegisterModel>(model).check(out.history);
  return out;
}

std::string FormatCounterexample(const StateRun& r) {
  std::string out;
  for (const auto& o : r.history)
    if (o.partition == r.verdict.partition) out += "  " + lin::FormatRegisterOperation(o) + "\n";
  return out;
}

}  // namespace testbed::props
