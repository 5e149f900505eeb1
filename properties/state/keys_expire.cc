// Property "keys-expire" of the state store: every key the store writes on the server (entries,
// tombstones, the quota index, v1 markers) is gone once maxTtl has passed since the last call
// ran, by the server's clock. The store promises that nothing outlives maxTtl (a ttl above it is
// refused, and the index is kept for maxTtl after each write), so a key that stays is storage
// that leaks or an entry that outlives its promised expiry. Judged from the server's keyspace
// after the run: the harness reads it at the last call's time plus maxTtl plus one millisecond
// (KEYS and PTTL straight from the backend, outside the trace).
#include <absl/strings/str_cat.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "properties/state/state_workload.h"

namespace testbed::props::state {
namespace {

// The anomaly classes this file names, declared once: its table and its judge use them.
constexpr char kKeyNeverExpires[] = "key-never-expires";
constexpr char kIndexNeverExpires[] = "index-never-expires";
constexpr char kKeyOutlivesMaxTtl[] = "key-outlives-max-ttl";
constexpr char kIndexOutlivesMaxTtl[] = "index-outlives-max-ttl";
constexpr char kEntryMissingFromIndex[] = "entry-missing-from-index";
constexpr char kIndexExpiresBeforeEntry[] = "index-expires-before-entry";
constexpr char kEntryTrimmedFromIndexByFastClock[] = "entry-trimmed-from-index-by-fast-clock";
constexpr char kIndexExpiresBeforeEntryByWriterClock[] =
    "index-expires-before-entry-by-writer-clock";
constexpr char kOutlivesMaxTtlByWriterClock[] = "outlives-max-ttl-by-writer-clock";

class KeysExpireRunner : public StepRun {
 public:
  using StepRun::StepRun;

  // The index's observable effect: list() and the quota see an entry only through the index,
  // so at the end of the run every live entry must be in its index, and the index must live
  // at least as long as the entry. Keys and indexes pair by family ("apifuse:provider-state:v2":
  // a v1 key and the old pods' v1 index, a v2 key and the v2 index). beta.3 keeps no index:
  // KEYS finds its entries.
  void CheckIndexCoversEntries(sim::World& world, int64_t end, bool skewed, RunOutcome& out) {
    if (w.version == "beta3") return;
    auto family = [](const std::string& k) {  // the first three ':'-separated fields
      size_t at = 0;
      for (int n = 0; n < 3 && at != std::string::npos; ++n) at = k.find(':', at + 1);
      return k.substr(0, at);
    };
    const sim::Reply keys = world.backend().execute({"KEYS", "*"}, end);
    std::vector<std::string> indexes;  // every sorted set: an index of some scope's namespace
    for (const sim::Reply& k : keys.elements)
      if (world.backend().execute({"TYPE", k.str}, end).str == "zset") indexes.push_back(k.str);
    for (const sim::Reply& k : keys.elements) {
      if (k.str.find(":index:") != std::string::npos) continue;  // an index and its cursor
      const sim::Reply value = world.backend().execute({"GET", k.str}, end);
      if (value.type != sim::Reply::Type::kBulk ||
          value.str.find("\"deleted\":true") != std::string::npos)
        continue;  // a tombstone, or not an entry of this SDK
      // Its index: the sorted set of its family that holds it (one namespace per scope).
      std::string in;
      for (const std::string& ix : indexes)
        if (family(ix) == family(k.str) &&
            world.backend().execute({"ZSCORE", ix, k.str}, end).type == sim::Reply::Type::kBulk)
          in = ix;
      const bool indexed = !in.empty();
      const int64_t index_pttl =
          indexed ? world.backend().execute({"PTTL", in}, end).integer : int64_t{-2};
      const int64_t pttl = world.backend().execute({"PTTL", k.str}, end).integer;
      // At its expiry millisecond the index has already let it go (ZREMRANGEBYSCORE -inf now):
      // expiry-boundary-get-list judges that instant, under its own name.
      if (pttl == 0) continue;
      if (indexed && (index_pttl == -1 || index_pttl >= pttl)) continue;
      std::string text =
          absl::StrCat("at the end of the run (+", end - sim::kDefaultEpochMs, "ms) entry ", k.str,
                       " lives another ", pttl, " ms, but ",
                       !indexed ? std::string("the quota index does not hold it")
                                : absl::StrCat("the quota index expires in ", index_pttl, " ms"),
                       ": list() will leave it out and the quota will not count it");
      std::string cls = !indexed ? kEntryMissingFromIndex : kIndexExpiresBeforeEntry;
      if (skewed) {  // every write trims the index by its caller's clock, and sets expiries by it
        cls = !indexed ? kEntryTrimmedFromIndexByFastClock : kIndexExpiresBeforeEntryByWriterClock;
        text +=
            " (clients' clocks were skewed in this run: a client whose clock runs ahead "
            "trims the index of entries still alive by the server's clock)";
      }
      out.findings.push_back({cls, text});
      return;
    }
  }

