#include "checker/version_order.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "checker/greedy_order.h"

namespace testbed::checker {
namespace {

using K = model::RegisterOp::Kind;
using RegisterOperation = Operation<model::RegisterOp>;

// What a completed operation says about the key's version around its linearization point.
struct Seen {
  const RegisterOperation* op = nullptr;
  bool has_before = false;                    // false: a delete (it finds any state)
  int64_t before = 0;                         // the version it found (0: absent)
  int64_t after = 0;                          // the version it left
  const std::string* before_value = nullptr;  // the value it found, when it says
  const std::string* after_value = nullptr;   // the value it left, when present
};

std::optional<Seen> Observation(const RegisterOperation& o) {
  if (o.ambiguous) return std::nullopt;
  Seen s{&o};
  switch (o.op.kind) {
    case K::kGet:
      s.has_before = true;
      s.before = s.after = o.op.ok ? o.op.out_version : 0;
      if (o.op.ok) s.before_value = s.after_value = &o.op.out_value;
      break;
    case K::kCas:
      s.has_before = true;
      if (o.op.ok) {
        s.before = o.op.expected;
        s.after = o.op.out_version;
        s.after_value = &o.op.value;
      } else {
        s.before = s.after = o.op.out_version;
        if (o.op.out_version > 0) s.before_value = s.after_value = &o.op.out_value;
      }
      break;
    case K::kSet:
      s.has_before = true;
      s.before = o.op.out_version - 1;
      s.after = o.op.out_version;
      s.after_value = &o.op.value;
      break;
    case K::kDelete:
      s.after = 0;
      break;
  }
  return s;
}

// An operation no state of the model allows, whatever else happened.
bool ImpossibleAlone(const RegisterOperation& o) {
  if (o.ambiguous) return false;
  switch (o.op.kind) {
    case K::kCas:  // the model's compareAndSet succeeds exactly when the current version matches
      return o.op.ok ? o.op.out_version != o.op.expected + 1 : o.op.out_version == o.op.expected;
    case K::kSet:
      return o.op.out_version < 1;
    case K::kGet:
      return o.op.ok && o.op.out_version < 1;
    case K::kDelete:
      return false;
  }
  return false;
}

bool Writes(const RegisterOperation& o) {
  return o.op.kind == K::kSet || (o.op.kind == K::kCas && (o.ambiguous || o.op.ok));
}

// Real time lets `x` lie between F and S (F first): it did not return before F was invoked, and
// was not invoked after S returned.
bool FitsBetween(const RegisterOperation& x, const RegisterOperation& f,
                 const RegisterOperation& s) {
  return &x != &f && &x != &s && !(x.ret < f.invoke) && !(s.ret < x.invoke);
}

class Inference {
 public:
  Inference(const RegisterHistory& part, bool ignore_resets)
      : part_(part), ignore_resets_(ignore_resets) {
    for (const auto& o : part_) {
      if (o.op.kind == K::kDelete) deletes_.push_back(&o);
      if (Writes(o)) writes_.push_back(&o);
      if (auto s = Observation(o)) seen_.push_back(*s);
    }
    std::sort(seen_.begin(), seen_.end(),
              [](const Seen& a, const Seen& b) { return a.op->invoke < b.op->invoke; });
  }

  std::optional<RegisterHistory> Core() const {
    for (const auto& o : part_)
      if (ImpossibleAlone(o)) return RegisterHistory{o};
    // The later-invoked operation ascending, its partner from the nearest one back: the first
    // core found is the earliest, and as short as the history allows.
    for (size_t j = 0; j < seen_.size(); ++j)
      for (size_t i = j; i-- > 0;) {
        const Seen& a = seen_[i];
        const Seen& b = seen_[j];
        const bool a_first_allowed = !(b.op->ret < a.op->invoke);
        const bool b_first_allowed = !(a.op->ret < b.op->invoke);
        if (a_first_allowed && !Impossible(a, b)) continue;
        if (b_first_allowed && !Impossible(b, a)) continue;
        return RegisterHistory{*a.op, *b.op};
      }
    return std::nullopt;
  }

 private:
  // F linearized before S needs what no operation of the history can supply.
  bool Impossible(const Seen& f, const Seen& s) const {
    if (!s.has_before) return false;  // S is a delete: it follows anything
    const bool other_value = s.before == f.after && f.after >= 1 && f.after_value &&
                             s.before_value && *f.after_value != *s.before_value;
    const bool needs_reset = s.before < f.after || other_value;
    const bool needs_write = s.before >= 1 && (s.before > f.after || needs_reset);
    if (needs_reset && (ignore_resets_ || !CanReset(*f.op, *s.op))) return true;
    return needs_write && !CanWrite(*f.op, *s.op);
  }

  bool CanWrite(const RegisterOperation& f, const RegisterOperation& s) const {
    return std::any_of(writes_.begin(), writes_.end(),
                       [&](const RegisterOperation* w) { return FitsBetween(*w, f, s); });
  }

  bool CanReset(const RegisterOperation& f, const RegisterOperation& s) const {
    if (std::any_of(deletes_.begin(), deletes_.end(),
                    [&](const RegisterOperation* d) { return FitsBetween(*d, f, s); }))
      return true;
    // An expiry: the key is alive at its instant E and gone from E + 1 (rule 1), so S's point
    // is past E: E < S's return, for an E of the value's window [expires_at, expires_hi],
    // written no later than S returned. Either the value was already current at F and E + 1
    // comes after F's point (E >= F's invocation), or it was written by F or between F and S,
    // whatever its E (a write whose expiry has passed leaves the key absent).
    return std::any_of(writes_.begin(), writes_.end(), [&](const RegisterOperation* w) {
      if (w == &s || s.ret < w->invoke || w->invoke_ms > s.ret_ms) return false;
      const int64_t lo = w->op.expires_at_ms;
      const int64_t hi = std::max(w->op.expires_at_ms, w->op.expires_hi_ms);
      // F's own value may even be dead as it is written (an expiry already past).
      return lo < s.ret_ms && (w == &f || hi >= f.invoke_ms || FitsBetween(*w, f, s));
    });
  }

  const RegisterHistory& part_;
  bool ignore_resets_;
  std::vector<const RegisterOperation*> deletes_, writes_;
  std::vector<Seen> seen_;
};

}  // namespace

std::optional<RegisterHistory> InferRejectedCore(const RegisterHistory& part, bool ignore_resets) {
  return Inference(part, ignore_resets).Core();
}

bool GreedyLinearization(const RegisterHistory& part) {
  return GreedyOrder(model::StateRegisterModel(), part);
}

std::string DescribeUndecided(const std::string& key, const RegisterHistory& part) {
  const int64_t ambiguous =
      std::count_if(part.begin(), part.end(), [](const auto& o) { return o.ambiguous; });
  return absl::StrCat(key, ": ", part.size(), " operations, up to ", MostPending(part),
                      " pending at once, ", ambiguous, " ambiguous");
}

}  // namespace testbed::checker
