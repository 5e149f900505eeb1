// Linearizability checking (Wing & Gong, with Lowe's memoization, as Porcupine does it).
//
// A history is a list of operations, each with its invocation and return position in real
// time (`invoke`, `ret`: a total order of events, e.g. the simulation's step sequence) and
// its window in virtual time (`invoke_ms`, `ret_ms`). An operation whose outcome is unknown
// (timeout, lost reply, crash) is `ambiguous`: it may take effect at any point after its
// invocation, or never, and its output says nothing (Knossos's :info).
//
// The model decides what an operation may do at a linearization point t in a time window:
//   Steps M::step(const State&, const Op&, int64_t t_lo, int64_t t_hi, bool ambiguous)
// returns every legal next state (a range of std::pair<State, int64_t>) with the earliest t at
// which that outcome is possible (t_lo <= t <= t_hi). Expiry makes an outcome depend on t: a model
// returns one branch for "before the expiry" and one for "after", so the checker neither cries wolf
// at an expiry instant inside an operation's interval nor goes blind there. Linearization points
// are non-decreasing, so the chosen t becomes the next operation's t_lo.
//   void M::append_key(const State&, std::string& out) appends the memoization key of a state.
//   bool M::read_only(const Op&) says an operation never changes the state.
//   Ambiguous operations: step is called with ambiguous = true and ignores the outputs; it
//   returns the "took effect" branches, and the checker adds "never took effect" itself.
//
// Histories are partitioned by `partition` (the Redis key) and each part is checked alone.
#pragma once

#include <absl/container/flat_hash_set.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace testbed::checker {

inline constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

template <typename Op>
struct Operation {
  std::string partition;
  int actor = 0;
  int64_t invoke = 0;  // real-time order of events
  int64_t ret = kNever;
  int64_t invoke_ms = 0;
  int64_t ret_ms = kNever;
  bool ambiguous = false;
  // A request of it was re-sent after a reconnect (ioredis's autoResendUnfulfilledCommands): it
  // may have taken effect once more before the outcome it reports. Checkers read it only
  // through WithResentTwins.
  bool resent = false;
  Op op;  // input and, unless ambiguous, output
};

struct Verdict {
  bool ok = true;
  bool complete = true;                // false: the state budget ran out before a verdict
  std::string partition;               // the first partition that is not linearizable
  std::vector<std::string> rejected;   // every partition that is not (checking goes on)
  std::vector<std::string> undecided;  // every partition whose search ran out of its budget
  int64_t states_explored = 0;
};

template <typename Model>
class Checker {
 public:
  using State = typename Model::State;
  using Op = typename Model::Op;

  // The search stops without a verdict (Verdict::complete false, never a pass) after
  // max_states states or once its memo holds max_memo_bytes: a history of 100 concurrent
  // clients must end with "no verdict", not exhaust the machine's memory.
  explicit Checker(const Model& model, int64_t max_states = 50'000'000,
                   int64_t max_memo_bytes = int64_t{384} << 20)
      : model_(model), max_states_(max_states), max_memo_bytes_(max_memo_bytes) {}

  Verdict check(const std::vector<Operation<Op>>& history) {
    // An ambiguous read has no effect and no known result: it constrains nothing, and keeping
    // it would only multiply the search (an ambiguous operation may land anywhere, or never).
    std::map<std::string, std::vector<const Operation<Op>*>> parts;
    for (const auto& o : history)
      if (!(o.ambiguous && model_.read_only(o.op))) parts[o.partition].push_back(&o);
    Verdict v;
    for (auto& [name, ops] : parts) {
      gave_up_ = false;
      const bool part_ok = check_part(ops, &v.states_explored);
      if (gave_up_) {
        v.complete = false;
        v.undecided.push_back(name);
      }
      if (!part_ok) {
        if (v.ok) v.partition = name;
        v.ok = false;
        v.rejected.push_back(name);
      }
    }
    return v;
  }

 private:
  bool check_part(std::vector<const Operation<Op>*> ops, int64_t* explored) {
    std::sort(ops.begin(), ops.end(), [](auto* a, auto* b) { return a->invoke < b->invoke; });
    ops_ = ops;
    memo_.clear();
    memo_bytes_ = 0;
    std::vector<uint64_t> done((ops.size() + 63) / 64, 0);
    const bool ok = search(done, 0, model_.init(), INT64_MIN, explored);
    return ok;
  }

