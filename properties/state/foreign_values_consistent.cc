// Property "foreign-values-consistent" of the state store: another writer (an older SDK, a
// migration script, an operator; with old pods, an old pod's key) SETs a key to raw text this SDK
// did not write; get and compareAndSet at the version get() returned must agree about it.
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
constexpr char kAbsentButCasRefused[] = "absent-but-cas-refused";
constexpr char kReadButCasRefused[] = "read-but-cas-refused";
constexpr char kCasNotVisible[] = "cas-not-visible";

std::string Show(const std::optional<real::state::StateValue>& v) {
  return v ? real::state::Stringify(v->value) + " v" + std::to_string(v->version) : "null";
}

// What another writer of the same Redis key may have left there: an older SDK, a migration
// script or an operator's SET. Raw text, so that what JSON.parse and cjson make of duplicate
// keys and key order is exercised too (a JavaScript caller cannot pass raw text to set()).
struct ForeignCase {
  std::string label;
  std::string text;
};

std::vector<ForeignCase> ForeignCases(int64_t now_ms, int64_t ttl_ms) {
  const std::string created = real::state::IsoTime(now_ms),
                    expires = real::state::IsoTime(now_ms + ttl_ms);
  const std::string times = "\"expiresAt\":\"" + expires + "\",\"createdAt\":\"" + created +
                            "\",\"updatedAt\":\"" + created + "\"";
  return {
      {"text that is not JSON", "hello"},
      {"a JSON number", "42"},
      {"an envelope without a version", "{\"value\":{\"n\":1}," + times + "}"},
      {"an envelope whose version is a string",
       "{\"value\":{\"n\":1},\"version\":\"3\"," + times + "}"},
      {"an envelope with the version twice (JSON.parse keeps the last)",
       "{\"value\":{\"n\":1},\"version\":2,\"version\":3," + times + "}"},
      {"an envelope in another key order",
       "{\"updatedAt\":\"" + created +
           "\",\"version\":4,\"value\":{\"b\":1,\"a\":2},\"createdAt\":\"" + created +
           "\",\"expiresAt\":\"" + expires + "\"}"},
      {"an envelope whose value has a key twice",
       "{\"value\":{\"a\":1,\"a\":2},\"version\":5," + times + "}"},
      {"a tombstone whose flag is a string", "{\"deleted\":\"true\"}"},
      {"an envelope whose value holds 2^53 + 1 (JSON.parse reads 2^53)",
       "{\"value\":{\"big\":9007199254740993},\"version\":6," + times + "}"},
  };
}

