// A run of a state property as every caller makes one (issue 59): a RunSpec, run by the
// registered system's System::Run. The state store's own settings are its options (hidden ones:
// keys, probe-ttl-max-ms, default-ttl-ms, max-ttl-ms, broken-scope).
#pragma once

#include <cstdint>
#include <string>

#include "harness/system.h"

namespace testbed::testing_state {

// The workload's defaults: beta.30, 3 clients of 12 operations, no old pods, no faults.
inline props::RunSpec Spec(const std::string& property, uint64_t seed = 1) {
  props::RunSpec s;
  s.property = property;
  s.version = "beta30";
  s.seed = seed;
  s.clients = 3;
  s.ops = 12;
  return s;
}

inline props::RunOutcome Run(const props::RunSpec& spec, const real::ScriptCatalog& scripts,
                             real::RedisServer* server = nullptr) {
  return props::FindSystem("state")->Run(spec, scripts, server);
}

}  // namespace testbed::testing_state
