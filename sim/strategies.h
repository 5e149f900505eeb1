// Exploration strategies: which pending Redis call runs next.
//   RandomWalk  uniform among the enabled calls.
//   Pct         Burckhardt et al.'s probabilistic concurrency testing: random thread priorities,
//               d - 1 priority change points; finds a depth-d bug with probability
//               >= 1 / (n * k^(d-1)) for n threads and k steps.
//   Replay      a recorded list of choices (indices), e.g. from a trace or a shrunk failure.
//   ExploreDfs  bounded exhaustive search by re-execution: every schedule up to a preemption
//               bound, optionally pruning schedules that reach an already seen state.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/runtime.h"

namespace testbed::sim {

class RandomWalk : public Strategy {
 public:
  size_t choose(const std::vector<Choice>& enabled, Prng& prng) override {
    return prng.below(enabled.size());
  }
  std::string name() const override { return "random"; }
};

class Pct : public Strategy {
 public:
  // depth d >= 1; k_estimate: expected number of steps (change points fall in [1, k]).
  Pct(int depth, int64_t k_estimate) : depth_(depth), k_(k_estimate) {}
  size_t choose(const std::vector<Choice>& enabled, Prng& prng) override;
  std::string name() const override {
    return "pct(d=" + std::to_string(depth_) + ",k=" + std::to_string(k_) + ")";
  }

 private:
  int depth_;
  int64_t k_;
  int64_t step_ = 0;
  bool planned_ = false;
  std::map<int64_t, int> change_points_;  // step -> new (low) priority
  std::map<ThreadId, int64_t> priority_;
};

struct ReplayDiverged : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Replay : public Strategy {
 public:
  explicit Replay(std::vector<size_t> choices) : choices_(std::move(choices)) {}
  size_t choose(const std::vector<Choice>& enabled, Prng& prng) override;
  std::string name() const override { return "replay"; }

 private:
  std::vector<size_t> choices_;
  size_t next_ = 0;
};

struct DfsOptions {
  int preemption_bound = -1;  // -1: unbounded
  bool prune_visited_states = false;
  int64_t max_schedules = 1000000;
};

struct DfsResult {
  int64_t schedules = 0;   // complete runs explored
  int64_t pruned = 0;      // runs cut short at an already visited state
  bool exhausted = false;  // every schedule within the bound was explored
  int64_t violations = 0;
  std::vector<size_t> first_violation;  // its choices, replayable with Replay
};

// run_once builds a fresh world around the given strategy, runs it, and says whether the run
// violated what the caller checks.
DfsResult ExploreDfs(const std::function<bool(Strategy&, RunResult*)>& run_once,
                     DfsOptions options);

}  // namespace testbed::sim
