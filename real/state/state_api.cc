// Deviation, written down: JSON.stringify works on JavaScript numbers (doubles), so a value
// such as 12345678901234567 is already 12345678901234568 in the SDK; nlohmann keeps 64-bit
// integers exact. Values in the property suites stay within 2^53 where both agree.
// Doubles print as Number.prototype.toString does: 2 (not 2.0), 1e-7 (not 1e-07).
#include "real/state/state_api.h"

#include <absl/time/civil_time.h>
#include <absl/time/time.h>

#include "model/json_text.h"

#include <cmath>
#include <ctime>

namespace testbed::real::state {

bool StateError::transport() const {
  const std::string w = what();
  return w.find("timed out") != std::string::npos || w.find("unavailable") != std::string::npos;
}

bool StateError::quota() const {
  return std::string(what()).find("quota exceeded") != std::string::npos;
}

std::string IsoTime(int64_t ms) {
  // Date.prototype.toISOString for years 0000-9999: "2026-01-01T00:00:01.234Z". The civil
  // date comes from Abseil, once per day a thread meets (a run spans a few virtual days at
  // most); the time of day is arithmetic, and the digits are written here (FormatTime parses
  // its format string on every call, and this runs for every envelope a port writes).
  constexpr int64_t kDayMs = 86'400'000;
  const int64_t day = ms / kDayMs - (ms % kDayMs < 0 ? 1 : 0);
  thread_local int64_t cached_day = INT64_MIN;
  thread_local char buf[25] = "0000-00-00T00:00:00.000Z";
  auto put = [](int at, int64_t v, int width) {
    for (int i = width - 1; i >= 0; --i, v /= 10) buf[at + i] = static_cast<char>('0' + v % 10);
  };
  if (day != cached_day) {
    const absl::CivilDay c =
        absl::ToCivilDay(absl::FromUnixMillis(day * kDayMs), absl::UTCTimeZone());
    put(0, c.year(), 4);
    put(5, c.month(), 2);
    put(8, c.day(), 2);
    cached_day = day;
  }
  const int64_t in_day = ms - day * kDayMs;
  put(11, in_day / 3'600'000, 2);
  put(14, in_day / 60'000 % 60, 2);
  put(17, in_day / 1000 % 60, 2);
  put(20, in_day % 1000, 3);
  return std::string(buf, 24);
}

std::optional<int64_t> ParseIsoTime(const std::string& iso) {
  int y, mo, d, h, mi, sec, ms;
  char z = 0;
  if (std::sscanf(iso.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3d%c", &y, &mo, &d, &h, &mi, &sec, &ms,
                  &z) != 8 ||
      z != 'Z')
    return std::nullopt;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = sec;
  return static_cast<int64_t>(timegm(&tm)) * 1000 + ms;
}

std::string Stringify(const Json& v) { return model::JsonStringify(v); }

WriteValue::WriteValue(const nlohmann::ordered_json& v) : json(v), text(model::JsonStringify(v)) {}

std::string WriteValue::stringify() const { return text.empty() ? Stringify(json) : text; }

nlohmann::ordered_json StateValue::ordered_value() const {
  // The envelope's order only while it still holds `value` (a wrapper may have changed it).
  if (!envelope.empty()) {
    nlohmann::ordered_json parsed = model::JsonParseOrdered(envelope);
    if (parsed.is_object() && parsed.contains("value") && Json(parsed["value"]) == value)
      return parsed["value"];
  }
  return nlohmann::ordered_json(value);
}

}  // namespace testbed::real::state
