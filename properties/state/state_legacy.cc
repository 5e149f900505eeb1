// Rolling deploys and the legacy (v1 -> v2) properties: see state_workload.h.
#include "properties/state/state_workload.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <cstdio>

#include "model/state_store.h"
#include "sim/clock.h"

namespace testbed::props::state {

using model::RegisterOp;

namespace {

// rolling-deploy-writes-visible: what this client last wrote to its key, through either pod.
struct RollingState {
  bool known = true;                    // false after an ambiguous write, until the next one
  std::optional<std::string> expected;  // JSON of the last acknowledged value; nullopt: none
  int64_t alive_until = 0;              // the entry's promised expiry (server time)
  // What the store set for the last acknowledged write: the key's expiry on the server right
  // after it returned (no other client writes this key), absent when it has none. A writer whose
  // clock runs behind sends an expiresAt the server has already passed (expired-early-by-writer-
  // clock, as acknowledged-writes-visible names it).
  std::optional<int64_t> stored_until;
  bool gone_at_return = false;  // the key was already gone when that write returned
  int64_t returned_ms = 0;      // when that write returned (server time)
  int64_t promised_ms = 0;      // alive at least through: the write's start plus its ttl (server)
  std::optional<int64_t> sent_expires_at;  // the expiresAt the writer computed (absolute versions)
  std::string last;                        // the acknowledged write, described
  std::string last_by;                     // the version of the pod that made it
  std::vector<std::string> log;            // every step so far, described
  int64_t seen_version = 0;                // the version the last read returned (0: none)
};

// A read in sequence on key r<id> that did not return the last acknowledged write: the finding,
// named by what the read got instead, which versions wrote and read, and whose clock moved the
// expiry.
void ReportRead(sim::Ctx& ctx, int id, const std::string& key, const StateWorkload& w,
                const RollingState* st, const std::optional<std::string>& got, bool by_list,
                const std::string& pod_version, int64_t t, Recorder* rec) {
  std::string steps;
  for (const auto& l : st->log) steps += "\n    " + l;
  // The class: what the read got instead, and whether another version wrote last: an old
  // pod reading after the new version's write or delete (old-pod-*), or a pod reading
  // after an older version's (*-across-versions).
  const std::string kind = !st->expected ? kResurrectsDeleted : (got ? kReadsStale : kLosesWrite);
  const bool across = !st->last.empty() && st->last_by != pod_version;
  // A read of null after the store itself expired the write before its promised instant:
  // the writer's own clock set that expiry (a PXAT it computed from Date.now()).
  const int64_t read_at = rec->world->now_ms();
  const bool early = st->expected && !got && st->stored_until && *st->stored_until < read_at;
  // list() sees an entry only through the index, trimmed (ZREMRANGEBYSCORE -inf now) and
  // filtered by the caller's own clock: a reader whose clock has passed the stored expiry
  // drops an entry that is still alive on the server.
  const int64_t reader_clock = ctx.now_ms();
  const bool fast = !early && by_list && st->expected && !got && st->stored_until &&
                    reader_clock >= *st->stored_until;
  const std::string cls = early  ? "expired-early-by-writer-clock"
                          : fast ? "list-misses-by-fast-clock"
                          : across && st->last_by == w.version
                              ? "old-pod-" + kind
                              : absl::StrCat(kind, across ? "-across-versions" : "");
  std::string why;
  if (early) {
    why = "\n    by the server's clock the store ";
    why += st->gone_at_return ? "had already dropped the key when the write returned at " +
                                    RunTime(st->returned_ms)
                              : "expired it at " + RunTime(*st->stored_until);
    // What made the expiresAt early: the writer's clock at its call (the expiresAt less the
    // ttl) against the server's, and how long the call took to land.
    const int64_t ttl = w.ns.default_ttl_ms, called = st->promised_ms - ttl;
    if (st->sent_expires_at) {
      const int64_t off = *st->sent_expires_at - ttl - called;
      why += absl::StrCat(": the writer computed expiresAt ", RunTime(*st->sent_expires_at),
                          " from its own clock, which read ", RunTime(called + off),
                          " at its call (", off == 0 ? "the server's time" : "",
                          off > 0 ? absl::StrCat(off, " ms ahead of the server's") : "",
                          off < 0 ? absl::StrCat(-off, " ms behind the server's") : "", ")");
      if (st->returned_ms > *st->sent_expires_at)
        why += absl::StrCat(", and the write returned at ", RunTime(st->returned_ms),
                            ", past that instant (a pause or a delay between the call and "
                            "the write)");
    }
    why += absl::StrCat("; by the server's clock the write lives ", ttl,
                        " ms from when it was applied, between its call at ", RunTime(called),
                        " and its return at ", RunTime(st->returned_ms));
  }
  if (fast)
    why = "\n    the store set that write's expiry to " + RunTime(*st->stored_until) +
          " by the server's clock, and the key was alive when list() ran, but the reading "
          "pod's own clock read " +
          RunTime(reader_clock) +
          ", past that expiry: the index is trimmed, and list() filtered, by the caller's "
          "clock";
  rec->findings.push_back({cls,
                           "client " + std::to_string(id) + ", in sequence on " + key + ":" +
                               steps + "\n    expected " + st->expected.value_or("null") + " (" +
                               (st->last.empty() ? "nothing was written" : st->last) + ")" + why,
                           {},
                           {Since(ctx, sim::kDefaultEpochMs + t)}});
}

// One step on key r<id>: a set / get / list / delete through the old or the new pod, in
// sequence, so the last acknowledged write is what any read must return.
// olds: the old pods, one per old version (--rolling-from A,B: a three-version deploy).
sim::Task<void> RollingStep(
    sim::Ctx& ctx, int id, int i, const StateWorkload& w, real::state::StateNamespace& ns,
    const std::vector<std::pair<std::string, real::state::StateNamespace*>>& olds, sim::Prng& rng,
    RollingState* st, Recorder* rec) {
  const bool use_old = !olds.empty() && rng.chance({1, 2});
  // Which old version: a side stream, so that a two-version deploy draws as before.
  const size_t which =
      olds.size() > 1 ? sim::Prng(sim::OpSeed(w.seed, id, i) ^ 0x6f6c64ULL).below(olds.size()) : 0;
  real::state::StateNamespace& pod = use_old ? *olds[which].second : ns;
  const std::string pod_version = use_old ? olds[which].first : w.version;
  const std::string who = (use_old ? "old pod (" : "new pod (") + pod_version + ")";
  const std::string key = "r" + std::to_string(id);
  const uint64_t roll = rng.below(100);
  real::state::Json value = real::state::Json::object();
  value["w"] = i;
  value["by"] = use_old ? "old" : "new";
  const int64_t t = rec->world->now_ms() - sim::kDefaultEpochMs;
  // What the store holds for `key` right after an acknowledged write: its expiry on the server's
  // clock (read outside the trace), and the expiresAt the writer computed.
  auto note_stored_expiry = [&] {
    const int64_t now = rec->world->now_ms();
    const sim::Reply pttl = rec->world->backend().execute({"PTTL", pod.redis_key(key)}, now);
    st->returned_ms = now;
    st->promised_ms = sim::kDefaultEpochMs + t + w.ns.default_ttl_ms;
    st->gone_at_return = pttl.integer == -2;
    st->stored_until.reset();
    if (pttl.integer == -2) st->stored_until = now;
    if (pttl.integer >= 0) st->stored_until = now + pttl.integer;
    st->sent_expires_at.reset();
    if (!pod.expiry_is_relative()) st->sent_expires_at = pod.last_expires_at_ms();
  };
  // Half of the writes are a compareAndSet at the version this client last read, by either
  // pod (old pods compareAndSet too): a side stream of the operation's seed, so the draws
  // above are as before.
  const bool cas = roll < 40 && sim::Prng(sim::OpSeed(w.seed, id, i) ^ 0x636173ULL).chance({1, 2});
  try {
    if (roll < 40 && cas) {
      const int64_t expected = st->seen_version;
      real::state::CasResult r = co_await pod.compare_and_set(key, expected, value, std::nullopt);
      const std::string step = "at +" + std::to_string(t) + "ms the " + who + " compareAndSet(" +
                               key + ", " + std::to_string(expected) + ", " +
                               real::state::Stringify(value) + ") " +
                               (r.ok ? "succeeded" : "failed");
      st->log.push_back(step);
      if (r.ok) {
        st->known = true;
        st->last_by = pod_version;
        st->expected = real::state::Stringify(value);
        st->alive_until = rec->world->now_ms() + w.ns.default_ttl_ms - 50;
        note_stored_expiry();
        st->last = step;
        st->seen_version = r.value->version;
      } else {
        st->seen_version = r.current ? r.current->version : 0;
      }
    } else if (roll < 40) {
      co_await pod.set(key, value, std::nullopt);
      st->known = true;
      st->last_by = pod_version;
      st->expected = real::state::Stringify(value);
      st->alive_until = rec->world->now_ms() + w.ns.default_ttl_ms - 50;
      note_stored_expiry();
      st->last =
          "at +" + std::to_string(t) + "ms the " + who + " set " + key + " to " + *st->expected;
      st->log.push_back(st->last);
    } else if (roll < 85) {
      const bool by_list = roll >= 70;
      std::optional<std::string> got;
      if (by_list) {
        std::vector<real::state::StateValue> rows = co_await pod.list(std::nullopt, key);
        for (const auto& r : rows)
          if (r.key == key) got = real::state::Stringify(r.value);
      } else {
        std::optional<real::state::StateValue> v = co_await pod.get(key);
        if (v) got = real::state::Stringify(v->value);
        st->seen_version = v ? v->version : 0;
      }
      const bool expired = st->expected && rec->world->now_ms() > st->alive_until;
      const std::string step = "at +" + std::to_string(t) + "ms the " + who + " " +
                               (by_list ? "list()" : "get(\"" + key + "\")") + " read " +
                               got.value_or("null");
      st->log.push_back(step);
      if (st->known && !expired && got != st->expected && rec->findings.size() < 3)
        ReportRead(ctx, id, key, w, st, got, by_list, pod_version, t, rec);
    } else {
      co_await pod.del(key);
      st->known = true;
      st->last_by = pod_version;
      st->expected.reset();
      st->last = "at +" + std::to_string(t) + "ms the " + who + " deleted " + key;
      st->log.push_back(st->last);
    }
  } catch (const real::state::StateError& e) {
    if (e.transport() && roll < 40) st->known = false;  // a set or compareAndSet
    if (e.transport() && roll >= 85) st->known = false;
  }
  co_await ctx.sleep(rng.range(0, 10));
}

}  // namespace

// legacy-readable at a v1 key's expiry millisecond, for a version that claims v1 keys: Redis keeps
// a key through its expiry millisecond E (rule 1), so at E the old pod's value is still live
// and compareAndSet at its version must succeed; one millisecond later it is gone, and no copy a
// claim made at E may still be read at E + 2. E comes from the server (the v1 key's PTTL), and
// a call counts only when it began and ended at the instant it was aimed at (no fault moved it).
sim::Task<void> ExpiryInstantClaimProbe(sim::Ctx& ctx, const StateWorkload& w,
                                        real::state::StateNamespace& old,
                                        real::state::StateNamespace& ns, Recorder* rec) {
  real::state::Json value = real::state::Json::object();
  value["v1"] = "at-expiry";
  const auto at = RunTime;
  // The old pod writes `key`; its end on the server's clock (0: unknown).
  const auto write_v1 = [&](const std::string& key) -> sim::Task<int64_t> {
    try {
      co_await old.set(key, value, std::nullopt);
    } catch (const real::state::StateError&) {
      co_return 0;
    }
    const int64_t now = rec->world->now_ms();
    const sim::Reply pttl = rec->world->backend().execute({"PTTL", old.redis_key(key)}, now);
    co_return pttl.integer >= 0 ? now + pttl.integer : 0;
  };
  // A read at `t` that must find nothing: the v1 value ended at `end`.
  const auto gone_at = [&](const std::string& key, int64_t end, int64_t t) -> sim::Task<void> {
    co_await SleepUntil(ctx, rec, t);
    try {
      const std::optional<real::state::StateValue> got = co_await ns.get(key);
      if (got && rec->world->now_ms() == t)
        rec->findings.push_back(
            {"v1-value-outlives-its-expiry",
             "an old pod (" + w.old_version + ") wrote " + key + ", live on the server through " +
                 at(end) + "; a new pod claimed it at that millisecond, and at " + at(t) +
                 " get(\"" + key + "\") still returned it (expiresAt " + got->expires_at + ")",
             {},
             {Since(ctx, t)}});
    } catch (const real::state::StateError&) {
    }
  };
  // 1. compareAndSet at the old pod's version, at E: the value is live, so it must succeed.
  const int64_t e1 = co_await write_v1("X1");
  if (e1 > 0) {
    co_await SleepUntil(ctx, rec, e1);
    try {
      const real::state::CasResult r = co_await ns.compare_and_set("X1", 1, value, std::nullopt);
      if (!r.ok && rec->world->now_ms() == e1)
        rec->findings.push_back(
            {"cas-misses-v1-value-at-expiry-instant",
             "an old pod (" + w.old_version +
                 ") wrote X1 (version 1), live on the server through " + at(e1) + "; at " + at(e1) +
                 " compareAndSet(\"X1\", 1) failed, reporting current = " +
                 (r.current ? std::string("version ") + std::to_string(r.current->version)
                            : std::string("null")),
             {},
             {Since(ctx, e1)}});
    } catch (const real::state::StateError&) {
    }
  }
  // 2. compareAndSet at a wrong version at E claims the value and fails; 3. get() at E claims it.
  // Either way the copy must be gone by E + 2.
  const int64_t e2 = co_await write_v1("X2");
  if (e2 > 0) {
    co_await SleepUntil(ctx, rec, e2);
    try {
      const real::state::CasResult r = co_await ns.compare_and_set("X2", 7, value, std::nullopt);
      (void)r;
    } catch (const real::state::StateError&) {
    }
    co_await gone_at("X2", e2, e2 + 2);
  }
  const int64_t e3 = co_await write_v1("X3");
  if (e3 > 0) {
    co_await SleepUntil(ctx, rec, e3);
    try {
      const std::optional<real::state::StateValue> got = co_await ns.get("X3");
      (void)got;
    } catch (const real::state::StateError&) {
    }
    co_await gone_at("X3", e3, e3 + 2);
  }
}

namespace {

// rolling-deploy-writes-visible, after a client's steps: in a namespace of its own, the new pod
// writes k with a 5 ms ttl and lets it expire, with no call of its own in between; an old pod
// then writes k; the new pod reads it with get() and then with list(). Where the new version
// reads what old pods write (get() returns the old pod's value), list() must list it too:
// the index may still hold the new pod's expired entry for k, and the next call must not let
// that stale entry hide the live value (an import that keeps a score it should replace).
sim::Task<void> RewriteAfterExpiryProbe(sim::Ctx& ctx, int id, const StateWorkload& w,
                                        const real::state::VersionScripts& scripts,
                                        const std::string& connection, Recorder* rec) {
  const std::string name = "rw" + std::to_string(id);
  auto ns = real::state::MakeNamespace(w.version, ctx, scripts, std::string("provider-under-test"),
                                       name, w.ns, connection);
  auto old = OldPod(ctx, w, scripts, name, w.ns, connection);
  if (!old) co_return;
  real::state::Json first = real::state::Json::object(), second = first;
  first["by"] = "new";
  second["by"] = "old";
  const std::string shown = real::state::Stringify(second);
  try {
    co_await ns->set("k", first, std::optional<int64_t>(5));
    co_await ctx.sleep(6);
    co_await old->set("k", second, std::nullopt);
    const int64_t acked = rec->world->now_ms();
    const std::optional<real::state::StateValue> got = co_await ns->get("k");
    if (!got || real::state::Stringify(got->value) != shown) co_return;  // not read across
    const int64_t listed_at = rec->world->now_ms();
    const std::vector<real::state::StateValue> rows = co_await ns->list(std::nullopt, "k");
    bool listed = false;
    for (const auto& row : rows) listed |= row.key == "k";
    // Judged only while the old pod's write is surely live, and by a reader whose clock is not
    // ahead of the server's (list-misses-by-fast-clock names that).
    const bool live = rec->world->now_ms() < acked + w.ns.default_ttl_ms - 50;
    if (!listed && live && ctx.now_ms() <= rec->world->now_ms())
      rec->findings.push_back({kListMissesOldPodRewrite,
                               "namespace " + name + ": the new pod (" + w.version +
                                   ") set k with a 5 ms ttl and let it expire; the old pod (" +
                                   w.old_version + ") then set k to " + shown +
                                   "; the new pod's get(k) at +" +
                                   std::to_string(listed_at - sim::kDefaultEpochMs) +
                                   "ms returned it, and its list() right after left k out",
                               {},
                               {Since(ctx, listed_at)}});
  } catch (const real::state::StateError&) {
    // an error (a fault, a quota): nothing to judge
  }
}

}  // namespace

// legacy-readable and rolling-deploy-writes-visible. Client 0 is the old
// pod in the first two; every client runs both versions in the third.
sim::Task<void> LegacyClient(sim::Ctx& ctx, int id, const StateWorkload& w,
                             const real::state::VersionScripts& scripts, Legacy probe,
                             LegacyLog* log, Recorder* rec) {
  sim::Prng rng(w.seed * 1000003 + static_cast<uint64_t>(id));
  const std::string connection = "conn" + std::to_string(id);
  auto ns = real::state::MakeNamespace(w.version, ctx, scripts, std::string("provider-under-test"),
                                       "ns", w.ns, connection);
  auto old = OldPod(ctx, w, scripts, "ns", w.ns, connection);
  std::vector<std::unique_ptr<real::state::StateNamespace>> more;
  std::vector<std::pair<std::string, real::state::StateNamespace*>> olds;
  if (old) olds.push_back({w.old_version, old.get()});
  for (const std::string& v : w.more_old_versions) {
    more.push_back(real::state::MakeNamespace(v, ctx, scripts, std::string("provider-under-test"),
                                              "ns", w.ns, connection));
    olds.push_back({v, more.back().get()});
  }
  const int64_t start = sim::kDefaultEpochMs;
  RollingState rolling;
  for (int i = 0; i < w.ops; ++i) {
    if (w.skip.count({id, i})) continue;  // shrunk away
    rng = sim::Prng(sim::OpSeed(w.seed, id, i));
    if (probe == Legacy::kRead) {
      // At T the old pod writes L<i>; each client reads it twice, at T+50.. and T+120..
      const std::string key = "L" + std::to_string(i);
      const int64_t slot = start + 200 * i;
      co_await SleepUntil(ctx, rec, slot);
      if (id == 0 && old) {
        real::state::Json value = real::state::Json::object();
        value["v1"] = i;
        log->keys[key].value = real::state::Stringify(value);
        log->keys[key].old_version = w.old_version;
        const int64_t inv = rec->world->now_ms();
        try {
          co_await old->set(key, value, std::nullopt);
          log->keys[key].acked_ms = rec->world->now_ms();
          log->keys[key].live_until_ms = std::min(
              inv + w.ns.default_ttl_ms,
              old->expiry_is_relative() ? inv + w.ns.default_ttl_ms : old->last_expires_at_ms());
        } catch (const real::state::StateError&) {
        }
      }
      // Every third client is a caller without a connection: it read v1 values before the
      // upgrade too (v1 keys have no scope).
      std::unique_ptr<real::state::StateNamespace> unscoped;
      if (id % 3 == 2)
        unscoped = real::state::MakeNamespace(
            w.version, ctx, scripts, std::string("provider-under-test"), "ns", w.ns, std::nullopt);
      real::state::StateNamespace& reader = unscoped ? *unscoped : *ns;
      const std::string who = unscoped ? std::string() : connection;
      const int64_t first = slot + 50 + rng.range(0, 20);
      const int64_t second = slot + 120 + rng.range(0, 20);
      const int64_t times[2] = {first, second};
      for (int64_t at : times) {
        co_await SleepUntil(ctx, rec, at);
        auto& reads = log->keys[key].reads;
        reads.push_back(LegacyKey::Read{who, rec->world->now_ms(), 0, std::nullopt, false});
        const size_t mine = reads.size() - 1;
        try {
          std::optional<real::state::StateValue> got = co_await reader.get(key);
          LegacyKey::Read& r = log->keys[key].reads[mine];
          if (got) r.got = real::state::Stringify(got->value);
          r.ret_ms = rec->world->now_ms();
          r.done = true;
        } catch (const real::state::StateError&) {
          // Unknown outcome: not judged (rule 7: a read changes nothing in any case).
        }
      }
      continue;
    }
    if (probe == Legacy::kRolling) {
      co_await RollingStep(ctx, id, i, w, *ns, olds, rng, &rolling, rec);
      continue;
    }
  }
  if (probe == Legacy::kRead && id == 0 && old && real::state::ClaimsLegacy(w.version))
    co_await ExpiryInstantClaimProbe(ctx, w, *old, *ns, rec);
  if (probe == Legacy::kRolling)
    co_await RewriteAfterExpiryProbe(ctx, id, w, scripts, connection, rec);
}

// legacy-readable: every caller reads each live v1 value (rule 7); the class says how one did not.
std::vector<Finding> CheckLegacyReads(const std::map<std::string, LegacyKey>& keys,
                                      bool reads_claim) {
  std::vector<Finding> out;
  const auto at = RunTime;
  auto name = [](const std::string& c) {
    return c.empty() ? std::string("a caller without a connection") : "connection " + c;
  };
  for (const auto& [key, k] : keys) {
    if (k.acked_ms < 0) continue;
    // The reads that began after the write was acknowledged and ended while it was live.
    std::vector<LegacyKey::Read> after;
    for (const auto& r : k.reads)
      if (r.done && r.inv_ms > k.acked_ms && r.ret_ms < k.live_until_ms) after.push_back(r);
    if (after.empty()) continue;
    // Who read the value (a read that overlapped the write and returned it counts too).
    std::map<std::string, int64_t> first_read;  // connection -> when it first read the value
    for (const auto& r : k.reads)
      if (r.done && r.got == k.value && !first_read.count(r.connection))
        first_read[r.connection] = r.ret_ms;
    const std::string wrote = "an old pod (" + k.old_version + ") wrote " + key + " = " + k.value +
                              " at " + at(k.acked_ms) + " (live through " +
                              at(k.live_until_ms - 1) + ")";
    std::set<std::string> failed;  // callers whose read failed: it may have run (and claimed)
    for (const auto& r : k.reads)
      if (!r.done && reads_claim) failed.insert(r.connection);
    if (first_read.empty() && !failed.empty()) {
      std::string who;
      for (const auto& c : failed) who += (who.empty() ? "" : ", ") + name(c);
      out.push_back({kV1ValueLostToAnotherScope,
                     wrote +
                         "; every read after it returned null, though it was live; a read "
                         "that failed (its reply lost) may have claimed it first: " +
                         who});
    } else if (first_read.empty()) {
      std::set<std::string> readers;
      for (const auto& r : after) readers.insert(r.connection);
      out.push_back({kV1ValueUnreadable, wrote + "; all " + std::to_string(after.size()) +
                                             " reads after it, by " +
                                             std::to_string(readers.size()) +
                                             " callers of the new version, returned null"});
    } else {
      for (const auto& r : after) {
        if (r.got && *r.got != k.value) {
          out.push_back({kReadsOtherValue, name(r.connection) + " read " + key + " as " + *r.got +
                                               " at " + at(r.inv_ms) + "; " + wrote});
          break;
        }
        if (r.got) continue;
        const std::string got_null = "; " + name(r.connection) + " read null at " + at(r.inv_ms);
        if (first_read.count(r.connection) && first_read.at(r.connection) <= r.inv_ms) {
          out.push_back({"loses-adopted-value", wrote + "; " + name(r.connection) + " read it at " +
                                                    at(first_read.at(r.connection)) +
                                                    ", then null at " + at(r.inv_ms) +
                                                    " while it was live"});
        } else if (r.connection.empty()) {
          out.push_back({kUnreadableWithoutConnection,
                         wrote + got_null + ", while " + name(first_read.begin()->first) +
                             " read it: v1 keys have no scope, so this caller read them before "
                             "the upgrade"});
        } else {
          std::string others;
          for (const auto& [c, t] : first_read)
            others += (others.empty() ? "" : ", ") + name(c) + " at " + at(t);
          out.push_back(
              {kV1ValueLostToAnotherScope, wrote + got_null +
                                               ", though it was live and this connection never "
                                               "wrote or deleted it; it was read by " +
                                               others});
        }
        break;
      }
    }
    if (out.size() >= 3) break;
  }
  return out;
}

}  // namespace testbed::props::state
