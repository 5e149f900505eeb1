#include "sim/strategies.h"

#include <algorithm>

namespace testbed::sim {

size_t Pct::choose(const std::vector<Choice>& enabled, Prng& prng) {
  if (!planned_) {
    // d - 1 change points, uniformly in [1, k]; the j-th lowers a thread to priority j.
    planned_ = true;
    for (int j = 1; j < depth_; ++j) change_points_[prng.range(1, std::max<int64_t>(1, k_))] = j;
  }
  ++step_;
  for (const Choice& c : enabled)
    if (!priority_.count(c.thread))  // initial priorities >= d, random: a random permutation
      priority_[c.thread] = depth_ + static_cast<int64_t>(prng.below(1u << 30));
  auto best = [&] {
    size_t b = 0;
    for (size_t i = 1; i < enabled.size(); ++i)
      if (priority_[enabled[i].thread] > priority_[enabled[b].thread]) b = i;
    return b;
  };
  if (auto it = change_points_.find(step_); it != change_points_.end())
    priority_[enabled[best()].thread] = it->second;
  return best();
}

size_t Replay::choose(const std::vector<Choice>& enabled, Prng&) {
  if (next_ >= choices_.size())
    throw ReplayDiverged("replay ran out of recorded choices at step " + std::to_string(next_));
  const size_t c = choices_[next_++];
  if (c >= enabled.size())
    throw ReplayDiverged("recorded choice " + std::to_string(c) + " at step " +
                         std::to_string(next_ - 1) + " but only " + std::to_string(enabled.size()) +
                         " calls are enabled");
  return c;
}

namespace {

struct Node {
  std::vector<size_t> allowed;  // indices to try here, in order
  size_t pos = 0;
  std::vector<ThreadId> threads;
};

struct PruneRun {};

// Follows the prefix, then takes the first allowed choice at every new node.
class DfsStrategy : public Strategy {
 public:
  DfsStrategy(std::vector<Node>& stack, size_t fixed, const DfsOptions& o,
              std::set<std::string>& visited)
      : stack_(stack), fixed_(fixed), options_(o), visited_(visited) {}

  size_t choose(const std::vector<Choice>& enabled, Prng&) override {
    const size_t depth = step_++;
    size_t pick;
    if (depth < fixed_) {
      pick = stack_[depth].allowed[stack_[depth].pos];
    } else {
      if (options_.prune_visited_states) {
        // Under a preemption bound the future also depends on who ran last and on the
        // preemptions left; without one, the world state alone decides it.
        std::string key = world->state_hash();
        if (options_.preemption_bound >= 0)
          key += " last " + std::to_string(last_) + " preemptions " + std::to_string(preemptions_);
        if (!visited_.insert(key).second) throw PruneRun{};
      }
      Node n;
      int last_index = -1;
      for (size_t i = 0; i < enabled.size(); ++i) {
        n.threads.push_back(enabled[i].thread);
        if (enabled[i].thread == last_) last_index = static_cast<int>(i);
      }
      // Continuing the last thread costs no preemption; switching away from it costs one.
      if (last_index >= 0) n.allowed.push_back(static_cast<size_t>(last_index));
      const bool may_preempt = options_.preemption_bound < 0 || last_index < 0 ||
                               preemptions_ < options_.preemption_bound;
      for (size_t i = 0; i < enabled.size(); ++i)
        if (static_cast<int>(i) != last_index && may_preempt) n.allowed.push_back(i);
      stack_.push_back(n);
      pick = n.allowed[0];
    }
    if (last_ >= 0 && enabled[pick].thread != last_)
      for (const Choice& c : enabled)
        if (c.thread == last_) ++preemptions_;
    last_ = enabled[pick].thread;
    return pick;
  }
  std::string name() const override { return "dfs"; }

 private:
  std::vector<Node>& stack_;
  size_t fixed_;
  const DfsOptions& options_;
  std::set<std::string>& visited_;
  size_t step_ = 0;
  ThreadId last_ = -1;
  int preemptions_ = 0;
};

}  // namespace

DfsResult ExploreDfs(const std::function<bool(Strategy&, RunResult*)>& run_once,
                     DfsOptions options) {
  DfsResult result;
  std::vector<Node> stack;
  std::set<std::string> visited;
  size_t fixed = 0;
  while (result.schedules + result.pruned < options.max_schedules) {
    DfsStrategy strategy(stack, fixed, options, visited);
    RunResult run;
    try {
      if (run_once(strategy, &run)) {
        if (result.violations++ == 0)
          for (const Node& n : stack) result.first_violation.push_back(n.allowed[n.pos]);
      }
      ++result.schedules;
    } catch (const PruneRun&) {
      ++result.pruned;
    }
    // Backtrack: the deepest node with an untried alternative.
    while (!stack.empty() && stack.back().pos + 1 >= stack.back().allowed.size()) stack.pop_back();
    if (stack.empty()) {
      result.exhausted = true;
      break;
    }
    stack.back().pos++;
    fixed = stack.size();
  }
  return result;
}

}  // namespace testbed::sim
