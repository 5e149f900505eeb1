#include "checker/register_history.h"

#include <absl/container/flat_hash_map.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

#include "checker/version_order.h"

namespace testbed::checker {
namespace {

int64_t Num(const std::string& s, const std::string& line) {
  if (s == "?") return kNever;
  try {
    size_t used = 0;
    const int64_t v = std::stoll(s, &used);
    if (used != s.size()) throw std::invalid_argument(s);
    return v;
  } catch (const std::exception&) {
    throw std::invalid_argument("not a number '" + s + "' in: " + line);
  }
}

}  // namespace

RegisterHistory ParseRegisterHistory(const std::string& text) {
  RegisterHistory out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::vector<std::string> t;
    for (std::string w; ls >> w;) t.push_back(w);
    if (t.size() < 7) throw std::invalid_argument("too few fields in: " + line);
    Operation<model::RegisterOp> o;
    o.partition = "k";
    o.actor = static_cast<int>(Num(t[0], line));
    o.invoke = Num(t[1], line);
    o.ret = Num(t[2], line);
    o.invoke_ms = Num(t[3], line);
    o.ret_ms = Num(t[4], line);
    o.ambiguous = o.ret == kNever;
    const std::string& kind = t[5];
    using K = model::RegisterOp::Kind;
    if (kind == "get")
      o.op.kind = K::kGet;
    else if (kind == "set")
      o.op.kind = K::kSet;
    else if (kind == "cas")
      o.op.kind = K::kCas;
    else if (kind == "delete")
      o.op.kind = K::kDelete;
    else
      throw std::invalid_argument("unknown operation '" + kind + "' in: " + line);
    size_t i = 6;
    std::map<std::string, std::string> in_args, out_args;
    for (; i < t.size() && t[i] != "->"; ++i) {
      const size_t eq = t[i].find('=');
      if (eq == std::string::npos)
        throw std::invalid_argument("expected k=v, got '" + t[i] + "' in: " + line);
      in_args[t[i].substr(0, eq)] = t[i].substr(eq + 1);
    }
    if (i == t.size()) throw std::invalid_argument("missing '->' in: " + line);
    std::vector<std::string> result(t.begin() + static_cast<long>(i) + 1, t.end());
    if (in_args.count("key")) o.partition = in_args["key"];
    o.op.value = in_args["value"];
    if (in_args.count("expected")) o.op.expected = Num(in_args["expected"], line);
    if (in_args.count("exp")) o.op.expires_at_ms = Num(in_args["exp"], line);
    if (in_args.count("exphi")) o.op.expires_hi_ms = Num(in_args["exphi"], line);
    if (!o.ambiguous) {
      if (result.empty()) throw std::invalid_argument("missing result in: " + line);
      size_t r = 0;
      if (result[0] == "null") {
        o.op.ok = false;
        r = 1;
      } else if (result[0] == "ok") {
        o.op.ok = true;
        r = 1;
      } else if (result[0] == "fail") {
        o.op.ok = false;
        r = 1;
      }
      for (; r < result.size(); ++r) {
        const size_t eq = result[r].find('=');
        if (eq == std::string::npos)
          throw std::invalid_argument("bad result '" + result[r] + "' in: " + line);
        const std::string k = result[r].substr(0, eq), v = result[r].substr(eq + 1);
        if (k == "value")
          o.op.out_value = v;
        else if (k == "version")
          o.op.out_version = Num(v, line);
        else
          throw std::invalid_argument("unknown result field '" + k + "' in: " + line);
      }
    }
    out.push_back(o);
  }
  return out;
}

