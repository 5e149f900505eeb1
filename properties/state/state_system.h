// The provider state store as a system under test (harness/system.h): its versions (the
// seed ports, with the rolling-deploy predecessors the seeds' diffs show), its property table
// (properties/state/state_props.cc) and its one option, --ops-mix.
#pragma once

#include <memory>

#include "harness/system.h"

namespace testbed::props::state {

std::unique_ptr<System> Make();
// How `testbed fidelity` draws the arguments of one of the state store's scripts
// (state_script_shapes.cc).
sim::fidelity::ScriptShape StateScriptShape(const real::ScriptFile& s, sim::fidelity::ArgDraws& d);

}  // namespace testbed::props::state
