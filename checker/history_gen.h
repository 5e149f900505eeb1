// Linearizable register histories by construction, for benchmarks and checker tests: actors
// issue operations with random durations; each takes effect at a random point inside its
// interval, and outputs are computed by applying the model's rules at those points in order.
#pragma once

#include "checker/register_history.h"
#include "checker/draws.h"

namespace testbed::checker {

struct HistoryShape {
  int operations = 1000;
  int keys = 10;
  int actors = 4;
  int64_t max_duration_ms = 10;  // longer operations overlap more: harder to check
  int64_t max_gap_ms = 5;
  Ratio ambiguous{0, 1};  // operations whose reply is lost
};

RegisterHistory GenerateLinearizable(Draws& rng, const HistoryShape& shape);
inline RegisterHistory GenerateLinearizable(Draws&& rng, const HistoryShape& shape) {
  return GenerateLinearizable(rng, shape);
}

// A hot key: `actors` clients each setting and reading it in turn, operations up to 60 ms long,
// nothing deleted and nothing expiring; linearizable by construction (each takes effect at a
// random point of its interval), a tenth of the calls with their reply lost.
RegisterHistory GenerateHotKey(Draws& rng, int actors, int operations);
inline RegisterHistory GenerateHotKey(Draws&& rng, int actors, int operations) {
  return GenerateHotKey(rng, actors, operations);
}

}  // namespace testbed::checker