std::string FormatRegisterOperation(const Operation<model::RegisterOp>& o) {
  auto n = [](int64_t v) { return v == kNever ? std::string("?") : std::to_string(v); };
  std::string s = std::to_string(o.actor) + " " + n(o.invoke) + " " + n(o.ret) + " " +
                  n(o.invoke_ms) + " " + n(o.ret_ms) + " ";
  using K = model::RegisterOp::Kind;
  const auto& op = o.op;
  const std::string key = o.partition == "k" ? "" : " key=" + o.partition;
  switch (op.kind) {
    case K::kGet:
      s += "get" + key;
      break;
    case K::kSet:
      s += "set" + key + " value=" + op.value + " exp=" + std::to_string(op.expires_at_ms);
      break;
    case K::kCas:
      s += "cas" + key + " expected=" + std::to_string(op.expected) + " value=" + op.value +
           " exp=" + std::to_string(op.expires_at_ms);
      break;
    case K::kDelete:
      s += "delete" + key;
      break;
  }
  if (op.expires_hi_ms > op.expires_at_ms) s += " exphi=" + std::to_string(op.expires_hi_ms);
  s += " ->";
  if (o.ambiguous) return s + " ?";
  switch (op.kind) {
    case K::kGet:
      return s + (op.ok ? " value=" + op.out_value + " version=" + std::to_string(op.out_version)
                        : " null");
    case K::kSet:
      return s + " version=" + std::to_string(op.out_version);
    case K::kCas:
      return s + (op.ok ? " ok version=" + std::to_string(op.out_version)
                        : " fail version=" + std::to_string(op.out_version) +
                              (op.out_value.empty() ? "" : " value=" + op.out_value));
    case K::kDelete:
      return s + " ok";
  }
  return s;
}

namespace {
// A get that found nothing (or a compareAndSet that failed finding nothing) after a write had
// been acknowledged, with nothing in h that may have removed it: a delete (or an ambiguous write)
// invoked before the get returned, or a write whose expiry may have passed by then. An
// explanation that a later write surely undid (one invoked after it returned, returned before the
// get began, and alive when the get returned) explains nothing.
bool MissUnexplained(const RegisterHistory& h, const Operation<model::RegisterOp>& o) {
  using K = model::RegisterOp::Kind;
  using Op = Operation<model::RegisterOp>;
  auto is_write = [](const Op& w) { return w.op.kind == K::kSet || w.op.kind == K::kCas; };
  auto acked_write = [](const Op& w) {
    return !w.ambiguous && (w.op.kind == K::kSet || (w.op.kind == K::kCas && w.op.ok));
  };
  const bool misses = !o.ambiguous && !o.op.ok &&
                      (o.op.kind == K::kGet || (o.op.kind == K::kCas && o.op.out_version == 0));
  auto undone = [&](const Op& e) {
    return std::any_of(h.begin(), h.end(), [&](const Op& w) {
      return acked_write(w) && e.ret < w.invoke && w.ret < o.invoke &&
             w.op.expires_at_ms >= o.ret_ms;
    });
  };
  return misses &&
         std::any_of(h.begin(), h.end(),
                     [&](const Op& w) { return acked_write(w) && w.ret < o.invoke; }) &&
         std::none_of(h.begin(), h.end(), [&](const Op& w) {
           return w.invoke < o.ret &&
                  (w.op.kind == K::kDelete || (w.ambiguous && is_write(w)) ||
                   (is_write(w) && w.op.expires_at_ms < o.ret_ms)) &&
                  !undone(w);
         });
}
}  // namespace

RegisterHistory WithResentTwins(RegisterHistory ops) {
  using K = model::RegisterOp::Kind;
  const size_t n = ops.size();
  for (size_t i = 0; i < n; ++i)
    if (ops[i].resent && ops[i].op.kind != K::kGet) {
      Operation<model::RegisterOp> twin = ops[i];
      twin.ambiguous = true;
      twin.resent = false;
      twin.ret = kNever;
      twin.ret_ms = kNever;
      ops.push_back(std::move(twin));
    }
  return ops;
}

