// Deviation, written down: JSON.stringify works on JavaScript numbers (doubles), so a value
// such as 12345678901234567 is already 12345678901234568 in the SDK; nlohmann keeps 64-bit
// integers exact. Values in the property suites stay within 2^53 where both agree.
// Doubles print as Number.prototype.toString does: 2 (not 2.0), 1e-7 (not 1e-07).
#include "real/state/state_api.h"

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

namespace {
// Number.prototype.toString for a double that nlohmann would print as "2.0" or "1e-07".
std::string JsNumber(double d) {
  if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 1e21) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", d);
    return std::string(buf) == "-0" ? "0" : buf;
  }
  std::string out = Json(d).dump();  // shortest round trip, as JavaScript also prints
  const size_t e = out.find('e');
  if (e != std::string::npos) {
    std::string mantissa = out.substr(0, e), exponent = out.substr(e + 1);
    const char sign = exponent[0] == '-' ? '-' : '+';
    if (exponent[0] == '-' || exponent[0] == '+') exponent = exponent.substr(1);
    while (exponent.size() > 1 && exponent[0] == '0') exponent = exponent.substr(1);
    out = mantissa + "e" + sign + exponent;
  }
  return out;
}

void Write(const Json& v, std::string& out) {
  if (v.is_number_float()) {
    out += JsNumber(v.get<double>());
  } else if (v.is_object()) {
    out += '{';
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (!first) out += ',';
      first = false;
      out += Json(it.key()).dump();
      out += ':';
      Write(it.value(), out);
    }
    out += '}';
  } else if (v.is_array()) {
    out += '[';
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) out += ',';
      Write(v[i], out);
    }
    out += ']';
  } else {
    out += v.dump();
  }
}
}  // namespace

std::string Stringify(const Json& v) {
  std::string out;
  Write(v, out);
  return out;
}

}  // namespace testbed::state
