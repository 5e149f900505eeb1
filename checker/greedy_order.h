// A linearization found without search, for any model the checker takes (properties/
// linearizability.h): the witness half of "inference first, search second" (issue 33). The
// state register (checker/version_order.h) and Knossos's cas-register (properties/
// jepsen_history.h) both ask it before they search.
//
// Two greedy walks. The first: at each step, of the operations real time lets go next, the
// completed one that the model accepts in the current state goes, a read if one is, else the one
// with the earliest return (earliest deadline first); when none is accepted, the first ambiguous
// operation the model accepts takes effect; ambiguous ones left at the end never did. Each step
// is the model's own, inside the operation's window and after the previous point, so a walk that
// reaches the end is a witness. A walk that does not proves nothing (the search decides then).
// The second is lazy, as Lowe's just-in-time linearization is: the completed operation that
// returns first must take effect before anything invoked after its return, so it goes as soon
// as the model accepts it, unless a completed operation that holds now would not after it and
// leaves it accepted (a cas expecting the value a write is about to replace): that one goes
// first. When the model does not accept it, one operation that makes it accepted goes first
// (a completed one if one does, the earliest returning). Reads that hold go at once. The eager
// walk fails where it takes a write too early (a read invoked later needed the value before it),
// the lazy one where an operation needs two others before it; either reaching the end decides.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "checker/linearizability.h"

namespace testbed::checker {

// Of a model's steps, the one at the earliest linearization point.
template <typename Steps>
auto EarliestStep(const Steps& steps) {
  return *std::min_element(steps.begin(), steps.end(),
                           [](const auto& a, const auto& b) { return a.second < b.second; });
}

// The operations a walk orders, by invoke: an ambiguous read constrains nothing.
template <typename M>
std::vector<const Operation<typename M::Op>*> ToOrder(
    const M& model, const std::vector<Operation<typename M::Op>>& part) {
  std::vector<const Operation<typename M::Op>*> pending;
  for (const auto& o : part)
    if (!o.ambiguous || !model.read_only(o.op)) pending.push_back(&o);
  std::sort(pending.begin(), pending.end(),
            [](const auto* a, const auto* b) { return a->invoke < b->invoke; });
  return pending;
}

// The earliest-deadline walk (above): eager, it takes any accepted operation.
template <typename M>
bool EarliestDeadlineOrder(const M& model, const std::vector<Operation<typename M::Op>>& part) {
  using Op = Operation<typename M::Op>;
  using Step = std::pair<typename M::State, int64_t>;
  std::vector<const Op*> pending = ToOrder(model, part);
  typename M::State state = model.init();
  int64_t t_lo = INT64_MIN;
  while (std::any_of(pending.begin(), pending.end(), [](const Op* o) { return !o->ambiguous; })) {
    int64_t min_ret = kNever;
    for (const Op* o : pending) min_ret = std::min(min_ret, o->ret);
    size_t best = pending.size(), fallback = pending.size();
    bool best_reads = false;
    Step best_step, fallback_step;
    for (size_t i = 0; i < pending.size(); ++i) {
      const Op& o = *pending[i];
      if (o.invoke > min_ret) break;  // sorted by invoke: nobody later can go first
      const int64_t lo = std::max(t_lo, o.invoke_ms);
      if (lo > o.ret_ms) continue;
      if (o.ambiguous) {
        if (fallback < pending.size()) continue;
        const auto steps = model.step(state, o.op, lo, o.ret_ms, true);
        if (steps.empty()) continue;
        fallback = i;
        fallback_step = EarliestStep(steps);
        continue;
      }
      // Reads first (they change nothing), then by earliest return.
      const bool reads = model.read_only(o.op);
      if (best < pending.size() &&
          std::make_pair(!best_reads, pending[best]->ret) <= std::make_pair(!reads, o.ret))
        continue;
      const auto steps = model.step(state, o.op, lo, o.ret_ms, false);
      if (steps.empty()) continue;
      best = i;
      best_reads = reads;
      best_step = EarliestStep(steps);
    }
    if (best == pending.size()) {
      best = fallback;
      best_step = fallback_step;
    }
    if (best == pending.size()) return false;
    state = std::move(best_step.first);
    t_lo = best_step.second;
    pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(best));
  }
  return true;  // the ambiguous operations left never took effect
}

