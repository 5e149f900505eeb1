// Baselines (baselines/<system>/<version>.json): the anomaly classes a team has accepted for a
// version, each with a reason and a scenario that shows it. `check --baseline FILE` fails only
// on a class that is not in the file, so a version that already breaks a property every run
// can still be gated on the next bug. The format is in baselines/README.md.
#pragma once

#include <string>
#include <vector>

namespace testbed::harness {

struct Accepted {
  std::string property, cls, reason, scenario;  // scenario: a path relative to the repository
  bool operator==(const Accepted&) const = default;
};

struct Baseline {
  std::string system, version;
  // The fault list the classes were triaged under (check's --faults: "none", "all", a list): CI's
  // gate runs the version with it as well as without faults. Optional, "none" when absent.
  std::string faults = "none";
  std::vector<Accepted> accepted;
  const Accepted* find(const std::string& property, const std::string& cls) const;
};

// Throws std::invalid_argument naming the file and the bad field.
Baseline LoadBaseline(const std::string& path);
// Through a temporary file and a rename.
void SaveBaseline(const std::string& path, const Baseline& b);

}  // namespace testbed::harness
