// Property "model-matches-implementation" of the a2 event store: one sequential, fault-free
// caller, every call of the port compared with the model of the store's contract (model/a2.h)
// at the same instant; every call, with stale claims and pauses past the lease.
#include "properties/a2/a2_sequential.h"

namespace testbed::props::a2 {
namespace {

const Mix kMix = {{18, 14, 5, 10, 6, 5, 3, 5, 5, 7, 4, 3, 3, 2},
                  {"s1", "s2"},
                  {"sum", "count"},
                  {"room-1"},
                  /*late=*/true,
                  /*adversarial=*/false,
                  /*past_frontier=*/false,
                  /*expired_own=*/false,
                  /*boundaries=*/false,
                  /*expiry_edges=*/true};

std::string Judge(const SequentialStep& s) {
  std::string cls;
  if (s.store != s.model) cls = "disagrees-on-" + s.op;
  if (s.op == "append" && s.model.value("error", "") == "SUPERSEDED_ATTEMPT" &&
      !s.store.contains("error"))
    cls = "caused-append-not-fenced";
  if (s.op == "presenceSet" && s.store.is_object() && s.store.contains("values")) {
    for (const auto& [field, v] : s.store["values"].items())
      if (!s.model.is_object() || !s.model.contains("values") || !s.model["values"].contains(field))
        cls = "presence-older-write-applied";
  }
  return cls;
}

}  // namespace

const A2Property& ModelMatchesImplementation() {
  static const A2Property kProperty = {
      {"model-matches-implementation",
       "a sequential, fault-free caller gets from every call what the model of the store's "
       "contract (model/a2.h) answers at that instant",
       Always, sim::FaultSet::All(),
       Disagreements("disagrees-on-", "answers other than the model",
                     {{"caused-append-not-fenced",
                       "an append caused by an attempt that no longer holds a live claim (it "
                       "completed, failed or expired) was accepted"},
                      {"presence-older-write-applied",
                       "presence.set applied a field although a newer stamp (a delete's "
                       "included) had been written"}})},
      Sequential<kMix, Judge>};
  return kProperty;
}

}  // namespace testbed::props::a2
