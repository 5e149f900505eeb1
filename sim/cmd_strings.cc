// The emulator's generic and string commands (sim/emulator_commands.h).
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

Reply Commands::Get(Emulator& em, const Argv& a) {
  Entry* e = em.lookup(a[1]);
  if (!e) return Reply::Nil();
  auto* s = As<std::string>(e);
  return s ? Reply::Bulk(*s) : WrongType();
}

// parseExtendedStringArgumentsOrReply: SET's options (`set`) or GETEX's, each refused where
// Redis refuses it (NX with XX, KEEPTTL or PERSIST with an expiry, two kinds of expiry); an
// expiry given twice in one kind counts the last.
Reply Commands::ParseStringOptions(const Argv& a, bool set, StringOptions* o) {
  constexpr int kNx = 1, kXx = 2, kGet = 4, kKeepTtl = 8, kEx = 16, kPx = 32, kExAt = 64;
  constexpr int kPxAt = 128, kPersist = 256;
  int f = 0;
  for (size_t j = set ? 3 : 2; j < a.size(); ++j) {
    const std::string& opt = a[j];
    const bool next = j + 1 < a.size();
    if (set && Is(opt, "NX") && !(f & kXx)) {
      f |= kNx;
    } else if (set && Is(opt, "XX") && !(f & kNx)) {
      f |= kXx;
    } else if (set && Is(opt, "GET")) {
      f |= kGet;
    } else if (set && Is(opt, "KEEPTTL") && !(f & (kPersist | kEx | kExAt | kPx | kPxAt))) {
      f |= kKeepTtl;
    } else if (!set && Is(opt, "PERSIST") && !(f & (kEx | kExAt | kPx | kPxAt | kKeepTtl))) {
      f |= kPersist;
    } else if (Is(opt, "EX") && !(f & (kKeepTtl | kPersist | kExAt | kPx | kPxAt)) && next) {
      f |= kEx;
      o->expire = &a[++j];
    } else if (Is(opt, "PX") && !(f & (kKeepTtl | kPersist | kEx | kExAt | kPxAt)) && next) {
      f |= kPx;
      o->expire = &a[++j];
    } else if (Is(opt, "EXAT") && !(f & (kKeepTtl | kPersist | kEx | kPx | kPxAt)) && next) {
      f |= kExAt;
      o->expire = &a[++j];
    } else if (Is(opt, "PXAT") && !(f & (kKeepTtl | kPersist | kEx | kExAt | kPx)) && next) {
      f |= kPxAt;
      o->expire = &a[++j];
    } else {
      return Reply::Error(kSyntax);
    }
  }
  o->nx = f & kNx;
  o->xx = f & kXx;
  o->get = f & kGet;
  o->keep_ttl = f & kKeepTtl;
  o->persist = f & kPersist;
  o->seconds = f & (kEx | kExAt);
  o->relative = f & (kEx | kPx);
  return Reply::Ok();
}

// getExpireMillisecondsOrReply: the option's time as an absolute ms, or the error.
Reply Commands::ExpireMs(Emulator& em, const StringOptions& o, const char* name, int64_t* when) {
  auto ms = String2ll(*o.expire);
  if (!ms) return Reply::Error(kNotInteger);
  if (*ms <= 0 || (o.seconds && *ms > LLONG_MAX / 1000)) return Reply::Error(InvalidExpire(name));
  if (o.seconds) *ms *= 1000;
  if (o.relative) {
    if (*ms > LLONG_MAX - em.now_) return Reply::Error(InvalidExpire(name));
    *ms += em.now_;
  }
  *when = *ms;
  return Reply::Ok();
}

// setCommand / setGenericCommand: the expiry checked first, then GET's read (a value of another
// type is WRONGTYPE and nothing is set), then NX / XX.
Reply Commands::Set(Emulator& em, const Argv& a) {
  StringOptions o;
  if (a.size() > 3)
    if (Reply r = ParseStringOptions(a, true, &o); r.is_error()) return r;
  int64_t when = -1;
  if (o.expire)
    if (Reply r = ExpireMs(em, o, "set", &when); r.is_error()) return r;
  Reply got = Reply::Ok();
  if (o.get || o.nx || o.xx || o.keep_ttl) {
    Entry* e = em.lookup(a[1]);
    if (o.get) {
      auto* s = As<std::string>(e);
      if (e && !s) return WrongType();
      got = s ? Reply::Bulk(*s) : Reply::Nil();
    }
    if ((o.nx && e) || (o.xx && !e)) return o.get ? got : Reply::Nil();
    if (o.keep_ttl && e && !o.expire) when = e->expire_at;
  }
  // Overwrites in place: a string value that is there keeps its buffer (no Entry built,
  // moved in and the old one freed), whatever it held before (type, expiry) is replaced.
  Entry& e = em.keys_[a[1]];
  if (auto* s = std::get_if<std::string>(&e.value))
    s->assign(a[2]);
  else
    e.value = a[2];
  e.expire_at = when;
  em.touch(a[1]);
  return got;
}

