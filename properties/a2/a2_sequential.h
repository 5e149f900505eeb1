// a2's sequential properties: one client, no faults, every call of the port (real/a2/) compared
// with the pure model of the store's contract (model/a2.h) at the same instant, or (isolation)
// with the same calls under other names. The client plays several workers (holders w1, w2) and
// a producer, a snapshot writer and presence writers in one sequence of calls, with pauses
// around the lease (100 ms) so leases expire between calls.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/a2.h"
#include "properties/system.h"
#include "real/a2/store.h"
#include "sim/runtime.h"
#include "sim/task.h"

namespace testbed::props::a2_system {

// One call: what was asked, when, and the two answers (JSON, model/a2.h's shapes).
struct SequentialStep {
  std::string op;    // "append", "claim", ..., as model/a2.h names the calls
  std::string call;  // the call as a line: op(arguments)
  int64_t at = 0;    // virtual ms since the run's start
  nlohmann::json store, model;
};

struct SequentialLog {
  std::vector<SequentialStep> steps;
};

// The workload of one sequential property (by name); see a2_sequential.cc.
bool IsSequential(const std::string& property);
Task<void> SequentialClient(sim::Ctx& ctx, const RunSpec& spec, const a2::Scripts& scripts,
                            SequentialLog* log);
std::vector<Finding> JudgeSequential(const std::string& property, const SequentialLog& log);

}  // namespace testbed::props::a2_system