  static bool test(const std::vector<uint64_t>& m, size_t i) { return m[i / 64] >> (i % 64) & 1; }
  static void flip(std::vector<uint64_t>& m, size_t i) { m[i / 64] ^= uint64_t{1} << (i % 64); }

  bool search(std::vector<uint64_t>& done, size_t count, const State& state, int64_t t_lo,
              int64_t* explored) {
    if (count == ops_.size()) return true;
    // t_lo matters only while it is later than some pending invocation: every operation
    // starts its window at max(t_lo, invoke_ms). Below all of them it is the same as -inf,
    // and keying it as such lets paths that differ only there share one memo entry.
    int64_t min_invoke_ms = kNever;
    int64_t min_ret = kNever;  // see below
    for (size_t i = 0; i < ops_.size(); ++i)
      if (!test(done, i)) {
        min_invoke_ms = std::min(min_invoke_ms, ops_[i]->invoke_ms);
        min_ret = std::min(min_ret, ops_[i]->ret);
      }
    const int64_t t_key = t_lo <= min_invoke_ms ? INT64_MIN : t_lo;
    // The memo key is built in a buffer kept across calls: a state seen before (most of them,
    // deep in a search) costs no allocation.
    std::string& memo_key = scratch_;
    memo_key.clear();
    memo_key.append(reinterpret_cast<const char*>(done.data()), done.size() * 8);
    memo_key.append(reinterpret_cast<const char*>(&t_key), sizeof t_key);
    const size_t here_at = memo_key.size();
    model_.append_key(state, memo_key);  // last: the only part whose length varies
    if (gave_up_) return true;           // unwinding
    memo_bytes_ += static_cast<int64_t>(memo_key.size()) + 64;  // the key and the node around it
    if (memo_.contains(memo_key)) return false;
    const std::string here = memo_key.substr(here_at);
    memo_.insert(memo_key);
    if (++*explored > max_states_ ||
        memo_bytes_ > max_memo_bytes_) {  // out of budget: unwind, no verdict
      gave_up_ = true;
      return true;
    }
    // An operation can go next if no other pending operation returned before it was invoked
    // (min_ret, above).
    // A read that can go next and holds at t_lo in this state goes first, without branching:
    // any linearization from here can move it to the front (it changes nothing, every
    // operation that must precede it is done, and t_lo keeps every other window as it was).
    for (size_t i = 0; i < ops_.size(); ++i) {
      if (test(done, i)) continue;
      const Operation<Op>& o = *ops_[i];
      if (o.invoke > min_ret) break;
      if (o.ambiguous || !model_.read_only(o.op) || o.invoke_ms > t_lo || t_lo > o.ret_ms) continue;
      for (auto& [next, t] : model_.step(state, o.op, t_lo, o.ret_ms, false))
        if (t == t_lo && SameKey(next, here)) {
          flip(done, i);
          const bool ok = search(done, count + 1, state, t_lo, explored);
          flip(done, i);
          return ok;
        }
    }
    for (size_t i = 0; i < ops_.size(); ++i) {
      if (test(done, i)) continue;
      const Operation<Op>& o = *ops_[i];
      if (o.invoke > min_ret) break;  // sorted by invoke: nobody after this can go first
      const int64_t lo = std::max(t_lo, o.invoke_ms);
      if (lo > o.ret_ms) continue;
      flip(done, i);
      for (auto& [next, t] : model_.step(state, o.op, lo, o.ret_ms, o.ambiguous))
        if (search(done, count + 1, next, t, explored)) return true;
      // Never took effect: allowed only for ambiguous operations.
      if (o.ambiguous && search(done, count + 1, state, t_lo, explored)) return true;
      flip(done, i);
    }
    return false;
  }

  bool SameKey(const State& s, const std::string& key) {
    key_scratch_.clear();
    model_.append_key(s, key_scratch_);
    return key_scratch_ == key;
  }

  const Model& model_;
  std::string scratch_, key_scratch_;
  int64_t max_states_;
  int64_t max_memo_bytes_;
  int64_t memo_bytes_ = 0;
  std::vector<const Operation<Op>*> ops_;
  absl::flat_hash_set<std::string> memo_;
  bool gave_up_ = false;
};

}  // namespace testbed::checker