// getexCommand: the value, then its expiry changed (a time already past deletes the key) or
// removed (PERSIST).
Reply Commands::GetEx(Emulator& em, const Argv& a) {
  StringOptions o;
  if (Reply r = ParseStringOptions(a, false, &o); r.is_error()) return r;
  Entry* e = em.lookup(a[1]);
  if (!e) return Reply::Nil();
  auto* s = As<std::string>(e);
  if (!s) return WrongType();
  int64_t when = -1;
  if (o.expire)
    if (Reply r = ExpireMs(em, o, "getex", &when); r.is_error()) return r;
  Reply out = Reply::Bulk(*s);
  if (o.expire && !o.relative && when <= em.now_) {
    em.erase_key(a[1]);
  } else if (o.expire) {
    e->expire_at = when;
    em.touch(a[1]);
  } else if (o.persist && e->expire_at != -1) {
    e->expire_at = -1;
    em.touch(a[1]);
  }
  return out;
}

// msetGenericCommand: pairs only; each key set (its expiry dropped) and touched.
Reply Commands::MSet(Emulator& em, const Argv& a) {
  if (a.size() % 2 == 0) return Reply::Error(WrongArity("mset"));
  for (size_t j = 1; j + 1 < a.size(); j += 2) {
    em.keys_[a[j]] = Entry{a[j + 1], -1};
    em.touch(a[j]);
  }
  return Reply::Ok();
}

Reply Commands::MGet(Emulator& em, const Argv& a) {
  std::vector<Reply> out;
  for (size_t i = 1; i < a.size(); ++i) {
    auto* s = As<std::string>(em.lookup(a[i]));
    out.push_back(s ? Reply::Bulk(*s) : Reply::Nil());
  }
  return Reply::Array(std::move(out));
}

Reply Commands::Del(Emulator& em, const Argv& a) {
  int64_t n = 0;
  for (size_t i = 1; i < a.size(); ++i) {
    if (em.lookup(a[i])) {
      em.erase_key(a[i]);
      ++n;
    }
  }
  return Reply::Integer(n);
}

Reply Commands::Exists(Emulator& em, const Argv& a) {
  int64_t n = 0;
  for (size_t i = 1; i < a.size(); ++i) n += em.lookup(a[i]) ? 1 : 0;
  return Reply::Integer(n);
}

Reply Commands::TypeOf(Emulator& em, const Argv& a) {
  Entry* e = em.lookup(a[1]);
  if (!e) return Reply::Status("none");
  if (As<HashValue>(e)) return Reply::Status("hash");
  if (As<ZSetValue>(e)) return Reply::Status("zset");
  if (As<StreamValue>(e)) return Reply::Status("stream");
  if (As<ListValue>(e)) return Reply::Status("list");
  if (As<SetValue>(e)) return Reply::Status("set");
  return Reply::Status("string");
}

Reply Commands::Keys(Emulator& em, const Argv& a) {
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

// parseScanCursorOrReply: strtoul rules, so "" is cursor 0 and "-1" wraps around.
std::optional<unsigned long long> Commands::ScanCursor(const std::string& cs) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long cursor = std::strtoull(cs.c_str(), &end, 10);
  if ((!cs.empty() && std::isspace(static_cast<unsigned char>(cs[0]))) || *end != '\0' ||
      errno == ERANGE)
    return std::nullopt;
  return cursor;
}

