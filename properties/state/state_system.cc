#include "properties/state/state_system.h"

#include <absl/strings/str_split.h>

#include "properties/state/state_props.h"

namespace testbed::props::state_system {
namespace {

class StateSystem : public System {
 public:
  StateSystem() {
    for (const auto& p : StatePropertyTable()) properties_.push_back(p.info);
  }
  std::string name() const override { return "state"; }
  std::string what() const override {
    return "provider runtime state: versioned JSON, compare-and-set, TTLs, quota, v1 -> v2 (seeds "
           "000, 001)";
  }
  const std::vector<VersionInfo>& versions() const override {
    // Which version precedes which follows the seeds' diffs: beta.23 <- beta.3, beta.24 <-
    // beta.23 (seed 000), beta.30 <- beta.3 (seed 001).
    static const std::vector<VersionInfo> kVersions = {
        {"beta3", "", "v1 keys, no scripts: KEYS for quota and list, GET then SET PX"},
        {"beta23", "beta3", "v1 keys, ZSET index, quota/CAS scripts, SCAN backfill"},
        {"beta24", "beta23", "v2 keys scoped by connection, tombstones, legacy claim"},
        {"beta30", "beta3", "v2 without the legacy claim; also the memory backend"},
    };
    return kVersions;
  }
  std::string default_version() const override { return "beta30"; }
  int max_old_versions() const override { return 2; }
  const std::vector<PropertyInfo>& properties() const override { return properties_; }
  const std::vector<SystemOption>& options() const override {
    static const std::vector<SystemOption> kOptions = {
        {"ops-mix",
         "ops_mix",
         "all",
         {"all", "cas"},
         "the plain workload's operations: all, or cas (get, compareAndSet, delete; no set)"}};
    return kOptions;
  }

 protected:
  RunOutcome DoRun(const RunSpec& spec, const sim::FaultOptions& faults,
                   const ScriptCatalog& scripts, RedisServer* server,
                   sim::Strategy& strategy) const override {
    StateWorkload w;
    w.seed = spec.seed;
    w.clients = spec.clients;
    w.ops = spec.ops;
    w.version = spec.version;
    if (!spec.old_version.empty()) {
      std::vector<std::string> olds = absl::StrSplit(spec.old_version, ',');
      w.old_version = olds.front();
      w.more_old_versions.assign(olds.begin() + 1, olds.end());
    }
    w.skip = spec.skip;
    w.cas_only = option(spec, "ops-mix") == "cas";
    w.faults = faults;
    w = ForProperty(w, spec.property);
    StateRun r = RunStateWorkload(w, scripts, server, &strategy);
    RunOutcome out;
    out.findings = std::move(FindingsOf(r, spec.property));
    out.incomplete = !r.verdict.complete;
    out.trace = std::move(r.trace);
    out.run = std::move(r.run);
    return out;
  }

 private:
  std::vector<PropertyInfo> properties_;
};

}  // namespace

std::unique_ptr<System> Make() { return std::make_unique<StateSystem>(); }

}  // namespace testbed::props::state_system
