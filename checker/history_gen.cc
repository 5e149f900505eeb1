#include "checker/history_gen.h"

#include <algorithm>
#include <map>

namespace testbed::checker {

RegisterHistory GenerateLinearizable(Draws& rng, const HistoryShape& shape) {
  struct Planned {
    Operation<model::RegisterOp> op;
    int64_t at;  // linearization point
    int64_t tie;
  };
  std::vector<Planned> planned;
  std::vector<int64_t> clock(shape.actors, 0);
  for (int i = 0; i < shape.operations; ++i) {
    const int a = static_cast<int>(rng.below(shape.actors));
    Planned p;
    p.op.actor = a;
    p.op.partition = "key" + std::to_string(rng.below(shape.keys));
    const int64_t start = clock[a] + rng.range(0, shape.max_gap_ms);
    const int64_t end = start + rng.range(0, shape.max_duration_ms);
    clock[a] = end + 1;
    p.op.invoke_ms = start;
    p.op.ret_ms = end;
    p.at = rng.range(start, end);
    p.tie = i;
    using K = model::RegisterOp::Kind;
    const uint64_t kind = rng.below(10);
    p.op.op.kind = kind < 4 ? K::kGet : kind < 7 ? K::kSet : kind < 9 ? K::kCas : K::kDelete;
    p.op.op.value = "v" + std::to_string(i);
    p.op.op.expires_at_ms = p.at + rng.range(0, 60);
    p.op.op.expected = rng.range(0, 3);
    p.op.ambiguous = rng.chance(shape.ambiguous);
    planned.push_back(p);
  }
  std::sort(planned.begin(), planned.end(), [](const Planned& x, const Planned& y) {
    return std::make_pair(x.at, x.tie) < std::make_pair(y.at, y.tie);
  });
  model::StateRegisterModel m;
  std::map<std::string, model::RegisterState> state;
  for (Planned& p : planned) {
    auto& op = p.op.op;
    model::RegisterState& s = state[p.op.partition];
    const bool alive = s.exists && p.at <= s.expires_at;
    const int64_t current = alive ? s.version : 0;
    using K = model::RegisterOp::Kind;
    switch (op.kind) {
      case K::kGet:
        op.ok = alive;
        op.out_value = alive ? s.value : "";
        op.out_version = alive ? s.version : 0;
        break;
      case K::kSet:
        op.out_version = current + 1;
        s = {true, op.value, current + 1, op.expires_at_ms};
        break;
      case K::kCas:
        if (current == op.expected) {
          op.ok = true;
          op.out_version = op.expected + 1;
          s = {true, op.value, op.expected + 1, op.expires_at_ms};
        } else {
          op.ok = false;
          op.out_version = current;
          op.out_value = alive ? s.value : "";
        }
        break;
      case K::kDelete:
        s = {};
        break;
    }
  }
  // Real-time order from the intervals: an operation that ended in an earlier millisecond
  // precedes; within one millisecond, operations are concurrent.
  RegisterHistory out;
  for (Planned& p : planned) {
    p.op.invoke = p.op.invoke_ms * 2;
    p.op.ret = p.op.ret_ms * 2 + 1;
    if (p.op.ambiguous) {
      p.op.ret = kNever;
      p.op.ret_ms = kNever;
    }
    out.push_back(p.op);
  }
  return out;
}

RegisterHistory GenerateHotKey(Draws& rng, int actors, int operations) {
  using K = model::RegisterOp::Kind;
  std::vector<int64_t> clock(actors, 0);
  std::vector<std::pair<int64_t, Operation<model::RegisterOp>>> planned;
  for (int i = 0; i < operations; ++i) {
    Operation<model::RegisterOp> o;
    o.partition = "hot";
    o.actor = static_cast<int>(rng.below(actors));
    o.invoke_ms = clock[o.actor] + rng.range(0, 2);
    o.ret_ms = o.invoke_ms + rng.range(0, 60);
    clock[o.actor] = o.ret_ms + 1;
    o.invoke = o.invoke_ms * 2;
    o.ret = o.ret_ms * 2 + 1;
    o.op.kind = rng.chance({1, 2}) ? K::kSet : K::kGet;
    o.op.value = "v" + std::to_string(i);
    o.op.expires_at_ms = 1'000'000'000;
    planned.push_back({rng.range(o.invoke_ms, o.ret_ms) * operations + i, o});
  }
  std::sort(planned.begin(), planned.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  RegisterHistory h;
  int64_t version = 0;
  std::string value;
  for (auto& [at, o] : planned) {
    // A tenth of the calls lose their reply (they took effect all the same).
    if (rng.chance({1, 10})) {
      o.ambiguous = true;
      o.ret = o.ret_ms = kNever;
    }
    if (o.op.kind == K::kSet) {
      o.op.out_version = ++version;
      value = o.op.value;
    } else {
      o.op.ok = version > 0;
      o.op.out_version = version;
      o.op.out_value = value;
    }
    h.push_back(o);
  }
  return h;
}

}  // namespace testbed::checker