RegisterHistory RejectedCore(RegisterHistory ops, int64_t max_states, bool* minimal) {
  using K = model::RegisterOp::Kind;
  using Op = Operation<model::RegisterOp>;
  // Each step of the core asks whether a smaller history is still rejected. The polynomial
  // answers go first (both are checked against the search: tests/version_order_test.cc): a
  // greedy order is a witness that it is not, a conflict the version order shows proves that it
  // is. Only what neither decides is searched, and the searches of rejected histories, which
  // must exhaust every order, were most of a check's time under faults (docs/performance.md).
  bool every_check_decided = true;
  auto rejected = [max_states, &every_check_decided](const RegisterHistory& h) {
    if (GreedyLinearization(h)) return false;
    if (InferRejectedCore(h)) return true;
    model::StateRegisterModel model;
    const Verdict v = Checker<model::StateRegisterModel>(model, max_states).check(h);
    every_check_decided = every_check_decided && v.complete;
    return !v.ok;
  };
  auto is_write = [](const Op& o) { return o.op.kind == K::kSet || o.op.kind == K::kCas; };
  auto acked_write = [&](const Op& o) {
    return !o.ambiguous && (o.op.kind == K::kSet || (o.op.kind == K::kCas && o.op.ok));
  };
  // What an operation needs to make sense without the rest: a read, the write of the value it
  // read; a write acknowledged as version n > 1, an operation that made version n - 1 (an
  // ambiguous write may have); each invoked before the operation returned. Dropping only the write
  // would leave an observation nobody could have made, which is rejected by itself and hides the
  // real conflict; so dropping an operation also drops what needed it, to a fixpoint.
  auto supported = [&](const Op& o, const RegisterHistory& h) {
    const bool reads = !o.ambiguous && !o.op.out_value.empty() &&
                       ((o.op.kind == K::kGet && o.op.ok) || (o.op.kind == K::kCas && !o.op.ok));
    if (reads && std::none_of(h.begin(), h.end(), [&](const Op& w) {
          return is_write(w) && w.op.value == o.op.out_value && w.invoke < o.ret;
        }))
      return false;
    if (!o.ambiguous && o.op.kind == K::kCas && o.op.ok && o.op.expected > 0 &&
        std::none_of(h.begin(), h.end(), [&](const Op& w) {
          return &w != &o && is_write(w) && w.invoke < o.ret &&
                 (w.ambiguous || (acked_write(w) && w.op.out_version == o.op.expected));
        }))
      return false;
    if (acked_write(o) && o.op.out_version > 1 &&
        std::none_of(h.begin(), h.end(), [&](const Op& w) {
          return &w != &o && is_write(w) && w.invoke < o.ret &&
                 (w.ambiguous || (acked_write(w) && w.op.out_version == o.op.out_version - 1));
        }))
      return false;
    if (MissUnexplained(h, o)) return false;
    return true;
  };
  if (!rejected(ops)) {
    if (minimal) *minimal = every_check_decided;
    return ops;
  }
  // Dropping a read is sound: fewer observations can only make a history easier to order. Dropping
  // a write is not: the write may be what explains a later read (a short TTL that expired, a
  // delete), and a core without it would name a conflict the run never had. So a dropped write
  // stays in every later check as an ambiguous write that never returned (it may have taken
  // effect at any point after its invocation, or never): a weaker history, so a core that is
  // still rejected with it conflicts in the full history too, whatever the dropped writes did.
  // Only the core is shown.
  RegisterHistory relaxed;
  auto relax = [](Op o) {
    o.ambiguous = true;
    o.ret = kNever;
    o.ret_ms = kNever;
    return o;
  };
  auto with_relaxed = [&relaxed](RegisterHistory h, const RegisterHistory& more) {
    h.insert(h.end(), relaxed.begin(), relaxed.end());
    h.insert(h.end(), more.begin(), more.end());
    return h;
  };
  for (size_t i = 0; i < ops.size();) {
    RegisterHistory without = ops;
    RegisterHistory dropped{without[i]};
    without.erase(without.begin() + static_cast<long>(i));
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t j = 0; j < without.size(); ++j)
        if (!supported(without[j], without)) {
          dropped.push_back(without[j]);
          without.erase(without.begin() + static_cast<long>(j));
          changed = true;
          break;
        }
    }
    RegisterHistory dropped_writes;
    for (const Op& d : dropped)
      if (d.op.kind != K::kGet && !(d.op.kind == K::kCas && !d.op.ok && !d.ambiguous))
        dropped_writes.push_back(relax(d));
    if (without.size() < ops.size() && rejected(with_relaxed(without, dropped_writes))) {
      ops = std::move(without);
      relaxed.insert(relaxed.end(), dropped_writes.begin(), dropped_writes.end());
    } else {
      ++i;
    }
  }
  if (minimal) *minimal = every_check_decided;
  return ops;
}

