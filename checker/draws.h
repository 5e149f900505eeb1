// The random draws a history generator makes, as an interface: the checker library owns no
// generator. The testbed's one PRNG supplies them (harness/prng_draws.h wraps sim::Prng), so a
// generated history is the same for the same seed wherever it is made.
#pragma once

#include <cstdint>

namespace testbed::checker {

// A probability as an integer ratio, never a double (TigerBeetle's Ratio).
struct Ratio {
  uint64_t numerator = 0;
  uint64_t denominator = 1;
};

class Draws {
 public:
  virtual ~Draws() = default;
  // Uniform in [0, bound); bound 0 returns 0.
  virtual uint64_t below(uint64_t bound) = 0;
  // Uniform in [lo, hi], inclusive.
  int64_t range(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(below(static_cast<uint64_t>(hi - lo) + 1));
  }
  bool chance(Ratio r) { return below(r.denominator) < r.numerator; }
};

}  // namespace testbed::checker
