// The emulator's counter, expiry and small string commands (sim/emulator_commands.h): INCR and
// its kinds, APPEND, STRLEN, GETDEL, SETNX, SETEX, PSETEX, EXPIRE and its kinds, TTL, PERSIST.
// Each follows its Redis 7.0 counterpart in t_string.c or expire.c, in the same order of checks.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <climits>
#include <cstdint>
#include <string>

#include "sim/emulator_commands.h"
#include "sim/redis_text.h"

namespace testbed::sim {

using namespace redis_text;

// incrDecrCommand: the value must be a string holding an integer; an overflow is an error; an
// existing key keeps its time to live.
Reply Commands::IncrDecr(Emulator& em, const std::string& key, int64_t incr) {
  Entry* e = em.lookup(key);
  int64_t value = 0;
  if (e) {
    auto* s = As<std::string>(e);
    if (!s) return WrongType();
    const auto parsed = String2ll(*s);
    if (!parsed) return Reply::Error(kNotInteger);
    value = *parsed;
  }
  if ((incr < 0 && value < 0 && incr < (LLONG_MIN - value)) ||
      (incr > 0 && value > 0 && incr > (LLONG_MAX - value)))
    return Reply::Error(kOverflow);
  value += incr;
  if (e)
    e->value = std::to_string(value);
  else
    em.keys_[key] = Entry{std::to_string(value), -1};
  em.touch(key);
  return Reply::Integer(value);
}

// expireGenericCommand: `when` in seconds or milliseconds from `base` (now, or 0 for the AT
// kinds), the NX / XX / GT / LT conditions (no expiry counts as an infinite one), and a time
// already past deletes the key.
Reply Commands::ExpireGeneric(Emulator& em, const Argv& a, int64_t base, bool seconds,
                              const char* name) {
  bool nx = false, xx = false, gt = false, lt = false;
  for (size_t j = 3; j < a.size(); ++j) {
    if (Is(a[j], "NX"))
      nx = true;
    else if (Is(a[j], "XX"))
      xx = true;
    else if (Is(a[j], "GT"))
      gt = true;
    else if (Is(a[j], "LT"))
      lt = true;
    else
      return Reply::Error("ERR Unsupported option " + a[j]);
  }
  if (nx && (xx || gt || lt))
    return Reply::Error("ERR NX and XX, GT or LT options at the same time are not compatible");
  if (gt && lt) return Reply::Error("ERR GT and LT options at the same time are not compatible");
  auto when = String2ll(a[2]);
  if (!when) return Reply::Error(kNotInteger);
  if (seconds) {
    if (*when > LLONG_MAX / 1000 || *when < LLONG_MIN / 1000)
      return Reply::Error(InvalidExpire(name));
    *when *= 1000;
  }
  if (*when > LLONG_MAX - base) return Reply::Error(InvalidExpire(name));
  *when += base;
  Entry* e = em.lookup(a[1]);
  if (!e) return Reply::Integer(0);
  const int64_t current = e->expire_at;
  if ((nx && current != -1) || (xx && current == -1) ||
      (gt && (*when <= current || current == -1)) || (lt && current != -1 && *when >= current))
    return Reply::Integer(0);
  if (*when <= em.now_) {
    em.erase_key(a[1]);
  } else {
    e->expire_at = *when;
    em.touch(a[1]);
  }
  return Reply::Integer(1);
}

// ttlGenericCommand with output_abs: the expiry as a time (seconds rounded, or ms).
Reply Commands::ExpireTime(Emulator& em, const Argv& a) {
  Entry* e = em.lookup(a[1]);
  if (!e) return Reply::Integer(-2);
  if (e->expire_at == -1) return Reply::Integer(-1);
  return Reply::Integer((std::max<int64_t>(0, e->expire_at) + 500) / 1000);
}

Reply Commands::PExpireTime(Emulator& em, const Argv& a) {
  Entry* e = em.lookup(a[1]);
  if (!e) return Reply::Integer(-2);
  return Reply::Integer(e->expire_at == -1 ? -1 : std::max<int64_t>(0, e->expire_at));
}

// incrbyfloatCommand: long doubles as Redis reads them (string2ld) and writes them (ld2string,
// human form: %.17Lf without trailing zeros); the key keeps its time to live.
// string2ld: strtold over the whole text, no leading space, at most 5 KB; not NaN, and no
// overflow or underflow.
bool Commands::ReadLongDouble(const std::string& s, long double* out) {
  if (s.empty() || s.size() >= 5 * 1024 || std::isspace(static_cast<unsigned char>(s[0])))
    return false;
  char* end = nullptr;
  errno = 0;
  const long double v = std::strtold(s.c_str(), &end);
  if (end != s.c_str() + s.size() || std::isnan(v) || errno == EINVAL ||
      (errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || v == 0)))
    return false;
  *out = v;
  return true;
}

// ld2string with LD_STR_HUMAN: %.17Lf, trailing zeros (and a bare '.') dropped, "-0" as "0";
// nullopt when it does not fit Redis's buffer.
std::optional<std::string> Commands::FormatLongDouble(long double value) {
  char buf[5 * 1024];
  int n = std::snprintf(buf, sizeof buf, "%.17Lf", value);
  if (n < 0 || n >= static_cast<int>(sizeof buf)) return std::nullopt;
  if (std::strchr(buf, '.')) {
    while (buf[n - 1] == '0') --n;
    if (buf[n - 1] == '.') --n;
  }
  std::string out(buf, static_cast<size_t>(n));
  if (out == "-0") out = "0";
  return out;
}

