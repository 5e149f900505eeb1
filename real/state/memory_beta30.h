// @apifuse/provider-sdk 2.2.0-beta.30, MemoryProviderStateNamespace (seed 001, new side,
// lines 602-724), ported line by line. Synchronous, as the original: no Redis, time from a Clock.
//
// Port notes (lines the diff hides): pruneExpired deletes the rows it finds expired (637-638);
// list returns the filtered rows up to the limit (646-651), in `this.values` (a JavaScript Map)
// order, which is insertion order: an overwrite keeps a key's place, a delete or an expiry
// frees it and the next write appends it; get prunes and returns the row
// (before 652); set stores {key, value, version: current + 1, expiresAt, createdAt:
// current?.createdAt ?? now, updatedAt: now} (664-680, as compareAndSet's 696-705 shows);
// delete removes the row (711-722); resolveMemoryStateExpiresAt is now + ttl.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "real/state/state_api.h"
#include "sim/reply.h"

namespace testbed::real::state::memory_beta30 {

class Namespace {
 public:
  Namespace(const sim::Clock& clock, NamespaceOptions options) : clock_(clock), options_(options) {}

  std::vector<StateValue> list(std::optional<int64_t> limit, std::optional<std::string> prefix);
  std::optional<StateValue> get(const std::string& key);
  StateValue set(const std::string& key, const Json& value, std::optional<int64_t> ttl_ms);
  CasResult compare_and_set(const std::string& key, int64_t expected, const Json& value,
                            std::optional<int64_t> ttl_ms);
  void del(const std::string& key);

 private:
  void enforce_value_size(const Json& value) const;
  void enforce_write_policy(const std::string& key, const Json& value,
                            std::optional<int64_t> ttl) const;
  void prune_expired();
  int64_t expires_at_ms(std::optional<int64_t> ttl) const;

  // Sets `key` to `row`, appending a new key to the insertion order (Map.prototype.set).
  void store(const std::string& key, StateValue row, int64_t expires_ms);
  void erase(const std::string& key);

  const sim::Clock& clock_;
  NamespaceOptions options_;
  std::map<std::string, StateValue> values_;
  std::vector<std::string> order_;  // values_'s keys in the Map's insertion order
  std::map<std::string, int64_t> expiry_ms_;
};

}  // namespace testbed::real::state::memory_beta30
