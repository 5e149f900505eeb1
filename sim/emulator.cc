// Commands of the emulator. Each handler follows the order of checks of its Redis 7.0
// counterpart (argument parsing, then key lookup, then type check), because the order decides
// which error a malformed call gets.
#include "sim/emulator.h"

#include <absl/container/flat_hash_map.h>
#include <absl/container/inlined_vector.h>
#include <absl/strings/ascii.h>
#include <absl/strings/match.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <climits>
#include <cmath>
#include <functional>
#include <unordered_map>

#include "sim/lua_scripting.h"
#include "sim/redis_text.h"

namespace testbed::sim {

using namespace redis_text;

namespace {

constexpr size_t kHashMaxListpackEntries = 128;
constexpr size_t kHashMaxListpackValue = 64;

Reply Unsupported(const std::string& what) {
  return Reply::Error("ERR unsupported by the emulator: " + what);
}

// An option name, compared as Redis does (case-insensitively); the length first, without a strlen.
template <size_t N>
bool Is(const std::string& arg, const char (&upper)[N]) {
  return arg.size() == N - 1 && absl::EqualsIgnoreCase(arg, absl::string_view(upper, N - 1));
}

template <typename T>
T* As(Entry* e) {
  return e ? std::get_if<T>(&e->value) : nullptr;
}

Reply WrongType() { return Reply::Error(kWrongType); }

}  // namespace

struct Commands {
  using Handler = Reply (*)(Emulator&, const Argv&);
  struct Spec {
    int arity;
    bool noscript;
    Handler handler;
  };
  static const absl::flat_hash_map<std::string, Spec>& Table();
  // The spec of an upper-case command name, or nullptr: the table's names bucketed by length
  // (at most six share one) and compared, without hashing the name.
  static const Spec* Find(std::string_view upper);

  // ---- generic / strings ----
  static Reply Get(Emulator& em, const Argv& a) {
    Entry* e = em.lookup(a[1]);
    if (!e) return Reply::Nil();
    auto* s = As<std::string>(e);
    return s ? Reply::Bulk(*s) : WrongType();
  }

  static Reply Set(Emulator& em, const Argv& a) {
    bool have_expire = false;
    bool absolute = false;
    std::string expire_arg;
    for (size_t j = 3; j < a.size(); ++j) {
      const std::string& opt = a[j];
      const bool next = j + 1 < a.size();
      if ((Is(opt, "PX") || Is(opt, "PXAT")) && next && !have_expire) {
        have_expire = true;
        absolute = Is(opt, "PXAT");
        expire_arg = a[++j];
      } else if (Is(opt, "NX") || Is(opt, "XX") || Is(opt, "GET") || Is(opt, "KEEPTTL") ||
                 ((Is(opt, "EX") || Is(opt, "EXAT")) && next)) {
        return Unsupported("SET option '" + a[j] + "'");
      } else {
        return Reply::Error(kSyntax);
      }
    }
    int64_t when = -1;
    if (have_expire) {
      auto ms = String2ll(expire_arg);
      if (!ms) return Reply::Error(kNotInteger);
      if (*ms <= 0) return Reply::Error(InvalidExpire("set"));
      if (!absolute) {
        if (*ms > LLONG_MAX - em.now_) return Reply::Error(InvalidExpire("set"));
        *ms += em.now_;
      }
      when = *ms;
    }
    // Overwrites in place: a string value that is there keeps its buffer (no Entry built,
    // moved in and the old one freed), whatever it held before (type, expiry) is replaced.
    Entry& e = em.keys_[a[1]];
    if (auto* s = std::get_if<std::string>(&e.value))
      s->assign(a[2]);
    else
      e.value = a[2];
    e.expire_at = when;
    return Reply::Ok();
  }

  static Reply MGet(Emulator& em, const Argv& a) {
    std::vector<Reply> out;
    for (size_t i = 1; i < a.size(); ++i) {
      auto* s = As<std::string>(em.lookup(a[i]));
      out.push_back(s ? Reply::Bulk(*s) : Reply::Nil());
    }
    return Reply::Array(std::move(out));
  }

  static Reply Del(Emulator& em, const Argv& a) {
    int64_t n = 0;
    for (size_t i = 1; i < a.size(); ++i) {
      if (em.lookup(a[i])) {
        em.erase_key(a[i]);
        ++n;
      }
    }
    return Reply::Integer(n);
  }

