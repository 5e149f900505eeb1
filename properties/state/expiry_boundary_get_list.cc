// Property "expiry-boundary-get-list" of the state store: each client sets a key of its own with a
// TTL, waits exactly that long, then reads it with get() and list() in the same millisecond; after
// its last probe, an entry adopted from an old pod, read past the new pods' maxTtl.
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
constexpr char kListDropsAtExpiryInstant[] = "list-drops-at-expiry-instant";
constexpr char kListMissesAdoptedEntry[] = "list-misses-adopted-entry";

// get(key) and then list(prefix key): what get() returned when list() left the key out in the
// same millisecond (nullopt otherwise), and that millisecond.
struct ListedMiss {
  std::optional<real::state::StateValue> got;
  int64_t at = 0;
};

sim::Task<ListedMiss> GetButNotListed(real::state::StateNamespace& ns, const std::string& key,
                                      Recorder* rec) {
  ListedMiss miss;
  miss.at = rec->world->now_ms();
  std::optional<real::state::StateValue> got = co_await ns.get(key);
  std::vector<real::state::StateValue> listed = co_await ns.list(std::nullopt, key);
  bool in_list = false;
  for (const auto& v : listed) in_list |= v.key == key;
  if (got && rec->world->now_ms() == miss.at && !in_list) miss.got = std::move(got);
  co_return miss;
}

// set(key, ttl); sleep(ttl); then get() and list() in the same millisecond of virtual time.
sim::Task<void> ExpiryProbe(sim::Ctx& ctx, real::state::StateNamespace& ns, const std::string& key,
                            int64_t ttl, Recorder* rec) {
  try {
    real::state::Json value = real::state::Json::object();
    value["probe"] = ttl;
    co_await ns.set(key, value, ttl);
    co_await ctx.sleep(ttl);
    const ListedMiss miss = co_await GetButNotListed(ns, key, rec);
    const int64_t t_get = miss.at;
    if (miss.got)
      rec->findings.push_back(
          {kListDropsAtExpiryInstant,
           "at +" + std::to_string(t_get - sim::kDefaultEpochMs) + "ms (the expiry instant of a " +
               std::to_string(ttl) + " ms TTL) get(\"" + key + "\") returned version " +
               std::to_string(miss.got->version) + " but list() did not include it",
           {},
           {Since(ctx, t_get)}});
  } catch (const real::state::StateError&) {
    // Faults may fail the probe; it then says nothing.
  }
}

// expiry-boundary-get-list, across a deploy: an old pod, configured with a longer maxTtl than
// the new pods (a deploy may change the options), writes a key with a TTL past the new pods'
// maxTtl; a new pod reads it (beta.24 adopts it into its scope and index, refreshing the index's
// TTL to its own maxTtl); once that maxTtl has passed, with the entry still alive, get() and
// list() at one instant must agree.
sim::Task<void> AdoptedEntryProbe(sim::Ctx& ctx, const StateWorkload& w,
                                  const real::state::VersionScripts& scripts, int id, int i,
                                  Recorder* rec) {
  constexpr int64_t kNewMaxTtl = 100, kOldTtl = 400, kReadAt = 250;
  const std::string name = "lt" + std::to_string(id) + "-" + std::to_string(i);
  real::state::NamespaceOptions young{
      .default_ttl_ms = 50, .max_ttl_ms = kNewMaxTtl, .max_entries = 10};
  real::state::NamespaceOptions old_options = young;
  old_options.default_ttl_ms = 500;
  old_options.max_ttl_ms = 1000;
  auto old = OldPod(ctx, w, scripts, name, old_options, "conn");
  if (!old) co_return;
  auto ns = real::state::MakeNamespace(w.version, ctx, scripts, std::string("provider-under-test"),
                                       name, young, std::string("conn"));
  const std::string key = "long";
  try {
    const int64_t start = rec->world->now_ms();
    real::state::Json value = real::state::Json::object();
    value["old"] = i;
    co_await old->set(key, value, kOldTtl);
    if (!(co_await ns->get(key))) co_return;  // this version cannot read v1 values at all
    co_await SleepUntil(ctx, rec, start + kReadAt);
    const ListedMiss miss = co_await GetButNotListed(*ns, key, rec);
    if (miss.got)
      rec->findings.push_back(
          {kListMissesAdoptedEntry,
           "an old pod (" + w.old_version + ", maxTtl 1000) set(\"" + key + "\", ttl " +
               std::to_string(kOldTtl) + ") in namespace " + name + "; a new pod (maxTtl " +
               std::to_string(kNewMaxTtl) + ") read it at once; at +" +
               std::to_string(miss.at - start) + "ms get(\"" + key + "\") returns version " +
               std::to_string(miss.got->version) + " but list() does not include it",
           {},
           {Since(ctx, start)}});
  } catch (const real::state::StateError&) {
    // Faults may fail the probe; it then says nothing.
  }
}

class ExpiryBoundaryGetListRunner : public StepRun {
 public:
  using StepRun::StepRun;

 private:
  sim::Task<void> Step(sim::Ctx& ctx, real::state::StateNamespace& ns, int id, int i,
                       sim::Prng& rng) override {
    // Keys of their own, so that other clients' writes do not blur the boundary.
    const std::string probe_key = "probe" + std::to_string(id) + "-" + std::to_string(i);
    co_await ExpiryProbe(ctx, ns, probe_key, rng.range(1, 50), &rec);
    // After the last probe (so that the ones before keep their instants): an entry adopted
    // from an old pod, read past the new pods' maxTtl.
    if (i == w.ops - 1) co_await AdoptedEntryProbe(ctx, w, scripts, id, i, &rec);
  }
};

}  // namespace

const StateProperty& ExpiryBoundaryGetList() {
  static const StateProperty kProperty = {
      {"expiry-boundary-get-list",
       "an entry that get() returns at an instant is listed by list() at the same instant",
       Always,
       MovesTheInstant(),
       {{kListDropsAtExpiryInstant,
         "at an entry's expiry millisecond get() returns it and list() leaves it out"},
        {kListMissesAdoptedEntry,
         "an entry adopted from an old pod, with a TTL past the new pods' maxTtl, outlives the "
         "index its claim refreshed: get() returns it and list() leaves it out"}}},
      MakeRun<ExpiryBoundaryGetListRunner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