Reply Commands::IncrByFloat(Emulator& em, const Argv& a) {
  Entry* e = em.lookup(a[1]);
  auto* s = As<std::string>(e);
  if (e && !s) return WrongType();
  long double value = 0, incr = 0;
  if ((s && !ReadLongDouble(*s, &value)) || !ReadLongDouble(a[2], &incr))
    return Reply::Error("ERR value is not a valid float");
  value += incr;
  if (std::isnan(value) || std::isinf(value))
    return Reply::Error("ERR increment would produce NaN or Infinity");
  const std::optional<std::string> out = FormatLongDouble(value);
  if (!out) return Reply::Error("ERR value is not a valid float");
  if (e)
    *s = *out;
  else
    em.keys_[a[1]] = Entry{*out, -1};
  em.touch(a[1]);
  return Reply::Bulk(*out);
}

// setexCommand and psetexCommand (getExpireMillisecondsOrReply, then the write).
Reply Commands::SetWithExpire(Emulator& em, const Argv& a, bool seconds, const char* name) {
  auto ms = String2ll(a[2]);
  if (!ms) return Reply::Error(kNotInteger);
  if (*ms <= 0 || (seconds && *ms > LLONG_MAX / 1000)) return Reply::Error(InvalidExpire(name));
  if (seconds) *ms *= 1000;
  if (*ms > LLONG_MAX - em.now_) return Reply::Error(InvalidExpire(name));
  em.keys_[a[1]] = Entry{a[3], *ms + em.now_};
  em.touch(a[1]);
  return Reply::Ok();
}

Reply Commands::Incr(Emulator& em, const Argv& a) { return IncrDecr(em, a[1], 1); }
Reply Commands::Decr(Emulator& em, const Argv& a) { return IncrDecr(em, a[1], -1); }

Reply Commands::IncrBy(Emulator& em, const Argv& a) {
  const auto incr = String2ll(a[2]);
  if (!incr) return Reply::Error(kNotInteger);
  return IncrDecr(em, a[1], *incr);
}

Reply Commands::DecrBy(Emulator& em, const Argv& a) {
  const auto incr = String2ll(a[2]);
  if (!incr) return Reply::Error(kNotInteger);
  if (*incr == LLONG_MIN) return Reply::Error("ERR decrement would overflow");
  return IncrDecr(em, a[1], -*incr);
}

Reply Commands::Append(Emulator& em, const Argv& a) {
  Entry* e = em.lookup(a[1]);
  if (!e) {
    em.keys_[a[1]] = Entry{a[2], -1};
    em.touch(a[1]);
    return Reply::Integer(static_cast<int64_t>(a[2].size()));
  }
  auto* s = As<std::string>(e);
  if (!s) return WrongType();
  if (auto error = TooLong(em, static_cast<int64_t>(s->size()), static_cast<int64_t>(a[2].size())))
    return *error;
  s->append(a[2]);
  em.touch(a[1]);
  return Reply::Integer(static_cast<int64_t>(s->size()));
}

Reply Commands::StrLen(Emulator& em, const Argv& a) {
  Entry* e = em.lookup(a[1]);
  if (!e) return Reply::Integer(0);
  auto* s = As<std::string>(e);
  return s ? Reply::Integer(static_cast<int64_t>(s->size())) : WrongType();
}

Reply Commands::GetDel(Emulator& em, const Argv& a) {
  Entry* e = em.lookup(a[1]);
  if (!e) return Reply::Nil();
  auto* s = As<std::string>(e);
  if (!s) return WrongType();
  Reply out = Reply::Bulk(*s);
  em.erase_key(a[1]);
  return out;
}

Reply Commands::SetNx(Emulator& em, const Argv& a) {
  if (em.lookup(a[1])) return Reply::Integer(0);
  em.keys_[a[1]] = Entry{a[2], -1};
  em.touch(a[1]);
  return Reply::Integer(1);
}

Reply Commands::SetEx(Emulator& em, const Argv& a) { return SetWithExpire(em, a, true, "setex"); }
Reply Commands::PSetEx(Emulator& em, const Argv& a) {
  return SetWithExpire(em, a, false, "psetex");
}

Reply Commands::PExpire(Emulator& em, const Argv& a) {
  return ExpireGeneric(em, a, em.now_, false, "pexpire");
}
Reply Commands::Expire(Emulator& em, const Argv& a) {
  return ExpireGeneric(em, a, em.now_, true, "expire");
}
Reply Commands::ExpireAt(Emulator& em, const Argv& a) {
  return ExpireGeneric(em, a, 0, true, "expireat");
}
Reply Commands::PExpireAt(Emulator& em, const Argv& a) {
  return ExpireGeneric(em, a, 0, false, "pexpireat");
}

Reply Commands::Ttl(Emulator& em, const Argv& a) {
  Entry* e = em.lookup(a[1]);
  if (!e) return Reply::Integer(-2);
  if (e->expire_at == -1) return Reply::Integer(-1);
  const int64_t ttl = std::max<int64_t>(0, e->expire_at - em.now_);
  return Reply::Integer((ttl + 500) / 1000);
}

Reply Commands::Persist(Emulator& em, const Argv& a) {
  Entry* e = em.lookup(a[1]);
  if (!e || e->expire_at == -1) return Reply::Integer(0);
  e->expire_at = -1;
  em.touch(a[1]);
  return Reply::Integer(1);
}

}  // namespace testbed::sim
