// Property "quota-safety" of the state store: in a namespace with maxEntries 1, set a with a TTL,
// wait until its expiry instant, set b, and read both in that same millisecond; then several
// clients race for one slot, a client whose clock runs ahead writes while another's entry is
// live, and in a rolling deploy a full scope writes a key an old pod wrote.
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
constexpr char kOverfill[] = "overfill";
constexpr char kRefusalReportedAsWritten[] = "refusal-reported-as-written";
constexpr char kExpiryInstantOverfill[] = "expiry-instant-overfill";
constexpr char kConcurrentOverfill[] = "concurrent-overfill";
constexpr char kOverfillAfterEviction[] = "overfill-after-eviction";
constexpr char kRefusalMisreported[] = "refusal-misreported";
constexpr char kAdoptedKeyOverfill[] = "adopted-key-overfill";

sim::Task<void> QuotaProbe(sim::Ctx& ctx, const StateWorkload& w,
                           const real::state::VersionScripts& scripts, int id, int i, int64_t ttl,
                           Recorder* rec) {
  real::state::NamespaceOptions one{
      .default_ttl_ms = 60000, .max_ttl_ms = 120000, .max_entries = 1};
  auto ns_ptr = real::state::MakeNamespace(
      w.version, ctx, scripts, std::string("provider-under-test"),
      "quota" + std::to_string(id) + "-" + std::to_string(i), one, std::string("conn"));
  real::state::StateNamespace& ns = *ns_ptr;
  try {
    real::state::Json value = real::state::Json::object();
    value["n"] = 1;
    const int64_t t_a = rec->world->now_ms();
    co_await ns.set("a", value, ttl);
    // While a is live, a second key must be refused (x expires with a, if it is accepted),
    // whichever write creates it: set, compareAndSet(x, 0) or increment (each has its own
    // quota check in the scripts).
    const KeyWrite x_write = co_await WriteKeyBy(ns, i % 3, "x", 0, value, ttl);
    const bool x_accepted = x_write.written;
    const std::string& write_x = x_write.shown;
    if (x_accepted) {
      const int64_t t1 = rec->world->now_ms();
      std::optional<real::state::StateValue> a = co_await ns.get("a");
      std::optional<real::state::StateValue> x = co_await ns.get("x");
      if (a && x && rec->world->now_ms() == t1 && t1 < t_a + ttl)
        rec->findings.push_back({kOverfill,
                                 "at +" + std::to_string(t1 - sim::kDefaultEpochMs) +
                                     "ms, with a live (TTL " + std::to_string(ttl) + " ms), " +
                                     write_x +
                                     " was accepted and get(a), get(x) both return a value: "
                                     "2 live entries in a namespace with maxEntries 1",
                                 {},
                                 {Since(ctx, t_a)}});
      // An acknowledged write reads back while it is live: a refusal reported as a success
      // leaves nothing behind.
      if (!x && rec->world->now_ms() == t1 && t1 < t_a + ttl)
        rec->findings.push_back(
            {kRefusalReportedAsWritten,
             "at +" + std::to_string(t1 - sim::kDefaultEpochMs) + "ms " + write_x +
                 " was acknowledged as written in a full namespace (maxEntries 1, a live), "
                 "yet get(x) returns null: nothing was stored",
             {},
             {Since(ctx, t_a)}});
    }
    co_await SleepUntil(ctx, rec, t_a + ttl);
    const int64_t t0 = rec->world->now_ms();
    co_await ns.set("b", value, std::nullopt);
    std::optional<real::state::StateValue> a = co_await ns.get("a");
    std::optional<real::state::StateValue> b = co_await ns.get("b");
    if (a && b && rec->world->now_ms() == t0)
      rec->findings.push_back(
          {kExpiryInstantOverfill,
           "at +" + std::to_string(t0 - sim::kDefaultEpochMs) +
               "ms, the expiry instant of a (TTL " + std::to_string(ttl) +
               " ms), set(b) was accepted and get(a), get(b) both return a value: "
               "2 live entries in a namespace with maxEntries 1",
           {},
           {Since(ctx, t0)}});
  } catch (const real::state::StateError&) {
  }
}

// Whether a fault's text names the index of namespace `name` (or a member of it): an index key
// holds its namespace's prefix in base64 ("...:index:<base64>"). An entry's eviction frees its
// slot instead, so only the index's loss lets the quota admit past maxEntries.
bool NamesIndexOf(const std::string& text, const std::string& name) {
  const size_t at = text.find(":index:");
  if (at == std::string::npos) return false;
  const std::string b64 = text.substr(at + 7, text.find_first_of("\":", at + 7) - at - 7);
  std::string decoded;
  return absl::Base64Unescape(b64, &decoded) &&
         absl::StrContains(decoded, absl::StrCat(":", name, ":"));
}

