// @apifuse/provider-sdk 2.2.0-beta.30, MemoryProviderStateNamespace (seed 001, new side,
// lines 602-724), ported line by line. Synchronous, as the original: no Redis, time from a Clock.
//
// Port notes (lines the diff hides): pruneExpired deletes the rows it finds expired (637-638);
// list returns the filtered rows up to the limit (646-651); get prunes and returns the row
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

namespace testbed::state::memory_beta30 {

class Namespace {
 public:
  Namespace(const Clock& clock, NamespaceOptions options) : clock_(clock), options_(options) {}

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

  const Clock& clock_;
  NamespaceOptions options_;
  std::map<std::string, StateValue> values_;  // insertion order is not kept: see list()
  std::map<std::string, int64_t> expiry_ms_;
};

}  // namespace testbed::state::memory_beta30
