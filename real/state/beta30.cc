#include "real/state/beta30.h"

#include "sim/digest.h"

#include <algorithm>

namespace testbed::state::beta30 {
namespace {

constexpr const char* kRedisStatePrefix = "apifuse:provider-state:v2";
constexpr const char* kProviderScope = "scope:provider";
constexpr const char* kMissingConnectionScope = "scope:connection:missing";

std::string Base64Url(const std::string& s) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  size_t i = 0;
  for (; i + 2 < s.size(); i += 3) {
    const uint32_t v = (uint8_t(s[i]) << 16) | (uint8_t(s[i + 1]) << 8) | uint8_t(s[i + 2]);
    out += t[v >> 18 & 63];
    out += t[v >> 12 & 63];
    out += t[v >> 6 & 63];
    out += t[v & 63];
  }
  if (i + 1 == s.size()) {
    const uint32_t v = uint8_t(s[i]) << 16;
    out += t[v >> 18 & 63];
    out += t[v >> 12 & 63];
  } else if (i + 2 == s.size()) {
    const uint32_t v = (uint8_t(s[i]) << 16) | (uint8_t(s[i + 1]) << 8);
    out += t[v >> 18 & 63];
    out += t[v >> 12 & 63];
    out += t[v >> 6 & 63];
  }
  return out;
}

// providerStatePrefix (163-169) and providerStateKey (171-178).
std::string ProviderStatePrefix(const std::optional<std::string>& provider_id,
                                const std::string& ns, const std::string& scope) {
  return std::string(kRedisStatePrefix) + ":" + provider_id.value_or("default") + ":" + ns + ":" + scope;
}

// publicStateKey (180-188).
std::string PublicStateKey(const std::string& redis_key, const std::string& prefix) {
  const std::string with_sep = prefix + ":";
  if (redis_key.rfind(with_sep, 0) == 0) return redis_key.substr(with_sep.size());
  return redis_key;
}

// redisEnvelope (263-275, body hidden: see beta30.h).
Json RedisEnvelope(const Json& value, int64_t version, const std::string& created_at,
                   const std::string& expires_at, const std::string& updated_at) {
  Json e = Json::object();
  e["value"] = value;
  e["version"] = version;
  e["expiresAt"] = expires_at;
  e["createdAt"] = created_at;
  e["updatedAt"] = updated_at;
  return e;
}

std::string Ordered(const Json& envelope) {
  // JSON.stringify keeps insertion order; nlohmann sorts keys. Write the fields in the
  // envelope type's order by hand.
  return "{\"value\":" + Stringify(envelope["value"]) + ",\"version\":" +
         Stringify(envelope["version"]) + ",\"expiresAt\":" + Stringify(envelope["expiresAt"]) +
         ",\"createdAt\":" + Stringify(envelope["createdAt"]) + ",\"updatedAt\":" +
         Stringify(envelope["updatedAt"]) + "}";
}

}  // namespace

Scripts Scripts::From(const ScriptCatalog& catalog, const std::string& dir) {
  return {catalog.get(dir + "/SET_WITH_QUOTA_SCRIPT").body,
          catalog.get(dir + "/COMPARE_AND_SET_WITH_QUOTA_SCRIPT").body,
          catalog.get(dir + "/DELETE_WITH_INDEX_SCRIPT").body};
}

std::string ConnectionScopeDiscriminator(const std::optional<std::string>& connection_id) {
  if (!connection_id) return kMissingConnectionScope;
  return "scope:connection:sha256:" + Sha256Hex(*connection_id);
}

std::optional<StateValue> EnvelopeFromJson(const std::string& key,
                                           const std::optional<std::string>& raw) {
  if (!raw || raw->empty()) return std::nullopt;  // 213: if (!raw) return null
  Json parsed = Json::parse(*raw, nullptr, false);
  if (parsed.is_discarded()) return std::nullopt;  // 219-224
  if (!parsed.is_object()) return std::nullopt;   // 225-227
  if (!parsed.contains("version") || !parsed["version"].is_number() ||
      !parsed.contains("expiresAt") || !parsed["expiresAt"].is_string() ||
      !parsed.contains("createdAt") || !parsed["createdAt"].is_string() ||
      !parsed.contains("updatedAt") || !parsed["updatedAt"].is_string())
    return std::nullopt;  // 229-244 (partly hidden)
  StateValue v;
  v.key = key;
  v.value = parsed.contains("value") ? parsed["value"] : Json();
  v.version = parsed["version"].get<int64_t>();
  v.expires_at = parsed["expiresAt"];
  v.created_at = parsed["createdAt"];
  v.updated_at = parsed["updatedAt"];
  return v;
}

