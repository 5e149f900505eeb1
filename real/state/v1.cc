#include "real/state/v1.h"

#include <absl/strings/str_cat.h>

#include <algorithm>

#include "model/json_text.h"

namespace testbed::real::state::v1 {
namespace {

constexpr const char* kRedisStatePrefix = "apifuse:provider-state:v1";
constexpr int kLegacyIndexScanCount = 256;   // s000:15 (old side)
constexpr int kLegacyIndexScanMaxPages = 8;  // s000:16 (old side)

// redisGlobLiteral (s000:152-154, old side): value.replace(/[\\*?\[\]]/g, "\\$&").
std::string RedisGlobLiteral(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '*' || c == '?' || c == '[' || c == ']') out += '\\';
    out += c;
  }
  return out;
}

// envelopeFromJson of beta.3 (s001:213-222, old side): JSON.parse without a try.
std::optional<StateValue> Beta3EnvelopeFromJson(const std::string& key,
                                                const std::optional<std::string>& raw) {
  if (!raw || raw->empty()) return std::nullopt;
  if (model::ParseJsonMemo(*raw).is_discarded())
    throw StateError("JSON.parse: unexpected token in the value of " + key);
  return EnvelopeFromJson(key, raw);
}

}  // namespace

std::string ProviderStatePrefix(const std::optional<std::string>& provider_id,
                                const std::string& ns) {
  return absl::StrCat(kRedisStatePrefix, ":", provider_id.value_or("default"), ":", ns);
}

// ---------------------------------------------------------------- beta.3 (seed 001, old side)

std::string Beta3::redis_key(const std::string& key) const {
  return ProviderStatePrefix(provider_id_, name_) + ":" + key;  // providerStateKey (s001:87-93)
}
std::string Beta3::prefix() const { return ProviderStatePrefix(provider_id_, name_) + ":"; }

// activeKeys (s001:288-293): KEYS over the whole namespace prefix, unescaped.
sim::Task<std::vector<std::string>> Beta3::active_keys() {
  sim::Reply r = co_await req("KEYS", prefix() + "*");
  std::vector<std::string> keys;
  for (const sim::Reply& k : r.elements) keys.push_back(k.str);
  co_return keys;
}

// enforceMaxEntries (s001:344-352).
sim::Task<void> Beta3::enforce_max_entries(std::string key) {
  std::vector<std::string> keys = co_await active_keys();
  const std::string own = redis_key(key);
  const int64_t others =
      std::count_if(keys.begin(), keys.end(), [&](const std::string& k) { return k != own; });
  if (others >= options_.max_entries) throw quota_exceeded(others + 1);
}

// list (s001:354-378): every active key with the prefix, limit defaults to all of them.
sim::Task<std::vector<StateValue>> Beta3::list(std::optional<int64_t> limit,
                                               std::optional<std::string> prefix) {
  std::vector<std::string> all = co_await active_keys();
  std::vector<std::string> keys;
  for (const auto& k : all) {
    const std::string public_key = PublicStateKey(k, ProviderStatePrefix(provider_id_, name_));
    if (!prefix || prefix->empty() || public_key.rfind(*prefix, 0) == 0) keys.push_back(k);
  }
  const int64_t n = std::max<int64_t>(0, limit.value_or(static_cast<int64_t>(keys.size())));
  if (static_cast<int64_t>(keys.size()) > n) keys.resize(n);
  if (keys.empty()) co_return std::vector<StateValue>{};
  std::vector<StateValue> rows =
      co_await mget_envelopes(keys, ProviderStatePrefix(provider_id_, name_), std::nullopt, true);
  co_return rows;
}

// get (s001:380-386).
sim::Task<std::optional<StateValue>> Beta3::get(std::string key) {
  sim::Reply r = co_await req("GET", redis_key(key));
  co_return Beta3EnvelopeFromJson(key, BulkOrNull(std::move(r)));
}