  static Reply Exists(Emulator& em, const Argv& a) {
    int64_t n = 0;
    for (size_t i = 1; i < a.size(); ++i) n += em.lookup(a[i]) ? 1 : 0;
    return Reply::Integer(n);
  }

  // db.c typeCommand.
  static Reply TypeOf(Emulator& em, const Argv& a) {
    Entry* e = em.lookup(a[1]);
    if (!e) return Reply::Status("none");
    if (As<HashValue>(e)) return Reply::Status("hash");
    if (As<ZSetValue>(e)) return Reply::Status("zset");
    if (As<StreamValue>(e)) return Reply::Status("stream");
    return Reply::Status("string");
  }

  static Reply Keys(Emulator& em, const Argv& a) {
    // Only keys that start with the pattern's literal prefix can match (the match is case
    // sensitive): visit just those, in key order, as the whole-keyspace loop would.
    const std::string& pattern = a[1];
    const std::string prefix = pattern.substr(0, pattern.find_first_of("*?[\\"));
    std::vector<Reply> out;
    for (auto it = em.keys_.lower_bound(prefix);
         it != em.keys_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it)
      if (em.alive(it->second) && GlobMatch(pattern, it->first))
        out.push_back(Reply::Bulk(it->first));
    return Reply::Array(std::move(out));
  }

  // SCAN cursor [MATCH pattern] [COUNT n]: see the deviation note in emulator.h.
  static Reply Scan(Emulator& em, const Argv& a) {
    const std::string& cs = a[1];
    char* end = nullptr;
    errno = 0;
    const unsigned long long cursor = std::strtoull(cs.c_str(), &end, 10);
    // parseScanCursorOrReply: strtoul rules, so "" is cursor 0 and "-1" wraps around.
    if ((!cs.empty() && std::isspace(static_cast<unsigned char>(cs[0]))) || *end != '\0' ||
        errno == ERANGE)
      return Reply::Error(kInvalidCursor);
    int64_t count = 10;
    std::string pattern = "*";
    for (size_t i = 2; i < a.size();) {
      const size_t left = a.size() - i;
      if (Is(a[i], "COUNT") && left >= 2) {
        auto c = String2ll(a[i + 1]);
        if (!c) return Reply::Error(kNotInteger);
        if (*c < 1) return Reply::Error(kSyntax);
        count = *c;
        i += 2;
      } else if (Is(a[i], "MATCH") && left >= 2) {
        pattern = a[i + 1];
        i += 2;
      } else if (Is(a[i], "TYPE") && left >= 2) {
        return Unsupported("SCAN option 'TYPE'");
      } else {
        return Reply::Error(kSyntax);
      }
    }
    auto it = em.keys_.begin();
    if (cursor != 0) {
      auto resume = em.scan_cursors_.find(cursor);
      if (resume != em.scan_cursors_.end()) it = em.keys_.upper_bound(resume->second);
    }
    std::vector<Reply> found;
    std::string last;
    int64_t visited = 0;
    std::vector<std::string> expired;
    // A page is the next `count` live keys in key order (expired ones are dropped, not
    // counted): one of the splits Redis allows, and one a redis-server backend can reproduce
    // from its live keys (real/real_backend.cc), so both worlds page alike.
    for (; it != em.keys_.end() && visited < count; ++it) {
      last = it->first;
      if (!em.alive(it->second)) {
        expired.push_back(it->first);
        continue;
      }
      ++visited;
      if (GlobMatch(pattern, it->first)) found.push_back(Reply::Bulk(it->first));
    }
    const bool done = it == em.keys_.end();
    for (const std::string& k : expired) em.erase_key(k);
    std::string next = "0";
    if (!done) {
      const uint64_t id = em.next_cursor_++;
      em.scan_cursors_[id] = last;
      next = std::to_string(id);
    }
    return Reply::Array({Reply::Bulk(next), Reply::Array(std::move(found))});
  }

  static Reply PExpire(Emulator& em, const Argv& a) {
    if (a.size() > 3) return Unsupported("PEXPIRE options");
    auto when = String2ll(a[2]);
    if (!when) return Reply::Error(kNotInteger);
    if (*when > LLONG_MAX - em.now_) return Reply::Error(InvalidExpire("pexpire"));
    *when += em.now_;
    Entry* e = em.lookup(a[1]);
    if (!e) return Reply::Integer(0);
    if (*when <= em.now_) {
      em.erase_key(a[1]);
    } else {
      e->expire_at = *when;
    }
    return Reply::Integer(1);
  }

