// Deviation, written down: JSON.stringify works on JavaScript numbers (doubles), so a value
// such as 12345678901234567 is already 12345678901234568 in the SDK; nlohmann keeps 64-bit
// integers exact. Values in the property suites stay within 2^53 where both agree.
// Doubles print as Number.prototype.toString does: 2 (not 2.0), 1e-7 (not 1e-07).
#include "real/state/state_api.h"

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
  const time_t secs = static_cast<time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(ms % 1000));
  return buf;
}

std::optional<int64_t> ParseIsoTime(const std::string& iso) {
  int y, mo, d, h, mi, sec, ms;
  char z = 0;
  if (std::sscanf(iso.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3d%c", &y, &mo, &d, &h, &mi, &sec, &ms, &z) != 8 ||
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
