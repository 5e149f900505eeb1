#include "properties/state/state_props.h"
#include "properties/state/state_workloads.h"

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

using namespace detail;

// versions-never-repeat: a version names one write of a key, also across a delete or an
// expiry in between (the API's name: compareAndSet(expectedVersion) means "nobody wrote since
// I read this version"). Write, delete or let expire, write again; a repeated version, and a
// compareAndSet at the first write's version that succeeds against the second write, are
// findings.
Task<void> VersionProbe(sim::Ctx& ctx, state::StateNamespace& ns, const std::string& key,
                        bool by_expiry, Recorder* rec) {
  const int64_t since = rec->world->now_ms();
  const std::string gap = by_expiry ? "expiry" : "delete";
  try {
    const state::Json first = {{"write", "first"}}, second = {{"write", "second"}},
                      third = {{"write", "stale"}};
    std::optional<int64_t> short_ttl;
    if (by_expiry) short_ttl = 5;
    const state::StateValue a = co_await ns.set(key, first, short_ttl);
    if (by_expiry)
      co_await ctx.sleep(30);
    else
      co_await ns.del(key);
    const state::StateValue b = co_await ns.set(key, second, std::nullopt);
    if (b.version != a.version) co_return;
    const std::string what =
        "set(" + key + ", " + state::Stringify(first) + (by_expiry ? ", ttl 5 ms" : "") +
        ") was acknowledged as version " + std::to_string(a.version) + "; " +
        (by_expiry ? "30 ms later, after it expired" : "after delete(" + key + ")") + ", set(" +
        key + ", " + state::Stringify(second) + ") was acknowledged as version " +
        std::to_string(b.version) + " too";
    rec->version_violations.push_back(
        {"version-repeated-after-" + gap, what, {}, {Since(ctx, since)}});
    const state::CasResult r = co_await ns.compare_and_set(key, a.version, third, std::nullopt);
    if (r.ok)
      rec->version_violations.push_back(
          {"stale-cas-succeeds-after-" + gap,
           what + "; compareAndSet(" + key + ", expected " + std::to_string(a.version) +
               ", the first write's version) then succeeded, overwriting the second write",
           {},
           {Since(ctx, since)}});
  } catch (const state::StateError&) {
  }
}

// cas-versions-linearizable (and hot-key-linearizable): one random operation on `key`, recorded
// in the history as `actor`'s. The draws after the key's come from rng.
Task<void> PlainOp(sim::Ctx& ctx, state::StateNamespace& ns, const StateWorkload& w, int actor,
                   int i, std::string key, Prng& rng, std::map<std::string, int64_t>& seen_version,
                   Recorder* rec) {
  uint64_t roll = rng.below(100);
  if (w.cas_only && roll >= 35 && roll < 60) roll += 25;  // a set becomes a compareAndSet
  Op o;
  o.partition = key;
  o.actor = actor;
  o.invoke = rec->seq++;
  o.invoke_ms = rec->world->now_ms();
  const state::Json value = {{"client", actor}, {"n", i}};
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
      keep = false;  // quota and policy errors write nothing
    }
  }
  o.op.expires_at_ms = ns.last_expires_at_ms();
  if (ns.expiry_is_relative() &&
      (o.op.kind == RegisterOp::Kind::kSet || o.op.kind == RegisterOp::Kind::kCas)) {
    // beta.3: SET ... PX ttl runs somewhere inside the operation (server time).
    o.op.expires_at_ms = o.invoke_ms + ns.last_ttl_ms();
    o.op.expires_hi_ms =
        (o.ambiguous ? o.invoke_ms + 600000 : rec->world->now_ms()) + ns.last_ttl_ms();
  }
  if (!o.ambiguous) {
    o.ret = rec->seq++;
    o.ret_ms = rec->world->now_ms();
  }
  if (keep) rec->history.push_back(o);
  const int64_t pause = rng.range(0, 15);
  co_await ctx.sleep(pause);
}

