// The v2 Redis client (RedisProviderStateNamespace and RedisProviderRuntimeState) of
// @apifuse/provider-sdk 2.2.0-beta.24 (seed 000, new side) and 2.2.0-beta.30 (seed 001, new
// side), ported line by line as coroutines over the simulation's Ctx. The two releases share
// every method but the legacy (v1) handling that beta.24 added and beta.30 no longer has:
// lines marked "beta.24:" run only for Release::kBeta24. Line numbers without a seed are seed
// 001's; "s000:NNN" are seed 000's (new side).
//
// Port notes (choices where the diff hides lines, or where C++ differs):
//   - redisEnvelope (266-275 hidden) builds {value, version, createdAt, updatedAt, expiresAt};
//     updatedAt is the time of the write. Field order follows the RedisStateEnvelope type.
//   - envelopeFromJson (232-244 hidden) accepts an object whose version is a number and whose
//     expiresAt, createdAt and updatedAt are strings; it does not look at the clock.
//   - requireRedisReady/ensureRedisReady (not shown) check the client's connection state
//     without a round trip; here they do nothing, and a transport failure surfaces on the
//     call itself as withRequiredRedis's "timed out" / "unavailable" error.
//   - ioredis `eval` sends EVAL with the script body (no EVALSHA).
//   - Date.now() is the actor's clock (ctx.now_ms(): virtual time + skew + jumps).
//   - A value goes out as JSON.stringify writes the caller's object: WriteValue keeps an
//     nlohmann::ordered_json's member order (state_api.h); increment writes back in the stored
//     order, as `{ ...current, [field]: n }` does. tests/port_fidelity_state_test.cc runs the
//     reconstructed runtime (tests/js/state/) beside this port.
//   - beta.24's readRaw throws quotaExceeded() when the claim script returns 0 (s000:461);
//     the count in its message is maxEntries + 1, as beta.30's quotaExceeded() prints.
#pragma once

#include <string>
#include <vector>

#include "real/script_catalog.h"
#include "real/state/redis_common.h"

namespace testbed::real::state::v2 {

enum class Release { kBeta24, kBeta30 };

// The scripts a release runs, by constant name, from a catalog (shipped or --scripts).
// Views of the catalog's bodies (the catalog outlives every run), so a namespace costs no copies.
struct Scripts {
  std::string_view set_with_quota;
  std::string_view compare_and_set_with_quota;
  std::string_view delete_with_index;
  std::string_view claim_legacy;  // beta.24 only
};

// connectionScopeDiscriminator (157-161).
std::string ConnectionScopeDiscriminator(const std::optional<std::string>& connection_id);

class Namespace : public RedisNamespaceBase {
 public:
  // RedisProviderRuntimeState.namespace (537-545): provider scope overrides the connection's.
  Namespace(sim::Ctx& ctx, Scripts scripts, Release release, std::optional<std::string> provider_id,
            std::string name, NamespaceOptions options, std::string scope_discriminator);

  sim::Task<std::vector<StateValue>> list(std::optional<int64_t> limit,
                                          std::optional<std::string> prefix) override;
  sim::Task<std::optional<StateValue>> get(std::string key) override;
  sim::Task<StateValue> set(std::string key, WriteValue value,
                            std::optional<int64_t> ttl_ms) override;
  sim::Task<CasResult> compare_and_set(std::string key, int64_t expected_version, WriteValue value,
                                       std::optional<int64_t> ttl_ms) override;
  sim::Task<void> del(std::string key) override;

  std::string redis_key(const std::string& key) const override;
  std::string legacy_redis_key(const std::string& key) const;  // beta.24: the v1 key
  const std::string& index_key() const { return index_key_; }

 private:
  const std::string& state_prefix() const { return state_prefix_; }
  bool can_claim_legacy() const;
  sim::Task<std::optional<std::string>> read_raw(std::string key);

  const Scripts scripts_;
  const Release release_;
  const std::string scope_;
  // Pure functions of the fields above, computed once (the seed recomputes them per call).
  const std::string state_prefix_;
  const std::string index_key_;
};

}  // namespace testbed::real::state::v2
