#include "model/json_text.h"

#include <cmath>
#include <cstdio>

namespace testbed::model {

using Json = nlohmann::json;

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

std::string JsonStringify(const Json& v) {
  std::string out;
  Write(v, out);
  return out;
}

}  // namespace testbed::model