// hot-key-linearizable: thread `t` of client `id` (the client's own thread is 0) runs the
// client's operations i with i % kHotKeyThreadsPerClient == t on one key, as actor
// id + clients * t: 3 clients of 3 threads are 9 actors on one key, with w.ops operations per
// client as in every workload.
Task<void> HotKeyThread(sim::Ctx& ctx, int id, int t, StateWorkload w,
                        const state::VersionScripts* scripts, Recorder* rec) {
  auto ns = state::MakeNamespace(w.version, ctx, *scripts, std::string("provider-under-test"), "ns",
                                 w.ns, std::string("conn"));
  std::map<std::string, int64_t> seen_version;
  for (int i = t; i < w.ops; i += kHotKeyThreadsPerClient) {
    if (w.skip.count({id, i})) continue;  // shrunk away
    Prng rng(OpSeed(w.seed, id, i));
    co_await PlainOp(ctx, *ns, w, id + w.clients * t, i, "hot", rng, seen_version, rec);
  }
}

Task<void> Client(sim::Ctx& ctx, int id, StateWorkload w, const state::VersionScripts* scripts,
                  Recorder* rec) {
  // The workload's own choices come from a stream of the seed per client, so they do not
  // depend on the schedule.
  Prng rng(w.seed * 1000003 + static_cast<uint64_t>(id));
  // Isolation probes give each client its own connection; the other workloads share one.
  const std::string connection = w.isolation_probes && !w.broken_scope_for_negative_test
                                     ? "conn" + std::to_string(id)
                                     : "conn";
  if (w.model_probes) {
    if (id == 0) co_await SequentialClient(ctx, w, *scripts, rec);
    co_return;
  }
  if (w.names_probes) {
    if (id == 0) co_await NamesLockstepClient(ctx, w, *scripts, rec);
    co_return;
  }
  if (w.hot_key_probes) {
    std::vector<sim::ThreadId> threads;
    for (int t = 1; t < kHotKeyThreadsPerClient; ++t)
      threads.push_back(ctx.spawn("hot" + std::to_string(t), [=](sim::Ctx& c) -> Task<void> {
        return HotKeyThread(c, id, t, w, scripts, rec);
      }));
    co_await HotKeyThread(ctx, id, 0, w, scripts, rec);
    for (sim::ThreadId t : threads) co_await ctx.join(t);
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
  // memory-matches-redis: a namespace of the client's own on each backend (so that list() and
  // the quota see only its calls), maxEntries 2 over three keys, maxTtl at the probe's TTL bound;
  // the names carry characters a key-building or glob-matching store may mistake
  // (names-are-opaque), drawn once per client from a stream of its own.
  static const char* kOdd[] = {"", ":*", "?[\\]", "\xC3\xA9\xF0\x9F\x99\x82"};
  const std::string odd = kOdd[Prng(OpSeed(w.seed, id, 0) ^ 0x6b657973ULL).below(4)];
  const std::string lockstep_space = "mm" + std::to_string(id) + odd;
  state::NamespaceOptions lockstep_options = w.ns;
  lockstep_options.max_entries = 2;
  if (w.probe_ttl_max_ms > 0) lockstep_options.max_ttl_ms = w.probe_ttl_max_ms;
  const std::vector<std::string> lockstep_keys = {"k0" + odd, "k1" + odd, "k2" + odd};
  // foreign-values-consistent: the same namespace as an old pod of the deploy sees it.
  std::unique_ptr<state::StateNamespace> foreign_old;
  if (w.foreign_probes) foreign_old = OldPod(ctx, w, *scripts, "ns", w.ns, connection);
  std::unique_ptr<state::StateNamespace> lockstep_redis;
  std::unique_ptr<state::memory_beta30::Namespace> memory;
  if (w.memory_probes) {
    lockstep_redis =
        state::MakeNamespace(w.version, ctx, *scripts, std::string("provider-under-test"),
                             lockstep_space, lockstep_options, connection);
    memory = std::make_unique<state::memory_beta30::Namespace>(ctx.clock(), lockstep_options);
  }
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
                {"reads-other-connection",
                 "client " + std::to_string(id) + " (connection " + connection + ") read " +
                     state::Stringify(got->value) + ", written by another connection"});
        }
      } catch (const state::StateError&) {
      }
      co_await ctx.sleep(rng.range(0, 5));
      continue;
    }
    if (w.memory_probes) {
      co_await MemoryLockstep(ctx, *lockstep_redis, *memory, lockstep_keys, lockstep_options, rng,
                              i, w.probe_ttl_max_ms, lockstep_space, rec);
      co_await ctx.sleep(rng.range(0, 10));
      continue;
    }
    if (w.adversarial_probes) {
      // A depth limit is not a race: one draw per run that may be deep (the first client's
      // first) finds it in three runs of eight, and the deep values' JSON work, the same on
      // both sides of the emulator/redis-server comparison, stays a small part of a check.
      const AdversarialCase& c = AdversarialValue(rng, /*deep=*/id == 0 && i == 0);
      co_await AdversarialProbe(ctx, ns, "adv" + std::to_string(id) + "-" + std::to_string(i), c,
                                rec);
      continue;
    }
    if (w.foreign_probes) {
      co_await ForeignValueProbe(ctx, ns, foreign_old.get(),
                                 "fv" + std::to_string(id) + "-" + std::to_string(i), rng, rec);
      continue;
    }
    if (w.version_probes) {
      co_await VersionProbe(ctx, ns, "ver" + std::to_string(id) + "-" + std::to_string(i),
                            rng.chance({1, 2}), rec);
      continue;
    }
    if (w.counter_probes) {
      try {
        co_await ns.increment("counter", "n", 1, std::nullopt);
        ++rec->counter_acked;
      } catch (const state::StateError& e) {
        if (e.transport()) ++rec->counter_unknown;  // it may have landed
      }
      co_await ctx.sleep(rng.range(0, 5));
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
      co_await SkewQuotaProbe(ctx, w, *scripts, id, i, /*safety=*/true, rec);
      continue;
    }
    if (w.liveness_probes) {
      co_await LivenessProbe(ctx, w, *scripts, id, i, rng, rec);
      co_await SkewQuotaProbe(ctx, w, *scripts, id, i, /*safety=*/false, rec);
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
      // After the last probe (so that the ones before keep their instants): an entry adopted
      // from an old pod, read past the new pods' maxTtl.
      if (i == w.ops - 1) co_await AdoptedEntryProbe(ctx, w, *scripts, id, i, rec);
      continue;
    }
    const std::string key = "k" + std::to_string(rng.below(w.keys));
    co_await PlainOp(ctx, ns, w, id, i, key, rng, seen_version, rec);
  }
  if (w.counter_probes && ++rec->counter_clients_done == w.clients) {
    // The last client to finish: every other increment has returned (or never will).
    const int64_t since = rec->world->now_ms();
    try {
      std::optional<state::StateValue> got = co_await ns.get("counter");
      const double n =
          got && got->value.is_object() && got->value.value("n", state::Json()).is_number()
              ? got->value["n"].get<double>()
              : 0;
      const int64_t acked = rec->counter_acked, unknown = rec->counter_unknown;
      const std::string what =
          std::to_string(w.clients) + " clients had " + std::to_string(acked) +
          " increment(\"counter\", \"n\", 1) calls acknowledged (" + std::to_string(unknown) +
          " more of unknown outcome); then get(\"counter\") read n = " + state::Stringify(n);
      const double lost = static_cast<double>(acked) - n;
      if (lost > 0)
        rec->counter_violations.push_back({"lost-increment",
                                           what + ": " + state::Stringify(lost) +
                                               (lost == 1 ? " acknowledged increment is lost"
                                                          : " acknowledged increments are lost"),
                                           {},
                                           {Since(ctx, since)}});
      else if (n > static_cast<double>(acked + unknown))
        rec->counter_violations.push_back(
            {"extra-increment", what + ": more than every increment", {}, {Since(ctx, since)}});
    } catch (const state::StateError&) {
    }
  }
}

