// Saved findings (scenarios/*.json; the format is in scenarios/README.md): the run that
// triggers a violation, as the system's RunSpec, with what it shows. Any registered system's
// scenarios load and save here; the system adds its own fields (properties/system.h).
#pragma once

#include <string>

#include "properties/system.h"

namespace testbed::scenarios {

struct Scenario {
  std::string name, trigger, severity, why, expect = "violated";
  std::string cls;  // the anomaly class it shows ("": any violation of the property)
  const props::System* system = nullptr;
  props::RunSpec spec;
};

// Throws std::invalid_argument naming the file and the bad field.
Scenario Load(const std::string& path);
// Writes dir/<name>.json through a temporary file and a rename; returns the path.
std::string Save(const std::string& dir, const Scenario& s);

}  // namespace testbed::scenarios