  void Check(sim::World& world, RunOutcome& out) override {
    const int64_t end = world.now_ms();
    const int64_t at = end + w.ns.max_ttl_ms + 1;
    bool skewed = false;  // a client's clock was off the server's: PXAT from its Date.now()
    for (const sim::TraceEvent& e : out.trace.events) skewed |= e.kind == sim::EventKind::kClock;
    CheckIndexCoversEntries(world, end, skewed, out);
    const sim::Reply keys = world.backend().execute({"KEYS", "*"}, at);
    for (const sim::Reply& k : keys.elements) {
      const sim::Reply pttl = world.backend().execute({"PTTL", k.str}, at);
      if (pttl.integer == -2) continue;
      // The index is the namespace's sorted set (its legacy-scan cursor, a string, shares the
      // name).
      const bool index = world.backend().execute({"TYPE", k.str}, at).str == "zset";
      const std::string what = index ? "the quota index" : "key";
      std::string text = absl::StrCat(
          what, " ", k.str, " is still on the server at +", at - sim::kDefaultEpochMs,
          "ms, maxTtl (", w.ns.max_ttl_ms, " ms) after the last call ended (+",
          end - sim::kDefaultEpochMs, "ms): ",
          pttl.integer == -1 ? std::string("it has no expiry at all")
                             : absl::StrCat("it expires ", pttl.integer, " ms later still"));
      std::string cls;
      if (pttl.integer == -1) {
        cls = index ? kIndexNeverExpires : kKeyNeverExpires;
      } else if (skewed) {
        cls = kOutlivesMaxTtlByWriterClock;
        text +=
            " (a client's clock ran ahead of the server's in this run, and the store sets "
            "the expiry from the client's clock)";
      } else {
        cls = index ? kIndexOutlivesMaxTtl : kKeyOutlivesMaxTtl;
      }
      out.findings.push_back({cls, text});
    }
    out.findings.insert(out.findings.end(), rec.findings.begin(), rec.findings.end());
  }

 private:
  sim::Task<void> Step(sim::Ctx& ctx, real::state::StateNamespace& ns, int id, int i,
                       sim::Prng& rng) override {
    const std::string key = "k" + std::to_string(rng.below(3));
    const uint64_t roll = rng.below(100);
    // The default, any ttl, or the boundary: exactly maxTtl, the longest a key may live.
    const uint64_t ttl_roll = rng.below(4);
    const std::optional<int64_t> ttl = ttl_roll == 0 ? std::optional<int64_t>(w.ns.max_ttl_ms)
                                       : ttl_roll == 1
                                           ? std::optional<int64_t>(rng.range(1, w.ns.max_ttl_ms))
                                           : std::nullopt;
    real::state::Json value = real::state::Json::object();
    value["client"] = id;
    value["n"] = i;
    // In a deploy whose new pods claim v1 keys, an old pod writes the same keys too, so that
    // reads and writes claim them (with the old pod's ttl, into the v2 index).
    std::unique_ptr<real::state::StateNamespace> old;
    // (Its first two writes come first, before a new pod's own write shadows the key.)
    if (real::state::ClaimsLegacy(w.version) && (i < 2 || roll >= 85))
      old = OldPod(ctx, w, scripts, "ns", w.ns, "conn");
    try {
      if (old) {
        co_await old->set(key, value, ttl);
      } else if (roll < 30) {
        co_await ns.set(key, value, ttl);
      } else if (roll < 50) {
        std::optional<real::state::StateValue> seen = co_await ns.get(key);
        co_await ns.compare_and_set(key, seen ? seen->version : 0, value, ttl);
      } else if (roll < 65) {
        co_await ns.del(key);
      } else if (roll < 80) {
        co_await ns.increment(key, "n", 1, ttl);
      } else if (roll < 90) {
        co_await ns.get(key);
      } else {
        co_await ns.list(std::nullopt, std::nullopt);
      }
    } catch (const real::state::StateError&) {
      // quota, policy and transport errors: whatever the call wrote is judged at the end
    }
    co_await ctx.sleep(rng.range(0, 50));
  }