// The first key-loss fault (an eviction, sim/faults.h) of namespace `name`'s index between the
// world's instants from and to, as its trace prints it ("" when none hit).
std::string EvictionBetween(const Recorder* rec, const std::string& name, int64_t from,
                            int64_t to) {
  const int64_t start = rec->world->start_ms();
  for (const sim::TraceEvent& e : rec->world->trace().events)
    if (e.fault == sim::Fault::kKeyLoss && !e.planned && e.at_ms >= from - start &&
        e.at_ms <= to - start && NamesIndexOf(e.text, name))
      return absl::StrCat("+", e.at_ms, "ms ", e.text);
  return "";
}

// quota-safety, concurrently: at one instant every client sets its own key in a shared
// maxEntries-1 namespace; 100 ms later client 0 reads them all in one millisecond. The
// namespace's index lost to an eviction meanwhile is named as the cause: the quota counts the
// index, and what it no longer holds it no longer counts (an entry's own eviction frees its
// slot, and is no excuse).
sim::Task<void> QuotaRace(sim::Ctx& ctx, const StateWorkload& w,
                          const real::state::VersionScripts& scripts, int id, int i,
                          Recorder* rec) {
  if (w.clients < 2) co_return;
  real::state::NamespaceOptions one{
      .default_ttl_ms = 60000, .max_ttl_ms = 120000, .max_entries = 1};
  const std::string name = "race-" + std::to_string(i);
  auto ns = real::state::MakeNamespace(w.version, ctx, scripts, std::string("provider-under-test"),
                                       name, one, std::string("conn"));
  const int64_t slot = sim::kDefaultEpochMs + 1000 * (i + 1);
  co_await SleepUntil(ctx, rec, slot);
  real::state::Json value = real::state::Json::object();
  value["client"] = id;
  [[maybe_unused]] const std::optional<real::state::StateError> refused =
      co_await sim::FailureOf<real::state::StateError>(
          ns->set("c" + std::to_string(id), value, std::nullopt));
  if (id != 0) co_return;
  co_await SleepUntil(ctx, rec, slot + 100);
  const int64_t t0 = rec->world->now_ms();
  int live = 0;
  try {
    for (int c = 0; c < w.clients; ++c) {
      std::optional<real::state::StateValue> got = co_await ns->get("c" + std::to_string(c));
      live += got ? 1 : 0;
    }
  } catch (const real::state::StateError&) {
    co_return;
  }
  if (live > 1 && rec->world->now_ms() == t0) {
    const std::string evicted = EvictionBetween(rec, name, slot, t0);
    rec->findings.push_back(
        {evicted.empty() ? kConcurrentOverfill : kOverfillAfterEviction,
         absl::StrCat(w.clients, " clients each set their own key at +",
                      slot - sim::kDefaultEpochMs, "ms in namespace ", name,
                      " (maxEntries 1); at +", t0 - sim::kDefaultEpochMs, "ms ", live,
                      " of those keys are live",
                      evicted.empty() ? "" : ", after an eviction between them: ", evicted)});
  }
}