std::string RegisterShape(const RegisterHistory& core) {
  using K = model::RegisterOp::Kind;
  std::vector<const Operation<model::RegisterOp>*> ops;
  for (const auto& o : core) ops.push_back(&o);
  std::stable_sort(ops.begin(), ops.end(), [](auto* a, auto* b) { return a->invoke < b->invoke; });
  std::set<int64_t> versions;
  int64_t end_ms = 0;
  for (const auto* o : ops) {
    if (o->op.out_version > 0) versions.insert(o->op.out_version);
    if (o->op.kind == K::kCas && o->op.expected > 0) versions.insert(o->op.expected);
    if (o->ret_ms != kNever) end_ms = std::max(end_ms, o->ret_ms);
  }
  auto v = [&](int64_t x) {
    if (x <= 0) return std::string("0");
    return absl::StrCat("v", std::distance(versions.begin(), versions.find(x)) + 1);
  };
  auto source = [&](const std::string& value) {  // which write of the core wrote a value
    for (size_t i = 0; i < ops.size(); ++i)
      if ((ops[i]->op.kind == K::kSet || ops[i]->op.kind == K::kCas) && ops[i]->op.value == value)
        return absl::StrCat("=w", i);
    return std::string("=w?");
  };
  std::vector<std::string> parts;
  for (const auto* o : ops) {
    const auto& op = o->op;
    std::string s;
    switch (op.kind) {
      case K::kGet:
        s = "get";
        break;
      case K::kSet:
        s = "set";
        break;
      case K::kCas:
        s = absl::StrCat("cas(", v(op.expected), ")");
        break;
      case K::kDelete:
        s = "delete";
        break;
    }
    if ((op.kind == K::kSet || op.kind == K::kCas) && op.expires_at_ms <= end_ms)
      absl::StrAppend(&s, "[ttl ends inside]");
    if (o->ambiguous) {
      absl::StrAppend(&s, "->?");
    } else if (op.kind == K::kGet) {
      absl::StrAppend(&s, op.ok ? absl::StrCat("->", v(op.out_version), source(op.out_value))
                                : std::string("->null"));
    } else if (op.kind == K::kSet) {
      absl::StrAppend(&s, "->", v(op.out_version));
    } else if (op.kind == K::kCas) {
      absl::StrAppend(&s, op.ok ? "->ok " : "->fail ", v(op.out_version),
                      op.ok || op.out_value.empty() ? "" : source(op.out_value));
    } else {
      absl::StrAppend(&s, "->ok");
    }
    parts.push_back(s);
  }
  std::vector<std::string> order;
  for (size_t i = 0; i < ops.size(); ++i)
    for (size_t j = 0; j < ops.size(); ++j)
      if (i != j && ops[i]->ret < ops[j]->invoke) order.push_back(absl::StrCat(i, "<", j));
  return absl::StrCat(absl::StrJoin(parts, "; "),
                      " | order: ", order.empty() ? "all concurrent" : absl::StrJoin(order, ","));
}

