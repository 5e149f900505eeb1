// One interface for every ported version of the Redis-backed ProviderStateNamespace, so that
// a workload can give each actor its own version (a rolling deploy: old and new pods at once).
// Each port (real/state/beta3, beta23, beta24, beta30) implements it line by line from its
// seed; MakeNamespace picks the port by the scripts directory name under real/scripts/state/.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "real/script_catalog.h"
#include "real/state/state_api.h"
#include "sim/runtime.h"

namespace testbed::real::state {

class StateNamespace {
 public:
  virtual ~StateNamespace() = default;
  virtual sim::Task<std::vector<StateValue>> list(std::optional<int64_t> limit,
                                                  std::optional<std::string> prefix) = 0;
  virtual sim::Task<std::optional<StateValue>> get(std::string key) = 0;
  virtual sim::Task<StateValue> set(std::string key, WriteValue value,
                                    std::optional<int64_t> ttl_ms) = 0;
  virtual sim::Task<CasResult> compare_and_set(std::string key, int64_t expected_version,
                                               WriteValue value, std::optional<int64_t> ttl_ms) = 0;
  virtual sim::Task<void> del(std::string key) = 0;
  virtual sim::Task<StateValue> increment(std::string key, std::string field, double delta,
                                          std::optional<int64_t> ttl_ms) = 0;
  // The Redis key that holds `key` for this namespace and scope.
  virtual std::string redis_key(const std::string& key) const = 0;
  // Test seam (like the SDK's __redisClient): the absolute expiry of the last write this
  // namespace prepared, known even when the write's outcome is not.
  virtual int64_t last_expires_at_ms() const = 0;
  // beta.3 sends a relative TTL (SET ... PX): Redis expires the key last_ttl_ms() after it
  // runs the write, not at last_expires_at_ms().
  virtual bool expiry_is_relative() const { return false; }
  // Later calls run as `ctx`, another thread of the same actor (the handle runtime's renewal
  // loop shares its commit's namespace object, as the JavaScript does).
  virtual void rebind(sim::Ctx& ctx) = 0;
  virtual int64_t last_ttl_ms() const { return 0; }
};

// The versions with a client port, oldest first (directory names under real/scripts/state/).
std::vector<std::string> PortedVersions();
bool IsPorted(const std::string& version);
// Versions whose keys are v2 (scoped by connection): beta24 and later.
bool HasConnectionScopes(const std::string& version);
// Versions whose reads claim a v1 key (beta24's CLAIM_LEGACY_SCRIPT): a read can take a value.
bool ClaimsLegacy(const std::string& version);

// Every version's script bodies, read once from a catalog (shipped or with --scripts overrides).
class VersionScripts {
 public:
  explicit VersionScripts(const real::ScriptCatalog& catalog) : catalog_(catalog) {}
  // The body of state/<version>/<constant>; throws std::runtime_error when missing.
  const std::string& body(const std::string& version, const std::string& constant) const;
  const ClientCode& client() const { return catalog_.client(); }

 private:
  const real::ScriptCatalog& catalog_;
  // The bodies asked for so far: probes open a namespace per operation, and each asks for the
  // same three or four bodies (a short scan costs less than building the id and a map lookup).
  struct Found {
    std::string version, constant;
    const std::string* body;
  };
  mutable std::vector<Found> found_;
};

// RedisProviderRuntimeState(...).forConnection(connection).namespace(name, options) of the
// given version. Versions before beta24 have no forConnection: `connection` is ignored there,
// as the old SDK ignored the connection. Throws std::invalid_argument for an unported version.
// With the JavaScript client (scripts.client()), the seeds' own JavaScript of the version where
// the seeds show it (beta24, beta30; js_namespace.h), else the port.
std::unique_ptr<StateNamespace> MakeNamespace(const std::string& version, sim::Ctx& ctx,
                                              const VersionScripts& scripts,
                                              std::optional<std::string> provider_id,
                                              std::string name, NamespaceOptions options,
                                              std::optional<std::string> connection);

// createMemoryProviderRuntimeState().forConnection(connection).namespace(name, options) of
// beta.30, the memory backend (no Redis; time from the actor's clock): its port
// (memory_beta30.h), or with the JavaScript client the seeds' own (js_namespace.h). It has no
// increment and no Redis key (redis_key() is ""; increment() throws std::logic_error).
std::unique_ptr<StateNamespace> MakeMemoryNamespace(sim::Ctx& ctx, const VersionScripts& scripts,
                                                    std::string name, NamespaceOptions options,
                                                    std::optional<std::string> connection);

}  // namespace testbed::real::state
