#include "model/state_store.h"

#include "model/json_text.h"

#include <algorithm>

namespace testbed::model {
namespace {
StoreResult Error(std::string kind) {
  StoreResult r;
  r.error = std::move(kind);
  return r;
}
}  // namespace

std::string StateStoreModel::scope_of(const std::optional<std::string>& connection,
                                      const StoreNamespaceOptions& o) const {
  if (!variant_.scoped) return "shared";
  if (o.provider_scope) return "provider";
  return connection ? "connection:" + *connection : "missing";
}

StateStoreModel::Space& StateStoreModel::space(const std::optional<std::string>& connection,
                                               const std::string& ns,
                                               const StoreNamespaceOptions& o) {
  return spaces_[scope_of(connection, o) + std::string(1, '\0') + ns];
}

const StoreEntry* StateStoreModel::live(const Space& s, const std::string& key, int64_t now) {
  auto it = s.find(key);
  return it != s.end() && now <= it->second.expires_at ? &it->second : nullptr;
}

int64_t StateStoreModel::live_count(const Space& s, int64_t now) {
  return std::count_if(s.begin(), s.end(),
                       [&](const auto& kv) { return now <= kv.second.expires_at; });
}

std::optional<StoreEntry> StateStoreModel::current(const std::optional<std::string>& connection,
                                                   const std::string& ns,
                                                   const StoreNamespaceOptions& o,
                                                   const std::string& key, int64_t now,
                                                   bool reading) {
  Space& mine = space(connection, ns, o);
  if (const StoreEntry* e = live(mine, key, now)) return *e;
  const bool concrete = o.provider_scope || connection.has_value();
  if (!variant_.legacy_claim || !concrete) return std::nullopt;
  Space& old = legacy_[ns];
  const StoreEntry* v1 = live(old, key, now);
  if (!v1) return std::nullopt;
  StoreEntry adopted = *v1;
  if (live_count(mine, now) >= o.max_entries) {
    if (reading) return adopted;  // rule 7: reads never fail; the value stays v1
    return std::nullopt;          // a write then meets the quota itself
  }
  mine[key] = adopted;
  old.erase(key);
  return adopted;
}

std::string StateStoreModel::policy_error(const StoreNamespaceOptions& o, const Json& value,
                                          std::optional<int64_t> ttl) const {
  if (static_cast<int64_t>(JsonStringify(value).size()) > o.max_value_bytes) return "policy";
  if (variant_.max_ttl &&
      std::max<int64_t>(1, ttl.value_or(o.default_ttl_ms)) > std::max<int64_t>(1, o.max_ttl_ms))
    return "policy";
  return "";
}

StoreResult StateStoreModel::write(const std::optional<std::string>& connection,
                                   const std::string& ns, const StoreNamespaceOptions& o,
                                   const std::string& key, const Json& value, int64_t version,
                                   std::optional<int64_t> ttl, int64_t now) {
  Space& mine = space(connection, ns, o);
  const StoreEntry* existing = live(mine, key, now);
  if (!existing && live_count(mine, now) >= o.max_entries) return Error("quota");
  StoreEntry e{key,
               value,
               version,
               now + std::max<int64_t>(1, ttl.value_or(o.default_ttl_ms)),
               existing ? existing->created_at : now,
               now};
  mine[key] = e;
  const bool concrete = o.provider_scope || connection.has_value();
  if (variant_.legacy_claim && concrete) legacy_[ns].erase(key);  // the v1 key is tombstoned
  StoreResult r;
  r.entry = e;
  return r;
}

std::optional<StoreEntry> StateStoreModel::peek(const std::optional<std::string>& connection,
                                                const std::string& ns,
                                                const StoreNamespaceOptions& o,
                                                const std::string& key, int64_t now) const {
  auto sp = spaces_.find(scope_of(connection, o) + std::string(1, '\0') + ns);
  if (sp != spaces_.end())
    if (const StoreEntry* e = live(sp->second, key, now)) return *e;
  const bool concrete = o.provider_scope || connection.has_value();
  if (!variant_.legacy_claim || !concrete) return std::nullopt;
  auto old = legacy_.find(ns);
  if (old == legacy_.end()) return std::nullopt;
  if (const StoreEntry* v1 = live(old->second, key, now)) return *v1;
  return std::nullopt;
}

StoreResult StateStoreModel::get(const std::optional<std::string>& connection,
                                 const std::string& ns, const StoreNamespaceOptions& o,
                                 const std::string& key, int64_t now) {
  StoreResult r;
  r.entry = current(connection, ns, o, key, now, true);
  return r;
}

StoreResult StateStoreModel::set(const std::optional<std::string>& connection,
                                 const std::string& ns, const StoreNamespaceOptions& o,
                                 const std::string& key, const Json& value,
                                 std::optional<int64_t> ttl, int64_t now) {
  if (auto err = policy_error(o, value, ttl); !err.empty()) return Error(err);
  const std::optional<StoreEntry> cur = current(connection, ns, o, key, now, false);
  return write(connection, ns, o, key, value, (cur ? cur->version : 0) + 1, ttl, now);
}

StoreResult StateStoreModel::compare_and_set(const std::optional<std::string>& connection,
                                             const std::string& ns, const StoreNamespaceOptions& o,
                                             const std::string& key, int64_t expected,
                                             const Json& value, std::optional<int64_t> ttl,
                                             int64_t now) {
  if (auto err = policy_error(o, value, ttl); !err.empty()) return Error(err);
  const std::optional<StoreEntry> cur = current(connection, ns, o, key, now, false);
  if ((cur ? cur->version : 0) != expected) {
    StoreResult r;
    r.ok = false;
    r.entry = cur;
    return r;
  }
  return write(connection, ns, o, key, value, expected + 1, ttl, now);
}

StoreResult StateStoreModel::del(const std::optional<std::string>& connection,
                                 const std::string& ns, const StoreNamespaceOptions& o,
                                 const std::string& key, int64_t) {
  space(connection, ns, o).erase(key);
  const bool concrete = o.provider_scope || connection.has_value();
  if (variant_.legacy_claim && concrete) legacy_[ns].erase(key);
  return {};
}

StoreResult StateStoreModel::list(const std::optional<std::string>& connection,
                                  const std::string& ns, const StoreNamespaceOptions& o,
                                  const std::optional<std::string>& prefix,
                                  std::optional<int64_t> limit, int64_t now) {
  StoreResult r;
  for (const auto& [key, e] : space(connection, ns, o))
    if (now <= e.expires_at && (!prefix || key.rfind(*prefix, 0) == 0)) r.rows.push_back(e);
  r.matching = static_cast<int64_t>(r.rows.size());
  const int64_t n = std::max<int64_t>(0, limit.value_or(o.max_entries));
  if (static_cast<int64_t>(r.rows.size()) > n) r.rows.resize(n);
  return r;
}

StoreResult StateStoreModel::increment(const std::optional<std::string>& connection,
                                       const std::string& ns, const StoreNamespaceOptions& o,
                                       const std::string& key, const std::string& field,
                                       double delta, std::optional<int64_t> ttl, int64_t now) {
  const std::optional<StoreEntry> cur = current(connection, ns, o, key, now, true);
  Json value = cur && cur->value.is_object() ? cur->value : Json::object();
  const double previous =
      value.contains(field) && value[field].is_number() ? value[field].get<double>() : 0;
  value[field] = previous + delta;
  return set(connection, ns, o, key, value, ttl, now);
}

StoreResult StateStoreModel::legacy_write(const std::string& ns, const StoreNamespaceOptions& o,
                                          const std::string& key, const Json& value, int64_t ttl,
                                          int64_t now) {
  Space& old = legacy_[ns];
  const StoreEntry* cur = live(old, key, now);
  // The old pod's own quota (beta.23 counts its live v1 entries), rule 3 in its namespace.
  if (!cur && live_count(old, now) >= o.max_entries) {
    StoreResult refused;
    refused.error = "quota";
    refused.ok = false;
    return refused;
  }
  old[key] = StoreEntry{key,
                        value,
                        (cur ? cur->version : 0) + 1,
                        now + std::max<int64_t>(1, ttl),
                        cur ? cur->created_at : now,
                        now};
  StoreResult written;
  written.entry = old[key];
  return written;
}

}  // namespace testbed::model