RegisterHistory PinObservedWrites(RegisterHistory ops) {
  using K = model::RegisterOp::Kind;
  auto writes = [](const Operation<model::RegisterOp>& o) {
    return o.op.kind == K::kSet || o.op.kind == K::kCas;
  };
  // (partition, value) -> how many operations write it.
  absl::flat_hash_map<std::pair<std::string, std::string>, int> writers;
  for (const auto& o : ops)
    if (writes(o)) ++writers[{o.partition, o.op.value}];
  for (auto& w : ops) {
    if (!w.ambiguous || !writes(w) || writers[{w.partition, w.op.value}] != 1) continue;
    std::optional<int64_t> version;
    bool agree = true;
    int64_t ret = kNever, ret_ms = kNever;
    for (const auto& r : ops) {
      if (r.ambiguous || r.partition != w.partition) continue;
      const bool saw = (r.op.kind == K::kGet && r.op.ok && r.op.out_value == w.op.value) ||
                       (r.op.kind == K::kCas && !r.op.ok && r.op.out_value == w.op.value);
      if (!saw) continue;
      if (version && *version != r.op.out_version) agree = false;
      version = r.op.out_version;
      ret = std::min(ret, r.ret);
      ret_ms = std::min(ret_ms, r.ret_ms);
    }
    if (!version || !agree || ret < w.invoke || ret_ms < w.invoke_ms) continue;
    if (w.op.kind == K::kCas && *version != w.op.expected + 1) continue;
    w.ambiguous = false;
    w.op.ok = true;
    w.op.out_version = *version;
    w.ret = std::min(w.ret, ret);
    w.ret_ms = std::min(w.ret_ms, ret_ms);
  }
  return ops;
}

namespace {
using RegisterOperation = Operation<model::RegisterOp>;

bool FailsOnItsOwnWrite(const RegisterOperation& c) {
  return !c.ambiguous && c.op.kind == model::RegisterOp::Kind::kCas && !c.op.ok &&
         !c.op.value.empty() && c.op.out_value == c.op.value;
}

bool AckedWrite(const RegisterOperation& o) {
  using K = model::RegisterOp::Kind;
  return !o.ambiguous && (o.op.kind == K::kSet || (o.op.kind == K::kCas && o.op.ok));
}

bool Before(const RegisterOperation& a, const RegisterOperation& b) { return a.ret < b.invoke; }

// An acknowledged write that replaced w after w returned and before r began, and whose expiry
// had passed when r returned: r finding nothing is that write's expiry, not a miss of w.
bool ExpiredSuccessor(const RegisterHistory& core, const RegisterOperation& w,
                      const RegisterOperation& r) {
  return std::any_of(core.begin(), core.end(), [&](const RegisterOperation& x) {
    return AckedWrite(x) && Before(w, x) && Before(x, r) && x.op.expires_at_ms < r.ret_ms;
  });
}

// Something in the key's history that may have emptied the key after w began and before c
// returned: a delete (acknowledged or not), or a write whose expiry passed before c returned.
// After it a write starts again from version 1, so a later compareAndSet at a lower version, or
// a version 1 seen again, is no anomaly.
bool Resettable(const RegisterHistory& history, const RegisterOperation& w,
                const RegisterOperation& c) {
  using K = model::RegisterOp::Kind;
  return std::any_of(history.begin(), history.end(), [&](const RegisterOperation& x) {
    const bool same = x.actor == w.actor && x.invoke == w.invoke;
    return x.invoke < c.ret && !Before(x, w) &&
           (x.op.kind == K::kDelete || ((x.op.kind == K::kSet || x.op.kind == K::kCas) && !same &&
                                        x.op.expires_at_ms < c.ret_ms));
  });
}

// A get that found nothing (`miss`), the write of version n - 1 that had expired before the get
// returned (`expired`), and a write acknowledged as version n that did not end before the get
// began (`write`): the write landed after the key expired, yet counted from the expired value
// (set() reads the version with a separate GET before its script runs).
struct ContinuedPastExpiry {
  const RegisterOperation* miss = nullptr;
  const RegisterOperation* expired = nullptr;
  const RegisterOperation* write = nullptr;
};
ContinuedPastExpiry FindContinuedPastExpiry(const RegisterHistory& core) {
  using K = model::RegisterOp::Kind;
  for (const auto& r : core)
    if (!r.ambiguous && r.op.kind == K::kGet && !r.op.ok)
      for (const auto& w : core)
        if (AckedWrite(w) && w.op.out_version > 1 && !Before(w, r))
          for (const auto& p : core)
            if (AckedWrite(p) && p.op.out_version == w.op.out_version - 1 && Before(p, r) &&
                p.op.expires_at_ms < r.ret_ms)
              return {&r, &p, &w};
  return {};
}
}  // namespace

