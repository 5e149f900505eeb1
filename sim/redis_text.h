// Redis 7.0's parsing and formatting rules, ported so the emulator accepts and prints exactly
// what redis-server does: string2ll (strict integers), getDoubleFromObject, zslParseRange,
// the glob matcher of KEYS/SCAN MATCH, and "%.17g" doubles. Error strings live here too,
// copied word for word from Redis 7.0 and confirmed by the differential tests.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace testbed::sim::redis_text {

inline constexpr const char* kWrongType =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
inline constexpr const char* kNotInteger = "ERR value is not an integer or out of range";
inline constexpr const char* kNotFloat = "ERR value is not a valid float";
inline constexpr const char* kSyntax = "ERR syntax error";
inline constexpr const char* kMinMaxNotFloat = "ERR min or max is not a float";
inline constexpr const char* kLexRange = "ERR min or max not valid string range item";
inline constexpr const char* kHashNotInteger = "ERR hash value is not an integer";
inline constexpr const char* kOverflow = "ERR increment or decrement would overflow";
inline constexpr const char* kInvalidStreamId =
    "ERR Invalid stream ID specified as stream command argument";
inline constexpr const char* kXaddSmaller =
    "ERR The ID specified in XADD is equal or smaller than the target stream top item";
inline constexpr const char* kXaddZero = "ERR The ID specified in XADD must be greater than 0-0";
inline constexpr const char* kInvalidCursor = "ERR invalid cursor";
inline constexpr const char* kNoScript = "NOSCRIPT No matching script. Please use EVAL.";
inline constexpr const char* kNumKeysNegative = "ERR Number of keys can't be negative";
inline constexpr const char* kNumKeysTooMany =
    "ERR Number of keys can't be greater than number of args";

std::string WrongArity(std::string_view lower_name);     // ERR wrong number of arguments for ...
std::string InvalidExpire(std::string_view lower_name);  // ERR invalid expire time in ...

std::optional<int64_t> String2ll(std::string_view s);
std::optional<double> ParseDouble(const std::string& s);  // getDoubleFromObject
struct ScoreBound {
  double value = 0;
  bool exclusive = false;
};
std::optional<ScoreBound> ParseScoreBound(const std::string& s);
// strtod's value for an optional '-' and 1 to 15 decimal digits with nothing else (such an
// integer is exact as a double, so no rounding can differ); nullopt for any other text. A fast
// path for scores, times and Lua's tonumber.
std::optional<double> PlainInteger(const char* p, size_t n);  // zslParseRange, one side
std::string FormatDouble(double d);                           // addReplyDouble, RESP2
std::string FormatLuaArgNumber(double d);                     // redis.call("%.17g")
void FormatLuaArgNumberTo(double d, std::string& out);        // the same, into `out`
bool GlobMatch(std::string_view pattern, std::string_view text, bool nocase = false);
std::string ToLower(std::string_view s);
std::string ToUpper(std::string_view s);

}  // namespace testbed::sim::redis_text
