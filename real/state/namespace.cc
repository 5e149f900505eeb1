#include "real/state/namespace.h"

#include "real/state/memory_beta30.h"

#include <algorithm>
#include <stdexcept>

#include "real/state/js_namespace.h"
#include "real/state/v1.h"
#include "real/state/v2.h"

namespace testbed::real::state {

std::vector<std::string> PortedVersions() { return {"beta3", "beta23", "beta24", "beta30"}; }

bool IsPorted(const std::string& version) {
  const auto v = PortedVersions();
  return std::find(v.begin(), v.end(), version) != v.end();
}

bool HasConnectionScopes(const std::string& version) {
  return version == "beta24" || version == "beta30";
}

bool ClaimsLegacy(const std::string& version) { return version == "beta24"; }

const std::string& VersionScripts::body(const std::string& version,
                                        const std::string& constant) const {
  for (const Found& f : found_)
    if (f.constant == constant && f.version == version) return *f.body;
  const std::string& b = catalog_.get("state/" + version + "/" + constant).body;
  found_.push_back({version, constant, &b});
  return b;
}

namespace {

std::unique_ptr<StateNamespace> MakePort(const std::string& version, sim::Ctx& ctx,
                                         const VersionScripts& scripts,
                                         std::optional<std::string> provider_id, std::string name,
                                         NamespaceOptions options,
                                         std::optional<std::string> connection) {
  auto body = [&](const char* constant) -> std::string_view {
    return scripts.body(version, constant);
  };
  if (version == "beta3")
    return std::make_unique<v1::Beta3>(ctx, std::move(provider_id), std::move(name), options);
  if (version == "beta23") {
    v1::Beta23::Scripts s{body("SET_WITH_QUOTA_SCRIPT"), body("COMPARE_AND_SET_WITH_QUOTA_SCRIPT"),
                          body("DELETE_WITH_INDEX_SCRIPT"), body("BACKFILL_LEGACY_INDEX_SCRIPT")};
    return std::make_unique<v1::Beta23>(ctx, std::move(s), std::move(provider_id), std::move(name),
                                        options);
  }
  if (version == "beta24" || version == "beta30") {
    const bool b24 = version == "beta24";
    v2::Scripts s{body("SET_WITH_QUOTA_SCRIPT"), body("COMPARE_AND_SET_WITH_QUOTA_SCRIPT"),
                  body("DELETE_WITH_INDEX_SCRIPT"), b24 ? body("CLAIM_LEGACY_SCRIPT") : ""};
    // forConnection(connection) (s000:669-674), then namespace(name, options) (s000:676-684).
    return std::make_unique<v2::Namespace>(ctx, std::move(s),
                                           b24 ? v2::Release::kBeta24 : v2::Release::kBeta30,
                                           std::move(provider_id), std::move(name), options,
                                           v2::ConnectionScopeDiscriminator(connection));
  }
  throw std::invalid_argument("state version '" + version +
                              "' has no client port (ported: beta3, beta23, beta24, beta30)");
}

}  // namespace

std::unique_ptr<StateNamespace> MakeNamespace(const std::string& version, sim::Ctx& ctx,
                                              const VersionScripts& scripts,
                                              std::optional<std::string> provider_id,
                                              std::string name, NamespaceOptions options,
                                              std::optional<std::string> connection) {
  if (!scripts.client().js || !HasJavaScript(version))
    return MakePort(version, ctx, scripts, std::move(provider_id), std::move(name), options,
                    std::move(connection));
  auto port = MakePort(version, ctx, scripts, provider_id, name, options, connection);
  return std::make_unique<JsNamespace>(ctx, js::Host::ForThisThread(), scripts.client(), version,
                                       std::move(provider_id), name, options, connection,
                                       std::move(port));
}

namespace {

// The memory port behind the namespace interface: its synchronous calls, answered at once.
class MemoryPort : public StateNamespace {
 public:
  MemoryPort(sim::Ctx& ctx, NamespaceOptions options) : ns_(ctx.clock(), options) {}
  sim::Task<std::vector<StateValue>> list(std::optional<int64_t> limit,
                                          std::optional<std::string> prefix) override {
    co_return ns_.list(limit, std::move(prefix));
  }
  sim::Task<std::optional<StateValue>> get(std::string key) override { co_return ns_.get(key); }
  sim::Task<StateValue> set(std::string key, WriteValue value,
                            std::optional<int64_t> ttl_ms) override {
    co_return ns_.set(key, value.json, ttl_ms);
  }
  sim::Task<CasResult> compare_and_set(std::string key, int64_t expected, WriteValue value,
                                       std::optional<int64_t> ttl_ms) override {
    co_return ns_.compare_and_set(key, expected, value.json, ttl_ms);
  }
  sim::Task<void> del(std::string key) override {
    ns_.del(key);
    co_return;
  }
  sim::Task<StateValue> increment(std::string, std::string, double,
                                  std::optional<int64_t>) override {
    throw std::logic_error("the memory backend's port has no increment");
  }
  std::string redis_key(const std::string&) const override { return ""; }
  int64_t last_expires_at_ms() const override { return 0; }
  void rebind(sim::Ctx&) override {}

 private:
  memory_beta30::Namespace ns_;
};

}  // namespace

std::unique_ptr<StateNamespace> MakeMemoryNamespace(sim::Ctx& ctx, const VersionScripts& scripts,
                                                    std::string name, NamespaceOptions options,
                                                    std::optional<std::string> connection) {
  if (!scripts.client().js) return std::make_unique<MemoryPort>(ctx, options);
  return std::make_unique<JsNamespace>(ctx, js::Host::ForThisThread(), scripts.client(), "beta30",
                                       std::nullopt, name, options, connection, nullptr);
}

}  // namespace testbed::real::state
