// Explaining why a history is not linearizable: a memoized search for an order of the calls
// (Wing & Gong with Lowe's memo, as checker/linearizability.h does it) that also keeps where
// the orders it tried got furthest (the call no order explains after the most explained calls,
// and the model's answer there), and a shrinker that cuts a rejected history to a small one that
// is still rejected. The calls-linearizable properties of a2 and handles share it.
//
// The model M (the one a property gives Checker<M>, with one more member):
//   using State; using Op (a recorded call); using Answer (what the model answers);
//   State init() const; bool read_only(Op) const;
//   void append_key(const State&, std::string&) const;
//   Answer explain(const State&, Op, bool ambiguous, std::vector<State>& next) const: `next`
//     gets every state after the call that explains its answer (ambiguous: every state after
//     it took effect); returns the model's own answer, which a finding shows where `next` is
//     empty.
#pragma once

#include <absl/container/flat_hash_set.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "checker/linearizability.h"

namespace testbed::checker {

template <typename M>
using CallHistory = std::vector<Operation<typename M::Op>>;

// Where the nearest order stops.
template <typename M>
struct Stuck {
  const Operation<typename M::Op>* op = nullptr;
  typename M::Answer model_answer{};
  int64_t explained = -1;
  std::vector<const Operation<typename M::Op>*> before;  // the order up to it
};

template <typename M>
class NearestOrder {
 public:
  using State = typename M::State;
  using Op = Operation<typename M::Op>;
  NearestOrder(const M& model, const CallHistory<M>& h, int64_t budget)
      : model_(model), h_(h), budget_(budget) {}
  // Linearizable (false also when out of budget: see gave_up()).
  bool Run() {
    std::vector<bool> done(h_.size(), false);
    std::vector<const Op*> order;
    return Step(done, 0, model_.init(), order);
  }
  bool gave_up() const { return gave_up_; }
  const Stuck<M>& stuck() const { return stuck_; }

 private:
  bool Step(std::vector<bool>& done, int64_t explained, const State& state,
            std::vector<const Op*>& order) {
    if (std::find(done.begin(), done.end(), false) == done.end()) return true;
    std::string key(done.begin(), done.end());
    model_.append_key(state, key);
    if (!memo_.insert(std::move(key)).second) return false;
    if (--budget_ < 0) {
      gave_up_ = true;
      return false;
    }
    int64_t min_ret = kNever;  // a call can go next if none pending returned before it began
    for (size_t i = 0; i < h_.size(); ++i)
      if (!done[i]) min_ret = std::min(min_ret, h_[i].ret);
    for (size_t i = 0; i < h_.size() && !gave_up_; ++i) {
      if (done[i] || h_[i].invoke > min_ret) continue;
      std::vector<State> next;
      const typename M::Answer a = model_.explain(state, h_[i].op, h_[i].ambiguous, next);
      done[i] = true;
      order.push_back(&h_[i]);
      bool ok = false;
      for (size_t b = 0; b < next.size() && !ok && !gave_up_; ++b)
        ok = Step(done, h_[i].ambiguous ? explained : explained + 1, next[b], order);
      if (h_[i].ambiguous && !ok && !gave_up_) {
        order.pop_back();
        ok = Step(done, explained, state, order);  // never took effect
        order.push_back(&h_[i]);
      } else if (!h_[i].ambiguous && next.empty() && explained > stuck_.explained) {
        order.pop_back();
        stuck_ = {&h_[i], a, explained, order};
        order.push_back(&h_[i]);
      }
      order.pop_back();
      done[i] = false;
      if (ok) return true;
    }
    return false;
  }

  const M& model_;
  const CallHistory<M>& h_;
  int64_t budget_;
  absl::flat_hash_set<std::string> memo_;
  Stuck<M> stuck_;
  bool gave_up_ = false;
};

// Rejected with a verdict (not out of budget).
template <typename M>
bool Rejected(const M& model, const CallHistory<M>& h, int64_t budget) {
  NearestOrder<M> s(model, h, budget);
  return !s.Run() && !s.gave_up();
}

// The first k calls (in invocation order) as they were, and the calls after them that may still
// have taken effect before one of those returned as calls that may or may not have happened
// (reads dropped). Calls invoked after every definite one of the first k returned cannot change
// their answers and are dropped. So a prefix that is rejected shows a history that is.
template <typename M>
CallHistory<M> Prefix(const M& model, const CallHistory<M>& h, size_t k) {
  int64_t last_ret = -1;
  for (size_t i = 0; i < k; ++i)
    if (!h[i].ambiguous) last_ret = std::max(last_ret, h[i].ret);
  CallHistory<M> out(h.begin(), h.begin() + static_cast<long>(k));
  for (size_t i = k; i < h.size(); ++i) {
    if (h[i].invoke > last_ret || model.read_only(h[i].op)) continue;
    out.push_back(h[i]);
    out.back().ambiguous = true;
    out.back().ret = kNever;
  }
  return out;
}

// A small rejected history: the shortest rejected prefix (found by bisection), then without
// each read (in turn) that the rejection does not need. `h` is in invocation order.
template <typename M>
CallHistory<M> Shrink(const M& model, const CallHistory<M>& h, int64_t budget) {
  size_t lo = 1, hi = h.size();  // hi: a rejected prefix length
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (Rejected(model, Prefix(model, h, mid), budget))
      hi = mid;
    else
      lo = mid + 1;
  }
  CallHistory<M> core = Prefix(model, h, hi);
  if (!Rejected(model, core, budget)) return h;  // the bisection went astray: keep it all
  for (size_t i = 0; i < core.size();) {
    if (model.read_only(core[i].op) && core.size() > 1) {
      CallHistory<M> t = core;
      t.erase(t.begin() + static_cast<long>(i));
      if (Rejected(model, t, budget)) {
        core = std::move(t);
        continue;
      }
    }
    ++i;
  }
  return core;
}

}  // namespace testbed::checker
