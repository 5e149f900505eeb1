#include "model/state_register.h"

#include <algorithm>

namespace testbed::model {
namespace {
RegisterState Written(const RegisterOp& op, int64_t version) {
  return RegisterState{true, op.value, version, op.expires_at_ms,
                       std::max(op.expires_at_ms, op.expires_hi_ms)};
}
}  // namespace

StateRegisterModel::Steps StateRegisterModel::step(const RegisterState& s, const RegisterOp& op,
                                                   int64_t lo, int64_t hi, bool ambiguous) const {
  // Where the window straddles the expiry, the outcome depends on t: try both sides.
  absl::InlinedVector<std::pair<bool, int64_t>, 2> sides;  // (alive, earliest t)
  if (!s.exists || s.expires_hi < lo) {
    sides.push_back({false, lo});
  } else if (s.expires_at >= hi) {
    sides.push_back({true, lo});
  } else {
    sides.push_back({true, lo});
    sides.push_back({false, std::max(lo, s.expires_at + 1)});
  }
  Steps out;
  for (auto [alive, t] : sides) {
    const int64_t current = alive ? s.version : 0;
    RegisterState dead;  // what an expired key looks like
    const RegisterState& now = alive ? s : dead;
    switch (op.kind) {
      case RegisterOp::Kind::kGet:
        if (ambiguous || (op.ok == alive &&
                          (!alive || (op.out_value == s.value && op.out_version == s.version))))
          out.push_back({now, t});
        break;
      case RegisterOp::Kind::kSet: {
        const int64_t written = broken_ ? std::max<int64_t>(current, 1) : current + 1;
        if (ambiguous || op.out_version == written) out.push_back({Written(op, written), t});
        break;
      }
      case RegisterOp::Kind::kCas:
        if (current == op.expected) {
          if (ambiguous || (op.ok && op.out_version == op.expected + 1))
            out.push_back({Written(op, op.expected + 1), t});
        } else if (ambiguous ||
                   (!op.ok && op.out_version == current && (!alive || op.out_value == s.value))) {
          out.push_back({now, t});
        }
        break;
      case RegisterOp::Kind::kDelete:
        out.push_back({dead, t});
        break;
    }
  }
  return out;
}

}  // namespace testbed::model
