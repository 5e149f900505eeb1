// The handle runtime of seed 002 (real/handles/) as a system under test: LLM tool calls on
// drafts (create, read, update, commit with upstream work under a renewed lease, discard) by
// several app servers sharing one session's connection, on the state store of a ported version
// (beta30 by default, beta24), with faults. Its properties are one file each under
// properties/handles/ (listed in properties.inc), checked over what the callers saw and what
// the simulated upstream did; where the code is weaker than the seed's comments promise, that
// is a finding.
#pragma once

#include <memory>
#include <string>

#include "properties/handles/handles_workload.h"
#include "harness/system.h"

namespace testbed::props::handles {

std::unique_ptr<System> Make();
// What a recorded trace of `version`'s calls can be judged by (properties/handles/
// handles_trace_ops.cc).
const TraceSupport* HandlesTraceSupport(const std::string& version);

// The run of spec.property whose clients make a recorded trace's operations (`plans`) through
// the port of spec.version (and its port variant), for testbed explore.
std::unique_ptr<PropertyRun> TraceRun(const RunSpec& spec, const real::ScriptCatalog& scripts,
                                      std::shared_ptr<const TracePlans> plans);

}  // namespace testbed::props::handles
