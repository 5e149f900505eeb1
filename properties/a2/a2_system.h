// The a2 event store of seed 003 (real/a2/) as a system under test: its one version and its
// properties, one file each under properties/a2/ (listed in properties.inc; `testbed list`
// prints their contracts). Where the code is weaker than the seed's doc comments and the a2
// model's promises (model/a2.h), that is a finding, not a choice.
#pragma once

#include <memory>
#include <string>

#include "harness/system.h"

namespace testbed::props::a2 {

std::unique_ptr<System> Make();
// What a recorded trace of `version`'s calls can be judged by (properties/a2/a2_trace_ops.cc).
const TraceSupport* A2TraceSupport(const std::string& version);
// How `testbed fidelity` draws the arguments of one of a2's scripts (a2_script_shapes.cc).
sim::fidelity::ScriptShape A2ScriptShape(const real::ScriptFile& s, sim::fidelity::ArgDraws& d);

}  // namespace testbed::props::a2
