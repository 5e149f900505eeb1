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

Reply Commands::Scan(Emulator& em, const Argv& a) {
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

Reply Commands::Time(Emulator& em, const Argv&) {
  return Reply::Array({Reply::Bulk(std::to_string(em.now_ / 1000)),
                       Reply::Bulk(std::to_string((em.now_ % 1000) * 1000))});
}

}  // namespace testbed::sim