std::string RegisterClass(const RegisterHistory& core, const RegisterHistory& history) {
  using K = model::RegisterOp::Kind;
  using Op = Operation<model::RegisterOp>;
  const auto acked_write = AckedWrite;  // (the helpers above)
  const auto before = Before;
  // Values are unique per write: a compareAndSet that reports the value it wrote itself as the
  // current one took effect, although it says it failed (a request applied twice).
  for (const Op& c : core)
    if (FailsOnItsOwnWrite(c)) return "cas-fails-on-its-own-write";
  for (const Op& a : core)
    for (const Op& b : core)
      if (&a != &b && acked_write(a) && acked_write(b) && a.op.out_version == b.op.out_version)
        return before(a, b) || before(b, a) ? "version-reused" : "duplicate-version";
  for (const Op& c : core)
    if (!c.ambiguous && c.op.kind == K::kCas && c.op.ok)
      for (const Op& w : core)
        if (acked_write(w) && before(w, c) && w.op.out_version > c.op.expected &&
            w.op.expires_at_ms > c.ret_ms && !Resettable(history, w, c))
          return "stale-cas-succeeds";
  // A write that does not end before a delete starts, numbered past 1, is seen after the delete
  // ends, while every other write of a lower version ended before the delete: the write landed
  // after the delete (whoever sees it after the delete does) but counted from the deleted value.
  // With no ambiguous operation in the core, no order explains it.
  const bool clear =
      std::none_of(core.begin(), core.end(), [](const Op& o) { return o.ambiguous; });
  for (const Op& d : core)
    for (const Op& w : core)
      if (clear && d.op.kind == K::kDelete && acked_write(w) && w.op.out_version > 1 &&
          !before(w, d) &&
          std::all_of(core.begin(), core.end(),
                      [&](const Op& o) {
                        return &o == &w || !acked_write(o) ||
                               o.op.out_version >= w.op.out_version || before(o, d);
                      }) &&
          std::any_of(core.begin(), core.end(), [&](const Op& r) {
            return before(d, r) && &r != &w &&
                   ((r.op.kind == K::kGet && r.op.ok) || r.op.kind == K::kCas) &&
                   (r.op.kind == K::kCas && r.op.ok ? r.op.expected : r.op.out_version) ==
                       w.op.out_version;
          }))
        return "version-continues-after-delete";
  const bool no_delete =
      std::none_of(core.begin(), core.end(), [](const Op& d) { return d.op.kind == K::kDelete; });
  if (const ContinuedPastExpiry c = FindContinuedPastExpiry(core); clear && no_delete && c.write)
    return "version-continues-after-expiry";
  for (const Op& r : core)
    if (!r.ambiguous && r.op.kind == K::kGet && !r.op.ok)
      for (const Op& w : core)
        if (no_delete && acked_write(w) && before(w, r) && w.op.expires_at_ms > r.ret_ms &&
            !ExpiredSuccessor(core, w, r) && MissUnexplained(history, r))
          return "get-misses-write";
  return "";
}

