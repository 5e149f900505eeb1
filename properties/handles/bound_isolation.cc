// Property "bound-isolation" of handles: a bound draft is not found from another
// connection: the drafts workload's clients sometimes read through a second connection.
#include "properties/handles/handles_workload.h"

namespace testbed::props::handles {
namespace {

std::vector<Finding> ForeignReads(const Recorder& rec, const sim::Trace&) {
  return rec.foreign_reads;
}

}  // namespace

const HandlesProperty& BoundIsolation() {
  static const HandlesProperty kProperty = {
      {"bound-isolation",
       "a bound draft is not found from another connection",
       Always,
       LosesWrites(),
       {{kReadsOtherConnectionsDraft, "another connection reads a bound draft"}}},
      Run<ForeignReads>};
  return kProperty;
}

}  // namespace testbed::props::handles
