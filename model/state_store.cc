#include "model/state_store.h"

#include "model/json_text.h"

#include <algorithm>
#include <set>

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

std::string StateStoreModel::space_id(const std::optional<std::string>& connection,
                                      const std::string& ns, const StoreNamespaceOptions& o) const {
  return scope_of(connection, o) + std::string(1, '\0') + ns;
}

StateStoreModel::Space& StateStoreModel::space(const std::optional<std::string>& connection,
                                               const std::string& ns,
                                               const StoreNamespaceOptions& o) {
  return spaces_[space_id(connection, ns, o)];
}

int64_t StateStoreModel::last_change(const std::string& id, const std::string& key) const {
  auto s = changed_.find(id);
  if (s == changed_.end()) return 0;
  auto k = s->second.find(key);
  return k == s->second.end() ? 0 : k->second;
}

namespace {
std::string LegacyId(const std::string& ns) { return std::string("\1v1", 3) + '\0' + ns; }
}  // namespace

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
                                                   const std::string& key, int64_t now) const {
  const std::string id = space_id(connection, ns, o);
  if (variant_.legacy && last_change(LegacyId(ns), key) > last_change(id, key)) {
    auto old = legacy_.find(ns);  // rule 7: the old pods' write is the newer one
    if (old == legacy_.end()) return std::nullopt;
    if (const StoreEntry* v1 = live(old->second, key, now)) return *v1;
    return std::nullopt;
  }
  auto sp = spaces_.find(id);
  if (sp == spaces_.end()) return std::nullopt;
  if (const StoreEntry* e = live(sp->second, key, now)) return *e;
  return std::nullopt;
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
  const std::optional<StoreEntry> seen = current(connection, ns, o, key, now);  // rule 7's too
  StoreEntry e{key,
               value,
               version,
               now + std::max<int64_t>(1, ttl.value_or(o.default_ttl_ms)),
               seen ? seen->created_at : now,
               now};
  mine[key] = e;
  changed_[space_id(connection, ns, o)][key] = ++order_;
  StoreResult r;
  r.entry = e;
  return r;
}

std::optional<StoreEntry> StateStoreModel::peek(const std::optional<std::string>& connection,
                                                const std::string& ns,
                                                const StoreNamespaceOptions& o,
                                                const std::string& key, int64_t now) const {
  return current(connection, ns, o, key, now);
}

StoreResult StateStoreModel::get(const std::optional<std::string>& connection,
                                 const std::string& ns, const StoreNamespaceOptions& o,
                                 const std::string& key, int64_t now) {
  StoreResult r;
  r.entry = current(connection, ns, o, key, now);
  return r;
}

StoreResult StateStoreModel::set(const std::optional<std::string>& connection,
                                 const std::string& ns, const StoreNamespaceOptions& o,
                                 const std::string& key, const Json& value,
                                 std::optional<int64_t> ttl, int64_t now) {
  if (auto err = policy_error(o, value, ttl); !err.empty()) return Error(err);
  const std::optional<StoreEntry> cur = current(connection, ns, o, key, now);
  return write(connection, ns, o, key, value, (cur ? cur->version : 0) + 1, ttl, now);
}

StoreResult StateStoreModel::compare_and_set(const std::optional<std::string>& connection,
                                             const std::string& ns, const StoreNamespaceOptions& o,
                                             const std::string& key, int64_t expected,
                                             const Json& value, std::optional<int64_t> ttl,
                                             int64_t now) {
  if (auto err = policy_error(o, value, ttl); !err.empty()) return Error(err);
  const std::optional<StoreEntry> cur = current(connection, ns, o, key, now);
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
  changed_[space_id(connection, ns, o)][key] = ++order_;
  return {};
}

StoreResult StateStoreModel::list(const std::optional<std::string>& connection,
                                  const std::string& ns, const StoreNamespaceOptions& o,
                                  const std::optional<std::string>& prefix,
                                  std::optional<int64_t> limit, int64_t now) {
  StoreResult r;
  std::set<std::string> keys;  // the scope's own, and the v1 keys it may see (rule 7)
  for (const auto& [key, e] : space(connection, ns, o)) keys.insert(key);
  if (variant_.legacy)
    for (const auto& [key, e] : legacy_[ns]) keys.insert(key);
  for (const std::string& key : keys)
    if (!prefix || key.rfind(*prefix, 0) == 0)
      if (std::optional<StoreEntry> e = current(connection, ns, o, key, now)) r.rows.push_back(*e);
  r.matching = static_cast<int64_t>(r.rows.size());
  const int64_t n = std::max<int64_t>(0, limit.value_or(o.max_entries));
  if (static_cast<int64_t>(r.rows.size()) > n) r.rows.resize(n);
  return r;
}

StoreResult StateStoreModel::increment(const std::optional<std::string>& connection,
                                       const std::string& ns, const StoreNamespaceOptions& o,
                                       const std::string& key, const std::string& field,
                                       double delta, std::optional<int64_t> ttl, int64_t now) {
  const std::optional<StoreEntry> cur = current(connection, ns, o, key, now);
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
  changed_[LegacyId(ns)][key] = ++order_;
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
