#include "sim/redis_text.h"

#include <cctype>
#include <cerrno>
#include <climits>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace testbed::sim::redis_text {

std::string WrongArity(std::string_view lower_name) {
  return "ERR wrong number of arguments for '" + std::string(lower_name) + "' command";
}

std::string InvalidExpire(std::string_view lower_name) {
  return "ERR invalid expire time in '" + std::string(lower_name) + "' command";
}

// util.c string2ll, step by step: no spaces, no '+', no leading zeros, at most 20 bytes.
std::optional<int64_t> String2ll(std::string_view s) {
  const size_t slen = s.size();
  size_t plen = 0;
  if (slen == 0 || slen >= 21) return std::nullopt;
  if (slen == 1 && s[0] == '0') return 0;
  bool negative = false;
  if (s[0] == '-') {
    negative = true;
    plen++;
    if (plen == slen) return std::nullopt;
  }
  unsigned long long v;
  if (s[plen] >= '1' && s[plen] <= '9') {
    v = s[plen] - '0';
    plen++;
  } else {
    return std::nullopt;
  }
  while (plen < slen && s[plen] >= '0' && s[plen] <= '9') {
    if (v > ULLONG_MAX / 10) return std::nullopt;
    v *= 10;
    if (v > ULLONG_MAX - static_cast<unsigned>(s[plen] - '0')) return std::nullopt;
    v += s[plen] - '0';
    plen++;
  }
  if (plen < slen) return std::nullopt;
  if (negative) {
    if (v > static_cast<unsigned long long>(-(LLONG_MIN + 1)) + 1) return std::nullopt;
    return static_cast<int64_t>(-v);
  }
  if (v > static_cast<unsigned long long>(LLONG_MAX)) return std::nullopt;
  return static_cast<int64_t>(v);
}

// object.c getDoubleFromObject for a string argument.
std::optional<double> PlainInteger(const char* p, size_t n) {
  const bool negative = n > 0 && p[0] == '-';
  if (negative) ++p, --n;
  if (n == 0 || n > 15) return std::nullopt;
  int64_t v = 0;
  for (size_t i = 0; i < n; ++i) {
    if (p[i] < '0' || p[i] > '9') return std::nullopt;
    v = v * 10 + (p[i] - '0');
  }
  const double d = static_cast<double>(v);
  return negative ? -d : d;
}

std::optional<double> ParseDouble(const std::string& s) {
  if (auto v = PlainInteger(s.data(), s.size())) return v;
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(s.c_str(), &end);
  if (static_cast<size_t>(end - s.c_str()) != s.size()) return std::nullopt;
  if (errno == ERANGE && (value == HUGE_VAL || value == -HUGE_VAL || value == 0))
    return std::nullopt;
  if (std::isnan(value)) return std::nullopt;
  return value;
}

// t_zset.c zslParseRange, one bound: '(' makes it open; note that, unlike getDoubleFromObject,
// leading spaces and an empty string are accepted (strtod semantics).
std::optional<ScoreBound> ParseScoreBound(const std::string& s) {
  ScoreBound b;
  const char* p = s.c_str();
  if (p[0] == '(') {
    b.exclusive = true;
    p++;
  }
  const std::string_view rest(p, s.size() - (p - s.c_str()));
  if (auto v = PlainInteger(rest.data(), rest.size())) {
    b.value = *v;
    return b;
  }
  // The unbounded ends the scripts pass, as strtod reads them.
  if (rest == "-inf" || rest == "+inf" || rest == "inf") {
    b.value = rest[0] == '-' ? -HUGE_VAL : HUGE_VAL;
    return b;
  }
  char* end = nullptr;
  b.value = std::strtod(p, &end);
  if (end[0] != '\0' || std::isnan(b.value)) return std::nullopt;
  return b;
}

