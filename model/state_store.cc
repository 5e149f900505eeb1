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
// The last millisecond the key lives on the server.
int64_t End(const StoreEntry& e) { return std::max(e.expires_at, e.alive_until); }
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

bool StateStoreModel::alive(const StoreEntry& e, int64_t now) const {
  return variant_.index_view ? now < End(e) : now <= End(e);
}

const StoreEntry* StateStoreModel::live(const Space& s, const std::string& key, int64_t now) const {
  auto it = s.find(key);
  return it != s.end() && alive(it->second, now) ? &it->second : nullptr;
}

int64_t StateStoreModel::live_count(const Space& s, int64_t now) const {
  return std::count_if(s.begin(), s.end(), [&](const auto& kv) { return alive(kv.second, now); });
}

bool StateStoreModel::tombstoned(const std::string& id, const std::string& key, int64_t now) const {
  auto s = tombs_.find(id);
  if (s == tombs_.end()) return false;
  auto k = s->second.find(key);
  return k != s->second.end() && now <= k->second;
}

std::optional<StoreEntry> StateStoreModel::current(const std::optional<std::string>& connection,
                                                   const std::string& ns,
                                                   const StoreNamespaceOptions& o,
                                                   const std::string& key, int64_t now) const {
  const std::string id = space_id(connection, ns, o);
  if (variant_.legacy && !variant_.as_built_claim &&
      last_change(LegacyId(ns), key) > last_change(id, key)) {
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

std::string StateStoreModel::value_error(const StoreNamespaceOptions& o, const Json& value) const {
  return static_cast<int64_t>(JsonStringify(value).size()) > o.max_value_bytes ? "policy" : "";
}

std::string StateStoreModel::ttl_error(const StoreNamespaceOptions& o,
                                       std::optional<int64_t> ttl) const {
  return variant_.max_ttl && std::max<int64_t>(1, ttl.value_or(o.default_ttl_ms)) >
                                 std::max<int64_t>(1, o.max_ttl_ms)
             ? "policy"
             : "";
}

std::string StateStoreModel::policy_error(const StoreNamespaceOptions& o, const Json& value,
                                          std::optional<int64_t> ttl) const {
  const std::string v = value_error(o, value);
  return v.empty() ? ttl_error(o, ttl) : v;
}

StoreResult StateStoreModel::claim(const std::optional<std::string>& connection,
                                   const std::string& ns, const StoreNamespaceOptions& o,
                                   const std::string& key, int64_t now, bool adopt) {
  StoreResult r;
  Space& mine = space(connection, ns, o);
  if (const StoreEntry* e = live(mine, key, now)) {  // CLAIM_LEGACY_SCRIPT 2-5
    r.entry = *e;
    return r;
  }
  // A tombstone in the scope's v2 key answers null (2-5, then get() reads it as deleted); the
  // missing connection reads only its v2 key (canClaimLegacy, s000:421-423).
  if (tombstoned(space_id(connection, ns, o), key, now) || !concrete(connection, o)) return r;
  Space& old = legacy_[ns];
  const StoreEntry* v1 = live(old, key, now);
  if (!v1) return r;                                                  // 7-10
  if (live_count(mine, now) >= o.max_entries) return Error("quota");  // 25-30
  StoreEntry adopted = *v1;
  // 15-20, 32: the copy lives for the v1 key's PTTL, at least 1 ms (a claim at the v1 key's
  // expiry millisecond outlives the expiresAt the copied envelope states).
  const int64_t end = std::max(End(*v1), now + 1);
  adopted.alive_until = end > adopted.expires_at ? end : 0;
  r.entry = adopted;
  if (adopt) {
    mine[key] = adopted;
    old.erase(key);  // 35: the v1 key becomes a tombstone, which old pods read as absent
  }
  return r;
}

StoreResult StateStoreModel::write(const std::optional<std::string>& connection,
                                   const std::string& ns, const StoreNamespaceOptions& o,
                                   const std::string& key, const Json& value, int64_t version,
                                   std::optional<int64_t> ttl, int64_t now) {
  Space& mine = space(connection, ns, o);
  const StoreEntry* existing = live(mine, key, now);
  if (variant_.index_quota) {  // the slot and the count by the index's view (Variant)
    const auto held = [now](const auto& kv) { return now < End(kv.second); };
    const auto it = mine.find(key);
    if ((it == mine.end() || !held(*it)) &&
        std::count_if(mine.begin(), mine.end(), held) >= o.max_entries)
      return Error("quota");
  } else if (!existing && live_count(mine, now) >= o.max_entries) {
    return Error("quota");
  }
  const std::optional<StoreEntry> seen = current(connection, ns, o, key, now);  // rule 7's too
  StoreEntry e{key,
               value,
               version,
               now + std::max<int64_t>(1, ttl.value_or(o.default_ttl_ms)),
               seen ? seen->created_at : now,
               now};
  mine[key] = e;
  changed_[space_id(connection, ns, o)][key] = ++order_;
  if (variant_.as_built_claim) {  // the SET and CAS scripts
    tombs_[space_id(connection, ns, o)].erase(key);
    if (concrete(connection, o)) legacy_[ns].erase(key);  // the v1 key's tombstone
  }
  StoreResult r;
  r.entry = e;
  return r;
}

std::optional<StoreEntry> StateStoreModel::peek(const std::optional<std::string>& connection,
                                                const std::string& ns,
                                                const StoreNamespaceOptions& o,
                                                const std::string& key, int64_t now) const {
  if (variant_.as_built_claim) {
    StateStoreModel copy = *this;
    return copy.claim(connection, ns, o, key, now, false).entry;
  }
  return current(connection, ns, o, key, now);
}

StoreResult StateStoreModel::get(const std::optional<std::string>& connection,
                                 const std::string& ns, const StoreNamespaceOptions& o,
                                 const std::string& key, int64_t now) {
  if (variant_.as_built_claim) return claim(connection, ns, o, key, now, true);
  StoreResult r;
  r.entry = current(connection, ns, o, key, now);
  return r;
}

StoreResult StateStoreModel::set(const std::optional<std::string>& connection,
                                 const std::string& ns, const StoreNamespaceOptions& o,
                                 const std::string& key, const Json& value,
                                 std::optional<int64_t> ttl, int64_t now) {
  if (variant_.as_built_claim) {  // the value's size, get() (claims), then the ttl (s000:526-553)
    if (auto err = value_error(o, value); !err.empty()) return Error(err);
    StoreResult cur = claim(connection, ns, o, key, now, true);
    if (!cur.error.empty()) return cur;
    if (auto err = ttl_error(o, ttl); !err.empty()) return Error(err);
    return write(connection, ns, o, key, value, (cur.entry ? cur.entry->version : 0) + 1, ttl, now);
  }
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
  std::optional<StoreEntry> cur = current(connection, ns, o, key, now);
  if (variant_.as_built_claim) {  // COMPARE_AND_SET_WITH_QUOTA_SCRIPT 23-72
    const bool v1_live = live(legacy_[ns], key, now) != nullptr;
    const bool scoped_present = cur || tombstoned(space_id(connection, ns, o), key, now);
    if (!scoped_present && v1_live && !concrete(connection, o)) {  // 48-50
      StoreResult refused;
      refused.ok = false;
      return refused;
    }
    if (!scoped_present && v1_live) {
      StoreResult claimed = claim(connection, ns, o, key, now, true);
      if (!claimed.error.empty()) return claimed;
      cur = claimed.entry;
    }
  }
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
                                 const std::string& key, int64_t now) {
  space(connection, ns, o).erase(key);
  changed_[space_id(connection, ns, o)][key] = ++order_;
  if (variant_.as_built_claim) {  // DELETE_WITH_INDEX_SCRIPT: tombstones, PX maxTtl
    tombstone(space_id(connection, ns, o), key, now + std::max<int64_t>(1, o.max_ttl_ms));
    if (concrete(connection, o)) legacy_[ns].erase(key);
  }
  return {};
}

StoreResult StateStoreModel::list(const std::optional<std::string>& connection,
                                  const std::string& ns, const StoreNamespaceOptions& o,
                                  const std::optional<std::string>& prefix,
                                  std::optional<int64_t> limit, int64_t now) {
  StoreResult r;
  std::set<std::string> keys;  // the scope's own, and the v1 keys it may see (rule 7)
  for (const auto& [key, e] : space(connection, ns, o)) keys.insert(key);
  if (variant_.legacy && !variant_.as_built_claim)
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
  std::optional<StoreEntry> cur = current(connection, ns, o, key, now);
  if (variant_.as_built_claim) {  // get() claims first
    StoreResult claimed = claim(connection, ns, o, key, now, true);
    if (!claimed.error.empty()) return claimed;
    cur = claimed.entry;
  }
  // The SDK's `{ ...current, [field]: previous + delta }`: a string or an array value spreads
  // its elements into the object (JavaScript's rule, model/json_text.h).
  Spread spread = SpreadForIncrement(cur ? cur->value : Json(), field);
  Json value = std::move(spread.object);
  value[field] = spread.previous + delta;
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