// foreign-values-consistent: another writer (or, with `old_pod`, an old pod's key) leaves a
// value this SDK did not write in `key`;
// get and compareAndSet at the version get() returned must agree about it.
// foreign-values-consistent: another writer leaves `c` in the key; then get, and compareAndSet
// at the version get() returned (and get again) must agree about it. list() is not judged: the
// other writer did not index the key, so a store that lists from an index cannot see it.
sim::Task<void> ForeignValueProbe(sim::Ctx& ctx, real::state::StateNamespace& ns,
                                  const real::state::StateNamespace* old_pod,
                                  const std::string& key, sim::Prng& rng, Recorder* rec) {
  constexpr int64_t kTtlMs = 60000;
  const std::vector<ForeignCase> cases = ForeignCases(ctx.now_ms(), kTtlMs);
  const ForeignCase& c = cases[rng.below(cases.size())];
  // Half the time, where the deploy has old pods, the value is in the key an old pod reads and
  // writes (the v1 key, which beta.24 claims): an old pod of another SDK wrote it.
  const bool old_key = old_pod && rng.chance({1, 2});
  const int64_t since = rec->world->now_ms();
  const std::string quoted = "\"" + key + "\"";
  const std::string lead = (old_key ? "the key an old pod keeps " + quoted + " in holds "
                                    : "another writer SET " + quoted + " to ") +
                           c.label + " (" + c.text + "); ";
  sim::Argv set_raw = {"SET", old_key ? old_pod->redis_key(key) : ns.redis_key(key), c.text, "PX",
                       std::to_string(kTtlMs)};
  const sim::CallResult r = co_await ctx.call(std::move(set_raw));
  const sim::Reply* ok = std::get_if<sim::Reply>(&r);
  if (!ok || ok->type != sim::Reply::Type::kStatus) co_return;  // the write itself failed (a fault)
  try {
    const std::optional<real::state::StateValue> got = co_await ns.get(key);
    const std::string read =
        got ? "get() returned version " + std::to_string(got->version) : "get() returned null";
    const int64_t expected = got ? got->version : 0;
    real::state::Json mine = real::state::Json::object();
    mine["mine"] = 1;
    const int64_t cas_from_ms = ctx.world().now_ms();
    const real::state::CasResult cas =
        co_await ns.compare_and_set(key, expected, mine, std::nullopt);
    const std::string cas_text =
        "compareAndSet(" + quoted + ", " + std::to_string(expected) + ", {\"mine\":1})";
    if (!cas.ok) {
      const std::string current = cas.current ? "version " + std::to_string(cas.current->version)
                                              : std::string("current = null");
      rec->findings.push_back({got ? kReadButCasRefused : kAbsentButCasRefused,
                               lead + read + ", and " + cas_text + " fails, reporting " + current +
                                   ": a read-then-compareAndSet loop never gets past this key",
                               {},
                               {Since(ctx, since)}});
      co_return;
    }
    // The expiry the write set (a PXAT, which Redis compares with its own clock; beta.3's PX counts
    // from when the script ran, at the earliest from the call): a client paused past it reads null
    // rightly, whatever clock computed it (keys-expire judges that clock).
    const int64_t expires_at_ms =
        ns.expiry_is_relative() ? cas_from_ms + ns.last_ttl_ms() : ns.last_expires_at_ms();
    const std::optional<real::state::StateValue> after = co_await ns.get(key);
    const bool expired = !after && ctx.world().now_ms() > expires_at_ms;
    if (!expired && (!after || after->value != mine))
      rec->findings.push_back(
          {kCasNotVisible,
           lead + read + ", " + cas_text + " succeeded, and get() then returned " + Show(after),
           {},
           {Since(ctx, since)}});
  } catch (const real::state::StateError&) {
    // A transport error leaves the outcome unknown; a quota error is the namespace's to give.
  }
}

class ForeignValuesConsistentRunner : public StateRun {
 public:
  using StateRun::StateRun;

 private:
  sim::Task<void> Client(sim::Ctx& ctx, int id) override {
    auto ns = Namespace(ctx);
    // The same namespace as an old pod of the deploy sees it.
    std::unique_ptr<real::state::StateNamespace> old_pod =
        OldPod(ctx, w, scripts, "ns", w.ns, "conn");
    for (int i = 0; i < w.ops; ++i) {
      if (w.skip.count({id, i})) continue;  // shrunk away
      sim::Prng rng(sim::OpSeed(w.seed, id, i));
      co_await ForeignValueProbe(ctx, *ns, old_pod.get(),
                                 "fv" + std::to_string(id) + "-" + std::to_string(i), rng, &rec);
    }
  }
};

}  // namespace

const StateProperty& ForeignValuesConsistent() {
  static const StateProperty kProperty = {
      {"foreign-values-consistent",
       "a key holding a value this SDK did not write (an older writer's or an operator's: not "
       "JSON, not an envelope, a version that is not a number, keys twice, another key order, "
       "2^53 + 1) "
       "reads the same through every operation: when get() returns null, compareAndSet(0) "
       "creates the key; when it returns version n, compareAndSet(n) replaces it, and get() "
       "then returns the new value",
       Always,
       AndResend(LosesWrites()),
       {{kAbsentButCasRefused,
         "get() returns null, and compareAndSet(0) fails reporting current = null"},
        {kReadButCasRefused, "get() returns version n, and compareAndSet(n) fails"},
        {kCasNotVisible, "compareAndSet succeeds and get() then returns something else"}}},
      MakeRun<ForeignValuesConsistentRunner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
