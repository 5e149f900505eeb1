// The v1 Redis clients of @apifuse/provider-sdk, ported line by line as coroutines:
//   - Beta3: 2.2.0-beta.3 (seed 001, old side). No scripts: the quota and list() run KEYS over
//     the namespace prefix, set() is GET then SET ... PX, compareAndSet() is get() then set().
//   - Beta23: 2.2.0-beta.23 (seed 000, old side). The namespace ZSET index, the quota and CAS
//     scripts, and the cyclic, bounded SCAN backfill that imports keys old pods wrote without
//     the index (BACKFILL_LEGACY_INDEX_SCRIPT, its comment at s000:147-155).
// Neither has forConnection: every connection of a provider shares the namespace.
//
// Port notes (choices where the diff hides lines, or where C++ differs):
//   - beta.3's envelopeFromJson calls JSON.parse without a try: a value that is not JSON makes
//     get()/list() throw. It throws StateError("JSON.parse: ...") here (not a transport error).
//   - beta.3 has no writeTiming: the TTL is options.ttl ?? defaultTtl, not checked against
//     maxTtl, and Redis gets it relative (SET ... PX ttlMs). The envelope's expiresAt is the
//     client's Date.now() + ttlMs; Redis expires the key ttlMs after it runs the SET, so
//     last_expiry_window() is [invoke + ttl, return + ttl] in server time.
//   - beta.23's set/compareAndSet bodies hidden between hunks (s000:421-433, 466-478) build
//     the envelope as beta.30 does: writeTiming(options?.ttl), redisEnvelope(value, version,
//     createdAt, timing.expiresAt).
#pragma once

#include <string>
#include <vector>

#include "real/script_catalog.h"
#include "real/state/redis_common.h"

namespace testbed::real::state::v1 {

class Beta3 : public RedisNamespaceBase {
 public:
  using RedisNamespaceBase::RedisNamespaceBase;

  sim::Task<std::vector<StateValue>> list(std::optional<int64_t> limit,
                                          std::optional<std::string> prefix) override;
  sim::Task<std::optional<StateValue>> get(std::string key) override;
  sim::Task<StateValue> set(std::string key, WriteValue value,
                            std::optional<int64_t> ttl_ms) override;
  sim::Task<CasResult> compare_and_set(std::string key, int64_t expected_version, WriteValue value,
                                       std::optional<int64_t> ttl_ms) override;
  sim::Task<void> del(std::string key) override;
  std::string redis_key(const std::string& key) const override;
  bool expiry_is_relative() const override { return true; }
  int64_t last_ttl_ms() const override { return last_ttl_ms_; }

 private:
  std::string prefix() const;
  sim::Task<std::vector<std::string>> active_keys();
  sim::Task<void> enforce_max_entries(std::string key);
  int64_t last_ttl_ms_ = 0;
};

// providerStatePrefix of v1 (both releases): apifuse:provider-state:v1:<provider>:<namespace>.
std::string ProviderStatePrefix(const std::optional<std::string>& provider_id,
                                const std::string& ns);
// indexKey (s000:263-272, old side).
std::string IndexKeyOf(const std::string& state_prefix);

class Beta23 : public RedisNamespaceBase {
 public:
  struct Scripts {  // views of the catalog's bodies, as v2::Scripts
    std::string_view set_with_quota, compare_and_set_with_quota, delete_with_index,
        backfill_legacy_index;
  };
  Beta23(sim::Ctx& ctx, Scripts scripts, std::optional<std::string> provider_id, std::string name,
         NamespaceOptions options)
      : RedisNamespaceBase(ctx, std::move(provider_id), std::move(name), options),
        scripts_(std::move(scripts)),
        state_prefix_(ProviderStatePrefix(provider_id_, name_)),
        index_key_(IndexKeyOf(state_prefix_)) {}

  sim::Task<std::vector<StateValue>> list(std::optional<int64_t> limit,
                                          std::optional<std::string> prefix) override;
  sim::Task<std::optional<StateValue>> get(std::string key) override;
  sim::Task<StateValue> set(std::string key, WriteValue value,
                            std::optional<int64_t> ttl_ms) override;
  sim::Task<CasResult> compare_and_set(std::string key, int64_t expected_version, WriteValue value,
                                       std::optional<int64_t> ttl_ms) override;
  sim::Task<void> del(std::string key) override;
  std::string redis_key(const std::string& key) const override;
  const std::string& index_key() const { return index_key_; }

 private:
  const std::string& state_prefix() const { return state_prefix_; }
  sim::Task<void> backfill_legacy_index();

  const Scripts scripts_;
  // Pure functions of the base's fields, computed once (the seed recomputes them per call).
  const std::string state_prefix_;
  const std::string index_key_;
};

}  // namespace testbed::real::state::v1