// HSCAN, SSCAN, ZSCAN (hscanCommand and its kin, then scanGenericCommand): the cursor, then the
// key, then COUNT and MATCH. Every element comes in one page with cursor 0 (Redis does so for
// listpack and intset encodings; a hash table it pages, which COUNT only hints at); a cursor the
// emulator did not give gets an empty page.
Reply Commands::ScanValue(Emulator& em, const Argv& a) {
  const auto cursor = ScanCursor(a[2]);
  if (!cursor) return Reply::Error(kInvalidCursor);
  Entry* e = em.lookup(a[1]);
  Pairs items;
  bool pairs = true;
  if (e) {
    if (Is(a[0], "HSCAN") && As<HashValue>(e)) {
      items = HashInOrder(*As<HashValue>(e));
    } else if (Is(a[0], "ZSCAN") && As<ZSetValue>(e)) {
      for (const auto& [score, member] : As<ZSetValue>(e)->ordered)
        items.emplace_back(member, FormatDouble(score));
    } else if (Is(a[0], "SSCAN") && As<SetValue>(e)) {
      for (const std::string& m : Members(*As<SetValue>(e))) items.emplace_back(m, "");
      pairs = false;
    } else {
      return WrongType();
    }
  }
  std::string pattern = "*";
  for (size_t i = 3; i < a.size();) {
    const size_t left = a.size() - i;
    if (Is(a[i], "COUNT") && left >= 2) {
      auto c = String2ll(a[i + 1]);
      if (!c) return Reply::Error(kNotInteger);
      if (*c < 1) return Reply::Error(kSyntax);
      i += 2;
    } else if (Is(a[i], "MATCH") && left >= 2) {
      pattern = a[i + 1];
      i += 2;
    } else {
      return Reply::Error(kSyntax);
    }
  }
  std::vector<Reply> found;
  if (*cursor == 0)
    for (const auto& [first, second] : items) {
      if (!GlobMatch(pattern, first)) continue;
      found.push_back(Reply::Bulk(first));
      if (pairs) found.push_back(Reply::Bulk(second));
    }
  return Reply::Array({Reply::Bulk("0"), Reply::Array(std::move(found))});
}

