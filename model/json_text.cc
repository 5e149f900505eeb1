#include "model/json_text.h"

#include <cmath>
#include <cstdio>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

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

// A string with nothing to escape or validate (printable ASCII, no quote, no backslash) is
// written as is; every other string goes through nlohmann's dump() (no indent, UTF-8 kept,
// invalid UTF-8 an error), as every scalar but a float did before this fast path.
// A lone surrogate (a JavaScript string may hold one) is kept in a std::string as its WTF-8
// bytes (ED A0..BF xx); JSON.stringify writes it as a lowercase \\udxxx escape (ES2019's
// well-formed JSON.stringify), which nlohmann's dump() would refuse as invalid UTF-8.
bool HasLoneSurrogate(const std::string& str) {
  for (size_t i = 0; i + 2 < str.size(); ++i)
    if (static_cast<unsigned char>(str[i]) == 0xED &&
        (static_cast<unsigned char>(str[i + 1]) & 0xE0) == 0xA0)
      return true;
  return false;
}

void WriteWithSurrogates(const std::string& str, std::string& out) {
  out += '"';
  std::string run;
  auto flush = [&] {
    if (run.empty()) return;
    const std::string quoted = Json(run).dump();
    out.append(quoted, 1, quoted.size() - 2);
    run.clear();
  };
  for (size_t i = 0; i < str.size(); ++i) {
    const auto b = [&](size_t k) { return static_cast<unsigned char>(str[k]); };
    if (i + 2 < str.size() && b(i) == 0xED && (b(i + 1) & 0xE0) == 0xA0) {
      flush();
      const unsigned unit = 0xD000u | ((b(i + 1) & 0x3Fu) << 6) | (b(i + 2) & 0x3Fu);
      absl::StrAppend(&out, "\\u", absl::Hex(unit, absl::kZeroPad4));
      i += 2;
    } else {
      run += str[i];
    }
  }
  flush();
  out += '"';
}

void WriteString(const std::string& str, std::string& out) {
  for (const char c : str)
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') {
      if (HasLoneSurrogate(str))
        WriteWithSurrogates(str, out);
      else
        out += Json(str).dump();
      return;
    }
  out += '"';
  out += str;
  out += '"';
}

void Write(const Json& v, std::string& out) {
  switch (v.type()) {
    case Json::value_t::string:
      WriteString(v.get_ref<const std::string&>(), out);
      return;
    case Json::value_t::number_integer:
      absl::StrAppend(&out, v.get<int64_t>());
      return;
    case Json::value_t::number_unsigned:
      absl::StrAppend(&out, v.get<uint64_t>());
      return;
    case Json::value_t::number_float:
      out += JsNumber(v.get<double>());
      return;
    case Json::value_t::object: {
      out += '{';
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!first) out += ',';
        first = false;
        WriteString(it.key(), out);
        out += ':';
        Write(it.value(), out);
      }
      out += '}';
      return;
    }
    case Json::value_t::array: {
      out += '[';
      bool first = true;
      for (const Json& e : v) {
        if (!first) out += ',';
        first = false;
        Write(e, out);
      }
      out += ']';
      return;
    }
    default:  // null, boolean, binary, discarded
      out += v.dump();
  }
}
}  // namespace

std::string JsonStringify(const Json& v) {
  std::string out;
  Write(v, out);
  return out;
}

const Json& ParseJsonMemo(const std::string& text) {
  constexpr size_t kMaxEntries = 4096;
  thread_local absl::flat_hash_map<std::string, Json> memo;
  auto it = memo.find(text);
  if (it != memo.end()) return it->second;
  if (memo.size() >= kMaxEntries) memo.clear();
  return memo.emplace(text, Json::parse(text, nullptr, false)).first->second;
}

}  // namespace testbed::model
