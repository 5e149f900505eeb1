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

namespace testbed::state {

bool StateError::transport() const {
  const std::string w = what();
  return w.find("timed out") != std::string::npos || w.find("unavailable") != std::string::npos;
}

bool StateError::quota() const {
  return std::string(what()).find("quota exceeded") != std::string::npos;
}

std::string IsoTime(int64_t ms) {
  // Date.prototype.toISOString for years 0000-9999: "2026-01-01T00:00:01.234Z". The civil
  // time comes from Abseil; the digits are written here (FormatTime parses its format string
  // on every call, and this runs for every envelope a port writes).
  const absl::Time t = absl::FromUnixMillis(ms);
  const absl::CivilSecond c = absl::ToCivilSecond(t, absl::UTCTimeZone());
  const int64_t milli = ((ms % 1000) + 1000) % 1000;
  char buf[25] = "0000-00-00T00:00:00.000Z";
  auto put = [&buf](int at, int64_t v, int width) {
    for (int i = width - 1; i >= 0; --i, v /= 10) buf[at + i] = static_cast<char>('0' + v % 10);
  };
  put(0, c.year(), 4);
  put(5, c.month(), 2);
  put(8, c.day(), 2);
  put(11, c.hour(), 2);
  put(14, c.minute(), 2);
  put(17, c.second(), 2);
  put(20, milli, 3);
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

}  // namespace testbed::state
