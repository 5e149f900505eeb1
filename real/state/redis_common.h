// What every Redis-backed port shares, because the seeds share it unchanged from beta.3 to
// beta.30: withRequiredRedis, enforceValueSize, the quota error, writeTiming, increment, and
// the envelope helpers (redisEnvelope, envelopeFromJson, isStateTombstone, publicStateKey).
// Each port cites its own seed lines; the helpers cite seed 001 (new side).
#pragma once

#include <optional>
#include <string>

#include "real/state/namespace.h"

namespace testbed::real::state {

class RedisNamespaceBase : public StateNamespace {
 public:
  RedisNamespaceBase(sim::Ctx& ctx, std::optional<std::string> provider_id, std::string name,
                     NamespaceOptions options)
      : ctx_(&ctx),
        provider_id_(std::move(provider_id)),
        name_(std::move(name)),
        options_(options) {}

  // increment (seed 001 502-511; beta.3's 507-515 has the same body): get, then set.
  sim::Task<StateValue> increment(std::string key, std::string field, double delta,
                                  std::optional<int64_t> ttl_ms) override;
  int64_t last_expires_at_ms() const override { return last_expires_at_ms_; }

 protected:
  struct Timing {
    std::string expires_at;
    int64_t expires_at_ms;
    int64_t index_ttl_ms;
  };
  // withRequiredRedis (138-150): a transport failure becomes UnsupportedProviderStateError.
  sim::Task<sim::Reply> required(sim::Argv argv);
  // required("GET", key): builds the Argv outside the coroutine (see Ctx::cmd on g++ 12).
  template <typename... Args>
  sim::Task<sim::Reply> req(Args&&... args) {
    return required(sim::MakeArgv(std::forward<Args>(args)...));
  }
  // enforceValueSize: throws past maxValueBytes. Returns the JSON.stringify text it measured,
  // which the envelope then embeds (the seed stringifies the value twice; once is the same).
  std::string enforce_value_size(const WriteValue& value) const;
  StateError quota_exceeded(int64_t count) const;
  // writeTiming (350-368): ttl defaults to defaultTtl and must not exceed maxTtl.
  Timing write_timing(std::optional<int64_t> ttl_ms) const;
  std::string provider() const { return provider_id_.value_or("default"); }
  // The first lines of set() since beta.23 (s001:396-406): createdAt and version from the
  // current value, writeTiming, and the envelope.
  struct SetPlan {
    std::string created_at;
    int64_t version;
    Timing timing;
    std::string updated_at;
    std::string envelope;
  };
  SetPlan plan_set(const std::optional<StateValue>& current, const std::string& value_text,
                   std::optional<int64_t> ttl) const;
  // indexedKeys (s001:314-328; unchanged since beta.23): drop expired index entries, then
  // up to `limit` keys that expire after now.
  sim::Task<std::vector<std::string>> indexed_keys_of(std::string index, int64_t limit);
  // The MGET and envelopeFromJson half of list(): rows for `keys`, named by their public key
  // (keys under `prefix`), skipping keys whose public key does not start with `filter`.
  // strict_json: beta.3's envelopeFromJson, which throws on a value that is not JSON.
  sim::Task<std::vector<StateValue>> mget_envelopes(std::vector<std::string> keys,
                                                    std::string prefix,
                                                    std::optional<std::string> filter,
                                                    bool strict_json);

  sim::Ctx* ctx_;  // the thread whose calls these are (rebind: another thread of the actor)

 public:
  void rebind(sim::Ctx& ctx) override { ctx_ = &ctx; }

 protected:
  std::optional<std::string> provider_id_;
  std::string name_;
  NamespaceOptions options_;
  mutable int64_t last_expires_at_ms_ = 0;
};

// Buffer.from(s, "utf8").toString("base64url").
std::string Base64Url(const std::string& s);
// A Redis key of the state store (v1 or v2: apifuse:provider-state:vN:...) with an index key's
// base64url part decoded, so that its provider and namespace read as in a value's key; "" for a
// key of no state store. For recognizing recorded traces.
std::string ReadableStateKey(const std::string& redis_key);
// redisEnvelope (263-275, body hidden): {value, version, expiresAt, createdAt, updatedAt},
// serialized as JSON.stringify would, in the RedisStateEnvelope type's field order.
// `value_text` is JSON.stringify(value).
std::string EnvelopeJson(const std::string& value_text, int64_t version,
                         const std::string& created_at, const std::string& expires_at,
                         const std::string& updated_at);
// envelopeFromJson (208-246) and isStateTombstone (248-261).
std::optional<StateValue> EnvelopeFromJson(const std::string& key,
                                           const std::optional<std::string>& raw);
bool IsStateTombstone(const std::optional<std::string>& raw);
// publicStateKey (180-188): strips the first prefix (plus ":") that the key starts with.
std::string PublicStateKey(const std::string& redis_key, const std::string& prefix);
// A bulk reply's string, or nullopt for nil.
std::optional<std::string> BulkOrNull(const sim::Reply& r);
std::optional<std::string> BulkOrNull(sim::Reply&& r);  // the same, moving the bytes out

}  // namespace testbed::real::state