// acknowledged-writes-visible: a read that found nothing although an acknowledged write
// returned before it began, outlives it, and no other operation that could remove the entry
// (a delete, an ambiguous write, a write that expires sooner) overlaps the gap.
std::vector<Finding> CheckAcknowledgedWrites(const std::vector<AckOp>& ops) {
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
        if (overlaps && (o.kind == K::kDelete || o.ambiguous || o.exp_lo < r.ret_ms))
          removable = true;
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
        if (&o != &w && o.key == r.key && o.kind == K::kSet && o.ret_seq > w.inv_seq &&
            o.inv_seq < r.ret_seq)
          later += ", then " + set_of(o);
      return {
          {r.kind == K::kGet ? "get-misses-live-write" : "list-misses-live-write",
           set_of(w) + later + "; then client " + std::to_string(r.actor) + "'s " +
               (r.kind == K::kGet ? "get" : "list") + " from " + at(r.inv_ms) + " to " +
               at(r.ret_ms) +
               " found nothing, though no delete ran and every write keeps the key alive through " +
               at(r.ret_ms)}};
    }
  }
  return {};
}

}  // namespace

bool Applies(const std::string& property, const std::string& version,
             const std::string& old_version) {
  return FindStateProperty(property).info.applies(version, old_version);
}

const std::vector<StateProperty>& StatePropertyTable() {
  using F = sim::Fault;
  using W = StateWorkload;
  using R = StateRun;
  auto always = [](const std::string&, const std::string&) { return true; };
  auto old_is_v1 = [](const std::string& old) { return old == "beta3" || old == "beta23"; };
  // Restart, failover and key loss (eviction) lose acknowledged writes by themselves; the probes
  // aim at one exact millisecond; the model answers one instant per call.
  const sim::FaultSet loses_writes = {F::kRestart, F::kFailover, F::kKeyLoss};
  const sim::FaultSet moves_the_instant = {F::kLatency, F::kDelay, F::kReorder,
                                           F::kPause,   F::kSkew,  F::kClockJump};
  static const std::vector<StateProperty> kTable = {
      {{"cas-versions-linearizable",
        "get, set, compareAndSet and delete on each key, with versions, are linearizable (an "
        "ambiguous operation may or may not have taken effect; an expiry inside an operation may "
        "go either way)",
        always,
        {},
        {{"duplicate-version", "two concurrent writers were acknowledged with the same version"},
         {"version-reused", "a key's version repeats: a later write gets an earlier one's version"},
         {"stale-cas-succeeds",
          "a compareAndSet succeeds against a version an acknowledged write had replaced"},
         {"get-misses-write", "get() finds nothing after an acknowledged write that is alive"},
         {"version-continues-after-delete",
          "a write that lands after a concurrent delete is numbered from the deleted value"},
         {"no-single-order",
          "the operations on a key cannot be put in one order that explains their results (a "
          "core no narrower class describes; its shape is in the text)"}}},
       nullptr,
       &R::lin_violations},
      {{"hot-key-linearizable",
        "the same contract as cas-versions-linearizable on one hot key: every client runs "
        "three threads on it (3 clients: 9 actors), which share out the client's operations",
        always,
        {},
        {{"duplicate-version", "two concurrent writers were acknowledged with the same version"},
         {"version-reused", "a key's version repeats: a later write gets an earlier one's version"},
         {"stale-cas-succeeds",
          "a compareAndSet succeeds against a version an acknowledged write had replaced"},
         {"get-misses-write", "get() finds nothing after an acknowledged write that is alive"},
         {"version-continues-after-delete",
          "a write that lands after a concurrent delete is numbered from the deleted value"},
         {"no-single-order",
          "the operations on the hot key cannot be put in one order that explains their results "
          "(a core no narrower class describes; its shape is in the text)"}}},
       &W::hot_key_probes,
       &R::lin_violations},
      {{"expiry-boundary-get-list",
        "an entry that get() returns at an instant is listed by list() at the same instant",
        always,
        moves_the_instant,
        {{"list-drops-at-expiry-instant",
          "at an entry's expiry millisecond get() returns it and list() leaves it out"},
         {"list-misses-adopted-entry",
          "an entry adopted from an old pod, with a TTL past the new pods' maxTtl, outlives the "
          "index its claim refreshed: get() returns it and list() leaves it out"}}},
       &W::expiry_probes,
       &R::boundary_violations},
      {{"value-read-back",
        "a value reads back exactly as written (JSON equality)",
        always,
        {},
        {{"empty-array-becomes-object", "an empty array reads back as an empty object"},
         {"number-bent", "a number reads back as a different number"},
         {"string-bent", "a string reads back with different characters"},
         {"structure-bent", "a value reads back with a different structure"}}},
       &W::read_back_probes,
       &R::read_back_violations},
      {{"quota-safety",
        "a namespace never holds more live entries than maxEntries",
        always,
        {F::kLatency, F::kDelay, F::kReorder, F::kPause},
        {{"overfill", "a namespace accepts a key past maxEntries while its entries are live"},
         {"expiry-instant-overfill",
          "at an entry's expiry millisecond a new key is accepted while get() still returns the "
          "old one"},
         {"concurrent-overfill",
          "keys set at one instant by several clients all stay live past "
          "maxEntries"},
         {"skew-overfill",
          "a client whose clock runs ahead admits a key while another is live by the server's "
          "clock"}}},
       &W::quota_probes,
       &R::quota_violations},
      {{"memory-matches-redis",
        "the memory backend answers as the Redis backend does",
        [](const std::string& v, const std::string&) { return v == "beta30"; },
        moves_the_instant,
        {{"differs-on-get", "get() answers differently on the two backends"},
         {"differs-on-set", "set() answers differently on the two backends"},
         {"differs-on-compareAndSet", "compareAndSet() answers differently on the two backends"},
         {"differs-on-delete", "delete() answers differently on the two backends"},
         {"differs-on-list", "list() returns other rows on the two backends"},
         {"differs-on-list-order",
          "list() returns the same rows in another order (memory: insertion order, Redis: by "
          "expiry)"},
         {"differs-on-list-limit",
          "list(limit) keeps other rows of the same matches on the two backends"},
         {"value-differs",
          "a row comes back with another value (the same version and times) on the two "
          "backends"},
         {"error-precedence",
          "a compareAndSet with a stale version and a ttl or value the policy refuses fails on "
          "one backend and throws on the other"},
         {"cas-refused-at-current-version",
          "compareAndSet at the current version fails on Redis, reporting that version as "
          "current, and succeeds in memory"},
         {"script-error",
          "a valid call fails with a script error on Redis (the SDK reports Redis as "
          "unavailable) where the memory backend answers"}},
        true},
       &W::memory_probes,
       &R::memory_violations},
      {{"connection-isolation",
        "a connection never reads another connection's data",
        [](const std::string& v, const std::string&) { return state::HasConnectionScopes(v); },
        {},
        {{"reads-other-connection", "a connection reads a value another connection wrote"}}},
       &W::isolation_probes,
       &R::isolation_violations},
      {{"acknowledged-writes-visible",
        "after a write is acknowledged, get() and list() find the key until it is overwritten, "
        "deleted or expires",
        always,
        loses_writes,
        {{"get-misses-live-write", "get() finds nothing while an acknowledged write is alive"},
         {"list-misses-live-write",
          "list() leaves out a key while an acknowledged write is alive"}}},
       &W::ack_probes,
       &R::ack_violations},
      {{"quota-liveness",
        "once an entry is deleted or expired, a namespace at its quota accepts a new key (old "
        "pods deleting, in a rolling deploy)",
        always,
        {F::kRestart, F::kFailover, F::kKeyLoss},
        {{"deleted-slot-refused", "after delete() the namespace still refuses a new key"},
         {"expired-slot-refused", "after an entry expires the namespace still refuses a new key"},
         {"old-pod-delete-leaks-slot",
          "after an old pod deletes an entry the namespace still refuses a new key"},
         {"skew-expired-slot-refused",
          "a client whose clock runs behind refuses a key after an entry expired by the "
          "server's clock"}}},
       &W::liveness_probes,
       &R::liveness_violations},
      {{"reads-never-quota-error",
        "get() and list() never fail with a quota error",
        always,
        {},
        {{"get-fails-with-quota-error", "get() fails with a quota error"},
         {"list-fails-with-quota-error", "list() fails with a quota error"}}},
       &W::read_quota_probes,
       &R::read_quota_violations},
      {{"legacy-readable",
        "a live v1 value an old pod wrote is readable after the upgrade by the first concrete "
        "connection that asks, and stays readable by it",
        [=](const std::string&, const std::string& old) { return old_is_v1(old); },
        loses_writes,
        {{"v1-value-unreadable", "no connection of the new version can read a live v1 value"},
         {"reads-other-value", "a connection reads a v1 key as a value the old pod never wrote"},
         {"loses-adopted-value", "a connection reads a v1 value, then null while it is live"}}},
       &W::legacy_read_probes,
       &R::legacy_read_violations},
      {{"legacy-adopted-once",
        "one v1 write is adopted by at most one v2 scope",
        [=](const std::string& v, const std::string& old) {
          return old_is_v1(old) && state::HasConnectionScopes(v);
        },
        loses_writes,
        {{"adopted-by-several-scopes", "one v1 write is read as its own by several connections"}}},
       &W::adoption_probes,
       &R::adoption_violations},
      {{"rolling-deploy-writes-visible",
        "with old and new pods on one key, in sequence, every read returns the last acknowledged "
        "write",
        [](const std::string&, const std::string& old) { return !old.empty(); },
        // Reorder too: the probe judges one client's calls in sequence, and a request held past
        // its timeout lands after the client's later writes (no fault of the store).
        {F::kRestart, F::kFailover, F::kKeyLoss, F::kReorder},
        {{"loses-write", "a pod reads null after its own version's acknowledged write"},
         {"loses-write-across-versions",
          "a pod reads null after the other version's acknowledged write"},
         {"reads-stale", "a pod reads an older value after its own version's write"},
         {"reads-stale-across-versions",
          "a pod reads an older value after the other version's "
          "write"},
         {"resurrects-deleted", "a pod reads a value after its own version's delete"},
         {"resurrects-deleted-across-versions",
          "a pod reads a value after the other version's delete"}}},
       &W::rolling_probes,
       &R::rolling_violations},
      {{"increments-all-kept",
        "concurrent increment() calls on one key keep every acknowledged increment: the total "
        "is their sum (an atomic counter, as the operation's name and the memory backend's "
        "single-threaded increment promise)",
        always,
        loses_writes,
        {{"lost-increment", "an acknowledged increment is missing from the counter's total"},
         {"extra-increment", "the counter holds more than every increment that was made"}}},
       &W::counter_probes,
       &R::counter_violations},
      {{"versions-never-repeat",
        "a key's version names one write: a write after a delete or an expiry gets a version "
        "no earlier write had, so a compareAndSet at a version read before the delete cannot "
        "succeed against a later value (the strongest reading of compareAndSet(expectedVersion))",
        always,
        loses_writes,
        {{"version-repeated-after-delete",
          "a write after delete() was acknowledged with the version of a write before it"},
         {"version-repeated-after-expiry",
          "a write after an expiry was acknowledged with the version of the expired write"},
         {"stale-cas-succeeds-after-delete",
          "a compareAndSet at a version from before a delete succeeded against a later value"},
         {"stale-cas-succeeds-after-expiry",
          "a compareAndSet at a version from before an expiry succeeded against a later value"}}},
       &W::version_probes,
       &R::version_violations},
      {{"valid-calls-never-script-error",
        "valid calls never fail with a script error, and a stored value can always be "
        "compare-and-set again at its version (values a JavaScript caller may store: deep "
        "nesting, -0, 1e21, long numbers, nested empties, unicode)",
        always,
        {},
        {{"script-error",
          "a valid call fails with a script error (the SDK reports Redis as "
          "unavailable)"},
         {"cas-refused-at-current-version",
          "compareAndSet at the version set() returned fails, reporting that version as "
          "current"}},
        true},
       &W::adversarial_probes,
       &R::adversarial_violations},
      {{"foreign-values-consistent",
        "a key holding a value this SDK did not write (an older writer's or an operator's: not "
        "JSON, not an envelope, a version that is not a number, keys twice, another key order, "
        "2^53 + 1) "
        "reads the same through every operation: when get() returns null, compareAndSet(0) "
        "creates the key; when it returns version n, compareAndSet(n) replaces it, and get() "
        "then returns the new value",
        always,
        loses_writes,
        {{"absent-but-cas-refused",
          "get() returns null, and compareAndSet(0) fails reporting current = null"},
         {"read-but-cas-refused", "get() returns version n, and compareAndSet(n) fails"},
         {"cas-not-visible", "compareAndSet succeeds and get() then returns something else"}},
        true},
       &W::foreign_probes,
       &R::foreign_violations},
      {{"model-matches-implementation",
        "a sequential, fault-free run answers every call as the pure model of the whole contract "
        "(model/state_store.h) does at that instant",
        always,
        sim::FaultSet::All(),
        {{"disagrees-on-get", "get() answers other than the model"},
         {"disagrees-on-set", "set() answers other than the model"},
         {"disagrees-on-compareAndSet", "compareAndSet() answers other than the model"},
         {"disagrees-on-delete", "delete() answers other than the model"},
         {"disagrees-on-list", "list() answers other than the model"},
         {"disagrees-on-increment", "increment() answers other than the model"},
         {"disagrees-on-legacy-write", "an old pod's write leaves a state the model does not"}}},
       &W::model_probes,
       &R::model_violations},
      {{"names-are-opaque",
        "provider ids, connection ids, namespaces and keys are opaque strings: the same calls "
        "answer the same under names with ':', '*', '?', '[', '\\', the empty string or unicode "
        "as under plain ones (no two names share data, no name matches another)",
        always,
        sim::FaultSet::All(),
        {{"names-change-get", "get() answers differently under the odd names"},
         {"names-change-set", "set() answers differently under the odd names"},
         {"names-change-compareAndSet", "compareAndSet() answers differently under the odd names"},
         {"names-change-list", "list() answers differently under the odd names"},
         {"names-change-increment", "increment() answers differently under the odd names"}}},
       &W::names_probes,
       &R::names_violations},
  };
  return kTable;
}

