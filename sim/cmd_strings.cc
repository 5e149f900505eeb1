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

Reply Commands::Set(Emulator& em, const Argv& a) {
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
  em.touch(a[1]);
  return Reply::Ok();
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
