#include "properties/a2/a2_system.h"

#include "properties/a2/a2_workload.h"

namespace testbed::props::a2 {

#define TESTBED_PROPERTY(name) const A2Property& name();
#include "properties/a2/properties.inc"
#undef TESTBED_PROPERTY

namespace {

const PropertyTable<A2Env>& Table() {
  static const PropertyTable<A2Env> kTable({
#define TESTBED_PROPERTY(name) &name(),
#include "properties/a2/properties.inc"
#undef TESTBED_PROPERTY
  });
  return kTable;
}

class A2System : public System {
 public:
  std::string name() const override { return "a2"; }
  std::string what() const override {
    return "a2 event store: claims with leases and attempts, ordered lanes, presence (seed 003)";
  }
  const std::vector<VersionInfo>& versions() const override {
    static const std::vector<VersionInfo> kVersions = {
        {"0.5.0", "", "experimental-a2 0.5.0: store-redis-core.ts, nine Lua scripts"}};
    return kVersions;
  }
  std::string default_version() const override { return "0.5.0"; }
  const std::vector<PropertyInfo>& properties() const override { return Table().infos(); }
  int default_ops() const override { return 16; }

 protected:
  std::unique_ptr<PropertyRun> Prepare(const RunSpec& spec, const sim::FaultOptions&,
                                       const real::ScriptCatalog& scripts) const override {
    return Bind(std::make_unique<A2Env>(spec, scripts), Table().find(spec.property));
  }
  int64_t horizon_ms() const override { return kHorizonMs; }
};

}  // namespace

std::unique_ptr<System> Make() { return std::make_unique<A2System>(); }

}  // namespace testbed::props::a2