bool IsStateTombstone(const std::optional<std::string>& raw) {
  if (!raw || raw->empty()) return false;
  Json parsed = Json::parse(*raw, nullptr, false);
  return !parsed.is_discarded() && parsed.is_object() && parsed.contains("deleted") &&
         parsed["deleted"] == true;
}

Namespace::Namespace(sim::Ctx& ctx, const Scripts& scripts, std::optional<std::string> provider_id,
                     std::string name, NamespaceOptions options, std::string scope_discriminator)
    : ctx_(ctx), scripts_(scripts), provider_id_(std::move(provider_id)), name_(std::move(name)),
      options_(options),
      scope_(options.provider_scope ? kProviderScope : std::move(scope_discriminator)) {}

std::string Namespace::state_prefix() const { return ProviderStatePrefix(provider_id_, name_, scope_); }
std::string Namespace::redis_key(const std::string& key) const { return state_prefix() + ":" + key; }

// indexKey (299-312): bookkeeping outside the caller-owned keyspace.
std::string Namespace::index_key() const {
  return std::string(kRedisStatePrefix) + ":index:" + Base64Url(state_prefix());
}

// withRequiredRedis (138-150): a transport failure becomes UnsupportedProviderStateError.
Task<Reply> Namespace::required(Argv argv) {
  CallResult r = co_await ctx_.call(std::move(argv));
  if (auto* t = std::get_if<TransportError>(&r)) {
    if (t->what == "timeout") throw StateError("Provider runtime state Redis timed out");
    throw StateError("Provider runtime state Redis is unavailable");
  }
  Reply reply = std::get<Reply>(r);
  if (reply.is_error()) throw StateError("Provider runtime state Redis is unavailable");
  co_return reply;
}

// indexedKeys (314-328).
Task<std::vector<std::string>> Namespace::indexed_keys(int64_t limit) {
  const int64_t now = ctx_.now_ms();
  const std::string index = index_key();
  co_await req("ZREMRANGEBYSCORE", index, "-inf", std::to_string(now));
  const std::string from = std::to_string(now + 1);
  const std::string count = std::to_string(limit);
  Reply r = co_await req("ZRANGEBYSCORE", index, from, "+inf", "LIMIT", "0", count);
  std::vector<std::string> keys;
  for (const Reply& k : r.elements) keys.push_back(k.str);
  co_return keys;
}

// readRaw (330-333).
Task<std::optional<std::string>> Namespace::read_raw(std::string key) {
  Reply r = co_await req("GET", redis_key(key));
  if (r.type != Reply::Type::kBulk) co_return std::nullopt;
  co_return r.str;
}

// enforceValueSize (335-342, partly hidden: as the memory backend's 609-616).
void Namespace::enforce_value_size(const Json& value) const {
  const int64_t bytes = static_cast<int64_t>(Stringify(value).size());
  if (bytes > options_.max_value_bytes)
    throw StateError("Provider runtime state value exceeds maxValueBytes (" +
                     std::to_string(bytes) + " > " + std::to_string(options_.max_value_bytes) + ")");
}

// quotaExceeded (344-348).
StateError Namespace::quota_exceeded() const {
  return StateError("Provider runtime state namespace quota exceeded (" +
                    std::to_string(options_.max_entries + 1) + " > " +
                    std::to_string(options_.max_entries) + ")");
}

// writeTiming (350-368).
Namespace::Timing Namespace::write_timing(std::optional<int64_t> ttl) const {
  const int64_t ttl_ms = std::max<int64_t>(1, ttl.value_or(options_.default_ttl_ms));
  const int64_t max_ttl_ms = std::max<int64_t>(1, options_.max_ttl_ms);
  if (ttl_ms > max_ttl_ms)
    throw StateError("Provider runtime state ttl exceeds maxTtl (" + std::to_string(ttl_ms) +
                     " > " + std::to_string(max_ttl_ms) + ")");
  const int64_t expires_at_ms = ctx_.now_ms() + ttl_ms;
  last_expires_at_ms_ = expires_at_ms;
  return {IsoTime(expires_at_ms), expires_at_ms, max_ttl_ms};
}