Reply Commands::Scan(Emulator& em, const Argv& a) {
  const auto parsed = ScanCursor(a[1]);
  if (!parsed) return Reply::Error(kInvalidCursor);
  const unsigned long long cursor = *parsed;
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

Reply Commands::PTtl(Emulator& em, const Argv& a) {
  Entry* e = em.lookup(a[1]);
  if (!e) return Reply::Integer(-2);
  if (e->expire_at == -1) return Reply::Integer(-1);
  return Reply::Integer(std::max<int64_t>(0, e->expire_at - em.now_));
}

Reply Commands::Ping(Emulator&, const Argv& a) {
  if (a.size() > 2) return Reply::Error(WrongArity("ping"));
  return a.size() == 2 ? Reply::Bulk(a[1]) : Reply::Status("PONG");
}

// timeCommand: the clock read now, to the microsecond where the clock has them (serve's wall
// clock), not the instant the command started at.
Reply Commands::Time(Emulator& em, const Argv&) {
  const int64_t us = em.clock_.now_us();
  return Reply::Array(
      {Reply::Bulk(std::to_string(us / 1'000'000)), Reply::Bulk(std::to_string(us % 1'000'000))});
}

// msetGenericCommand with nx: nothing is set if any key exists.
Reply Commands::MSetNx(Emulator& em, const Argv& a) {
  if (a.size() % 2 == 0) return Reply::Error(WrongArity("msetnx"));
  for (size_t j = 1; j + 1 < a.size(); j += 2)
    if (em.lookup(a[j])) return Reply::Integer(0);
  MSet(em, a);
  return Reply::Integer(1);
}

// GETSET is SET ... GET (getsetCommand: the old value read as GET reads it, then setKey).
Reply Commands::GetSet(Emulator& em, const Argv& a) { return Set(em, {"SET", a[1], a[2], "GET"}); }

// checkStringLength: offset + length within proto-max-bulk-len (and without overflow).
std::optional<Reply> Commands::TooLong(const Emulator& em, int64_t size, int64_t append) {
  const auto total =
      static_cast<int64_t>(static_cast<uint64_t>(size) + static_cast<uint64_t>(append));
  if (total > ConfigInt(em, "proto-max-bulk-len") || total < size || total < append)
    return Reply::Error("ERR string exceeds maximum allowed size (proto-max-bulk-len)");
  return std::nullopt;
}

// setrangeCommand: the offset first, then the key; an empty value writes nothing.
Reply Commands::SetRange(Emulator& em, const Argv& a) {
  const auto offset = String2ll(a[2]);
  if (!offset) return Reply::Error(kNotInteger);
  if (*offset < 0) return Reply::Error("ERR offset is out of range");
  const std::string& value = a[3];
  Entry* e = em.lookup(a[1]);
  std::string* s = As<std::string>(e);
  if (e && !s) return WrongType();
  if (value.empty()) return Reply::Integer(s ? static_cast<int64_t>(s->size()) : 0);
  if (auto error = TooLong(em, *offset, static_cast<int64_t>(value.size()))) return *error;
  if (!s) s = &std::get<std::string>((em.keys_[a[1]] = Entry{std::string(), -1}).value);
  const auto end = static_cast<size_t>(*offset) + value.size();
  if (s->size() < end) s->resize(end, '\0');
  s->replace(static_cast<size_t>(*offset), value.size(), value);
  em.touch(a[1]);
  return Reply::Integer(static_cast<int64_t>(s->size()));
}

// getrangeCommand (and SUBSTR): both indexes, then the key; negative indexes count from the end.
Reply Commands::GetRange(Emulator& em, const Argv& a) {
  const auto start_arg = String2ll(a[2]);
  const auto end_arg = start_arg ? String2ll(a[3]) : std::nullopt;
  if (!start_arg || !end_arg) return Reply::Error(kNotInteger);
  Entry* e = em.lookup(a[1]);
  if (!e) return Reply::Bulk("");
  const std::string* s = As<std::string>(e);
  if (!s) return WrongType();
  int64_t start = *start_arg, end = *end_arg;
  const auto len = static_cast<int64_t>(s->size());
  if (start < 0 && end < 0 && start > end) return Reply::Bulk("");
  if (start < 0) start += len;
  if (end < 0) end += len;
  if (start < 0) start = 0;
  if (end < 0) end = 0;
  if (end >= len) end = len - 1;
  if (start > end || len == 0) return Reply::Bulk("");
  return Reply::Bulk(s->substr(static_cast<size_t>(start), static_cast<size_t>(end - start + 1)));
}

// getBitOffsetFromArgument: a non-negative integer whose byte is below proto-max-bulk-len.
std::optional<uint64_t> Commands::BitOffset(const Emulator& em, const std::string& arg) {
  const auto offset = String2ll(arg);
  if (!offset || *offset < 0 || (*offset >> 3) >= ConfigInt(em, "proto-max-bulk-len"))
    return std::nullopt;
  return static_cast<uint64_t>(*offset);
}

Reply Commands::GetBit(Emulator& em, const Argv& a) {
  const auto offset = BitOffset(em, a[2]);
  if (!offset) return Reply::Error("ERR bit offset is not an integer or out of range");
  Entry* e = em.lookup(a[1]);
  if (!e) return Reply::Integer(0);
  const std::string* s = As<std::string>(e);
  if (!s) return WrongType();
  const uint64_t byte = *offset >> 3;
  const int bit = 7 - static_cast<int>(*offset & 7);
  return Reply::Integer(byte < s->size() && (static_cast<uint8_t>((*s)[byte]) >> bit) & 1 ? 1 : 0);
}

// setbitCommand: the offset, then the bit, then the key (lookupStringForBitCommand grows it
// with zero bytes); the reply is the bit's old value.
Reply Commands::SetBit(Emulator& em, const Argv& a) {
  const auto offset = BitOffset(em, a[2]);
  if (!offset) return Reply::Error("ERR bit offset is not an integer or out of range");
  const auto on = String2ll(a[3]);
  if (!on || (*on & ~1)) return Reply::Error("ERR bit is not an integer or out of range");
  Entry* e = em.lookup(a[1]);
  std::string* s = As<std::string>(e);
  if (e && !s) return WrongType();
  bool dirty = false;
  if (!s) {
    s = &std::get<std::string>((em.keys_[a[1]] = Entry{std::string(), -1}).value);
    dirty = true;
  }
  const uint64_t byte = *offset >> 3;
  if (s->size() < byte + 1) {
    s->resize(byte + 1, '\0');
    dirty = true;
  }
  const int bit = 7 - static_cast<int>(*offset & 7);
  auto& cell = reinterpret_cast<unsigned char&>((*s)[byte]);
  const int old = (cell >> bit) & 1;
  if (dirty || old != *on) {
    cell = static_cast<unsigned char>((cell & ~(1 << bit)) | (*on << bit));
    em.touch(a[1]);
  }
  return Reply::Integer(old);
}

// lcsCommand, line by line (t_string.c): the table of LCS lengths, then the walk back from its
// corner that builds the string and the matched ranges (emitted from the last match to the
// first).
Reply Commands::Lcs(Emulator& em, const Argv& argv) {
  Entry* ea = em.lookup(argv[1]);
  Entry* eb = em.lookup(argv[2]);
  if ((ea && !As<std::string>(ea)) || (eb && !As<std::string>(eb)))
    return Reply::Error("ERR The specified keys must contain string values");
  const std::string a = ea ? *As<std::string>(ea) : std::string();
  const std::string b = eb ? *As<std::string>(eb) : std::string();
  bool getlen = false, getidx = false, withmatchlen = false;
  int64_t minmatchlen = 0;
  for (size_t j = 3; j < argv.size(); ++j) {
    const bool moreargs = j + 1 < argv.size();
    if (Is(argv[j], "IDX")) {
      getidx = true;
    } else if (Is(argv[j], "LEN")) {
      getlen = true;
    } else if (Is(argv[j], "WITHMATCHLEN")) {
      withmatchlen = true;
    } else if (Is(argv[j], "MINMATCHLEN") && moreargs) {
      const auto n = String2ll(argv[j + 1]);
      if (!n) return Reply::Error(kNotInteger);
      minmatchlen = std::max<int64_t>(*n, 0);
      ++j;
    } else {
      return Reply::Error(kSyntax);
    }
  }
  if (getlen && getidx)
    return Reply::Error("ERR If you want both the length and indexes, please just use IDX.");
  const auto alen = static_cast<uint32_t>(a.size()), blen = static_cast<uint32_t>(b.size());
  const uint64_t cells = (uint64_t{alen} + 1) * (uint64_t{blen} + 1);
  if (cells * sizeof(uint32_t) > static_cast<uint64_t>(ConfigInt(em, "proto-max-bulk-len")))
    return Reply::Error(
        "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
  std::vector<uint32_t> lcs(cells);
  const auto at = [&](uint32_t i, uint32_t j) -> uint32_t& { return lcs[j + i * (blen + 1)]; };
  for (uint32_t i = 0; i <= alen; i++)
    for (uint32_t j = 0; j <= blen; j++) {
      if (i == 0 || j == 0)
        at(i, j) = 0;
      else if (a[i - 1] == b[j - 1])
        at(i, j) = at(i - 1, j - 1) + 1;
      else
        at(i, j) = std::max(at(i - 1, j), at(i, j - 1));
    }
  uint32_t idx = at(alen, blen);
  std::string result;
  uint32_t arange_start = alen, arange_end = 0, brange_start = 0, brange_end = 0;
  const bool computelcs = getidx || !getlen;
  if (computelcs) result.assign(idx, '\0');
  std::vector<Reply> matches;
  uint32_t i = alen, j = blen;
  while (computelcs && i > 0 && j > 0) {
    bool emit_range = false;
    if (a[i - 1] == b[j - 1]) {
      result[idx - 1] = a[i - 1];
      if (arange_start == alen) {
        arange_start = i - 1;
        arange_end = i - 1;
        brange_start = j - 1;
        brange_end = j - 1;
      } else if (arange_start == i && brange_start == j) {
        arange_start--;
        brange_start--;
      } else {
        emit_range = true;
      }
      if (arange_start == 0 || brange_start == 0) emit_range = true;
      idx--;
      i--;
      j--;
    } else {
      if (at(i - 1, j) > at(i, j - 1))
        i--;
      else
        j--;
      if (arange_start != alen) emit_range = true;
    }
    const uint32_t match_len = arange_end - arange_start + 1;
    if (emit_range) {
      if ((minmatchlen == 0 || match_len >= minmatchlen) && getidx) {
        std::vector<Reply> range = {
            Reply::Array({Reply::Integer(arange_start), Reply::Integer(arange_end)}),
            Reply::Array({Reply::Integer(brange_start), Reply::Integer(brange_end)})};
        if (withmatchlen) range.push_back(Reply::Integer(match_len));
        matches.push_back(Reply::Array(std::move(range)));
      }
      arange_start = alen;  // restart at the next match
    }
  }
  if (getidx)
    return Reply::Array({Reply::Bulk("matches"), Reply::Array(std::move(matches)),
                         Reply::Bulk("len"), Reply::Integer(at(alen, blen))});
  if (getlen) return Reply::Integer(at(alen, blen));
  return Reply::Bulk(result);
}

}  // namespace testbed::sim