// set (s001:388-421): quota by KEYS, then GET, then SET ... PX: three separate round trips.
sim::Task<StateValue> Beta3::set(std::string key, WriteValue value, std::optional<int64_t> ttl) {
  const std::string value_text = enforce_value_size(value);
  co_await enforce_max_entries(key);
  std::optional<StateValue> current = co_await get(key);
  const std::string created_at = current ? current->created_at : IsoTime(ctx_->now_ms());
  const int64_t version = (current ? current->version : 0) + 1;
  const int64_t ttl_ms = std::max<int64_t>(1, ttl.value_or(options_.default_ttl_ms));
  const int64_t expires_at_ms = ctx_->now_ms() + ttl_ms;  // resolveExpiresAt
  last_expires_at_ms_ = expires_at_ms;
  last_ttl_ms_ = ttl_ms;
  const std::string expires_at = IsoTime(expires_at_ms);
  const std::string updated_at = IsoTime(ctx_->now_ms());
  const std::string envelope =
      EnvelopeJson(value_text, version, created_at, expires_at, updated_at);
  co_await req("SET", redis_key(key), envelope, "PX", std::to_string(ttl_ms));
  co_return StateValue{key, std::move(value.json), version, expires_at, created_at, updated_at};
}

// compareAndSet (s001:438-450): get(), compare, then set() -- not atomic.
sim::Task<CasResult> Beta3::compare_and_set(std::string key, int64_t expected, WriteValue value,
                                            std::optional<int64_t> ttl) {
  enforce_value_size(value);
  std::optional<StateValue> current = co_await get(key);
  if ((current ? current->version : 0) != expected)
    co_return CasResult{false, std::nullopt, current};
  StateValue written = co_await set(key, value, ttl);
  co_return CasResult{true, written, std::nullopt};
}

// delete (s001:452-455).
sim::Task<void> Beta3::del(std::string key) { co_await req("DEL", redis_key(key)); }

// --------------------------------------------------------------- beta.23 (seed 000, old side)

std::string Beta23::redis_key(const std::string& key) const { return state_prefix() + ":" + key; }
std::string IndexKeyOf(const std::string& state_prefix) {
  return std::string(kRedisStatePrefix) + ":index:" + Base64Url(state_prefix);
}

// backfillLegacyIndex (s000:283-331, old side): at most 8 SCAN pages per call, from a cursor
// kept in Redis, importing live envelopes that are still unchanged when the script runs.
sim::Task<void> Beta23::backfill_legacy_index() {
  const std::string cursor_key = index_key() + ":legacy-scan-cursor";  // legacyScanCursorKey
  sim::Reply stored = co_await req("GET", cursor_key);
  std::string cursor = stored.type == sim::Reply::Type::kBulk ? stored.str : "0";
  const std::string pattern = RedisGlobLiteral(state_prefix() + ":") + "*";
  const std::string index_ttl_ms = std::to_string(std::max<int64_t>(1, options_.max_ttl_ms));
  const std::string count = std::to_string(kLegacyIndexScanCount);
  for (int page = 0; page < kLegacyIndexScanMaxPages; ++page) {
    sim::Reply scanned = co_await req("SCAN", cursor, "MATCH", pattern, "COUNT", count);
    const std::string next_cursor = scanned.elements.at(0).str;
    std::vector<std::string> keys;
    for (const sim::Reply& k : scanned.elements.at(1).elements) keys.push_back(k.str);
    std::vector<std::optional<std::string>> raw_values;
    if (!keys.empty()) {
      sim::Argv mget = {"MGET"};
      mget.insert(mget.end(), keys.begin(), keys.end());
      sim::Reply values = co_await required(mget);
      for (const sim::Reply& v : values.elements) raw_values.push_back(BulkOrNull(v));
    }
    const int64_t now = ctx_->now_ms();
    sim::Argv eval = {"EVAL",       std::string(scripts_.backfill_legacy_index),
                      "2",          index_key(),
                      cursor_key,   std::to_string(now),
                      index_ttl_ms, next_cursor};
    for (size_t i = 0; i < raw_values.size() && i < keys.size(); ++i) {
      if (!raw_values[i]) continue;
      auto envelope = EnvelopeFromJson(PublicStateKey(keys[i], state_prefix()), raw_values[i]);
      // Date.parse(envelope.expiresAt): the envelopes hold toISOString() output.
      const std::optional<int64_t> expires_at_ms =
          envelope ? ParseIsoTime(envelope->expires_at) : std::nullopt;
      if (!expires_at_ms || *expires_at_ms <= now) continue;
      eval.push_back(keys[i]);
      eval.push_back(*raw_values[i]);
      eval.push_back(std::to_string(*expires_at_ms));
    }
    co_await required(eval);
    cursor = next_cursor;
    if (cursor == "0") break;
  }
}