// printf("%.17g", d) into `out` (replacing what it held, keeping its buffer), with a fast path
// of the same bytes: an integral double below 1e17 in magnitude is what %.17g prints as plain
// decimal digits (a ZADD score, a PXAT time), written by to_chars. -0 keeps its sign through
// %.17g. snprintf took 3 600 instructions a call.
static void PercentG17To(double d, std::string& out) {
  char buf[64];
  size_t n;
  if (d > -1e17 && d < 1e17 && d == static_cast<double>(static_cast<int64_t>(d)) &&
      !(d == 0 && std::signbit(d)))
    n = static_cast<size_t>(std::to_chars(buf, buf + sizeof buf, static_cast<int64_t>(d)).ptr -
                            buf);
  else
    n = static_cast<size_t>(std::snprintf(buf, sizeof buf, "%.17g", d));
  out.clear();
  out.append(buf, n);
}

static std::string PercentG17(double d) {
  std::string out;
  PercentG17To(d, out);
  return out;
}

std::string FormatDouble(double d) {
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  return PercentG17(d);
}

std::string FormatLuaArgNumber(double d) { return PercentG17(d); }

void FormatLuaArgNumberTo(double d, std::string& out) { PercentG17To(d, out); }

// util.c stringmatchlen, ported as is (including its treatment of a trailing '\' and '[').
static bool MatchImpl(const char* pattern, int patternLen, const char* string, int stringLen,
                      bool nocase, int nesting) {
  if (nesting > 1000) return false;
  while (patternLen && stringLen) {
    switch (pattern[0]) {
      case '*':
        while (patternLen && pattern[1] == '*') {
          pattern++;
          patternLen--;
        }
        if (patternLen == 1) return true;
        while (stringLen) {
          if (MatchImpl(pattern + 1, patternLen - 1, string, stringLen, nocase, nesting + 1))
            return true;
          string++;
          stringLen--;
        }
        return false;
      case '?':
        string++;
        stringLen--;
        break;
      case '[': {
        pattern++;
        patternLen--;
        const bool negate = pattern[0] == '^';
        if (negate) {
          pattern++;
          patternLen--;
        }
        bool match = false;
        while (true) {
          if (pattern[0] == '\\' && patternLen >= 2) {
            pattern++;
            patternLen--;
            if (pattern[0] == string[0]) match = true;
          } else if (pattern[0] == ']') {
            break;
          } else if (patternLen == 0) {
            pattern--;
            patternLen++;
            break;
          } else if (patternLen >= 3 && pattern[1] == '-') {
            int start = static_cast<unsigned char>(pattern[0]);
            int end = static_cast<unsigned char>(pattern[2]);
            int c = static_cast<unsigned char>(string[0]);
            if (start > end) std::swap(start, end);
            if (nocase) {
              start = std::tolower(start);
              end = std::tolower(end);
              c = std::tolower(c);
            }
            pattern += 2;
            patternLen -= 2;
            if (c >= start && c <= end) match = true;
          } else {
            if (!nocase) {
              if (pattern[0] == string[0]) match = true;
            } else if (std::tolower(static_cast<unsigned char>(pattern[0])) ==
                       std::tolower(static_cast<unsigned char>(string[0]))) {
              match = true;
            }
          }
          pattern++;
          patternLen--;
        }
        if (negate) match = !match;
        if (!match) return false;
        string++;
        stringLen--;
        break;
      }
      case '\\':
        if (patternLen >= 2) {
          pattern++;
          patternLen--;
        }
        [[fallthrough]];
      default:
        if (!nocase) {
          if (pattern[0] != string[0]) return false;
        } else if (std::tolower(static_cast<unsigned char>(pattern[0])) !=
                   std::tolower(static_cast<unsigned char>(string[0]))) {
          return false;
        }
        string++;
        stringLen--;
        break;
    }
    pattern++;
    patternLen--;
    if (stringLen == 0) {
      while (*pattern == '*') {
        pattern++;
        patternLen--;
      }
      break;
    }
  }
  return patternLen == 0 && stringLen == 0;
}

bool GlobMatch(std::string_view pattern, std::string_view text, bool nocase) {
  // stringmatchlen reads pattern[1] past the end on a trailing '*'; give it a terminator.
  const std::string p(pattern), t(text);
  return MatchImpl(p.c_str(), static_cast<int>(p.size()), t.c_str(), static_cast<int>(t.size()),
                   nocase, 0);
}

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string ToUpper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace testbed::sim::redis_text
