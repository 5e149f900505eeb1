// Saved findings (scenarios/*.json; the format is in scenarios/README.md): the run that
// triggers a violation, as the system's RunSpec, with what it shows. Any registered system's
// scenarios load and save here; the system adds its own fields (harness/system.h).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "harness/system.h"
#include "real/script_catalog.h"

namespace testbed::harness {

struct Scenario {
  std::string name, trigger, severity, why, expect = "violated";
  std::string cls;  // the anomaly class it shows ("": any violation of the property)
  const props::System* system = nullptr;
  props::RunSpec spec;
  // A --scripts directory whose files replace shipped scripts in the run (a broken or fixed
  // copy, so that a scenario can show a promise the shipped scripts keep): "" for the shipped
  // scripts. In the file, a path relative to the scenario file's directory; here, one that
  // opens from the current directory.
  std::string scripts;
  // The client code the run drives ("client": "js", "client_dir": a directory relative to the
  // scenario file, as `scripts`): the ports when absent.
  real::ClientCode client;
};

// Throws std::invalid_argument naming the file and the bad field.
Scenario Load(const std::string& path);

// The shipped scripts with a --scripts directory's files in place of theirs: DIR/NAME replaces
// NAME of `version` only (its old pods keep theirs), DIR/<system>/<version>/NAME that version's
// NAME. Only *.lua files count. Throws std::invalid_argument for a file that replaces no shipped
// script, or a directory with none. `replaced`: each shipped file and its replacement, in order.
real::ScriptCatalog CatalogWithOverrides(
    const std::string& dir, const props::System& system, const std::string& version,
    std::vector<std::pair<std::string, std::string>>* replaced = nullptr);
// The scripts a scenario runs (the shipped ones, or its own directory's in their place), with
// its client code.
real::ScriptCatalog ScriptsOf(const Scenario& s);
// Writes dir/<name>.json through a temporary file and a rename; returns the path.
std::string Save(const std::string& dir, const Scenario& s);

}  // namespace testbed::harness