// The lazy walk (above).
template <typename M>
bool JustInTimeOrder(const M& model, const std::vector<Operation<typename M::Op>>& part) {
  using Op = Operation<typename M::Op>;
  using Step = std::pair<typename M::State, int64_t>;
  std::vector<const Op*> pending = ToOrder(model, part);
  typename M::State state = model.init();
  int64_t t_lo = INT64_MIN;
  // The earliest step of o from s, if the model accepts it there.
  auto accepted = [&](const typename M::State& s, int64_t lo_at,
                      const Op& o) -> std::optional<Step> {
    const int64_t lo = std::max(lo_at, o.invoke_ms);
    if (lo > o.ret_ms) return std::nullopt;
    const auto steps = model.step(s, o.op, lo, o.ret_ms, o.ambiguous);
    if (steps.empty()) return std::nullopt;
    return EarliestStep(steps);
  };
  while (std::any_of(pending.begin(), pending.end(), [](const Op* o) { return !o->ambiguous; })) {
    size_t first = pending.size();  // the completed operation that returns first
    for (size_t i = 0; i < pending.size(); ++i)
      if (!pending[i]->ambiguous &&
          (first == pending.size() || pending[i]->ret < pending[first]->ret))
        first = i;
    const int64_t min_ret = pending[first]->ret;
    size_t go = pending.size();
    std::optional<Step> step;
    for (size_t i = 0; i < pending.size() && go == pending.size(); ++i) {
      const Op& o = *pending[i];
      if (o.invoke > min_ret) break;
      if (o.ambiguous || !model.read_only(o.op)) continue;
      if ((step = accepted(state, t_lo, o)) && step->second == t_lo) go = i;
    }
    if (go == pending.size() && (step = accepted(state, t_lo, *pending[first]))) {
      go = first;
      // An operation that holds now but would not after the first one (a cas expecting what the
      // register holds, before a write replaces it) goes before it, if the first still holds.
      const Step after_first = *step;
      for (size_t i = 0; i < pending.size(); ++i) {
        const Op& o = *pending[i];
        if (o.invoke > min_ret) break;
        if (i == first || o.ambiguous || model.read_only(o.op)) continue;
        if (go != first && pending[go]->ret < o.ret) continue;
        std::optional<Step> s = accepted(state, t_lo, o);
        if (!s || accepted(after_first.first, after_first.second, o) ||
            !accepted(s->first, s->second, *pending[first]))
          continue;
        go = i;
        step = s;
      }
    }
    const bool need_enabler = go == pending.size();
    for (size_t i = 0; need_enabler && i < pending.size(); ++i) {
      const Op& o = *pending[i];
      if (o.invoke > min_ret) break;
      if (i == first || model.read_only(o.op)) continue;
      std::optional<Step> s = accepted(state, t_lo, o);
      if (!s || !accepted(s->first, s->second, *pending[first])) continue;
      if (go == pending.size() || (pending[go]->ambiguous && !o.ambiguous) ||
          (pending[go]->ambiguous == o.ambiguous && o.ret < pending[go]->ret)) {
        go = i;
        step = s;
      }
    }
    if (go == pending.size()) return false;
    state = std::move(step->first);
    t_lo = step->second;
    pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(go));
  }
  return true;  // the ambiguous operations left never took effect
}

// Either walk reaching the end is a witness.
template <typename M>
bool GreedyOrder(const M& model, const std::vector<Operation<typename M::Op>>& part) {
  return EarliestDeadlineOrder(model, part) || JustInTimeOrder(model, part);
}

// The most operations of a history pending at once (an ambiguous one stays pending).
template <typename Op>
int MostPending(const std::vector<Operation<Op>>& part) {
  std::vector<std::pair<int64_t, int>> events;  // (position, +1 invoke / -1 return)
  for (const auto& o : part) {
    events.push_back({o.invoke, 1});
    if (o.ret != kNever) events.push_back({o.ret, -1});
  }
  std::sort(events.begin(), events.end());
  int pending = 0, most = 0;
  for (const auto& [at, delta] : events) most = std::max(most, pending += delta);
  return most;
}

}  // namespace testbed::checker
