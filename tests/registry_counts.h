// Counts a test would otherwise pin, derived from the registry (issue 59): a property added to
// a system changes how many runs a check makes, and no test should have to be edited for it.
#pragma once

#include <string>

#include "harness/system.h"

namespace testbed::testing_registry {

// How many of `system`'s properties a check of `version` runs (the others print n/a), with the
// version's default old pods for the rolling-deploy properties.
inline int PropertiesThatApply(const std::string& system, const std::string& version) {
  const props::System* s = props::FindSystem(system);
  if (!s || !s->version(version)) return -1;
  const std::string old = s->version(version)->rolling_from;
  int n = 0;
  for (const props::PropertyInfo& p : s->properties()) n += p.applies(version, old) ? 1 : 0;
  return n;
}

}  // namespace testbed::testing_registry
