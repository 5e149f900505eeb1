#include "real/state/redis_common.h"

#include <absl/container/flat_hash_map.h>
#include <absl/strings/escaping.h>
#include <absl/strings/match.h>
#include <absl/strings/str_cat.h>

#include <algorithm>

#include "model/json_text.h"

namespace testbed::real::state {

sim::Task<sim::Reply> RedisNamespaceBase::required(sim::Argv argv) {
  sim::CallResult r = co_await ctx_->call(std::move(argv));
  if (auto* t = std::get_if<sim::TransportError>(&r)) {
    if (t->what == "timeout")
      co_return sim::Fail(StateError("Provider runtime state Redis timed out"));
    co_return sim::Fail(StateError("Provider runtime state Redis is unavailable"));
  }
  sim::Reply& reply = std::get<sim::Reply>(r);
  if (reply.is_error())
    co_return sim::Fail(StateError("Provider runtime state Redis is unavailable"));
  co_return std::move(reply);
}

std::string RedisNamespaceBase::enforce_value_size(const WriteValue& value) const {
  std::string text = value.stringify();
  const int64_t bytes = static_cast<int64_t>(text.size());
  if (bytes > options_.max_value_bytes)
    throw StateError("Provider runtime state value exceeds maxValueBytes (" +
                     std::to_string(bytes) + " > " + std::to_string(options_.max_value_bytes) +
                     ")");
  return text;
}

StateError RedisNamespaceBase::quota_exceeded(int64_t count) const {
  return StateError("Provider runtime state namespace quota exceeded (" + std::to_string(count) +
                    " > " + std::to_string(options_.max_entries) + ")");
}

RedisNamespaceBase::Timing RedisNamespaceBase::write_timing(std::optional<int64_t> ttl) const {
  const int64_t ttl_ms = std::max<int64_t>(1, ttl.value_or(options_.default_ttl_ms));
  const int64_t max_ttl_ms = std::max<int64_t>(1, options_.max_ttl_ms);
  if (ttl_ms > max_ttl_ms)
    throw StateError("Provider runtime state ttl exceeds maxTtl (" + std::to_string(ttl_ms) +
                     " > " + std::to_string(max_ttl_ms) + ")");
  const int64_t expires_at_ms = ctx_->now_ms() + ttl_ms;
  last_expires_at_ms_ = expires_at_ms;
  return {IsoTime(expires_at_ms), expires_at_ms, max_ttl_ms};
}

RedisNamespaceBase::SetPlan RedisNamespaceBase::plan_set(const std::optional<StateValue>& current,
                                                         const std::string& value_text,
                                                         std::optional<int64_t> ttl) const {
  SetPlan p;
  p.created_at = current ? current->created_at : IsoTime(ctx_->now_ms());
  p.version = (current ? current->version : 0) + 1;
  p.timing = write_timing(ttl);
  p.updated_at = IsoTime(ctx_->now_ms());
  p.envelope = EnvelopeJson(value_text, p.version, p.created_at, p.timing.expires_at, p.updated_at);
  return p;
}

sim::Task<StateValue> RedisNamespaceBase::increment(std::string key, std::string field,
                                                    double delta, std::optional<int64_t> ttl) {
  std::optional<StateValue> got = co_await get(key);
  // `(await this.get(key))?.value ?? {}`, spread: a string or an array spreads its elements,
  // and an object keeps its members' stored order, the new field last.
  auto spread =
      model::SpreadForIncrement(got ? got->ordered_value() : nlohmann::ordered_json(), field);
  nlohmann::ordered_json current = std::move(spread.object);
  current[field] = spread.previous + delta;
  StateValue written = co_await set(key, WriteValue(current), ttl);
  co_return written;
}

sim::Task<std::vector<std::string>> RedisNamespaceBase::indexed_keys_of(std::string index,
                                                                        int64_t limit) {
  const int64_t now = ctx_->now_ms();
  co_await req("ZREMRANGEBYSCORE", index, "-inf", std::to_string(now));
  const std::string from = std::to_string(now + 1);
  const std::string count = std::to_string(limit);
  sim::Reply r = co_await req("ZRANGEBYSCORE", index, from, "+inf", "LIMIT", "0", count);
  std::vector<std::string> keys;
  for (const sim::Reply& k : r.elements) keys.push_back(k.str);
  co_return keys;
}

sim::Task<std::vector<StateValue>> RedisNamespaceBase::mget_envelopes(
    std::vector<std::string> keys, std::string prefix, std::optional<std::string> filter,
    bool strict_json) {
  sim::Argv mget = {"MGET"};
  mget.insert(mget.end(), keys.begin(), keys.end());
  sim::Reply values = co_await required(mget);
  std::vector<StateValue> rows;
  for (size_t i = 0; i < values.elements.size() && i < keys.size(); ++i) {
    const std::string public_key = PublicStateKey(keys[i], prefix);
    if (filter && !filter->empty() && public_key.rfind(*filter, 0) != 0) continue;
    const std::optional<std::string> raw = BulkOrNull(values.elements[i]);
    if (strict_json && raw && !raw->empty() && model::ParseJsonMemo(*raw).is_discarded())
      throw StateError("JSON.parse: unexpected token in the value of " + public_key);
    auto value = EnvelopeFromJson(public_key, raw);
    if (value) rows.push_back(*value);
  }
  co_return rows;
}

std::string Base64Url(const std::string& s) {
  // Node's base64url has no padding, as absl's web-safe alphabet without padding.
  // Memoized per thread: a probe opens a namespace per operation, each naming its index key by
  // the base64url of its prefix; a workload has a few prefixes. Bounded.
  thread_local absl::flat_hash_map<std::string, std::string> memo;
  auto it = memo.find(s);
  if (it != memo.end()) return it->second;
  if (memo.size() >= 256) memo.clear();
  return memo.emplace(s, absl::WebSafeBase64Escape(s)).first->second;
}

std::string ReadableStateKey(const std::string& redis_key) {
  // The v1 and v2 prefixes (kRedisStatePrefix in v1.cc and v2.cc) and their index keys.
  const std::string kState = "apifuse:provider-state:v";
  if (!absl::StartsWith(redis_key, kState)) return "";
  const size_t index = redis_key.find(":index:");
  if (index == std::string::npos || index != kState.size() + 1) return redis_key;
  const size_t start = index + 7;
  const size_t end = redis_key.find(':', start);  // ":legacy-scan-cursor" after the encoding
  std::string decoded;
  if (!absl::WebSafeBase64Unescape(
          redis_key.substr(start, end == std::string::npos ? std::string::npos : end - start),
          &decoded))
    return redis_key;
  return redis_key.substr(0, start) + decoded +
         (end == std::string::npos ? "" : redis_key.substr(end));
}

std::string EnvelopeJson(const std::string& value_text, int64_t version,
                         const std::string& created_at, const std::string& expires_at,
                         const std::string& updated_at) {
  // JSON.stringify keeps insertion order; nlohmann sorts keys. Write the fields in the
  // envelope type's order by hand.
  std::string out;
  out.reserve(value_text.size() + 128);
  absl::StrAppend(&out, "{\"value\":", value_text, ",\"version\":", version, ",\"expiresAt\":");
  model::JsonAppendString(expires_at, out);
  out += ",\"createdAt\":";
  model::JsonAppendString(created_at, out);
  out += ",\"updatedAt\":";
  model::JsonAppendString(updated_at, out);
  out += '}';
  return out;
}

std::optional<StateValue> EnvelopeFromJson(const std::string& key,
                                           const std::optional<std::string>& raw) {
  if (!raw || raw->empty()) return std::nullopt;  // 213: if (!raw) return null
  const Json& parsed = model::ParseJsonMemo(*raw);
  if (parsed.is_discarded()) return std::nullopt;  // 219-224
  if (!parsed.is_object()) return std::nullopt;    // 225-227
  const auto version = parsed.find("version"), expires_at = parsed.find("expiresAt"),
             created_at = parsed.find("createdAt"), updated_at = parsed.find("updatedAt");
  if (version == parsed.end() || !version->is_number() || expires_at == parsed.end() ||
      !expires_at->is_string() || created_at == parsed.end() || !created_at->is_string() ||
      updated_at == parsed.end() || !updated_at->is_string())
    return std::nullopt;  // 229-244 (partly hidden)
  StateValue v;
  v.key = key;
  const auto value = parsed.find("value");
  if (value != parsed.end()) v.value = *value;
  v.version = version->get<int64_t>();
  v.expires_at = expires_at->get<std::string>();
  v.created_at = created_at->get<std::string>();
  v.updated_at = updated_at->get<std::string>();
  v.envelope = *raw;
  return v;
}

bool IsStateTombstone(const std::optional<std::string>& raw) {
  if (!raw || raw->empty()) return false;
  const Json& parsed = model::ParseJsonMemo(*raw);
  if (parsed.is_discarded() || !parsed.is_object()) return false;
  const auto deleted = parsed.find("deleted");
  return deleted != parsed.end() && *deleted == true;
}

std::string PublicStateKey(const std::string& redis_key, const std::string& prefix) {
  const std::string with_sep = prefix + ":";
  if (redis_key.rfind(with_sep, 0) == 0) return redis_key.substr(with_sep.size());
  return redis_key;
}

std::optional<std::string> BulkOrNull(const sim::Reply& r) {
  if (r.type != sim::Reply::Type::kBulk) return std::nullopt;
  return r.str;
}

std::optional<std::string> BulkOrNull(sim::Reply&& r) {
  if (r.type != sim::Reply::Type::kBulk) return std::nullopt;
  return std::move(r.str);
}

}  // namespace testbed::real::state
