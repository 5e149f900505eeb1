// The emulator's sorted-set commands (sim/emulator_commands.h).
#include <absl/container/inlined_vector.h>
#include <absl/strings/ascii.h>
#include <absl/strings/match.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <optional>

#include "sim/emulator_commands.h"
#include "sim/lua_scripting.h"
#include "sim/redis_text.h"

namespace testbed::sim {

using namespace redis_text;

bool Commands::ZSetOf(Emulator& em, const std::string& key, ZSetValue** out, bool create) {
  return ValueOf(em, key, out, create);
}

bool Commands::ZInsert(const Emulator& em, ZSetValue& z, const std::string& m, double score) {
  auto it = z.scores.lower_bound(m);  // one walk, for the update and for the insert
  const bool exists = it != z.scores.end() && it->first == m;
  // zsetAdd: a new member that would pass zset-max-listpack-entries or -value turns the listpack
  // into a skiplist first (never back).
  if (!exists && z.listpack &&
      (static_cast<int64_t>(z.scores.size()) + 1 > ConfigInt(em, "zset-max-listpack-entries") ||
       static_cast<int64_t>(m.size()) > ConfigInt(em, "zset-max-listpack-value")))
    z.listpack = false;
  // A listpack-encoded set stores the score as text through d2string and reads "-0" back as
  // integer 0: Redis 7.0 turns -0 into 0 there (measured by the fidelity check); a skiplist
  // keeps the double.
  if (score == 0 && z.listpack) score = 0.0;
  if (exists) {
    if (it->second != score) {  // move the member's node to its new place, no copies
      auto node =
          z.ordered.extract(z.ordered.find(std::pair<double, std::string_view>(it->second, m)));
      node.value().first = score;
      z.ordered.insert(std::move(node));
      it->second = score;
    }
    return false;
  }
  z.scores.emplace_hint(it, m, score);
  z.ordered.insert({score, m});
  return true;
}

void Commands::ZErase(ZSetValue& z, const std::string& m) {
  auto it = z.scores.find(m);
  if (it == z.scores.end()) return;
  z.ordered.erase(z.ordered.find(std::pair<double, std::string_view>(it->second, m)));
  z.scores.erase(it);
}

// zaddGenericCommand and zsetAdd: options, their conflicts, every score parsed, then the key.
Reply Commands::ZAddGeneric(Emulator& em, const Argv& a, bool incr) {
  size_t idx = 2;
  bool nx = false, xx = false, gt = false, lt = false, ch = false;
  for (; idx < a.size(); ++idx) {
    const std::string& opt = a[idx];
    if (Is(opt, "NX"))
      nx = true;
    else if (Is(opt, "XX"))
      xx = true;
    else if (Is(opt, "CH"))
      ch = true;
    else if (Is(opt, "INCR"))
      incr = true;
    else if (Is(opt, "GT"))
      gt = true;
    else if (Is(opt, "LT"))
      lt = true;
    else
      break;
  }
  const size_t elements = a.size() - idx;
  if (elements % 2 || elements == 0) return Reply::Error(kSyntax);
  if (nx && xx) return Reply::Error("ERR XX and NX options at the same time are not compatible");
  if ((gt && nx) || (lt && nx) || (gt && lt))
    return Reply::Error("ERR GT, LT, and/or NX options at the same time are not compatible");
  if (incr && elements > 2)
    return Reply::Error("ERR INCR option supports a single increment-element pair");
  absl::InlinedVector<double, 4> scores;
  for (size_t i = idx; i < a.size(); i += 2) {
    auto s = ParseDouble(a[i]);
    if (!s) return Reply::Error(kNotFloat);
    scores.push_back(*s);
  }
  ZSetValue* z;
  if (!ZSetOf(em, a[1], &z, false)) return WrongType();
  int64_t added = 0, updated = 0, processed = 0;
  double score = 0;
  if (z || !xx) {
    if (!z) ZSetOf(em, a[1], &z, true);
    for (size_t i = idx, k = 0; i < a.size(); i += 2, ++k) {
      score = scores[k];
      const std::string& m = a[i + 1];
      const auto it = z->scores.find(m);
      if (it != z->scores.end()) {
        if (nx) continue;
        if (incr) {
          score += it->second;
          if (std::isnan(score)) {
            if (added || updated) em.touch(a[1]);
            return Reply::Error("ERR resulting score is not a number (NaN)");
          }
        }
        if ((lt && score >= it->second) || (gt && score <= it->second)) continue;
        ++processed;
        if (score != it->second) {
          ZInsert(em, *z, m, score);
          ++updated;
        }
      } else if (!xx) {
        ZInsert(em, *z, m, score);
        ++added;
        ++processed;
      }
    }
  }
  if (added || updated) em.touch(a[1]);
  if (incr) return processed ? Reply::Bulk(FormatDouble(score)) : Reply::Nil();
  return Reply::Integer(ch ? added + updated : added);
}

Reply Commands::ZAdd(Emulator& em, const Argv& a) { return ZAddGeneric(em, a, false); }
Reply Commands::ZIncrBy(Emulator& em, const Argv& a) { return ZAddGeneric(em, a, true); }

Reply Commands::ZRem(Emulator& em, const Argv& a) {
  ZSetValue* z;
  if (!ZSetOf(em, a[1], &z, false)) return WrongType();
  if (!z) return Reply::Integer(0);
  int64_t n = 0;
  for (size_t i = 2; i < a.size(); ++i) {
    n += z->scores.count(a[i]) ? 1 : 0;
    ZErase(*z, a[i]);
  }
  if (n > 0) em.touch(a[1]);
  DropIfEmpty(em, a[1], z->scores.size());
  return Reply::Integer(n);
}

Reply Commands::ZScore(Emulator& em, const Argv& a) {
  ZSetValue* z;
  if (!ZSetOf(em, a[1], &z, false)) return WrongType();
  if (!z) return Reply::Nil();
  auto it = z->scores.find(a[2]);
  return it == z->scores.end() ? Reply::Nil() : Reply::Bulk(FormatDouble(it->second));
}

Reply Commands::ZCard(Emulator& em, const Argv& a) {
  ZSetValue* z;
  if (!ZSetOf(em, a[1], &z, false)) return WrongType();
  return Reply::Integer(z ? static_cast<int64_t>(z->scores.size()) : 0);
}

// The (score, member) pairs a parsed range selects, in the order it asks for.
void Commands::ZSelect(const ZSetValue& z, const ZRange& r,
                       std::vector<std::pair<double, std::string>>* picked) {
  const int64_t len = static_cast<int64_t>(z.ordered.size());
  if (r.kind == RangeKind::kRank) {
    int64_t s = r.start < 0 ? r.start + len : r.start;
    int64_t e = r.stop < 0 ? r.stop + len : r.stop;
    if (s < 0) s = 0;
    if (s > e || s >= len) return;
    if (e >= len) e = len - 1;
    if (r.reverse) {
      auto it = std::next(z.ordered.rbegin(), s);
      for (int64_t i = s; i <= e; ++i, ++it) picked->push_back(*it);
    } else {
      auto it = std::next(z.ordered.begin(), s);
      for (int64_t i = s; i <= e; ++i, ++it) picked->push_back(*it);
    }
    return;
  }
  if (r.kind == RangeKind::kScore) {
    if (r.offset > 0 && r.offset >= len) return;
    const auto ge = [&](double s) { return r.min.exclusive ? s > r.min.value : s >= r.min.value; };
    const auto le = [&](double s) { return r.max.exclusive ? s < r.max.value : s <= r.max.value; };
    if (r.reverse) {
      for (auto it = z.ordered.rbegin(); it != z.ordered.rend(); ++it) {
        if (!ge(it->first)) break;
        if (le(it->first)) picked->push_back(*it);
      }
    } else {
      for (const auto& item : z.ordered) {
        if (!le(item.first)) break;
        if (ge(item.first)) picked->push_back(item);
      }
    }
    Window(*picked, r.offset, r.limit);
    return;
  }
  // zzlIsInLexRange / zslIsInLexRange first: the last element must be >= min and the first <=
  // max, else nothing (this decides the reply when scores are mixed). Then the first (or last)
  // element in range and a walk while in range: a linear scan in (score, member) order, exact
  // for listpack-encoded sets and for sets whose scores are all equal.
  if (z.ordered.empty() || !LexGteMin(z.ordered.rbegin()->second, r.lex_min) ||
      !LexLteMax(z.ordered.begin()->second, r.lex_max))
    return;
  bool started = false;
  if (r.reverse) {
    for (auto it = z.ordered.rbegin(); it != z.ordered.rend(); ++it) {
      if (!started && !LexLteMax(it->second, r.lex_max)) continue;
      started = true;
      if (!LexGteMin(it->second, r.lex_min)) break;
      picked->push_back(*it);
    }
  } else {
    for (const auto& item : z.ordered) {
      if (!started && !LexGteMin(item.second, r.lex_min)) continue;
      started = true;
      if (!LexLteMax(item.second, r.lex_max)) break;
      picked->push_back(item);
    }
  }
  Window(*picked, r.offset, r.limit);
}

// zslParseRange / zslParseLexRange / the ranks, from a[min_at] and a[max_at]; an error reply
// when they do not parse.
std::optional<Reply> Commands::ZParseRange(const Argv& a, size_t min_at, size_t max_at, ZRange* r) {
  if (r->kind == RangeKind::kRank) {
    auto start = String2ll(a[min_at]);
    auto stop = start ? String2ll(a[max_at]) : std::nullopt;
    if (!start || !stop) return Reply::Error(kNotInteger);
    r->start = *start;
    r->stop = *stop;
  } else if (r->kind == RangeKind::kScore) {
    auto min = ParseScoreBound(a[min_at]);
    auto max = min ? ParseScoreBound(a[max_at]) : std::nullopt;
    if (!min || !max) return Reply::Error(kMinMaxNotFloat);
    r->min = *min;
    r->max = *max;
  } else {
    auto min = ParseLexBound(a[min_at]);
    auto max = min ? ParseLexBound(a[max_at]) : std::nullopt;
    if (!min || !max) return Reply::Error(kLexRange);
    r->lex_min = *min;
    r->lex_max = *max;
  }
  return std::nullopt;
}

// zrangeGenericCommand: the key at a[first] and its range, options (those `kind` and `reverse`
// leave open), their conflicts, the range parsed, then the key. `store`: ZRANGESTORE, whose
// destination is a[1].
Reply Commands::ZRangeGeneric(Emulator& em, const Argv& a, size_t first, bool store,
                              std::optional<RangeKind> kind, std::optional<bool> reverse) {
  bool withscores = false;
  ZRange r;
  for (size_t j = first + 3; j < a.size(); ++j) {
    const size_t left = a.size() - j - 1;
    if (!store && Is(a[j], "WITHSCORES")) {
      withscores = true;
    } else if (Is(a[j], "LIMIT") && left >= 2) {
      auto o = String2ll(a[j + 1]);
      auto l = o ? String2ll(a[j + 2]) : std::nullopt;
      if (!o || !l) return Reply::Error(kNotInteger);
      r.offset = *o;
      r.limit = *l;
      j += 2;
    } else if (!reverse && Is(a[j], "REV")) {
      reverse = true;
    } else if (!kind && Is(a[j], "BYLEX")) {
      kind = RangeKind::kLex;
    } else if (!kind && Is(a[j], "BYSCORE")) {
      kind = RangeKind::kScore;
    } else {
      return Reply::Error(kSyntax);
    }
  }
  r.kind = kind.value_or(RangeKind::kRank);
  r.reverse = reverse.value_or(false);
  if (r.limit != -1 && r.kind == RangeKind::kRank)
    return Reply::Error(
        "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or "
        "BYLEX");
  if (withscores && r.kind == RangeKind::kLex)
    return Reply::Error("ERR syntax error, WITHSCORES not supported in combination with BYLEX");
  // A reversed score or lex range is written max first.
  const bool swap = r.reverse && r.kind != RangeKind::kRank;
  if (auto error = ZParseRange(a, swap ? first + 2 : first + 1, swap ? first + 1 : first + 2, &r))
    return *error;
  ZSetValue* z;
  if (!ZSetOf(em, a[first], &z, false)) return WrongType();
  std::vector<std::pair<double, std::string>> picked;
  if (z) ZSelect(*z, r, &picked);
  if (store) {
    ZSetValue result;
    for (const auto& [score, member] : picked) ZInsert(em, result, member, score);
    if (picked.empty()) return StoreOrDelete(em, a[1], std::nullopt, 0);
    return StoreOrDelete(em, a[1], Value(std::move(result)), static_cast<int64_t>(picked.size()));
  }
  std::vector<Reply> out;
  for (const auto& [score, member] : picked) {
    out.push_back(Reply::Bulk(member));
    if (withscores) out.push_back(Reply::Bulk(FormatDouble(score)));
  }
  return Reply::Array(std::move(out));
}

void Commands::Window(std::vector<std::pair<double, std::string>>& v, int64_t offset,
                      int64_t limit) {
  if (offset < 0) {
    v.clear();
    return;
  }
  if (offset >= static_cast<int64_t>(v.size())) {
    v.clear();
    return;
  }
  v.erase(v.begin(), v.begin() + offset);
  if (limit >= 0 && limit < static_cast<int64_t>(v.size())) v.resize(limit);
}

std::optional<Commands::LexBound> Commands::ParseLexBound(const std::string& s) {
  if (s == "+") return LexBound{LexBound::kMax, "", false};
  if (s == "-") return LexBound{LexBound::kMin, "", false};
  if (!s.empty() && (s[0] == '(' || s[0] == '['))
    return LexBound{LexBound::kValue, s.substr(1), s[0] == '('};
  return std::nullopt;
}

bool Commands::LexGteMin(const std::string& m, const LexBound& b) {
  if (b.kind == LexBound::kMin) return true;
  if (b.kind == LexBound::kMax) return false;
  return b.exclusive ? m > b.value : m >= b.value;
}

bool Commands::LexLteMax(const std::string& m, const LexBound& b) {
  if (b.kind == LexBound::kMax) return true;
  if (b.kind == LexBound::kMin) return false;
  return b.exclusive ? m < b.value : m <= b.value;
}

// zremrangeGenericCommand (`remove`), zcountCommand and zlexcountCommand: the range parsed,
// then the key; the reply is how many members are in the range.
Reply Commands::ZInRange(Emulator& em, const Argv& a, RangeKind kind, bool remove) {
  ZRange r;
  r.kind = kind;
  if (auto error = ZParseRange(a, 2, 3, &r)) return *error;
  ZSetValue* z;
  if (!ZSetOf(em, a[1], &z, false)) return WrongType();
  if (!z) return Reply::Integer(0);
  std::vector<std::pair<double, std::string>> in;
  ZSelect(*z, r, &in);
  if (remove) {
    for (const auto& item : in) ZErase(*z, item.second);
    if (!in.empty()) em.touch(a[1]);
    DropIfEmpty(em, a[1], z->scores.size());
  }
  return Reply::Integer(static_cast<int64_t>(in.size()));
}

// zrankGenericCommand (Redis 7.0: no WITHSCORE).
Reply Commands::ZRank(Emulator& em, const Argv& a, bool reverse) {
  ZSetValue* z;
  if (!ZSetOf(em, a[1], &z, false)) return WrongType();
  if (!z) return Reply::Nil();
  const auto it = z->scores.find(a[2]);
  if (it == z->scores.end()) return Reply::Nil();
  const auto at = z->ordered.find(std::pair<double, std::string_view>(it->second, a[2]));
  const auto rank = static_cast<int64_t>(std::distance(z->ordered.begin(), at));
  return Reply::Integer(reverse ? static_cast<int64_t>(z->ordered.size()) - 1 - rank : rank);
}

Reply Commands::ZMScore(Emulator& em, const Argv& a) {
  ZSetValue* z;
  if (!ZSetOf(em, a[1], &z, false)) return WrongType();
  std::vector<Reply> out;
  for (size_t j = 2; j < a.size(); ++j) {
    const auto it = z ? z->scores.find(a[j]) : decltype(z->scores.find(a[j])){};
    out.push_back(z && it != z->scores.end() ? Reply::Bulk(FormatDouble(it->second))
                                             : Reply::Nil());
  }
  return Reply::Array(std::move(out));
}

// genericZpopCommand: the first of `keys` that exists (each checked for its type on the way),
// `count` members from its low (or high) end. kFlat: ZPOPMIN's member, score, ...; kKeyFlat:
// BZPOPMIN's key first; kKeyNested: ZMPOP's key and nested pairs. `blocking`: nothing to pop
// blocks, which the emulator does not do (refused), except inside MULTI or a script, where
// Redis answers at once with a nil.
Reply Commands::ZPop(Emulator& em, const Argv& a, size_t first, size_t last, bool max,
                     int64_t count, PopReply shape, bool blocking) {
  ZSetValue* z = nullptr;
  const std::string* key = nullptr;
  for (size_t j = first; j < last && !z; ++j) {
    if (!ZSetOf(em, a[j], &z, false)) return WrongType();
    key = &a[j];
  }
  if (!z) {
    if (blocking && !em.in_script_ && !em.session().multi)
      return Unsupported("blocking " + ToUpper(a[0]) +
                         " (no key has members to pop, and the emulator does not block)");
    return shape == PopReply::kFlat ? Reply::Array({}) : Reply::NilArray();
  }
  if (count == 0) return Reply::Array({});
  std::vector<Reply> out;
  if (shape == PopReply::kKeyFlat) out.push_back(Reply::Bulk(*key));
  for (int64_t i = 0; i < count && !z->ordered.empty(); ++i) {
    const auto item = max ? *z->ordered.rbegin() : *z->ordered.begin();
    if (shape == PopReply::kKeyNested)
      out.push_back(
          Reply::Array({Reply::Bulk(item.second), Reply::Bulk(FormatDouble(item.first))}));
    else
      out.insert(out.end(), {Reply::Bulk(item.second), Reply::Bulk(FormatDouble(item.first))});
    ZErase(*z, item.second);
  }
  const std::string popped_from = *key;
  em.touch(popped_from);
  DropIfEmpty(em, popped_from, z->scores.size());
  if (shape == PopReply::kKeyNested)
    return Reply::Array({Reply::Bulk(popped_from), Reply::Array(std::move(out))});
  return Reply::Array(std::move(out));
}

// zpopMinMaxCommand: at most one count, -1 (none) pops one.
Reply Commands::ZPopMinMax(Emulator& em, const Argv& a, bool max) {
  if (a.size() > 3) return Reply::Error(kSyntax);
  int64_t count = 1;
  if (a.size() == 3) {
    Reply error;
    const auto n = PositiveLong(a[2], &error);
    if (!n) return error;
    count = *n;
  }
  return ZPop(em, a, 1, 2, max, count, PopReply::kFlat, false);
}

// getTimeoutFromObjectOrReply in seconds: a long double, not negative.
std::optional<Reply> Commands::BadTimeout(const std::string& arg) {
  long double seconds = 0;
  if (!ReadLongDouble(arg, &seconds))
    return Reply::Error("ERR timeout is not a float or out of range");
  if (static_cast<long long>(seconds * 1000.0L) < 0) return Reply::Error("ERR timeout is negative");
  return std::nullopt;
}

// bzpopMinMaxCommand: key... timeout.
Reply Commands::BZPopMinMax(Emulator& em, const Argv& a, bool max) {
  if (auto error = BadTimeout(a.back())) return *error;
  return ZPop(em, a, 1, a.size() - 1, max, 1, PopReply::kKeyFlat, true);
}

// zmpopGenericCommand: [timeout] numkeys key... MIN|MAX [COUNT count].
Reply Commands::ZMPop(Emulator& em, const Argv& a, bool blocking) {
  const size_t numkeys_at = blocking ? 2 : 1;
  if (blocking)
    if (auto error = BadTimeout(a[1])) return *error;
  const auto numkeys = String2ll(a[numkeys_at]);
  if (!numkeys || *numkeys < 1) return Reply::Error("ERR numkeys should be greater than 0");
  if (*numkeys > static_cast<int64_t>(a.size() - numkeys_at) - 2) return Reply::Error(kSyntax);
  const size_t where = numkeys_at + 1 + static_cast<size_t>(*numkeys);
  if (!Is(a[where], "MIN") && !Is(a[where], "MAX")) return Reply::Error(kSyntax);
  int64_t count = -1;
  for (size_t j = where + 1; j < a.size(); ++j) {
    if (count == -1 && Is(a[j], "COUNT") && j + 1 < a.size()) {
      const auto n = String2ll(a[++j]);
      if (!n || *n < 1) return Reply::Error("ERR count should be greater than 0");
      count = *n;
    } else {
      return Reply::Error(kSyntax);
    }
  }
  return ZPop(em, a, numkeys_at + 1, where, Is(a[where], "MAX"), count == -1 ? 1 : count,
              PopReply::kKeyNested, blocking);
}

Reply Commands::ZRandMember(Emulator& em, const Argv& a) {
  return RandomPairs(em, a, "WITHSCORES", [&](Pairs* all, bool* exists) {
    ZSetValue* z;
    if (!ZSetOf(em, a[1], &z, false)) return false;
    *exists = z != nullptr;
    if (z)  // zuiNext walks a sorted set from its highest member down
      for (auto it = z->ordered.rbegin(); it != z->ordered.rend(); ++it)
        all->emplace_back(it->second, FormatDouble(it->first));
    return true;
  });
}

namespace {

// zunionInterAggregate.
enum class Aggregate { kSum, kMin, kMax };
void Combine(double* target, double value, Aggregate how) {
  if (how == Aggregate::kSum) {
    *target += value;
    if (std::isnan(*target)) *target = 0.0;  // +inf + -inf
  } else if (how == Aggregate::kMin) {
    *target = value < *target ? value : *target;
  } else {
    *target = value > *target ? value : *target;
  }
}

}  // namespace

Reply Commands::ZSetAlgebra(Emulator& em, const Argv& a, size_t numkeys_at, ZSetOp op, bool store,
                            bool card) {
  const auto setnum = String2ll(a[numkeys_at]);
  if (!setnum) return Reply::Error(kNotInteger);
  if (*setnum < 1)
    return Reply::Error("ERR at least 1 input key is needed for '" + ToLower(a[0]) + "' command");
  if (*setnum > static_cast<int64_t>(a.size() - numkeys_at - 1)) return Reply::Error(kSyntax);
  // Each input as (member, score) pairs; a set's members score 1.
  struct Source {
    std::vector<std::pair<std::string, double>> items;
    const ZSetValue* zset = nullptr;
    const SetValue* set = nullptr;
    double weight = 1.0;
    std::optional<double> find(const std::string& m) const {
      if (zset) {
        const auto it = zset->scores.find(m);
        return it == zset->scores.end() ? std::nullopt : std::optional<double>(it->second);
      }
      return set && set->members.contains(m) ? std::optional<double>(1.0) : std::nullopt;
    }
    size_t size() const { return items.size(); }
  };
  std::vector<Source> src(static_cast<size_t>(*setnum));
  size_t j = numkeys_at + 1;
  for (Source& in : src) {
    Entry* e = em.lookup(a[j++]);
    if (!e) continue;
    if (auto* z = As<ZSetValue>(e)) {
      in.zset = z;
      for (const auto& [score, member] : z->ordered) in.items.emplace_back(member, score);
    } else if (auto* s = As<SetValue>(e)) {
      in.set = s;
      for (const std::string& m : Members(*s)) in.items.emplace_back(m, 1.0);
    } else {
      return WrongType();
    }
  }
  Aggregate how = Aggregate::kSum;
  bool withscores = false;
  int64_t limit = 0;
  while (j < a.size()) {
    const size_t remaining = a.size() - j;
    if (op != ZSetOp::kDiff && !card && remaining >= src.size() + 1 && Is(a[j], "WEIGHTS")) {
      ++j;
      for (Source& in : src) {
        const auto w = ParseDouble(a[j++]);
        if (!w) return Reply::Error("ERR weight value is not a float");
        in.weight = *w;
      }
    } else if (op != ZSetOp::kDiff && !card && remaining >= 2 && Is(a[j], "AGGREGATE")) {
      const std::string& kind = a[j + 1];
      if (Is(kind, "SUM"))
        how = Aggregate::kSum;
      else if (Is(kind, "MIN"))
        how = Aggregate::kMin;
      else if (Is(kind, "MAX"))
        how = Aggregate::kMax;
      else
        return Reply::Error(kSyntax);
      j += 2;
    } else if (!store && !card && Is(a[j], "WITHSCORES")) {
      withscores = true;
      ++j;
    } else if (card && remaining >= 2 && Is(a[j], "LIMIT")) {
      Reply error;
      const auto l = PositiveLong(a[j + 1], &error, "ERR LIMIT can't be negative");
      if (!l) return error;
      limit = *l;
      j += 2;
    } else {
      return Reply::Error(kSyntax);
    }
  }
  // Union and intersection take the inputs from the smallest to the largest (a stable sort here;
  // Redis's qsort may order inputs of one size differently, which moves only the order of a
  // floating-point sum).
  if (op != ZSetOp::kDiff)
    std::stable_sort(src.begin(), src.end(),
                     [](const Source& x, const Source& y) { return x.size() < y.size(); });
  std::map<std::string, double> result;
  const auto weighted = [](double w, double score) {
    const double v = w * score;
    return std::isnan(v) ? 0.0 : v;
  };
  int64_t cardinality = 0;
  if (op == ZSetOp::kInter) {
    for (const auto& [m, s0] : src[0].items) {
      double score = weighted(src[0].weight, s0);
      size_t k = 1;
      for (; k < src.size(); ++k) {
        const auto v = src[k].find(m);
        if (!v) break;
        Combine(&score, *v * src[k].weight, how);
      }
      if (k < src.size()) continue;
      if (card) {
        ++cardinality;
        if (limit && cardinality >= limit) break;  // ZINTERCARD stops at its LIMIT
        continue;
      }
      result[m] = score;
    }
  } else if (op == ZSetOp::kUnion) {
    for (const Source& in : src)
      for (const auto& [m, score] : in.items) {
        const double v = weighted(in.weight, score);
        const auto [it, fresh] = result.emplace(m, v);
        if (!fresh) Combine(&it->second, v, how);
      }
  } else {
    for (const auto& [m, score] : src[0].items)
      if (std::none_of(src.begin() + 1, src.end(), [&](const Source& in) { return in.find(m); }))
        result[m] = score;
  }
  if (card) return Reply::Integer(cardinality);
  // The result is built as a skiplist and made a listpack at the end if it fits
  // (zsetConvertToListpackIfNeeded).
  ZSetValue out;
  out.listpack = static_cast<int64_t>(result.size()) <= ConfigInt(em, "zset-max-listpack-entries");
  for (const auto& [m, score] : result)
    if (static_cast<int64_t>(m.size()) > ConfigInt(em, "zset-max-listpack-value"))
      out.listpack = false;
  for (const auto& [m, score] : result) ZInsert(em, out, m, score);  // (it fits: no conversion)
  if (store) {
    if (result.empty()) return StoreOrDelete(em, a[1], std::nullopt, 0);
    const auto size = static_cast<int64_t>(result.size());
    return StoreOrDelete(em, a[1], Value(std::move(out)), size);
  }
  std::vector<Reply> reply;
  for (const auto& [score, member] : out.ordered) {
    reply.push_back(Reply::Bulk(member));
    if (withscores) reply.push_back(Reply::Bulk(FormatDouble(score)));
  }
  return Reply::Array(std::move(reply));
}

}  // namespace testbed::sim