  static Reply PTtl(Emulator& em, const Argv& a) {
    Entry* e = em.lookup(a[1]);
    if (!e) return Reply::Integer(-2);
    if (e->expire_at == -1) return Reply::Integer(-1);
    return Reply::Integer(std::max<int64_t>(0, e->expire_at - em.now_));
  }

  static Reply Ping(Emulator&, const Argv& a) {
    if (a.size() > 2) return Reply::Error(WrongArity("ping"));
    return a.size() == 2 ? Reply::Bulk(a[1]) : Reply::Status("PONG");
  }

  static Reply Time(Emulator& em, const Argv&) {
    return Reply::Array({Reply::Bulk(std::to_string(em.now_ / 1000)),
                         Reply::Bulk(std::to_string((em.now_ % 1000) * 1000))});
  }

  // ---- hashes ----
  // The HashValue at `key` in *out (nullptr when there is none and !create); false when the key
  // holds another type (the caller answers WrongType()).
  static bool HashOf(Emulator& em, const std::string& key, HashValue** out, bool create) {
    Entry* e = em.lookup(key);
    if (!e) {
      if (!create) {
        *out = nullptr;
        return true;
      }
      e = &(em.keys_[key] = Entry{HashValue{}, -1});
    }
    *out = As<HashValue>(e);
    return *out != nullptr;
  }

  static void HashSet(HashValue& h, const std::string& f, const std::string& v) {
    if (f.size() > kHashMaxListpackValue || v.size() > kHashMaxListpackValue) h.listpack = false;
    auto it = h.fields.find(f);
    if (it != h.fields.end()) {
      it->second.second = v;
    } else {
      h.fields[f] = {h.next_seq++, v};
    }
    if (h.fields.size() > kHashMaxListpackEntries) h.listpack = false;
  }

  static void DropIfEmpty(Emulator& em, const std::string& key, size_t size) {
    if (size == 0) em.erase_key(key);
  }

  static Reply HGet(Emulator& em, const Argv& a) {
    HashValue* h;
    if (!HashOf(em, a[1], &h, false)) return WrongType();
    if (!h) return Reply::Nil();
    auto it = h->fields.find(a[2]);
    return it == h->fields.end() ? Reply::Nil() : Reply::Bulk(it->second.second);
  }

  static Reply HSet(Emulator& em, const Argv& a) {
    if (a.size() % 2 == 1) return Reply::Error(WrongArity("hset"));
    HashValue* h;
    if (!HashOf(em, a[1], &h, true)) return WrongType();
    int64_t created = 0;
    for (size_t i = 2; i < a.size(); i += 2) {
      created += h->fields.count(a[i]) ? 0 : 1;
      HashSet(*h, a[i], a[i + 1]);
    }
    return Reply::Integer(created);
  }

  static Reply HSetNx(Emulator& em, const Argv& a) {
    HashValue* h;
    if (!HashOf(em, a[1], &h, true)) return WrongType();
    if (h->fields.count(a[2])) return Reply::Integer(0);
    HashSet(*h, a[2], a[3]);
    return Reply::Integer(1);
  }

  static Reply HDel(Emulator& em, const Argv& a) {
    HashValue* h;
    if (!HashOf(em, a[1], &h, false)) return WrongType();
    if (!h) return Reply::Integer(0);
    int64_t n = 0;
    for (size_t i = 2; i < a.size(); ++i) n += static_cast<int64_t>(h->fields.erase(a[i]));
    DropIfEmpty(em, a[1], h->fields.size());
    return Reply::Integer(n);
  }

  static Reply HExists(Emulator& em, const Argv& a) {
    HashValue* h;
    if (!HashOf(em, a[1], &h, false)) return WrongType();
    return Reply::Integer(h && h->fields.count(a[2]) ? 1 : 0);
  }

  static Reply HIncrBy(Emulator& em, const Argv& a) {
    auto incr = String2ll(a[3]);
    if (!incr) return Reply::Error(kNotInteger);
    HashValue* h;
    if (!HashOf(em, a[1], &h, true)) return WrongType();
    int64_t old = 0;
    if (auto it = h->fields.find(a[2]); it != h->fields.end()) {
      auto v = String2ll(it->second.second);
      if (!v) return Reply::Error(kHashNotInteger);
      old = *v;
    }
    if ((*incr < 0 && old < 0 && *incr < LLONG_MIN - old) ||
        (*incr > 0 && old > 0 && *incr > LLONG_MAX - old))
      return Reply::Error(kOverflow);
    HashSet(*h, a[2], std::to_string(old + *incr));
    return Reply::Integer(old + *incr);
  }