  // A connection that never touched the keys reads each (k0 by a compareAndSet that fails): in a
  // deploy whose reads claim v1 keys, a live v1 value is claimed into its scope (with the old
  // key's remaining ttl, into its index) and left there for the judge.
  //
  // First, a namespace of its own that this client writes exactly once (a set, or on odd
  // clients a compareAndSet from version 0): the write creates its index, no later call of
  // the namespace refreshes the index's ttl, so the write itself must have set one.
  sim::Task<void> Finish(sim::Ctx& ctx, real::state::StateNamespace&, int id) override {
    {
      auto once = real::state::MakeNamespace(w.version, ctx, scripts, "provider-under-test",
                                             "once" + std::to_string(id), w.ns, "conn");
      real::state::Json value = real::state::Json::object();
      value["once"] = id;
      try {
        if (id % 2 == 0) {
          co_await once->set("k0", value, std::nullopt);
        } else {
          const real::state::CasResult r =
              co_await once->compare_and_set("k0", 0, value, std::nullopt);
          (void)r;
        }
      } catch (const real::state::StateError&) {
      }
    }
    if (!real::state::ClaimsLegacy(w.version)) co_return;
    auto late = Namespace(ctx, "late" + std::to_string(id));
    for (int k = 0; k < 3; ++k) {
      const std::string key = "k" + std::to_string(k);
      try {
        if (k == 0) {  // compareAndSet claims too, and fails at a version no write reached
          real::state::Json value = real::state::Json::object();
          value["late"] = id;
          const real::state::CasResult r =
              co_await late->compare_and_set(key, 1000000, value, std::nullopt);
          (void)r;
        } else {
          const std::optional<real::state::StateValue> got = co_await late->get(key);
          (void)got;
        }
      } catch (const real::state::StateError&) {
      }
    }
  }
};

}  // namespace

const StateProperty& KeysExpire() {
  static const StateProperty kProperty = {
      {"keys-expire",
       "every key the store writes on the server is gone once maxTtl has passed since the last "
       "call, by the server's clock, and the quota index holds every live entry as long as it "
       "lives",
       Always,
       LosesWrites(),
       {{kKeyNeverExpires, "the store left a key with no expiry on the server"},
        {kIndexNeverExpires, "the quota index has no expiry: it stays forever"},
        {kKeyOutlivesMaxTtl, "a key is still on the server after maxTtl has passed"},
        {kIndexOutlivesMaxTtl, "the quota index is still on the server after maxTtl"},
        {kEntryMissingFromIndex,
         "a live entry is not in the quota index: list() and the quota miss it"},
        {kIndexExpiresBeforeEntry,
         "the quota index expires before an entry it holds: list() and the quota lose it"},
        {kEntryTrimmedFromIndexByFastClock,
         "a client whose clock runs ahead trimmed a live entry from the quota index"},
        {kIndexExpiresBeforeEntryByWriterClock,
         "the quota index expires before an entry a writer with a fast clock wrote"},
        {kOutlivesMaxTtlByWriterClock,
         "a key outlives maxTtl by the server's clock because a writer's clock ran ahead"}}},
      MakeRun<KeysExpireRunner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
