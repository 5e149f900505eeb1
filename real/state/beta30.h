// @apifuse/provider-sdk 2.2.0-beta.30, package/src/runtime/state.ts (seed 001, new side):
// RedisProviderStateNamespace and RedisProviderRuntimeState, ported line by line as
// coroutines over the simulation's Ctx. Line numbers in comments are the seed file's.
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
#pragma once

#include <string>
#include <vector>

#include "real/script_catalog.h"
#include "real/state/state_api.h"
#include "sim/runtime.h"

namespace testbed::state::beta30 {

// The scripts this version runs, by constant name, from a catalog (shipped or --scripts).
struct Scripts {
  std::string set_with_quota;
  std::string compare_and_set_with_quota;
  std::string delete_with_index;
  static Scripts From(const ScriptCatalog& catalog, const std::string& dir = "state/beta30");
};

// connectionScopeDiscriminator (157-161).
std::string ConnectionScopeDiscriminator(const std::optional<std::string>& connection_id);

class Namespace {
 public:
  // RedisProviderRuntimeState.namespace (537-545): provider scope overrides the connection's.
  Namespace(sim::Ctx& ctx, const Scripts& scripts, std::optional<std::string> provider_id,
            std::string name, NamespaceOptions options, std::string scope_discriminator);

  Task<std::vector<StateValue>> list(std::optional<int64_t> limit, std::optional<std::string> prefix);
  Task<std::optional<StateValue>> get(std::string key);
  Task<StateValue> set(std::string key, Json value, std::optional<int64_t> ttl_ms);
  Task<CasResult> compare_and_set(std::string key, int64_t expected_version, Json value,
                                  std::optional<int64_t> ttl_ms);
  Task<void> del(std::string key);
  Task<StateValue> increment(std::string key, std::string field, double delta,
                             std::optional<int64_t> ttl_ms);

  std::string redis_key(const std::string& key) const;
  std::string index_key() const;
  // Test seam (like the SDK's __redisClient): the absolute expiry of the last write this
  // namespace prepared, known even when the write's outcome is not.
  int64_t last_expires_at_ms() const { return last_expires_at_ms_; }

 private:
  struct Timing {
    std::string expires_at;
    int64_t expires_at_ms;
    int64_t index_ttl_ms;
  };
  std::string state_prefix() const;
  Task<std::vector<std::string>> indexed_keys(int64_t limit);
  Task<std::optional<std::string>> read_raw(std::string key);
  void enforce_value_size(const Json& value) const;
  StateError quota_exceeded() const;
  Timing write_timing(std::optional<int64_t> ttl_ms) const;
  Task<Reply> required(Argv argv);  // withRequiredRedis
  // required("GET", key): builds the Argv outside the coroutine (see Ctx::cmd on g++ 12).
  template <typename... Args>
  Task<Reply> req(Args&&... args) {
    return required(Argv{std::string(std::forward<Args>(args))...});
  }

  sim::Ctx& ctx_;
  const Scripts& scripts_;
  std::optional<std::string> provider_id_;
  std::string name_;
  NamespaceOptions options_;
  std::string scope_;
  mutable int64_t last_expires_at_ms_ = 0;
};

// envelopeFromJson (208-246) and isStateTombstone (248-261).
std::optional<StateValue> EnvelopeFromJson(const std::string& key, const std::optional<std::string>& raw);
bool IsStateTombstone(const std::optional<std::string>& raw);

}  // namespace testbed::state::beta30