// list (370-387).
Task<std::vector<StateValue>> Namespace::list(std::optional<int64_t> limit,
                                              std::optional<std::string> prefix) {
  const int64_t requested = std::max<int64_t>(0, limit.value_or(options_.max_entries));
  if (requested == 0) co_return std::vector<StateValue>{};
  std::vector<std::string> keys = co_await indexed_keys(options_.max_entries);
  if (keys.empty()) co_return std::vector<StateValue>{};
  Argv mget = {"MGET"};
  mget.insert(mget.end(), keys.begin(), keys.end());
  Reply values = co_await required(mget);
  std::vector<StateValue> rows;
  for (size_t i = 0; i < values.elements.size() && i < keys.size(); ++i) {
    const std::string public_key = PublicStateKey(keys[i], state_prefix());
    if (prefix && !prefix->empty() && public_key.rfind(*prefix, 0) != 0) continue;
    const Reply& raw = values.elements[i];
    auto value = EnvelopeFromJson(public_key, raw.type == Reply::Type::kBulk
                                                  ? std::optional<std::string>(raw.str)
                                                  : std::nullopt);
    if (!value) continue;
    rows.push_back(*value);
  }
  if (static_cast<int64_t>(rows.size()) > requested) rows.resize(requested);
  co_return rows;
}

// get (389-393).
Task<std::optional<StateValue>> Namespace::get(std::string key) {
  std::optional<std::string> raw = co_await read_raw(key);
  if (IsStateTombstone(raw)) co_return std::nullopt;
  co_return EnvelopeFromJson(key, raw);
}

// set (395-427): note that the version is computed here, from a separate read.
Task<StateValue> Namespace::set(std::string key, Json value, std::optional<int64_t> ttl) {
  enforce_value_size(value);
  std::optional<StateValue> current = co_await get(key);
  const std::string created_at = current ? current->created_at : IsoTime(ctx_.now_ms());
  const int64_t version = (current ? current->version : 0) + 1;
  const Timing timing = write_timing(ttl);
  const Json envelope = RedisEnvelope(value, version, created_at, timing.expires_at, IsoTime(ctx_.now_ms()));
  const std::string now = std::to_string(ctx_.now_ms());
  Reply result = co_await req(
      "EVAL", scripts_.set_with_quota, "2", redis_key(key), index_key(), now,
      std::to_string(options_.max_entries), std::to_string(timing.expires_at_ms),
      std::to_string(timing.index_ttl_ms), Ordered(envelope));
  if (result.type != Reply::Type::kArray || result.elements.empty() ||
      result.elements[0].integer != 1)
    throw quota_exceeded();
  co_return StateValue{key, value, version, timing.expires_at, created_at,
                       envelope["updatedAt"].get<std::string>()};
}

// compareAndSet (441-485).
Task<CasResult> Namespace::compare_and_set(std::string key, int64_t expected, Json value,
                                           std::optional<int64_t> ttl) {
  enforce_value_size(value);
  const std::string created_at = IsoTime(ctx_.now_ms());
  const Timing timing = write_timing(ttl);
  const Json envelope = RedisEnvelope(value, expected + 1, created_at, timing.expires_at, created_at);
  const std::string now = std::to_string(ctx_.now_ms());
  Reply result = co_await req(
      "EVAL", scripts_.compare_and_set_with_quota, "2", redis_key(key), index_key(),
      std::to_string(expected), now, std::to_string(options_.max_entries),
      std::to_string(timing.expires_at_ms), std::to_string(timing.index_ttl_ms), Ordered(envelope));
  const bool is_array = result.type == Reply::Type::kArray && !result.elements.empty();
  if (is_array && result.elements[0].integer == 0) throw quota_exceeded();
  if (!is_array || result.elements[0].integer != 1) {
    std::optional<std::string> raw_current;
    if (is_array && result.elements.size() > 1 && result.elements[1].type == Reply::Type::kBulk)
      raw_current = result.elements[1].str;
    co_return CasResult{false, std::nullopt, EnvelopeFromJson(key, raw_current)};
  }
  std::optional<std::string> raw_written;
  if (result.elements.size() > 1 && result.elements[1].type == Reply::Type::kBulk)
    raw_written = result.elements[1].str;
  std::optional<StateValue> written = EnvelopeFromJson(key, raw_written);
  if (!written) throw StateError("Provider runtime state CAS returned an invalid value");
  co_return CasResult{true, written, std::nullopt};
}

// delete (487-500).
Task<void> Namespace::del(std::string key) {
  const std::string tombstone = "{\"deleted\":true}";
  co_await req("EVAL", scripts_.delete_with_index, "2", redis_key(key), index_key(),
                         tombstone, std::to_string(std::max<int64_t>(1, options_.max_ttl_ms)));
}

// increment (502-511).
Task<StateValue> Namespace::increment(std::string key, std::string field, double delta,
                                      std::optional<int64_t> ttl) {
  std::optional<StateValue> got = co_await get(key);
  Json current = got && got->value.is_object() ? got->value : Json::object();
  const double previous = current.contains(field) && current[field].is_number()
                              ? current[field].get<double>()
                              : 0;
  current[field] = previous + delta;
  StateValue written = co_await set(key, current, ttl);
  co_return written;
}

}  // namespace testbed::state::beta30