// quota-safety in a rolling deploy: an old pod writes old1 and old2, this pod fills its scope
// (maxEntries 2) with new1 and new2, reads old1 (beta.24's claim may adopt it), then writes it,
// and compareAndSets old2 at the old pod's version.
// A v1 value visible to a scope is the old pods' entry, and writing the key there is a new entry
// (model rule 7 with rule 3): a scope that holds maxEntries live entries of its own must refuse
// it, however the value got there. beta.24's claim adopts the v1 value into the scope only when
// the scope has room (CLAIM_LEGACY_SCRIPT 25-30): a claim that skips that check lets the next
// write through as an overwrite.
sim::Task<void> ClaimQuotaProbe(sim::Ctx& ctx, const StateWorkload& w,
                                const real::state::VersionScripts& scripts, int id, int i,
                                Recorder* rec) {
  real::state::NamespaceOptions two{
      .default_ttl_ms = 60000, .max_ttl_ms = 120000, .max_entries = 2};
  const std::string name = "cq" + std::to_string(id) + "-" + std::to_string(i);
  auto old = OldPod(ctx, w, scripts, name, two, "conn");
  if (!old) co_return;
  auto ns = real::state::MakeNamespace(w.version, ctx, scripts, std::string("provider-under-test"),
                                       name, two, std::string("conn"));
  real::state::Json value = real::state::Json::object();
  value["n"] = i;
  try {
    co_await old->set("old1", value, std::nullopt);
    co_await old->set("old2", value, std::nullopt);
  } catch (const real::state::StateError&) {
  }
  int own = 0;  // acknowledged writes of this scope's own keys, all live (ttl 60 s)
  for (const char* key : {"new1", "new2"}) {
    try {
      co_await ns->set(key, value, std::nullopt);
      ++own;
    } catch (const real::state::StateError&) {
    }
  }
  try {
    co_await ns->get("old1");
  } catch (const real::state::StateError&) {
    // reads-never-quota-error's to judge
  }
  if (own < 2) co_return;  // the scope is not full
  const int64_t t = rec->world->now_ms() - sim::kDefaultEpochMs;
  // The scope holds what it reads back: a fault that lost new1 or new2 leaves it room.
  const auto holds_three = [&]() -> sim::Task<bool> {
    for (const char* key : {"new1", "new2", "old1"}) {
      const std::optional<real::state::StateValue> back = co_await ns->get(key);
      if (!back) co_return false;
    }
    co_return true;
  };
  try {
    co_await ns->set("old1", value, std::nullopt);
    const bool overfull = co_await holds_three();
    if (overfull)
      rec->findings.push_back(
          {kAdoptedKeyOverfill,
           "namespace " + name + " (maxEntries 2): an old pod (" + w.old_version +
               ") wrote old1 and old2, this pod wrote new1 and new2 (both live), read old1, and at "
               "+" +
               std::to_string(t) +
               "ms set(\"old1\") was acknowledged, and new1, new2 and old1 all read back: the "
               "scope "
               "holds three live entries of its own",
           {},
           {Since(ctx, sim::kDefaultEpochMs + t)}});
  } catch (const real::state::StateError&) {
  }
  // compareAndSet claims inline (COMPARE_AND_SET_WITH_QUOTA_SCRIPT 40-72), at the version the
  // old pod wrote.
  const int64_t t2 = rec->world->now_ms() - sim::kDefaultEpochMs;
  try {
    const real::state::CasResult r = co_await ns->compare_and_set("old2", 1, value, std::nullopt);
    bool overfull = false;
    if (r.ok) {
      const std::optional<real::state::StateValue> new1 = co_await ns->get("new1");
      const std::optional<real::state::StateValue> new2 = co_await ns->get("new2");
      overfull = new1 && new2;
    }
    if (overfull)
      rec->findings.push_back(
          {kAdoptedKeyOverfill,
           "namespace " + name + " (maxEntries 2): an old pod (" + w.old_version +
               ") wrote old1 and old2, this pod wrote new1 and new2 (both live), and at +" +
               std::to_string(t2) +
               "ms compareAndSet(\"old2\", 1) succeeded, and new1 and new2 still read back: the "
               "scope holds three live entries of its own",
           {},
           {Since(ctx, sim::kDefaultEpochMs + t2)}});
  } catch (const real::state::StateError& e) {
    // The full scope refuses it: as a quota error, the one a caller can act on.
    if (!e.quota() && !e.transport())
      rec->findings.push_back({kRefusalMisreported,
                               "namespace " + name + " (maxEntries 2, full): at +" +
                                   std::to_string(t2) +
                                   "ms compareAndSet(\"old2\", 1) failed with \"" + e.what() +
                                   "\" where the full scope's refusal is a quota error",
                               {},
                               {Since(ctx, sim::kDefaultEpochMs + t2)}});
  }
}

class QuotaSafetyRunner : public StepRun {
 public:
  using StepRun::StepRun;

 private:
  sim::Task<void> Step(sim::Ctx& ctx, real::state::StateNamespace& ns, int id, int i,
                       sim::Prng& rng) override {
    co_await QuotaProbe(ctx, w, scripts, id, i, rng.range(1, 50), &rec);
    co_await QuotaRace(ctx, w, scripts, id, i, &rec);
    co_await SkewQuotaProbe(ctx, w, scripts, id, i, /*safety=*/true, &skew_writes_, &rec);
    co_await ClaimQuotaProbe(ctx, w, scripts, id, i, &rec);
  }
  SkewWrites skew_writes_;
};

}  // namespace

const StateProperty& QuotaSafety() {
  static const StateProperty kProperty = {
      {"quota-safety",
       "a namespace never holds more live entries than maxEntries",
       Always,
       AndResend(
           {sim::Fault::kLatency, sim::Fault::kDelay, sim::Fault::kReorder, sim::Fault::kPause}),
       {{kOverfill, "a namespace accepts a key past maxEntries while its entries are live"},
        {kRefusalReportedAsWritten,
         "a write the full namespace refused is acknowledged as written, and nothing is stored"},
        {kExpiryInstantOverfill,
         "at an entry's expiry millisecond a new key is accepted while get() still returns the "
         "old one"},
        {kConcurrentOverfill,
         "keys set at one instant by several clients all stay live past "
         "maxEntries"},
        {kOverfillAfterEviction,
         "an eviction (fault key-loss) took the namespace's index, which the quota counts, and "
         "the namespace then admitted keys past maxEntries: the quota lives in one evictable "
         "key"},
        {kSkewOverfill,
         "a client whose clock runs ahead admits a key while another is live by the server's "
         "clock"},
        {kRefusalMisreported,
         "a write the full scope refuses fails with an error other than quota exceeded"},
        {kAdoptedKeyOverfill,
         "a full scope admits the write of a key an old pod wrote (a v1 value is not the "
         "scope's entry, rule 7)"}}},
      MakeRun<QuotaSafetyRunner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
