// The one owned PRNG of the testbed: xoshiro256** seeded through splitmix64.
//
// Why our own: absl::BitGen is salted per process and std distributions differ between
// standard libraries, so neither replays. Every mapping from raw bits to a choice is written
// here, and probabilities are integer ratios (TigerBeetle's Ratio), never doubles.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace testbed::sim {

struct Ratio {
  uint64_t numerator = 0;
  uint64_t denominator = 1;
};

// The seed of one client operation's own stream, so that shrinking one operation away (a
// skipped client:index pair) leaves every other operation's draws as they were.
inline uint64_t OpSeed(uint64_t seed, int client, int op) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ULL +
               static_cast<uint64_t>(client) * 0xBF58476D1CE4E5B9ULL +
               static_cast<uint64_t>(op) * 0x94D049BB133111EBULL + 1;
  x ^= x >> 31;
  return x;
}

class Prng {
 public:
  explicit Prng(uint64_t seed) {
    uint64_t x = seed;
    for (uint64_t& s : state_) s = SplitMix64(x);
  }

  uint64_t next() {
    const uint64_t result = Rotl(state_[1] * 5, 7) * 9;
    const uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = Rotl(state_[3], 45);
    return result;
  }

  // Uniform in [0, bound) by rejection, so no modulo bias. bound 0 returns 0.
  uint64_t below(uint64_t bound) {
    if (bound == 0) return 0;
    const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    uint64_t x;
    do {
      x = next();
    } while (x >= limit);
    return x % bound;
  }

  // Uniform in [lo, hi], inclusive.
  int64_t range(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(below(static_cast<uint64_t>(hi - lo) + 1));
  }

  bool chance(Ratio r) { return below(r.denominator) < r.numerator; }

  template <typename T>
  const T& pick(const std::vector<T>& items) {
    return items[below(items.size())];
  }

  static uint64_t SplitMix64(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t state_[4];
};

}  // namespace testbed::sim
