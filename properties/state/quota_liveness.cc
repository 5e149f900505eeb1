// Property "quota-liveness" of the state store: fill a maxEntries-2 namespace, delete (or let
// expire) one entry, then set a new key: it must be accepted (old pods deleting, in a rolling
// deploy); and a client whose clock runs behind must not refuse a key once an entry expired.
#include <absl/strings/escaping.h>
#include <absl/strings/match.h>
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>

#include "model/state_store.h"
#include "properties/state/state_workload.h"
#include "sim/clock.h"

namespace testbed::props::state {
namespace {

// The anomaly classes this file names, declared once: its table and its judge use them.
constexpr char kDeletedSlotRefused[] = "deleted-slot-refused";
constexpr char kOverwriteRefused[] = "overwrite-refused";
constexpr char kDeletedKeyRecreateRefused[] = "deleted-key-recreate-refused";
constexpr char kExpiredSlotRefused[] = "expired-slot-refused";
constexpr char kOldPodDeleteLeaksSlot[] = "old-pod-delete-leaks-slot";
constexpr char kOldPodDeleteLost[] = "old-pod-delete-lost";

// quota-liveness: fill a maxEntries-2 namespace, free one entry (delete by this pod or an old
// pod, or expiry), then a third key must be accepted.
sim::Task<void> LivenessProbe(sim::Ctx& ctx, const StateWorkload& w,
                              const real::state::VersionScripts& scripts, int id, int i,
                              sim::Prng& rng, Recorder* rec) {
  real::state::NamespaceOptions two{
      .default_ttl_ms = 60000, .max_ttl_ms = 120000, .max_entries = 2};
  const std::string name = "live" + std::to_string(id) + "-" + std::to_string(i);
  auto ns = real::state::MakeNamespace(w.version, ctx, scripts, std::string("provider-under-test"),
                                       name, two, std::string("conn"));
  auto old = OldPod(ctx, w, scripts, name, two, "conn");
  const bool by_expiry = rng.chance({1, 3});
  const bool old_deletes = old && rng.chance({1, 2});
  const int64_t ttl = rng.range(5, 40);
  real::state::Json value = real::state::Json::object();
  value["n"] = i;
  try {
    const std::optional<int64_t> ttl_a = by_expiry ? std::optional<int64_t>(ttl) : std::nullopt;
    co_await ns->set("a", value, ttl_a);
    co_await ns->set("b", value, std::nullopt);
    // Rule 3: an overwrite of a live key is always admitted, even in a full namespace (here by
    // the write that creates a key, in turn: set, compareAndSet at its version, increment).
    {
      const int64_t t = rec->world->now_ms();
      const KeyWrite b = co_await WriteKeyBy(*ns, i % 3, "b", 1, value, std::nullopt);
      if (b.error && b.error->quota())
        rec->findings.push_back({kOverwriteRefused,
                                 "namespace " + name + " (maxEntries 2) holds a and b; at +" +
                                     std::to_string(t - sim::kDefaultEpochMs) + "ms " + b.shown +
                                     ", an overwrite of a live key, failed with \"" +
                                     b.error->what() + "\"",
                                 {},
                                 {Since(ctx, t)}});
    }
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
    const int64_t t = rec->world->now_ms() - sim::kDefaultEpochMs;
    std::string refused;
    const std::optional<real::state::StateError> e =
        co_await sim::FailureOf<real::state::StateError>(ns->set("c", value, std::nullopt));
    if (e && e->quota()) refused = e->what();
    if (!refused.empty()) {
      std::optional<real::state::StateValue> a = co_await ns->get("a");
      // Named by what the refused set found: an entry still live (the old pod's delete never
      // reached the key the new pods read, so the quota counts rightly) or a slot held by an
      // entry that is gone (the quota leaks).
      rec->findings.push_back({by_expiry      ? kExpiredSlotRefused
                               : !old_deletes ? kDeletedSlotRefused
                               : a            ? kOldPodDeleteLost
                                              : kOldPodDeleteLeaksSlot,
                               "namespace " + name + " (maxEntries 2): set(a), set(b), then " +
                                   how + "; at +" + std::to_string(t) + "ms set(c) failed with \"" +
                                   refused + "\"; get(a) now returns " +
                                   (a ? "its value: the delete was lost" : "null: only b is live"),
                               {},
                               {Since(ctx, sim::kDefaultEpochMs + t)}});
      // Whatever holds the slot, a is gone and only b is live: writing a again is a new key
      // in a namespace with one live entry (rule 3), and must be admitted, by each write with a
      // quota check of its own in turn (set, compareAndSet from version 0, increment).
      if (!a) {
        const int64_t t2 = rec->world->now_ms() - sim::kDefaultEpochMs;
        const KeyWrite again = co_await WriteKeyBy(*ns, (i + 1) % 3, "a", 0, value, std::nullopt);
        if (again.error && again.error->quota())
          rec->findings.push_back(
              {kDeletedKeyRecreateRefused,
               "namespace " + name + " (maxEntries 2): set(a), set(b), then " + how +
                   "; get(a) returns null, yet at +" + std::to_string(t2) + "ms " + again.shown +
                   " failed with \"" + again.error->what() + "\" with only b live",
               {},
               {Since(ctx, sim::kDefaultEpochMs + t2)}});
      }
    }
  } catch (const real::state::StateError&) {
  }
}

class QuotaLivenessRunner : public StepRun {
 public:
  using StepRun::StepRun;

 private:
  sim::Task<void> Step(sim::Ctx& ctx, real::state::StateNamespace& ns, int id, int i,
                       sim::Prng& rng) override {
    co_await LivenessProbe(ctx, w, scripts, id, i, rng, &rec);
    co_await SkewQuotaProbe(ctx, w, scripts, id, i, /*safety=*/false, &skew_writes_, &rec);
  }
  SkewWrites skew_writes_;
};

}  // namespace

const StateProperty& QuotaLiveness() {
  static const StateProperty kProperty = {
      {"quota-liveness",
       "once an entry is deleted or expired, a namespace at its quota accepts a new key (old "
       "pods deleting, in a rolling deploy)",
       Always,
       {sim::Fault::kRestart, sim::Fault::kFailover, sim::Fault::kKeyLoss},
       {{kDeletedSlotRefused, "after delete() the namespace still refuses a new key"},
        {kOverwriteRefused, "a full namespace refuses an overwrite of a live key"},
        {kDeletedKeyRecreateRefused,
         "a key that is gone cannot be written again though the namespace has room"},
        {kExpiredSlotRefused, "after an entry expires the namespace still refuses a new key"},
        {kOldPodDeleteLeaksSlot,
         "after an old pod deletes an entry the entry is gone, yet the namespace still refuses a "
         "new key: the deleted entry keeps its quota slot"},
        {kOldPodDeleteLost,
         "an old pod's delete never reaches the key the new pods read: the entry stays live, so "
         "the namespace (counting rightly) still refuses a new key"},
        {kSkewExpiredSlotRefused,
         "a client whose clock runs behind refuses a key after an entry expired by the "
         "server's clock"}}},
      MakeRun<QuotaLivenessRunner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
