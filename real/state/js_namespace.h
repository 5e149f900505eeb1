// The state namespace of the seeds' own JavaScript (tests/js/state/<version>/state.ts, run by
// real/js/driver.mjs) behind the port interface, so that a property drives it as it drives a
// port (--client js). Each method is one operation of the JavaScript; each Redis call it makes
// is a call of the actor's thread.
//
// What is not the JavaScript's: redis_key() (the key layout of the version, from its port; a
// test seam), and last_expires_at_ms(), which reads the namespace's writeTiming answer (the
// driver keeps it; 0 when the client has no writeTiming).
#pragma once

#include <memory>

#include "real/js_host.h"
#include "real/state/namespace.h"

namespace testbed::real::state {

// The versions whose JavaScript the seeds show (beta24: seed 000; beta30: seed 001).
bool HasJavaScript(const std::string& version);

class JsNamespace : public StateNamespace {
 public:
  // `port`: the same namespace's port, for its key layout only; nullptr: the memory backend
  // (createMemoryProviderRuntimeState), which has no Redis key.
  JsNamespace(sim::Ctx& ctx, js::Host& host, const ClientCode& code, const std::string& version,
              std::optional<std::string> provider_id, const std::string& name,
              const NamespaceOptions& options, const std::optional<std::string>& connection,
              std::unique_ptr<StateNamespace> port);
  ~JsNamespace() override;

  sim::Task<std::vector<StateValue>> list(std::optional<int64_t> limit,
                                          std::optional<std::string> prefix) override;
  sim::Task<std::optional<StateValue>> get(std::string key) override;
  sim::Task<StateValue> set(std::string key, WriteValue value,
                            std::optional<int64_t> ttl_ms) override;
  sim::Task<CasResult> compare_and_set(std::string key, int64_t expected_version, WriteValue value,
                                       std::optional<int64_t> ttl_ms) override;
  sim::Task<void> del(std::string key) override;
  sim::Task<StateValue> increment(std::string key, std::string field, double delta,
                                  std::optional<int64_t> ttl_ms) override;
  std::string redis_key(const std::string& key) const override {
    return port_ ? port_->redis_key(key) : "";
  }
  int64_t last_expires_at_ms() const override { return last_expires_at_ms_; }
  void rebind(sim::Ctx& ctx) override { ctx_ = &ctx; }

 private:
  // Runs `method` and returns its answer; throws what the JavaScript threw (the SDK's
  // UnsupportedProviderStateError as a StateError).
  sim::Task<nlohmann::json> Run(std::string method, nlohmann::json args);
  sim::Ctx* ctx_;
  js::Host& host_;
  int64_t id_;
  std::shared_ptr<const ScriptSwap> scripts_;  // the catalog's changed scripts of the version
  std::unique_ptr<StateNamespace> port_;
  int64_t last_expires_at_ms_ = 0;
};

}  // namespace testbed::real::state
