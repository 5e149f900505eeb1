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

#include "sim/emulator_commands.h"
#include "sim/lua_scripting.h"
#include "sim/redis_text.h"

namespace testbed::sim {

using namespace redis_text;

bool Commands::ZSetOf(Emulator& em, const std::string& key, ZSetValue** out, bool create) {
  Entry* e = em.lookup(key);
  if (!e) {
    if (!create) {
      *out = nullptr;
      return true;
    }
    e = &(em.keys_[key] = Entry{ZSetValue{}, -1});
  }
  *out = As<ZSetValue>(e);
  return *out != nullptr;
}

bool Commands::ZInsert(ZSetValue& z, const std::string& m, double score) {
  // A listpack-encoded set stores the score as text through d2string and reads "-0" back as
  // integer 0: Redis 7.0 turns -0 into 0 (measured by the fidelity check).
  if (score == 0) score = 0.0;
  auto it = z.scores.lower_bound(m);  // one walk, for the update and for the insert
  if (it != z.scores.end() && it->first == m) {
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

Reply Commands::ZAdd(Emulator& em, const Argv& a) {
  size_t idx = 2;
  bool nx = false;
  for (; idx < a.size(); ++idx) {
    const std::string& opt = a[idx];
    if (Is(opt, "NX")) {
      nx = true;
    } else if (Is(opt, "XX") || Is(opt, "GT") || Is(opt, "LT") || Is(opt, "CH") ||
               Is(opt, "INCR")) {
      return Unsupported("ZADD option '" + a[idx] + "'");
    } else {
      break;
    }
  }
  const size_t elements = a.size() - idx;
  if (elements % 2 || elements == 0) return Reply::Error(kSyntax);
  absl::InlinedVector<double, 4> scores;
  for (size_t i = idx; i < a.size(); i += 2) {
    auto s = ParseDouble(a[i]);
    if (!s) return Reply::Error(kNotFloat);
    scores.push_back(*s);
  }
  ZSetValue* z;
  if (!ZSetOf(em, a[1], &z, true)) return WrongType();
  int64_t added = 0;
  bool updated = false;
  for (size_t i = idx, k = 0; i < a.size(); i += 2, ++k) {
    const auto it = z->scores.find(a[i + 1]);
    if (nx && it != z->scores.end()) continue;
    updated = updated || (it != z->scores.end() && it->second != scores[k]);
    added += ZInsert(*z, a[i + 1], scores[k]) ? 1 : 0;
  }
  if (added > 0 || updated) em.touch(a[1]);
  return Reply::Integer(added);
}

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

Reply Commands::ZRangeGeneric(Emulator& em, const Argv& a, RangeKind kind) {
  bool withscores = false;
  int64_t offset = 0, limit = -1;
  bool have_limit = false;
  for (size_t j = 4; j < a.size(); ++j) {
    const size_t left = a.size() - j - 1;
    if (Is(a[j], "WITHSCORES")) {
      withscores = true;
    } else if (Is(a[j], "LIMIT") && left >= 2) {
      auto o = String2ll(a[j + 1]);
      auto l = o ? String2ll(a[j + 2]) : std::nullopt;
      if (!o || !l) return Reply::Error(kNotInteger);
      offset = *o;
      limit = *l;
      have_limit = true;
      j += 2;
    } else if (kind == RangeKind::kRank &&
               (Is(a[j], "BYSCORE") || Is(a[j], "BYLEX") || Is(a[j], "REV"))) {
      return Unsupported("ZRANGE option '" + a[j] + "'");
    } else {
      return Reply::Error(kSyntax);
    }
  }
  if (have_limit && kind == RangeKind::kRank)
    return Reply::Error(
        "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or "
        "BYLEX");
  if (withscores && kind == RangeKind::kLex)
    return Reply::Error("ERR syntax error, WITHSCORES not supported in combination with BYLEX");

  std::vector<std::pair<double, std::string>> picked;
  ZSetValue* z = nullptr;
  auto lookup = [&]() -> std::optional<Reply> {
    if (!ZSetOf(em, a[1], &z, false)) return WrongType();
    return std::nullopt;
  };
  if (kind == RangeKind::kRank) {
    auto start = String2ll(a[2]);
    auto stop = start ? String2ll(a[3]) : std::nullopt;
    if (!start || !stop) return Reply::Error(kNotInteger);
    if (auto err = lookup()) return *err;
    if (z) {
      const int64_t len = static_cast<int64_t>(z->ordered.size());
      int64_t s = *start < 0 ? *start + len : *start;
      int64_t e = *stop < 0 ? *stop + len : *stop;
      if (s < 0) s = 0;
      if (!(s > e || s >= len)) {
        if (e >= len) e = len - 1;
        auto it = std::next(z->ordered.begin(), s);
        for (int64_t i = s; i <= e; ++i, ++it) picked.push_back(*it);
      }
    }
  } else if (kind == RangeKind::kScore) {
    auto min = ParseScoreBound(a[2]);
    auto max = min ? ParseScoreBound(a[3]) : std::nullopt;
    if (!min || !max) return Reply::Error(kMinMaxNotFloat);
    if (auto err = lookup()) return *err;
    if (z && !(offset > 0 && offset >= static_cast<int64_t>(z->scores.size()))) {
      for (const auto& item : z->ordered) {
        const double s = item.first;
        const bool ge = min->exclusive ? s > min->value : s >= min->value;
        const bool le = max->exclusive ? s < max->value : s <= max->value;
        if (!le) break;
        if (ge) picked.push_back(item);
      }
    }
    Window(picked, offset, limit);
  } else {
    auto min = ParseLexBound(a[2]);
    auto max = min ? ParseLexBound(a[3]) : std::nullopt;
    if (!min || !max) return Reply::Error(kLexRange);
    if (auto err = lookup()) return *err;
    // zzlIsInLexRange first: the last element must be >= min and the first <= max, else
    // nothing (this decides the reply when scores are mixed). Then zzlFirstInLexRange and a
    // walk while <= max: a linear scan in (score, member) order, exact for listpack-encoded
    // sets and for sets whose scores are all equal.
    if (z && (!LexGteMin(z->ordered.rbegin()->second, *min) ||
              !LexLteMax(z->ordered.begin()->second, *max)))
      z = nullptr;
    if (z) {
      bool started = false;
      for (const auto& item : z->ordered) {
        if (!started && !LexGteMin(item.second, *min)) continue;
        started = true;
        if (!LexLteMax(item.second, *max)) break;
        picked.push_back(item);
      }
    }
    Window(picked, offset, limit);
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

Reply Commands::ZRemRangeByScore(Emulator& em, const Argv& a) {
  auto min = ParseScoreBound(a[2]);
  auto max = min ? ParseScoreBound(a[3]) : std::nullopt;
  if (!min || !max) return Reply::Error(kMinMaxNotFloat);
  ZSetValue* z;
  if (!ZSetOf(em, a[1], &z, false)) return WrongType();
  if (!z) return Reply::Integer(0);
  std::vector<std::string> doomed;
  for (const auto& [s, m] : z->ordered) {
    const bool ge = min->exclusive ? s > min->value : s >= min->value;
    const bool le = max->exclusive ? s < max->value : s <= max->value;
    if (!le) break;
    if (ge) doomed.push_back(m);
  }
  for (const auto& m : doomed) ZErase(*z, m);
  if (!doomed.empty()) em.touch(a[1]);
  DropIfEmpty(em, a[1], z->scores.size());
  return Reply::Integer(static_cast<int64_t>(doomed.size()));
}

}  // namespace testbed::sim