// list (s000:387-404, old side).
sim::Task<std::vector<StateValue>> Beta23::list(std::optional<int64_t> limit,
                                                std::optional<std::string> prefix) {
  const int64_t requested = std::max<int64_t>(0, limit.value_or(options_.max_entries));
  if (requested == 0) co_return std::vector<StateValue>{};
  co_await backfill_legacy_index();
  std::vector<std::string> indexed = co_await indexed_keys_of(index_key(), options_.max_entries);
  std::vector<std::string> keys;
  for (const auto& k : indexed) {
    const std::string public_key = PublicStateKey(k, state_prefix());
    if (!prefix || prefix->empty() || public_key.rfind(*prefix, 0) == 0) keys.push_back(k);
  }
  if (static_cast<int64_t>(keys.size()) > requested) keys.resize(requested);
  if (keys.empty()) co_return std::vector<StateValue>{};
  std::vector<StateValue> rows = co_await mget_envelopes(keys, state_prefix(), std::nullopt, false);
  co_return rows;
}

// get (s000:406-409, old side).
sim::Task<std::optional<StateValue>> Beta23::get(std::string key) {
  sim::Reply r = co_await req("GET", redis_key(key));
  co_return EnvelopeFromJson(key, BulkOrNull(std::move(r)));
}

// set (s000:411-437, old side).
sim::Task<StateValue> Beta23::set(std::string key, WriteValue value, std::optional<int64_t> ttl) {
  const std::string value_text = enforce_value_size(value);
  co_await backfill_legacy_index();
  std::optional<StateValue> current = co_await get(key);
  const SetPlan plan = plan_set(current, value_text, ttl);
  const Timing& timing = plan.timing;
  const std::string& envelope = plan.envelope;
  const std::string now = std::to_string(ctx_->now_ms());
  sim::Reply result =
      co_await req("EVAL", scripts_.set_with_quota, "2", redis_key(key), index_key(), now,
                   std::to_string(options_.max_entries), std::to_string(timing.expires_at_ms),
                   std::to_string(timing.index_ttl_ms), envelope);
  if (result.type != sim::Reply::Type::kArray || result.elements.empty() ||
      result.elements[0].integer != 1)
    co_return sim::Fail(quota_exceeded(options_.max_entries + 1));
  co_return StateValue{key,
                       std::move(value.json),
                       plan.version,
                       timing.expires_at,
                       plan.created_at,
                       plan.updated_at};
}

// compareAndSet (s000:458-509, old side): a client-side version check, then the script checks
// again.
sim::Task<CasResult> Beta23::compare_and_set(std::string key, int64_t expected, WriteValue value,
                                             std::optional<int64_t> ttl) {
  const std::string value_text = enforce_value_size(value);
  co_await backfill_legacy_index();
  std::optional<StateValue> current = co_await get(key);
  if ((current ? current->version : 0) != expected)
    co_return CasResult{false, std::nullopt, current};
  const std::string created_at = current ? current->created_at : IsoTime(ctx_->now_ms());
  const Timing timing = write_timing(ttl);
  const std::string updated_at = IsoTime(ctx_->now_ms());
  const std::string envelope =
      EnvelopeJson(value_text, expected + 1, created_at, timing.expires_at, updated_at);
  const std::string now = std::to_string(ctx_->now_ms());
  sim::Reply result = co_await req(
      "EVAL", scripts_.compare_and_set_with_quota, "2", redis_key(key), index_key(),
      std::to_string(expected), now, std::to_string(options_.max_entries),
      std::to_string(timing.expires_at_ms), std::to_string(timing.index_ttl_ms), envelope);
  const bool is_array = result.type == sim::Reply::Type::kArray && !result.elements.empty();
  if (is_array && result.elements[0].integer == 0)
    co_return sim::Fail(quota_exceeded(options_.max_entries + 1));
  if (!is_array || result.elements[0].integer != 1) {
    std::optional<std::string> raw_current;
    if (is_array && result.elements.size() > 1)
      raw_current = BulkOrNull(std::move(result.elements[1]));
    co_return CasResult{false, std::nullopt, EnvelopeFromJson(key, raw_current)};
  }
  co_return CasResult{true,
                      StateValue{key, std::move(value.json), expected + 1, timing.expires_at,
                                 created_at, updated_at},
                      std::nullopt};
}

// delete (s000:511-521, old side).
sim::Task<void> Beta23::del(std::string key) {
  co_await req("EVAL", scripts_.delete_with_index, "2", redis_key(key), index_key());
}

}  // namespace testbed::real::state::v1
