// Property "memory-matches-redis" of the state store: each client runs the same operations on the
// SDK's memory backend and on the Redis backend, in lockstep, and compares what each returns.
#include <set>
#include <string>
#include <vector>

#include "properties/state/state_workloads.h"

namespace testbed::props::state {
namespace {

class Runner : public StateRun {
 public:
  using StateRun::StateRun;

 private:
  sim::Task<void> Client(sim::Ctx& ctx, int id) override {
    auto ns = Namespace(ctx);
    // A namespace of the client's own on each backend (so that list() and the quota see only
    // its calls), maxEntries 2 over three keys, maxTtl at the probe's TTL bound; the names
    // carry characters a key-building or glob-matching store may mistake (names-are-opaque),
    // drawn once per client from a stream of its own.
    static const char* kOdd[] = {"", ":*", "?[\\]", "\xC3\xA9\xF0\x9F\x99\x82"};
    const std::string odd = kOdd[sim::Prng(sim::OpSeed(w.seed, id, 0) ^ 0x6b657973ULL).below(4)];
    const std::string space = "mm" + std::to_string(id) + odd;
    real::state::NamespaceOptions options = w.ns;
    options.max_entries = 2;
    if (w.probe_ttl_max_ms > 0) options.max_ttl_ms = w.probe_ttl_max_ms;
    const std::vector<std::string> keys = {"k0" + odd, "k1" + odd, "k2" + odd};
    auto redis = real::state::MakeNamespace(
        w.version, ctx, scripts, std::string("provider-under-test"), space, options, "conn");
    real::state::memory_beta30::Namespace memory(ctx.clock(), options);
    for (int i = 0; i < w.ops; ++i) {
      if (w.skip.count({id, i})) continue;  // shrunk away
      sim::Prng rng(sim::OpSeed(w.seed, id, i));
      co_await MemoryLockstep(ctx, *redis, memory, keys, options, rng, i, w.probe_ttl_max_ms, space,
                              &desynced_, &rec);
      co_await ctx.sleep(rng.range(0, 10));
    }
  }
  std::set<std::string> desynced_;  // namespaces an unknown outcome hit
};

}  // namespace

const StateProperty& MemoryMatchesRedis() {
  static const StateProperty kProperty = {
      {"memory-matches-redis",
       "the memory backend answers as the Redis backend does",
       [](const std::string& v, const std::string&) { return v == "beta30"; },
       AndResend(MovesTheInstant()),
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
         "unavailable) where the memory backend answers"}}},
      MakeRun<Runner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