const StateProperty& FindStateProperty(const std::string& name) {
  for (const auto& p : StatePropertyTable())
    if (p.info.name == name) return p;
  throw std::invalid_argument("unknown property '" + name + "'");
}

std::vector<std::string> StateProperties() {
  std::vector<std::string> out;
  for (const auto& p : StatePropertyTable()) out.push_back(p.info.name);
  return out;
}

StateWorkload ForProperty(StateWorkload w, const std::string& property) {
  const StateProperty& p = FindStateProperty(property);
  p.info.sets_aside.DisableIn(w.faults);
  if (p.probe) w.*p.probe = true;
  return w;
}

const std::vector<Finding>& FindingsOf(const StateRun& r, const std::string& property) {
  return r.*FindStateProperty(property).findings;
}

std::vector<Finding>& FindingsOf(StateRun& r, const std::string& property) {
  return r.*FindStateProperty(property).findings;
}

bool Violates(const StateRun& r, const std::string& property) {
  return !FindingsOf(r, property).empty();
}

std::string DescribeViolation(const StateRun& r, const std::string& property) {
  std::string out;
  for (const auto& v : FindingsOf(r, property)) out += "  " + v.text + "\n";
  return out;
}

StateRun RunStateWorkload(const StateWorkload& w, const ScriptCatalog& scripts, RedisServer* server,
                          sim::Strategy* strategy) {
  for (const std::string& v : w.more_old_versions)
    if (!state::IsPorted(v))
      throw std::invalid_argument("state version '" + v + "' has no client port");
  if (!state::IsPorted(w.version) || (!w.old_version.empty() && !state::IsPorted(w.old_version)))
    throw std::invalid_argument("state version '" + w.version + "' or '" + w.old_version +
                                "' has no client port (ported: beta3, beta23, beta24, beta30)");
  auto bodies = std::make_unique<state::VersionScripts>(scripts);
  std::unique_ptr<sim::Backend> backend = MakeBackend(server);
  sim::RandomWalk walk;
  sim::WorldOptions o;
  o.hash_trace = false;  // RunOutcome::trace_hash() hashes on demand
  o.seed = w.seed;
  o.horizon_ms = 600000;
  o.faults = w.faults;
  sim::World world(o, *backend, strategy ? *strategy : walk);
  const int64_t start_ms = o.start_ms;
  Recorder rec;
  rec.world = &world;
  for (int c = 0; c < w.clients; ++c)
    world.add_actor("client" + std::to_string(c),
                    [&, c](sim::Ctx& ctx) { return Client(ctx, c, w, bodies.get(), &rec); });
  StateRun out;
  out.run = world.run();
  out.trace = world.take_trace();
  if (!out.run.error.empty()) throw std::runtime_error(out.run.error);
  // rec dies with this frame: what it recorded moves into the run.
  out.history = std::move(rec.history);
  out.boundary_violations = std::move(rec.boundary_violations);
  out.read_back_violations = std::move(rec.read_back_violations);
  out.quota_violations = std::move(rec.quota_violations);
  out.memory_violations = std::move(rec.memory_violations);
  out.isolation_violations = std::move(rec.isolation_violations);
  out.liveness_violations = std::move(rec.liveness_violations);
  out.read_quota_violations = std::move(rec.read_quota_violations);
  out.rolling_violations = std::move(rec.rolling_violations);
  out.model_violations = std::move(rec.model_violations);
  out.counter_violations = std::move(rec.counter_violations);
  out.version_violations = std::move(rec.version_violations);
  out.adversarial_violations = std::move(rec.adversarial_violations);
  out.foreign_violations = std::move(rec.foreign_violations);
  out.names_violations = std::move(rec.names_violations);
  for (const auto& e : out.trace.events)
    if (e.kind == sim::EventKind::kReply && out.trace.argv_of(e)[0] == "EVAL" && e.reply.is_error())
      out.script_errors.push_back(out.trace.Render(e));
  // ForProperty sets aside the faults that lose acknowledged writes for these two.
  out.ack_violations = CheckAcknowledgedWrites(rec.ack_ops);
  out.legacy_read_violations = CheckLegacyReads(rec.legacy_keys);
  for (const auto& [origin, scopes] : rec.adopters)
    if (scopes.size() > 1) {
      std::string list;
      for (const auto& c : scopes) list += (list.empty() ? "" : ", ") + c;
      out.adoption_violations.push_back(
          {"adopted-by-several-scopes", "the old pod's write " + origin + " of A was read by " +
                                            std::to_string(scopes.size()) +
                                            " connections: " + list});
    }
  model::StateRegisterModel model;
  // Nine actors on one key, some operations of unknown outcome under faults: a history the
  // search may not finish. A smaller budget ends such a run in about a second with no verdict
  // (reported as incomplete, never as a pass) instead of tens of seconds.
  out.verdict = (w.hot_key_probes ? lin::Checker<model::StateRegisterModel>(model, 100'000)
                                  : lin::Checker<model::StateRegisterModel>(model))
                    .check(lin::PinObservedWrites(out.history));
  // Every rejected key, each named by the 1-minimal core of its history (lin::RejectedCore).
  for (const std::string& key : out.verdict.rejected) {
    lin::RegisterHistory on_key;
    for (const auto& o : out.history)
      if (o.partition == key) on_key.push_back(o);
    const lin::RegisterHistory core =
        lin::RejectedCore(lin::PinObservedWrites(on_key), w.hot_key_probes ? 20'000 : 2'000'000);
    // Times (ms, expiries too) relative to the run's start, as the trace prints them.
    std::string text = lin::RegisterSentence(core, key) + ".\n";
    if (w.hot_key_probes)
      text += "  (" + std::to_string(w.clients * kHotKeyThreadsPerClient) +
              " actors on one key: client c's thread t is actor c + " + std::to_string(w.clients) +
              " * t, and the sentence's \"client N\" is actor N)\n";
    text += "  the history of " + key +
            " (ms since the run's start):\n  actor invoke return invoke_ms return_ms "
            "operation -> result\n";
    for (const auto& o : lin::RelativeTimes(on_key, start_ms))
      text += "  " + lin::FormatRegisterOperation(o) + "\n";
    text += "  the operations that cannot be ordered (dropping any one of them leaves an order";
    const bool pinned_in_core = std::any_of(core.begin(), core.end(), [&](const auto& c) {
      return !c.ambiguous && std::any_of(on_key.begin(), on_key.end(), [&](const auto& o) {
        return o.ambiguous && o.actor == c.actor && o.invoke == c.invoke;
      });
    });
    if (pinned_in_core)
      text +=
          "; a write whose reply was lost shows the version a later read returned its value "
          "at";
    text += "):";
    std::vector<Involved> involved;
    for (const auto& o : lin::RelativeTimes(core, start_ms)) {
      text += "\n    " + lin::FormatRegisterOperation(o);
      involved.push_back({"client" + std::to_string(o.actor % w.clients), o.invoke_ms,
                          o.ret_ms == lin::kNever ? INT64_MAX : o.ret_ms});
    }
    // A core no named class describes has a shape, but shapes are too many to repeat from run
    // to run (beta.3's unguarded writes interleave in new ways every few hundred runs, and the
    // hot key's cores are longer still), so a shape names no class a baseline could hold: it is
    // "no-single-order", with its shape in the text.
    std::string cls = lin::RegisterClass(core);
    if (cls.empty()) {
      cls = "no-single-order";
      text += "\n  shape: " + lin::RegisterShape(core);
    }
    out.lin_violations.push_back({cls, text, lin::RegisterShape(core), involved});
  }
  return out;
}

std::string FormatCounterexample(const StateRun& r) {
  std::string out;
  for (const auto& o : r.history)
    if (o.partition == r.verdict.partition) out += "  " + lin::FormatRegisterOperation(o) + "\n";
  return out;
}

}  // namespace testbed::props
