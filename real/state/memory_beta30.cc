#include "real/state/memory_beta30.h"

#include <algorithm>

namespace testbed::real::state::memory_beta30 {

// enforceValueSize (609-616).
void Namespace::enforce_value_size(const Json& value) const {
  const int64_t bytes = static_cast<int64_t>(Stringify(value).size());
  if (bytes > options_.max_value_bytes)
    throw StateError("Provider runtime state value exceeds maxValueBytes (" +
                     std::to_string(bytes) + " > " + std::to_string(options_.max_value_bytes) +
                     ")");
}

// enforceWritePolicy (618-632).
void Namespace::enforce_write_policy(const std::string& key, const Json& value,
                                     std::optional<int64_t> ttl) const {
  enforce_value_size(value);
  const int64_t ttl_ms = std::max<int64_t>(1, ttl.value_or(options_.default_ttl_ms));
  const int64_t max_ttl_ms = std::max<int64_t>(1, options_.max_ttl_ms);
  if (ttl_ms > max_ttl_ms)
    throw StateError("Provider runtime state ttl exceeds maxTtl (" + std::to_string(ttl_ms) +
                     " > " + std::to_string(max_ttl_ms) + ")");
  if (!values_.count(key) && static_cast<int64_t>(values_.size()) >= options_.max_entries)
    throw StateError("Provider runtime state namespace quota exceeded (" +
                     std::to_string(options_.max_entries + 1) + " > " +
                     std::to_string(options_.max_entries) + ")");
}

// pruneExpired (634-640): a row is gone once Date.parse(expiresAt) <= now.
void Namespace::prune_expired() {
  const int64_t now = clock_.now_ms();
  for (auto it = expiry_ms_.begin(); it != expiry_ms_.end();) {
    if (it->second <= now) {
      const std::string key = it->first;
      ++it;
      erase(key);
    } else {
      ++it;
    }
  }
}

int64_t Namespace::expires_at_ms(std::optional<int64_t> ttl) const {
  return clock_.now_ms() + std::max<int64_t>(1, ttl.value_or(options_.default_ttl_ms));
}

// list (642-651).
std::vector<StateValue> Namespace::list(std::optional<int64_t> limit,
                                        std::optional<std::string> prefix) {
  prune_expired();
  std::vector<StateValue> rows;
  for (const std::string& key : order_) {
    const StateValue& v = values_.at(key);
    // `_options?.prefix ? ... : true`: an empty prefix filters nothing.
    if (!prefix || prefix->empty() || v.key.rfind(*prefix, 0) == 0) rows.push_back(v);
  }
  const int64_t requested = std::max<int64_t>(0, limit.value_or(options_.max_entries));
  if (static_cast<int64_t>(rows.size()) > requested) rows.resize(requested);
  return rows;
}

// get (before 652).
std::optional<StateValue> Namespace::get(const std::string& key) {
  prune_expired();
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

// set (655-681).
StateValue Namespace::set(const std::string& key, const Json& value, std::optional<int64_t> ttl) {
  prune_expired();
  enforce_write_policy(key, value, ttl);
  const std::string now = IsoTime(clock_.now_ms());
  auto current = values_.find(key);
  const int64_t expires = expires_at_ms(ttl);
  StateValue row{key,
                 value,
                 (current != values_.end() ? current->second.version : 0) + 1,
                 IsoTime(expires),
                 current != values_.end() ? current->second.created_at : now,
                 now};
  store(key, row, expires);
  return row;
}

// compareAndSet (683-708).
CasResult Namespace::compare_and_set(const std::string& key, int64_t expected, const Json& value,
                                     std::optional<int64_t> ttl) {
  prune_expired();
  auto current = values_.find(key);
  const int64_t version = current != values_.end() ? current->second.version : 0;
  if (version != expected)
    return {false, std::nullopt,
            current != values_.end() ? std::optional<StateValue>(current->second) : std::nullopt};
  enforce_write_policy(key, value, ttl);
  const std::string now = IsoTime(clock_.now_ms());
  const int64_t expires = expires_at_ms(ttl);
  StateValue stored{key,
                    value,
                    expected + 1,
                    IsoTime(expires),
                    current != values_.end() ? current->second.created_at : now,
                    now};
  store(key, stored, expires);
  return {true, stored, std::nullopt};
}

// delete (710-723).
void Namespace::del(const std::string& key) { erase(key); }

void Namespace::store(const std::string& key, StateValue row, int64_t expires_ms) {
  auto [it, inserted] = values_.insert_or_assign(key, std::move(row));
  if (inserted) order_.push_back(key);
  expiry_ms_[key] = expires_ms;
}

void Namespace::erase(const std::string& key) {
  if (values_.erase(key)) order_.erase(std::find(order_.begin(), order_.end(), key));
  expiry_ms_.erase(key);
}

}  // namespace testbed::real::state::memory_beta30
