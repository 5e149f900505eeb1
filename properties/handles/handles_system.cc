#include "properties/handles/handles_system.h"

#include "properties/handles/broken_ports.h"
#include "properties/handles/handles_workload.h"
#include "real/handles/handle.h"
#include "real/state/redis_common.h"

namespace testbed::props::handles {

#define TESTBED_PROPERTY(name) const HandlesProperty& name();
#include "properties/handles/properties.inc"
#undef TESTBED_PROPERTY

namespace {

// A capture's call is handles' when it names a key of a handle namespace ("handle.<kind>", js
// 25) under the state store's prefix: only the handle runtime writes there.
class HandlesTraceRecognizer : public TraceRecognizer {
 public:
  int Claims(const std::vector<std::string>& argv, const std::string&) override {
    const std::string marker = std::string(":") + real::handles::kNamespacePrefix;
    for (size_t i = 1; i < argv.size(); ++i)
      if (real::state::ReadableStateKey(argv[i]).find(marker) != std::string::npos) return 2;
    return 0;
  }
};

const PropertyTable<HandlesEnv>& Table() {
  static const PropertyTable<HandlesEnv> kTable({
#define TESTBED_PROPERTY(name) &name(),
#include "properties/handles/properties.inc"
#undef TESTBED_PROPERTY
  });
  return kTable;
}

class HandlesSystem : public System {
 public:
  std::unique_ptr<TraceRecognizer> NewTraceRecognizer() const override {
    return std::make_unique<HandlesTraceRecognizer>();
  }
  const TraceSupport* trace_support(const std::string& version) const override {
    return HandlesTraceSupport(version);
  }
  const SystemInfo& info() const override {
    // The handle runtime (beta.61) on the state store of each ported version it can run on:
    // handle.js calls options.state.forConnection (seed 002, line 384), which state beta.24
    // added (seed 000); on beta.23 and beta.3 every bound call would throw a TypeError, so no
    // deployable system pairs them and they are not versions here. A short horizon, so that
    // planned faults (crashes, pauses, restarts, outages) land while drafts are live and commits
    // run; operations the horizon cuts off never return.
    static const SystemInfo kInfo = {
        .name = "handles",
        .what =
            "LLM-friendly handles: drafts committed once under a renewed lease, on the state "
            "store (seed 002)",
        .versions = {{"beta24", "",
                      "the handle runtime on state beta.24 (legacy claim, tombstones)"},
                     {"beta30", "", "the handle runtime on state beta.30"}},
        .default_version = "beta30",
        .options = {{"port-variant", "port_variant", "shipped", PortVariantNames(),
                     "the handle runtime's storage: the version's port as shipped, or one "
                     "deliberately broken in one promise of model/handles.h (broken-N-...: promise "
                     "N), to see a property fail where the shipped port keeps it"}},
        .default_ops = 8,
        .horizon_ms = kHorizonMs,
        .scripts_of = "state",
        // The seed's handle runtime; createTestHandleContext is the memory backend's, whose
        // contexts keep the port (memory-matches-redis).
        .js_client_files = {
            {{"beta24", "beta30"}, "runtime/handle.js", {"createTestHandleContext"}}}};
    return kInfo;
  }
  const std::vector<PropertyInfo>& properties() const override { return Table().infos(); }

 protected:
  std::unique_ptr<PropertyRun> Prepare(const RunSpec& spec, const sim::FaultOptions&,
                                       const real::ScriptCatalog& scripts) const override {
    return Bind(Env(spec, scripts), Table().find(spec.property));
  }

 public:
  // The environment of one run of `spec`: the version's scripts, and its port variant.
  std::unique_ptr<HandlesEnv> Env(const RunSpec& spec, const real::ScriptCatalog& scripts) const {
    auto env = std::make_unique<HandlesEnv>(spec, scripts);
    env->make_state = FindPortVariant(option(spec, "port-variant")).make;
    return env;
  }
};

}  // namespace

std::unique_ptr<System> Make() { return std::make_unique<HandlesSystem>(); }

std::unique_ptr<PropertyRun> TraceRun(const RunSpec& spec, const real::ScriptCatalog& scripts,
                                      std::shared_ptr<const TracePlans> plans) {
  static const HandlesSystem kSystem;
  std::unique_ptr<HandlesEnv> env = kSystem.Env(spec, scripts);
  env->trace = std::move(plans);
  return Bind(std::move(env), Table().find(spec.property));
}

}  // namespace testbed::props::handles
