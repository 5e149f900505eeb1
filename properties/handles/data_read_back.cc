// Property "data-read-back" of handles: a draft's data reads back exactly as written: the
// drafts workload reads each new draft back after its create and first update.
#include "properties/handles/handles_workload.h"
#include "properties/shared/json_bend.h"

namespace testbed::props::handles {
namespace {

std::vector<Finding> ReadBackMismatches(const Recorder& rec, const sim::Trace&) {
  return rec.read_back_mismatches;
}

}  // namespace

const HandlesProperty& DataReadBack() {
  static const HandlesProperty kProperty = {
      {"data-read-back",
       "a draft's data reads back exactly as written (JSON equality)",
       Always,
       LosesWrites(),
       {{kEmptyArrayBecomesObject, "an empty array reads back as an empty object"},
        {kNumberBent, "a number reads back as a different number"},
        {kStringBent, "a string reads back with different characters"},
        {kStructureBent, "the data reads back with a different structure"},
        {"update-not-visible", "a read after an acknowledged update returns the data before it"},
        {"failed-update-landed",
         "an update the caller was told failed (HANDLE_BUSY) had landed: the client library "
         "re-sent its CAS after a reconnect, and update took the re-send's conflict with its own "
         "first sending for a concurrent writer until its attempts ran out"}}},
      Run<ReadBackMismatches>};
  return kProperty;
}

}  // namespace testbed::props::handles
