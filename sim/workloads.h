// Toy workloads for the runtime's own tests and for `testbed sim`: small, with a known race,
// so that a strategy's power can be seen and measured. The seed protocols come in issue 4.
//
// counter: each actor increments a shared counter by GET then SET (a read-modify-write race),
// while a child thread renews the actor's lease every 40 ms until the work is done. Invariant:
// the final counter equals the number of increments whose SET was acknowledged.
#pragma once

#include <optional>
#include <string>

#include "sim/runtime.h"

namespace testbed::sim {

struct CounterStats {
  int64_t acknowledged = 0;  // SETs that returned OK
  int64_t ambiguous = 0;     // SETs whose outcome is unknown (transport error)
};

void AddCounterWorkload(World& world, int actors, int increments, CounterStats* stats);

// nullopt when the invariant holds; otherwise what was lost.
std::optional<std::string> CheckCounter(Backend& backend, int64_t now_ms,
                                        const CounterStats& stats);

}  // namespace testbed::sim
