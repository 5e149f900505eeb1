// Trace views for people: the events of a run filtered by kind and rendered, with script bodies
// named by their files and long scope digests shortened. Nothing here parses rendered text.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "real/script_catalog.h"
#include "sim/trace.h"

namespace testbed::reports {

// "<script 1a2b3c4d5e6f>" (the trace's name for a body) -> the script's id.
using sim::ScriptNames;  // a catalog's are ScriptCatalog::names()

// Shortens the long parts of state keys for reading (scope digests, index identities).
std::string Abbreviate(const std::string& line);

// Redis calls as Redis ran them, with faults and clock plans: the events of kind reply, fault
// and clock, rendered.
std::vector<std::string> CallsInOrder(const sim::Trace& trace, const ScriptNames& names);
// The same calls per actor (sorted by actor name), "+12ms "GET" "k" -> (nil)".
std::map<std::string, std::vector<std::string>> CallsPerActor(const sim::Trace& trace,
                                                              const ScriptNames& names);

}  // namespace testbed::reports