  static std::vector<std::pair<std::string, std::string>> HashInOrder(const HashValue& h) {
    std::vector<
        std::pair<uint64_t, const std::pair<const std::string, std::pair<uint64_t, std::string>>*>>
        order;
    for (const auto& kv : h.fields) order.push_back({kv.second.first, &kv});
    std::sort(order.begin(), order.end(),
              [](const auto& x, const auto& y) { return x.first < y.first; });
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& [seq, kv] : order) out.push_back({kv->first, kv->second.second});
    return out;
  }

  static Reply HGetAll(Emulator& em, const Argv& a) {
    HashValue* h;
    if (!HashOf(em, a[1], &h, false)) return WrongType();
    std::vector<Reply> out;
    if (h)
      for (auto& [f, v] : HashInOrder(*h)) {
        out.push_back(Reply::Bulk(f));
        out.push_back(Reply::Bulk(v));
      }
    return Reply::Array(std::move(out));
  }

  static Reply HMGet(Emulator& em, const Argv& a) {
    HashValue* h;
    if (!HashOf(em, a[1], &h, false)) return WrongType();
    std::vector<Reply> out;
    for (size_t i = 2; i < a.size(); ++i) {
      auto it = h ? h->fields.find(a[i]) : decltype(h->fields.end()){};
      out.push_back(h && it != h->fields.end() ? Reply::Bulk(it->second.second) : Reply::Nil());
    }
    return Reply::Array(std::move(out));
  }

