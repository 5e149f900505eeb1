// Virtual time in milliseconds. The simulation owns it; nothing in sim/ reads a wall clock.
#pragma once

#include <cstdint>

#include "sim/reply.h"

namespace testbed::sim {

// 2026-01-01T00:00:00Z: a realistic epoch, so envelopes and TTL arithmetic look like production.
inline constexpr int64_t kDefaultEpochMs = 1767225600000;

class VirtualClock : public Clock {
 public:
  explicit VirtualClock(int64_t start_ms = kDefaultEpochMs) : now_(start_ms) {}
  int64_t now_ms() const override { return now_; }
  void set(int64_t ms) { now_ = ms; }
  void advance(int64_t ms) { now_ += ms; }

 private:
  int64_t now_;
};

}  // namespace testbed::sim
