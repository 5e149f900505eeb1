// Deliberately broken handle runtime storage, one per promise of model/handles.h, for seeing
// the handles properties fail where the shipped port keeps the promise (as
// tests/broken_scripts/ does for scripts). A run names one with the handles system's option
// --port-variant (scenario field "port_variant"); "shipped" is the version's port. Each wraps
// the port's storage and breaks one thing on the way in or out; the promise's number is
// model/handles.h's.
#pragma once

#include <string>
#include <vector>

#include "properties/handles/handles_workload.h"

namespace testbed::props::handles {

struct PortVariant {
  std::string name;  // "broken-4-discard-keeps"
  int promise = 0;   // the promise of model/handles.h it breaks (0: none)
  std::string what;
  StateFactory make;
};

const std::vector<PortVariant>& PortVariants();
// Throws std::invalid_argument for a name no variant has.
const PortVariant& FindPortVariant(const std::string& name);
std::vector<std::string> PortVariantNames();

}  // namespace testbed::props::handles
