#include "properties/a2/a2_system.h"

#include <absl/strings/match.h>
#include <absl/strings/numbers.h>

#include <set>

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

// A capture's call is a2's when it runs one of a2's scripts; each key such a script names
// (<prefix>:<session>:log, <prefix>:sessions, ...) teaches the roots above it, and a plain
// command (the GET, XRANGE and HMGET of a read, listSessions' ZRANGEBYLEX) is a2's when one of
// its arguments lies under a root learned so far.
class A2TraceRecognizer : public TraceRecognizer {
 public:
  int Claims(const std::vector<std::string>& argv, const std::string& script) override {
    if (absl::StartsWith(script, "a2/")) {
      int64_t keys = 0;
      if (argv.size() > 2 && absl::SimpleAtoi(argv[2], &keys))
        for (int64_t k = 0; k < keys && 3 + static_cast<size_t>(k) < argv.size(); ++k) {
          const std::string& key = argv[3 + k];
          const size_t colon = key.rfind(':');
          roots_.insert(colon == std::string::npos ? key : key.substr(0, colon));
        }
      return 2;
    }
    for (size_t i = 1; i < argv.size(); ++i)
      for (const std::string& root : roots_)
        if (argv[i] == root || absl::StartsWith(argv[i], root + ":")) return 2;
    return 0;
  }

 private:
  std::set<std::string> roots_;
};

class A2System : public System {
 public:
  std::unique_ptr<TraceRecognizer> NewTraceRecognizer() const override {
    return std::make_unique<A2TraceRecognizer>();
  }
  const TraceSupport* trace_support(const std::string& version) const override {
    return A2TraceSupport(version);
  }
  const SystemInfo& info() const override {
    static const SystemInfo kInfo = {
        .name = "a2",
        .what =
            "a2 event store: claims with leases and attempts, ordered lanes, presence (seed 003)",
        .versions = {{"0.5.0", "", "experimental-a2 0.5.0: store-redis-core.ts, nine Lua scripts"}},
        .default_version = "0.5.0",
        .default_ops = 16,
        .horizon_ms = kHorizonMs,
        .script_shape = &A2ScriptShape,
        // The seed's store core (its stand-ins, beside it in the build, are not the seed's).
        .js_client_files = {{{"0.5.0"}, "store-redis-core.js", {}}}};
    return kInfo;
  }
  const std::vector<PropertyInfo>& properties() const override { return Table().infos(); }

 protected:
  std::unique_ptr<PropertyRun> Prepare(const RunSpec& spec, const sim::FaultOptions&,
                                       const real::ScriptCatalog& scripts) const override {
    return Bind(std::make_unique<A2Env>(spec, scripts), Table().find(spec.property));
  }
};

}  // namespace

std::unique_ptr<System> Make() { return std::make_unique<A2System>(); }

}  // namespace testbed::props::a2
