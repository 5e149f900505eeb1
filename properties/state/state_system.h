// The provider state store as a system under test (harness/system.h): its versions (the
// seed ports, with the rolling-deploy predecessors the seeds' diffs show), its property table
// (properties/state/state_props.cc) and its one option, --ops-mix.
#pragma once

#include <memory>

#include "harness/system.h"

namespace testbed::props::state {

std::unique_ptr<System> Make();

}  // namespace testbed::props::state