  // ---- sorted sets ----
  // The ZSetValue at `key` in *out (nullptr when there is none and !create); false when the key
  // holds another type (the caller answers WrongType()).
  static bool ZSetOf(Emulator& em, const std::string& key, ZSetValue** out, bool create) {
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

  static bool ZInsert(ZSetValue& z, const std::string& m, double score) {
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

  static void ZErase(ZSetValue& z, const std::string& m) {
    auto it = z.scores.find(m);
    if (it == z.scores.end()) return;
    z.ordered.erase(z.ordered.find(std::pair<double, std::string_view>(it->second, m)));
    z.scores.erase(it);
  }

  static Reply ZAdd(Emulator& em, const Argv& a) {
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
    for (size_t i = idx, k = 0; i < a.size(); i += 2, ++k) {
      if (nx && z->scores.count(a[i + 1])) continue;
      added += ZInsert(*z, a[i + 1], scores[k]) ? 1 : 0;
    }
    return Reply::Integer(added);
  }

  static Reply ZRem(Emulator& em, const Argv& a) {
    ZSetValue* z;
    if (!ZSetOf(em, a[1], &z, false)) return WrongType();
    if (!z) return Reply::Integer(0);
    int64_t n = 0;
    for (size_t i = 2; i < a.size(); ++i) {
      n += z->scores.count(a[i]) ? 1 : 0;
      ZErase(*z, a[i]);
    }
    DropIfEmpty(em, a[1], z->scores.size());
    return Reply::Integer(n);
  }

  static Reply ZScore(Emulator& em, const Argv& a) {
    ZSetValue* z;
    if (!ZSetOf(em, a[1], &z, false)) return WrongType();
    if (!z) return Reply::Nil();
    auto it = z->scores.find(a[2]);
    return it == z->scores.end() ? Reply::Nil() : Reply::Bulk(FormatDouble(it->second));
  }

  static Reply ZCard(Emulator& em, const Argv& a) {
    ZSetValue* z;
    if (!ZSetOf(em, a[1], &z, false)) return WrongType();
    return Reply::Integer(z ? static_cast<int64_t>(z->scores.size()) : 0);
  }

  enum class RangeKind { kRank, kScore, kLex };

  // zrangeGenericCommand: options first, then conflicts, then min/max, then the key.
  static Reply ZRangeGeneric(Emulator& em, const Argv& a, RangeKind kind) {
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

  static void Window(std::vector<std::pair<double, std::string>>& v, int64_t offset,
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

  struct LexBound {
    enum { kMin, kMax, kValue } kind;
    std::string value;
    bool exclusive;
  };
  static std::optional<LexBound> ParseLexBound(const std::string& s) {
    if (s == "+") return LexBound{LexBound::kMax, "", false};
    if (s == "-") return LexBound{LexBound::kMin, "", false};
    if (!s.empty() && (s[0] == '(' || s[0] == '['))
      return LexBound{LexBound::kValue, s.substr(1), s[0] == '('};
    return std::nullopt;
  }
  static bool LexGteMin(const std::string& m, const LexBound& b) {
    if (b.kind == LexBound::kMin) return true;
    if (b.kind == LexBound::kMax) return false;
    return b.exclusive ? m > b.value : m >= b.value;
  }
  static bool LexLteMax(const std::string& m, const LexBound& b) {
    if (b.kind == LexBound::kMax) return true;
    if (b.kind == LexBound::kMin) return false;
    return b.exclusive ? m < b.value : m <= b.value;
  }

  static Reply ZRemRangeByScore(Emulator& em, const Argv& a) {
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
    DropIfEmpty(em, a[1], z->scores.size());
    return Reply::Integer(static_cast<int64_t>(doomed.size()));
  }

  // ---- streams ----
  // util.c string2ull: string2ll first, then strtoull with its permissive rules.
  static std::optional<uint64_t> String2ull(const std::string& s) {
    if (auto ll = String2ll(s)) {
      if (*ll < 0) return std::nullopt;
      return static_cast<uint64_t>(*ll);
    }
    if (s.empty() || s.find('\0') != std::string::npos) return std::nullopt;
    errno = 0;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
    if (errno == EINVAL || errno == ERANGE || *end != '\0' || end == s.c_str()) return std::nullopt;
    return v;
  }

  // streamGenericParseIDOrReply. seq_given is null for the non-XADD forms.
  static std::optional<StreamId> ParseStreamId(const std::string& s, uint64_t missing_seq,
                                               bool strict, bool* seq_given) {
    if (s.size() > 127) return std::nullopt;
    const std::string buf = s.substr(0, s.find('\0'));
    if (strict && (buf == "-" || buf == "+")) return std::nullopt;
    if (seq_given) *seq_given = true;
    if (buf == "-") return StreamId{0, 0};
    if (buf == "+") return StreamId{UINT64_MAX, UINT64_MAX};
    const size_t dash = buf.find('-');
    auto ms = String2ull(buf.substr(0, dash));
    if (!ms) return std::nullopt;
    uint64_t seq = missing_seq;
    if (dash != std::string::npos) {
      const std::string rest = buf.substr(dash + 1);
      if (seq_given && rest == "*") {
        seq = 0;
        *seq_given = false;
      } else {
        auto sq = String2ull(rest);
        if (!sq) return std::nullopt;
        seq = *sq;
      }
    }
    return StreamId{*ms, seq};
  }

  static Reply XAdd(Emulator& em, const Argv& a) {
    const std::string& idarg = a[2];
    const std::string opt = ToUpper(idarg);
    if (opt == "NOMKSTREAM" || opt == "MAXLEN" || opt == "MINID")
      return Unsupported("XADD option '" + idarg + "'");
    bool auto_id = idarg == "*";
    bool seq_given = true;
    StreamId id;
    if (!auto_id) {
      auto parsed = ParseStreamId(idarg, 0, true, &seq_given);
      if (!parsed) return Reply::Error(kInvalidStreamId);
      id = *parsed;
    }
    const size_t field_pos = 3;
    if (a.size() - field_pos < 2 || (a.size() - field_pos) % 2 == 1)
      return Reply::Error(WrongArity("xadd"));
    if (!auto_id && seq_given && id.ms == 0 && id.seq == 0) return Reply::Error(kXaddZero);
    Entry* e = em.lookup(a[1]);
    if (e && !As<StreamValue>(e)) return WrongType();
    if (!e) e = &(em.keys_[a[1]] = Entry{StreamValue{}, -1});
    auto& s = std::get<StreamValue>(e->value);
    if (s.last_id.ms == UINT64_MAX && s.last_id.seq == UINT64_MAX)
      return Reply::Error(
          "ERR The stream has exhausted the last possible ID, unable to add more items");
    if (auto_id) {
      const uint64_t now = static_cast<uint64_t>(em.now_);
      id = now > s.last_id.ms ? StreamId{now, 0} : StreamId{s.last_id.ms, s.last_id.seq + 1};
    } else if (!seq_given) {
      if (s.last_id.ms == id.ms) {
        if (s.last_id.seq == UINT64_MAX) return Reply::Error(kXaddSmaller);
        id = StreamId{s.last_id.ms, s.last_id.seq + 1};
      }
    }
    if (id <= s.last_id) return Reply::Error(kXaddSmaller);
    s.entries[id] = std::vector<std::string>(a.begin() + field_pos, a.end());
    s.last_id = id;
    return Reply::Bulk(id.str());
  }

  // t_stream.c xdelCommand: every ID is parsed before any is deleted; an emptied stream stays
  // (with its last ID).
  static Reply XDel(Emulator& em, const Argv& a) {
    std::vector<StreamId> ids;
    for (size_t i = 2; i < a.size(); ++i) {
      auto id = ParseStreamId(a[i], 0, true, nullptr);
      if (!id) return Reply::Error(kInvalidStreamId);
      ids.push_back(*id);
    }
    Entry* e = em.lookup(a[1]);
    if (!e) return Reply::Integer(0);
    auto* s = As<StreamValue>(e);
    if (!s) return WrongType();
    int64_t n = 0;
    for (const StreamId& id : ids) n += static_cast<int64_t>(s->entries.erase(id));
    return Reply::Integer(n);
  }

  static Reply XRange(Emulator& em, const Argv& a) {
    auto interval = [](const std::string& s, uint64_t missing, bool* ex) {
      *ex = s.size() > 1 && s[0] == '(';
      return *ex ? ParseStreamId(s.substr(1), missing, true, nullptr)
                 : ParseStreamId(s, missing, false, nullptr);
    };
    bool startex, endex;
    auto start = interval(a[2], 0, &startex);
    if (!start) return Reply::Error(kInvalidStreamId);
    if (startex) {
      if (start->seq == UINT64_MAX) {
        if (start->ms == UINT64_MAX) return Reply::Error("ERR invalid start ID for the interval");
        *start = StreamId{start->ms + 1, 0};
      } else {
        start->seq++;
      }
    }
    auto end = interval(a[3], UINT64_MAX, &endex);
    if (!end) return Reply::Error(kInvalidStreamId);
    if (endex) {
      if (end->seq == 0) {
        if (end->ms == 0) return Reply::Error("ERR invalid end ID for the interval");
        *end = StreamId{end->ms - 1, UINT64_MAX};
      } else {
        end->seq--;
      }
    }
    int64_t count = -1;
    for (size_t j = 4; j < a.size(); ++j) {
      if (Is(a[j], "COUNT") && a.size() - j - 1 >= 1) {
        auto c = String2ll(a[j + 1]);
        if (!c) return Reply::Error(kNotInteger);
        count = *c < 0 ? 0 : *c;
        ++j;
      } else {
        return Reply::Error(kSyntax);
      }
    }
    Entry* e = em.lookup(a[1]);
    if (!e) return Reply::Array({});
    auto* s = As<StreamValue>(e);
    if (!s) return WrongType();
    if (count == 0) return Reply::NilArray();
    std::vector<Reply> out;
    if (*start <= *end) {
      for (auto it = s->entries.lower_bound(*start); it != s->entries.end() && it->first <= *end;
           ++it) {
        if (count > 0 && static_cast<int64_t>(out.size()) >= count) break;
        std::vector<Reply> fields;
        for (const auto& f : it->second) fields.push_back(Reply::Bulk(f));
        out.push_back(Reply::Array({Reply::Bulk(it->first.str()), Reply::Array(fields)}));
      }
    }
    return Reply::Array(std::move(out));
  }

  // ---- scripting ----
  static Reply ParseNumKeys(const Argv& a, int64_t* numkeys) {
    auto n = String2ll(a[2]);
    if (!n) return Reply::Error(kNotInteger);
    if (*n > static_cast<int64_t>(a.size()) - 3) return Reply::Error(kNumKeysTooMany);
    if (*n < 0) return Reply::Error(kNumKeysNegative);
    *numkeys = *n;
    return Reply::Ok();
  }

  static Reply Eval(Emulator& em, const Argv& a) {
    int64_t numkeys = 0;
    if (Reply r = ParseNumKeys(a, &numkeys); r.is_error()) return r;
    const auto args = absl::MakeConstSpan(a);
    return em.lua_->Eval(a[1], args.subspan(3, numkeys), args.subspan(3 + numkeys));
  }

  static Reply EvalSha(Emulator& em, const Argv& a) {
    int64_t numkeys = 0;
    if (Reply r = ParseNumKeys(a, &numkeys); r.is_error()) return r;
    const auto args = absl::MakeConstSpan(a);
    return em.lua_->EvalSha(a[1], args.subspan(3, numkeys), args.subspan(3 + numkeys));
  }

  static Reply Script(Emulator& em, const Argv& a) {
    const std::string sub = ToUpper(a[1]);
    if (sub == "LOAD") {
      if (a.size() != 3) return Reply::Error(WrongArity("script|load"));
      return em.lua_->Load(a[2]);
    }
    if (sub == "EXISTS") {
      if (a.size() < 3) return Reply::Error(WrongArity("script|exists"));
      std::vector<Reply> out;
      for (size_t i = 2; i < a.size(); ++i)
        out.push_back(Reply::Integer(em.lua_->Exists(a[i]) ? 1 : 0));
      return Reply::Array(std::move(out));
    }
    return Unsupported("SCRIPT " + a[1]);
  }
};

const absl::flat_hash_map<std::string, Commands::Spec>& Commands::Table() {
  static const absl::flat_hash_map<std::string, Spec> table = {
      {"GET", {2, false, Get}},
      {"SET", {-3, false, Set}},
      {"MGET", {-2, false, MGet}},
      {"DEL", {-2, false, Del}},
      {"EXISTS", {-2, false, Exists}},
      {"KEYS", {2, false, Keys}},
      {"TYPE", {2, false, TypeOf}},
      {"SCAN", {-2, false, Scan}},
      {"PEXPIRE", {-3, false, PExpire}},
      {"PTTL", {2, false, PTtl}},
      {"PING", {-1, false, Ping}},
      {"TIME", {1, false, Time}},
      {"HGET", {3, false, HGet}},
      {"HSET", {-4, false, HSet}},
      {"HSETNX", {4, false, HSetNx}},
      {"HDEL", {-3, false, HDel}},
      {"HEXISTS", {3, false, HExists}},
      {"HINCRBY", {4, false, HIncrBy}},
      {"HGETALL", {2, false, HGetAll}},
      {"HMGET", {-3, false, HMGet}},
      {"ZADD", {-4, false, ZAdd}},
      {"ZREM", {-3, false, ZRem}},
      {"ZSCORE", {3, false, ZScore}},
      {"ZCARD", {2, false, ZCard}},
      {"ZRANGE",
       {-4, false,
        [](Emulator& em, const Argv& a) { return ZRangeGeneric(em, a, RangeKind::kRank); }}},
      {"ZRANGEBYSCORE",
       {-4, false,
        [](Emulator& em, const Argv& a) { return ZRangeGeneric(em, a, RangeKind::kScore); }}},
      {"ZRANGEBYLEX",
       {-4, false,
        [](Emulator& em, const Argv& a) { return ZRangeGeneric(em, a, RangeKind::kLex); }}},
      {"ZREMRANGEBYSCORE", {4, false, ZRemRangeByScore}},
      {"XADD", {-5, false, XAdd}},
      {"XDEL", {-3, false, XDel}},
      {"XRANGE", {-4, false, XRange}},
      {"EVAL", {-3, true, Eval}},
      {"EVALSHA", {-3, true, EvalSha}},
      {"SCRIPT", {-2, true, Script}},
  };
  return table;
}

const Commands::Spec* Commands::Find(std::string_view upper) {
  constexpr size_t kLongest = 24;  // the dispatcher's buffer
  using Bucket = std::vector<std::pair<std::string_view, const Spec*>>;
  static const std::array<Bucket, kLongest + 1> by_length = [] {
    std::array<Bucket, kLongest + 1> b;
    for (const auto& [name, spec] : Table()) b[name.size()].emplace_back(name, &spec);
    return b;
  }();
  if (upper.size() > kLongest) return nullptr;
  for (const auto& [name, spec] : by_length[upper.size()])
    if (name[0] == upper[0] && name == upper) return spec;
  return nullptr;
}

Emulator::Emulator(const Clock& clock, EmulatorOptions options)
    : clock_(clock), options_(options), lua_(std::make_unique<LuaScripting>(*this)) {}

Emulator::~Emulator() = default;

bool Emulator::alive(const Entry& e) const {
  return e.expire_at == -1 || now_ <= e.expire_at + options_.fault_expiry_shift_ms;
}

Entry* Emulator::lookup(const std::string& key) {
  auto it = last_ != keys_.end() && last_->first == key ? last_ : keys_.find(key);
  if (it == keys_.end()) return nullptr;
  if (!alive(it->second)) {
    erase_key(key);
    return nullptr;
  }
  last_ = it;
  return &it->second;
}

void Emulator::erase_key(const std::string& key) {
  auto it = last_ != keys_.end() && last_->first == key ? last_ : keys_.find(key);
  if (it == keys_.end()) return;
  if (it == last_) last_ = keys_.end();
  keys_.erase(it);
}

Reply Emulator::dispatch(const Argv& argv, bool from_script, bool* known, bool* arity_ok) {
  *known = false;
  *arity_ok = false;
  if (argv.empty()) return Reply::Error("ERR unsupported by the emulator: empty command");
  // The name in upper case, on the stack (no command name is longer than the buffer), looked
  // up in the table; the spec is then remembered for the name as it was written ("zadd", "ZADD"),
  // in one of 16 slots picked by its length and first letter: a script calls a few commands
  // over and over, and comparing one short name costs less than upper-casing and finding it.
  struct Remembered {
    char name[24];
    size_t size = 0;
    const Commands::Spec* spec = nullptr;
  };
  thread_local std::array<Remembered, 16> remembered;
  char upper[24];
  const std::string& name = argv[0];
  const Commands::Spec* spec = nullptr;
  if (name.size() <= sizeof upper && !name.empty()) {
    Remembered& r = remembered[(name.size() * 7 + static_cast<unsigned char>(name[0])) & 15];
    if (r.spec && r.size == name.size() && std::memcmp(r.name, name.data(), name.size()) == 0) {
      spec = r.spec;
    } else {
      for (size_t i = 0; i < name.size(); ++i) upper[i] = absl::ascii_toupper(name[i]);
      spec = Commands::Find(std::string_view(upper, name.size()));
      if (spec) {
        std::memcpy(r.name, name.data(), name.size());
        r.size = name.size();
        r.spec = spec;
      }
    }
  }
  if (!spec) return Unsupported("command '" + argv[0] + "'");
  *known = true;
  if (observer) observer(argv, from_script);
  const int arity = spec->arity;
  const int argc = static_cast<int>(argv.size());
  if ((arity > 0 && argc != arity) || (arity < 0 && argc < -arity))
    return Reply::Error(WrongArity(ToLower(argv[0])));
  *arity_ok = true;
  if (from_script && spec->noscript)
    return Reply::Error("ERR This Redis command is not allowed from script");
  return spec->handler(*this, argv);
}

Reply Emulator::execute(const Argv& argv) {
  now_ = clock_.now_ms();
  bool known, arity_ok;
  return dispatch(argv, false, &known, &arity_ok);
}

Reply Emulator::execute_from_script(const Argv& argv, bool* known, bool* arity_ok) {
  return dispatch(argv, true, known, arity_ok);
}

bool Emulator::hash_is_listpack(const std::string& key) {
  auto it = keys_.find(key);
  if (it == keys_.end()) return true;
  auto* h = std::get_if<HashValue>(&it->second.value);
  return !h || h->listpack;
}

std::string Emulator::dump_keyspace() {
  now_ = clock_.now_ms();
  std::string out;
  for (const auto& [key, e] : keys_) {
    if (!alive(e)) continue;
    out += render_argv({key}) + " ";
    if (auto* s = std::get_if<std::string>(&e.value)) {
      out += "string " + render_argv({*s});
    } else if (auto* h = std::get_if<HashValue>(&e.value)) {
      out += "hash";
      for (const auto& [f, v] : h->fields) out += " " + render_argv({f, v.second});
    } else if (auto* z = std::get_if<ZSetValue>(&e.value)) {
      out += "zset";
      for (const auto& [s, m] : z->ordered) out += " " + render_argv({m, FormatDouble(s)});
    } else if (auto* st = std::get_if<StreamValue>(&e.value)) {
      out += "stream";
      for (const auto& [id, fields] : st->entries)
        out += " " + id.str() + " " + render_argv(fields);
    }
    out += " pttl=" +
           std::to_string(e.expire_at == -1 ? -1 : std::max<int64_t>(0, e.expire_at - now_));
    out += "\n";
  }
  return out;
}

}  // namespace testbed::sim