namespace {
std::string Who(const Operation<model::RegisterOp>& o) {
  using K = model::RegisterOp::Kind;
  std::string what;
  switch (o.op.kind) {
    case K::kGet:
      what = "get";
      break;
    case K::kSet:
      what = "set";
      break;
    case K::kCas:
      what = "cas(expected " + std::to_string(o.op.expected) + ")";
      break;
    case K::kDelete:
      what = "delete";
      break;
  }
  return "client " + std::to_string(o.actor) + "'s " + what;
}
}  // namespace

std::string RegisterSentence(const RegisterHistory& core, const std::string& key,
                             const RegisterHistory& history) {
  using K = model::RegisterOp::Kind;
  using Op = Operation<model::RegisterOp>;
  const auto acked_write = AckedWrite;  // (the helpers above)
  const auto before = Before;
  const std::string cls = RegisterClass(core, history);
  if (cls == "cas-fails-on-its-own-write")
    for (const Op& c : core)
      if (FailsOnItsOwnWrite(c))
        return Who(c) + " was told it failed on " + key +
               ", though the current value it got back "
               "(version " +
               std::to_string(c.op.out_version) + ") is the one it wrote itself";
  for (const Op& a : core)
    for (const Op& b : core)
      if (&a < &b && acked_write(a) && acked_write(b) && a.op.out_version == b.op.out_version &&
          (cls == "duplicate-version" || cls == "version-reused"))
        return Who(a) + " and " + Who(b) + " were both acknowledged as version " +
               std::to_string(a.op.out_version) + " on " + key +
               (cls == "version-reused" ? ", one after the other" : "");
  if (cls == "stale-cas-succeeds")
    for (const Op& c : core)
      for (const Op& w : core)
        if (!c.ambiguous && c.op.kind == K::kCas && c.op.ok && acked_write(w) && before(w, c) &&
            w.op.out_version > c.op.expected && w.op.expires_at_ms > c.ret_ms &&
            !Resettable(history, w, c))
          return Who(c) + " succeeded on " + key + " after " + Who(w) +
                 " had already been acknowledged as version " + std::to_string(w.op.out_version);
  if (cls == "version-continues-after-expiry") {
    const ContinuedPastExpiry c = FindContinuedPastExpiry(core);
    return Who(*c.write) + " was acknowledged as version " +
           std::to_string(c.write->op.out_version) + " on " + key + ", counted from " +
           Who(*c.expired) + "'s version " + std::to_string(c.expired->op.out_version) +
           ", which had expired when " + Who(*c.miss) + " found nothing";
  }
  if (cls == "get-misses-write")
    for (const Op& r : core)
      for (const Op& w : core)
        if (!r.ambiguous && r.op.kind == K::kGet && !r.op.ok && acked_write(w) && before(w, r) &&
            w.op.expires_at_ms > r.ret_ms && !ExpiredSuccessor(core, w, r))
          return Who(r) + " found nothing on " + key + " after " + Who(w) +
                 " was acknowledged as version " + std::to_string(w.op.out_version) +
                 " and before it expired";
  std::string list;
  for (size_t i = 0; i < core.size(); ++i)
    list += (i == 0 ? "" : i + 1 == core.size() ? " and " : ", ") + Who(core[i]);
  return list + " on " + key + " cannot be put in any one order that explains their results";
}

RegisterHistory RelativeTimes(RegisterHistory ops, int64_t start_ms) {
  for (auto& o : ops) {
    o.invoke_ms -= start_ms;
    if (o.ret_ms != kNever) o.ret_ms -= start_ms;
    if (o.op.expires_at_ms) o.op.expires_at_ms -= start_ms;
    if (o.op.expires_hi_ms) o.op.expires_hi_ms -= start_ms;
  }
  return ops;
}

}  // namespace testbed::checker
