// Property "model-matches-implementation" of handles: one sequential, fault-free caller
// (three kinds: the workload's draft, a brief draft whose TTLs are all shorter than the lease,
// a public cursor), each call compared with model/handles at the same instant.
#include "properties/handles/handles_workload.h"

namespace testbed::props::handles {
namespace {

// Client 0 alone calls; the others (a run has the spec's clients) make no call.
sim::Task<void> ModelClient(sim::Ctx& ctx, ClientArgs a) {
  if (a.id == 0) co_await SequentialClient(ctx, a, /*against_memory=*/false);
}

}  // namespace

const HandlesProperty& ModelMatchesImplementation() {
  static const HandlesProperty kProperty = {
      {"model-matches-implementation",
       "a sequential, fault-free caller gets from every call what the model of the handle "
       "lifecycle (model/handles.h) answers at that instant",
       Always,
       sim::FaultSet::All(),
       {{"disagrees-on-create", "create answers other than the model"},
        {"disagrees-on-read", "read answers other than the model"},
        {"disagrees-on-update", "update answers other than the model"},
        {"disagrees-on-commit", "commit answers other than the model"},
        {"disagrees-on-discard", "discard answers other than the model"}}},
      Run<WorkloadFindings, ModelClient>};
  return kProperty;
}

}  // namespace testbed::props::handles
