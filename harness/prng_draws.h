// The checker library's draws (checker/draws.h) from the testbed's one PRNG, so that a history
// generated for a test or a benchmark is the same for the same seed.
#pragma once

#include <cstdint>

#include "checker/draws.h"
#include "sim/prng.h"

namespace testbed::harness {

class PrngDraws : public checker::Draws {
 public:
  explicit PrngDraws(uint64_t seed) : rng_(seed) {}
  uint64_t below(uint64_t bound) override { return rng_.below(bound); }

 private:
  sim::Prng rng_;
};

}  // namespace testbed::harness
