#include "real/state/v2.h"

#include <absl/container/flat_hash_map.h>
#include <absl/strings/str_cat.h>

#include <algorithm>

#include "sim/digest.h"

namespace testbed::real::state::v2 {
namespace {

constexpr const char* kRedisStatePrefix = "apifuse:provider-state:v2";
constexpr const char* kLegacyRedisStatePrefix = "apifuse:provider-state:v1";  // beta.24 (s000:21)
constexpr const char* kProviderScope = "scope:provider";
constexpr const char* kMissingConnectionScope = "scope:connection:missing";
constexpr const char* kTombstone = "{\"deleted\":true}";  // JSON.stringify({deleted: true})

// providerStatePrefix (163-169) and providerStateKey (171-178).
std::string ProviderStatePrefix(const std::string& provider, const std::string& ns,
                                const std::string& scope) {
  return absl::StrCat(kRedisStatePrefix, ":", provider, ":", ns, ":", scope);
}

}  // namespace

std::string ConnectionScopeDiscriminator(const std::optional<std::string>& connection_id) {
  if (!connection_id) return kMissingConnectionScope;
  // Memoized per thread: probes open a namespace per operation, and a SHA-256 costs more than
  // the rest of the namespace. Bounded: a workload has a few connection ids.
  thread_local absl::flat_hash_map<std::string, std::string> memo;
  auto it = memo.find(*connection_id);
  if (it != memo.end()) return it->second;
  if (memo.size() >= 256) memo.clear();
  return memo.emplace(*connection_id, "scope:connection:sha256:" + sim::Sha256Hex(*connection_id))
      .first->second;
}

Namespace::Namespace(sim::Ctx& ctx, Scripts scripts, Release release,
                     std::optional<std::string> provider_id, std::string name,
                     NamespaceOptions options, std::string scope_discriminator)
    : RedisNamespaceBase(ctx, std::move(provider_id), std::move(name), options),
      scripts_(std::move(scripts)),
      release_(release),
      scope_(options.provider_scope ? kProviderScope : std::move(scope_discriminator)),
      // providerStatePrefix (163-169)
      state_prefix_(ProviderStatePrefix(provider(), name_, scope_)),
      // indexKey (299-312): bookkeeping outside the caller-owned keyspace.
      index_key_(absl::StrCat(kRedisStatePrefix, ":index:", Base64Url(state_prefix_))) {}

std::string Namespace::redis_key(const std::string& key) const {
  return absl::StrCat(state_prefix(), ":", key);
}

// beta.24: legacyProviderStatePrefix / legacyProviderStateKey (s000:273-283).
std::string Namespace::legacy_redis_key(const std::string& key) const {
  return absl::StrCat(kLegacyRedisStatePrefix, ":", provider(), ":", name_, ":", key);
}

// beta.24: canClaimLegacy (s000:421-423).
bool Namespace::can_claim_legacy() const { return scope_ != kMissingConnectionScope; }

// readRaw (330-333; beta.24: s000:441-464 claims the v1 key first).
sim::Task<std::optional<std::string>> Namespace::read_raw(std::string key) {
  if (release_ == Release::kBeta30 || !can_claim_legacy()) {
    sim::Reply r = co_await req("GET", redis_key(key));
    co_return BulkOrNull(std::move(r));
  }
  const std::string now = std::to_string(ctx_->now_ms());
  const std::string max_entries = std::to_string(options_.max_entries);
  const std::string max_ttl = std::to_string(std::max<int64_t>(1, options_.max_ttl_ms));
  sim::Reply result = co_await req("EVAL", scripts_.claim_legacy, "3", redis_key(key), index_key(),
                                   legacy_redis_key(key), now, max_entries, max_ttl, kTombstone);
  const bool is_array = result.type == sim::Reply::Type::kArray && !result.elements.empty();
  if (is_array && result.elements[0].integer == 0)
    co_return sim::Fail(quota_exceeded(options_.max_entries + 1));
  if (is_array && result.elements.size() > 1) co_return BulkOrNull(std::move(result.elements[1]));
  co_return std::nullopt;
}

// list (370-387; s000:501-517 is the same).
sim::Task<std::vector<StateValue>> Namespace::list(std::optional<int64_t> limit,
                                                   std::optional<std::string> prefix) {
  const int64_t requested = std::max<int64_t>(0, limit.value_or(options_.max_entries));
  if (requested == 0) co_return std::vector<StateValue>{};
  std::vector<std::string> keys = co_await indexed_keys_of(index_key(), options_.max_entries);
  if (keys.empty()) co_return std::vector<StateValue>{};
  std::vector<StateValue> rows = co_await mget_envelopes(keys, state_prefix(), prefix, false);
  if (static_cast<int64_t>(rows.size()) > requested) rows.resize(requested);
  co_return rows;
}

// get (389-393).
sim::Task<std::optional<StateValue>> Namespace::get(std::string key) {
  std::optional<std::string> raw = co_await read_raw(key);
  if (IsStateTombstone(raw)) co_return std::nullopt;
  co_return EnvelopeFromJson(key, raw);
}

// set (395-427; s000:526-553): the version is computed here, from a separate read.
sim::Task<StateValue> Namespace::set(std::string key, WriteValue value,
                                     std::optional<int64_t> ttl) {
  const std::string value_text = enforce_value_size(value);
  std::optional<StateValue> current = co_await get(key);
  SetPlan plan = plan_set(current, value_text, ttl);
  const Timing& timing = plan.timing;
  const std::string& envelope = plan.envelope;
  const std::string now = std::to_string(ctx_->now_ms());
  const std::string max_entries = std::to_string(options_.max_entries);
  const std::string expires = std::to_string(timing.expires_at_ms);
  const std::string index_ttl = std::to_string(timing.index_ttl_ms);
  sim::Reply result;
  if (release_ == Release::kBeta30) {
    result = co_await req("EVAL", scripts_.set_with_quota, "2", redis_key(key), index_key(), now,
                          max_entries, expires, index_ttl, envelope);
  } else {  // beta.24: the v1 key as KEYS[3], and whether this scope may tombstone it
    result = co_await req("EVAL", scripts_.set_with_quota, "3", redis_key(key), index_key(),
                          legacy_redis_key(key), now, max_entries, expires, index_ttl, envelope,
                          can_claim_legacy() ? "1" : "0", kTombstone);
  }
  if (result.type != sim::Reply::Type::kArray || result.elements.empty() ||
      result.elements[0].integer != 1)
    co_return sim::Fail(quota_exceeded(options_.max_entries + 1));
  co_return StateValue{std::move(key),
                       std::move(value.json),
                       plan.version,
                       std::move(plan.timing.expires_at),
                       std::move(plan.created_at),
                       std::move(plan.updated_at)};
}

// compareAndSet (441-485; s000:575-621).
sim::Task<CasResult> Namespace::compare_and_set(std::string key, int64_t expected, WriteValue value,
                                                std::optional<int64_t> ttl) {
  const std::string value_text = enforce_value_size(value);
  const std::string created_at = IsoTime(ctx_->now_ms());
  const Timing timing = write_timing(ttl);
  const std::string envelope =
      EnvelopeJson(value_text, expected + 1, created_at, timing.expires_at, created_at);
  const std::string now = std::to_string(ctx_->now_ms());
  const std::string expected_s = std::to_string(expected);
  const std::string max_entries = std::to_string(options_.max_entries);
  const std::string expires = std::to_string(timing.expires_at_ms);
  const std::string index_ttl = std::to_string(timing.index_ttl_ms);
  sim::Reply result;
  if (release_ == Release::kBeta30) {
    result = co_await req("EVAL", scripts_.compare_and_set_with_quota, "2", redis_key(key),
                          index_key(), expected_s, now, max_entries, expires, index_ttl, envelope);
  } else {  // beta.24 (s000:590-606)
    result = co_await req("EVAL", scripts_.compare_and_set_with_quota, "3", redis_key(key),
                          index_key(), legacy_redis_key(key), expected_s, now, max_entries, expires,
                          index_ttl, envelope, can_claim_legacy() ? "1" : "0", kTombstone);
  }
  const bool is_array = result.type == sim::Reply::Type::kArray && !result.elements.empty();
  if (is_array && result.elements[0].integer == 0)
    co_return sim::Fail(quota_exceeded(options_.max_entries + 1));
  if (!is_array || result.elements[0].integer != 1) {
    std::optional<std::string> raw_current;
    if (is_array && result.elements.size() > 1)
      raw_current = BulkOrNull(std::move(result.elements[1]));
    co_return CasResult{false, std::nullopt, EnvelopeFromJson(key, raw_current)};
  }
  std::optional<std::string> raw_written;
  if (result.elements.size() > 1) raw_written = BulkOrNull(std::move(result.elements[1]));
  std::optional<StateValue> written = EnvelopeFromJson(key, raw_written);
  if (!written) throw StateError("Provider runtime state CAS returned an invalid value");
  co_return CasResult{true, std::move(written), std::nullopt};
}

// delete (487-500; s000:623-639).
sim::Task<void> Namespace::del(std::string key) {
  const std::string max_ttl = std::to_string(std::max<int64_t>(1, options_.max_ttl_ms));
  if (release_ == Release::kBeta30) {
    co_await req("EVAL", scripts_.delete_with_index, "2", redis_key(key), index_key(), kTombstone,
                 max_ttl);
  } else {
    co_await req("EVAL", scripts_.delete_with_index, "3", redis_key(key), index_key(),
                 legacy_redis_key(key), kTombstone, max_ttl, can_claim_legacy() ? "1" : "0");
  }
}

}  // namespace testbed::real::state::v2
