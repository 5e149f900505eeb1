#include "model/json_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace testbed::model {

using Json = nlohmann::json;

namespace {
// Number.prototype.toString for a double that nlohmann would print as "2.0" or "1e-07".
std::string JsNumber(double d) {
  if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 1e21) {
    if (std::fabs(d) >= 9007199254740992.0) {
      // Past 2^53, Number.prototype.toString writes the shortest digits that round trip and
      // pads them with zeros (2^64 is "18446744073709552000"), where %.0f writes every digit.
      std::string shortest = Json(d).dump();  // "1.8446744073709552e+19" or "9007199254740992.0"
      std::string sign;
      if (shortest[0] == '-') {
        sign = "-";
        shortest.erase(0, 1);
      }
      const size_t e = shortest.find_first_of("eE");
      const int exponent = e == std::string::npos ? 0 : std::stoi(shortest.substr(e + 1));
      const std::string mantissa = shortest.substr(0, e);
      const size_t dot = mantissa.find('.');
      const std::string whole = mantissa.substr(0, dot);
      std::string digits = whole + (dot == std::string::npos ? "" : mantissa.substr(dot + 1));
      const size_t point = whole.size() + static_cast<size_t>(exponent);
      while (digits.size() > point && digits.back() == '0') digits.pop_back();
      digits.resize(std::max(point, digits.size()), '0');
      return sign + digits;
    }
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

// True when every byte is printable ASCII other than '"' and '\\' (JSON.stringify writes such
// a string as it is, between quotes). Eight bytes at a time: each test below is exact for
// "some byte of w is ..." (the haszero/hasless word tricks).
bool PlainJsonText(const std::string& str) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL, kHigh = 0x8080808080808080ULL;
  auto has_zero = [](uint64_t v) { return ((v - kOnes) & ~v & kHigh) != 0; };
  size_t i = 0;
  for (; i + 8 <= str.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, str.data() + i, 8);
    const bool below_space = ((w - kOnes * 0x20) & ~w & kHigh) != 0;
    const bool above_tilde = (((w + kOnes) | w) & kHigh) != 0;  // a byte >= 0x7f
    if (below_space || above_tilde || has_zero(w ^ (kOnes * '"')) || has_zero(w ^ (kOnes * '\\')))
      return false;
  }
  return std::all_of(str.begin() + static_cast<std::ptrdiff_t>(i), str.end(),
                     [](char c) { return c >= 0x20 && c <= 0x7e && c != '"' && c != '\\'; });
}

void WriteString(const std::string& str, std::string& out) {
  const bool plain = PlainJsonText(str);
  if (!plain) {
    if (HasLoneSurrogate(str))
      WriteWithSurrogates(str, out);
    else
      out += Json(str).dump();
    return;
  }
  const size_t at = out.size();
  out.resize(at + str.size() + 2);  // one growth, then the bytes in place
  out[at] = '"';
  std::memcpy(out.data() + at + 1, str.data(), str.size());
  out[at + str.size() + 1] = '"';
}

// An array index as JavaScript orders an object's own keys: "0" to "4294967294", no leading zero.
bool IsArrayIndex(const std::string& k) {
  if (k.empty() || k.size() > 10 || (k.size() > 1 && k[0] == '0')) return false;
  if (!std::all_of(k.begin(), k.end(), [](char c) { return c >= '0' && c <= '9'; })) return false;
  return std::stoull(k) < 4294967295ULL;
}

template <typename Json>
void Write(const Json& v, std::string& out) {
  switch (v.type()) {
    case Json::value_t::string:
      WriteString(v.template get_ref<const std::string&>(), out);
      return;
    case Json::value_t::number_integer:
      absl::StrAppend(&out, v.template get<int64_t>());
      return;
    case Json::value_t::number_unsigned:
      absl::StrAppend(&out, v.template get<uint64_t>());
      return;
    case Json::value_t::number_float:
      out += JsNumber(v.template get<double>());
      return;
    case Json::value_t::object: {
      out += '{';
      bool first = true;
      auto member = [&](const std::string& key, const Json& value) {
        if (!first) out += ',';
        first = false;
        WriteString(key, out);
        out += ':';
        Write(value, out);
      };
      if constexpr (std::is_same_v<Json, nlohmann::ordered_json>) {
        // JavaScript's order of own keys: array indices ascending, then the rest as inserted.
        std::vector<std::pair<uint64_t, typename Json::const_iterator>> indices;
        for (auto it = v.begin(); it != v.end(); ++it)
          if (IsArrayIndex(it.key())) indices.emplace_back(std::stoull(it.key()), it);
        std::sort(indices.begin(), indices.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
        for (const auto& [index, it] : indices) member(it.key(), it.value());
        for (auto it = v.begin(); it != v.end(); ++it)
          if (!IsArrayIndex(it.key())) member(it.key(), it.value());
      } else {
        for (auto it = v.begin(); it != v.end(); ++it) member(it.key(), it.value());
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
  out.reserve(128);  // a state value's text, most often: grown once or not at all
  Write(v, out);
  return out;
}

std::string JsonStringify(const nlohmann::ordered_json& v) {
  std::string out;
  out.reserve(128);
  Write(v, out);
  return out;
}

void JsonAppendString(const std::string& s, std::string& out) { WriteString(s, out); }

namespace {

// JSON.parse as JavaScript reads a text: a recursive descent over RFC 8259 that keeps a lone
// surrogate escape as its WTF-8 bytes (ED A0..BF xx, as JsonStringify expects), where nlohmann
// refuses one, and lets a later duplicate key win (as JSON.parse does, and nlohmann). Wherever
// nlohmann accepts a text this gives the value nlohmann gives, type for type: a run of string
// bytes below 0x80 is copied as it is, any other run is checked as UTF-8 by nlohmann; an integer
// of at most 18 digits is read here as nlohmann reads it (an unsigned number without '-', a
// signed one with it), every other number by nlohmann. Returns a discarded value on any error
// (JsonParse then asks nlohmann, for any depth; a byte-order mark JsonParse refuses first).
// A check's parses cost half of what nlohmann::json::parse took for them (whose lexer copies
// every byte into a token buffer and an error-context buffer); the DOM built is the same.
template <typename Json>
class BasicJsParser {
 public:
  explicit BasicJsParser(const std::string& text) : s_(text) {}

  Json parse() {
    Json v;
    if (!value(v, 0)) return Json(Json::value_t::discarded);
    ws();
    if (i_ != s_.size()) return Json(Json::value_t::discarded);
    return v;
  }

  static void utf8(unsigned cp, std::string& out) {  // also WTF-8 for a lone surrogate
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

 private:
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }
  bool literal(const char* word, Json v, Json& out) {
    const size_t n = std::char_traits<char>::length(word);
    if (s_.compare(i_, n, word) != 0) return false;
    i_ += n;
    out = std::move(v);
    return true;
  }
  bool hex4(unsigned& unit) {
    if (i_ + 4 > s_.size()) return false;
    unit = 0;
    for (size_t k = 0; k < 4; ++k) {
      const char c = s_[i_ + k];
      unit <<= 4;
      if (c >= '0' && c <= '9')
        unit |= c - '0';
      else if (c >= 'a' && c <= 'f')
        unit |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        unit |= c - 'A' + 10;
      else
        return false;
    }
    i_ += 4;
    return true;
  }

  bool string(std::string& out) {
    if (i_ >= s_.size() || s_[i_] != '"') return false;
    ++i_;
    size_t run = i_;    // the bytes since the last escape
    bool ascii = true;  // and whether all of them are below 0x80
    auto flush = [&](size_t end) {
      if (end == run) return true;
      if (ascii) {
        out.append(s_, run, end - run);
        return true;
      }
      const Json checked = Json::parse("\"" + s_.substr(run, end - run) + "\"", nullptr, false);
      if (checked.is_discarded()) return false;
      out += checked.template get_ref<const std::string&>();
      return true;
    };
    const char* const data = s_.data();
    const size_t size = s_.size();
    while (i_ < size) {
      const unsigned char c = static_cast<unsigned char>(data[i_]);
      if (c >= 0x20 && c != '"' && c != '\\') {
        ascii = ascii && c < 0x80;
        ++i_;
        continue;
      }
      if (c == '"') {
        if (!flush(i_)) return false;
        ++i_;
        return true;
      }
      if (c < 0x20) return false;
      if (!flush(i_) || ++i_ >= s_.size()) return false;
      const char e = s_[i_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          unsigned unit = 0;
          if (!hex4(unit)) return false;
          if (unit >= 0xD800 && unit <= 0xDBFF && s_.compare(i_, 2, "\\u") == 0) {
            const size_t back = i_;
            i_ += 2;
            unsigned low = 0;
            if (hex4(low) && low >= 0xDC00 && low <= 0xDFFF) {
              utf8(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00), out);
              break;
            }
            i_ = back;  // not a pair: the high surrogate stands alone
          }
          utf8(unit, out);
          break;
        }
        default:
          return false;
      }
      run = i_;
      ascii = true;
    }
    return false;
  }
  bool value(Json& out, int depth) {
    if (depth > 10000) return false;
    ws();
    if (i_ >= s_.size()) return false;
    const char c = s_[i_];
    if (c == '{' || c == '[') {
      const bool object = c == '{';
      ++i_;
      out = object ? Json::object() : Json::array();
      ws();
      if (i_ < s_.size() && s_[i_] == (object ? '}' : ']')) return ++i_, true;
      while (true) {
        std::string key;
        if (object) {
          ws();
          if (!string(key)) return false;
          ws();
          if (i_ >= s_.size() || s_[i_++] != ':') return false;
        }
        Json element;
        if (!value(element, depth + 1)) return false;
        if (object)
          out[std::move(key)] = std::move(element);  // a later duplicate key wins
        else
          out.push_back(std::move(element));
        ws();
        if (i_ < s_.size() && s_[i_] == ',') {
          ++i_;
          continue;
        }
        return i_ < s_.size() && s_[i_++] == (object ? '}' : ']');
      }
    }
    if (c == '"') {
      std::string str;
      if (!string(str)) return false;
      out = std::move(str);
      return true;
    }
    if (literal("true", true, out) || literal("false", false, out) || literal("null", nullptr, out))
      return true;
    const size_t start = i_;
    while (i_ < s_.size() && std::strchr("+-0123456789.eE", s_[i_]) != nullptr) ++i_;
    if (i_ == start) return false;
    if (PlainInteger(start, i_, out)) return true;
    out = Json::parse(s_.substr(start, i_ - start), nullptr, false);
    return !out.is_discarded();
  }
  // -?(0|[1-9][0-9]*) of at most 18 digits (no overflow): nlohmann's number_unsigned without a
  // '-', number_integer with one ("-0" is the integer 0).
  bool PlainInteger(size_t begin, size_t end, Json& out) const {
    const bool negative = s_[begin] == '-';
    const size_t digits = begin + (negative ? 1 : 0);
    if (digits == end || end - digits > 18 || (s_[digits] == '0' && end - digits > 1)) return false;
    uint64_t v = 0;
    for (size_t k = digits; k < end; ++k) {
      const char c = s_[k];
      if (c < '0' || c > '9') return false;
      v = v * 10 + static_cast<uint64_t>(c - '0');
    }
    if (negative)
      out = -static_cast<int64_t>(v);
    else
      out = v;
    return true;
  }

  const std::string& s_;
  size_t i_ = 0;
};
using JsParser = BasicJsParser<nlohmann::json>;

}  // namespace

namespace {

// JSON.parse reads every number as a double: an integer past 2^53 is rounded (2^53 + 1 reads
// as 2^53), where nlohmann keeps it exact. Only a text with 16 digits in a row can hold one.
bool MayHoldLongInteger(const std::string& text) {
  int run = 0;
  for (const char c : text) {
    run = c >= '0' && c <= '9' ? run + 1 : 0;
    if (run >= 16) return true;
  }
  return false;
}

template <typename Json>
void RoundLongIntegers(Json& v) {
  constexpr uint64_t kMaxSafe = uint64_t{1} << 53;
  if (v.is_number_unsigned()) {
    if (v.template get<uint64_t>() > kMaxSafe) v = static_cast<double>(v.template get<uint64_t>());
  } else if (v.is_number_integer()) {
    const int64_t i = v.template get<int64_t>();
    if (i > static_cast<int64_t>(kMaxSafe) || i < -static_cast<int64_t>(kMaxSafe))
      v = static_cast<double>(i);
  } else if (v.is_structured()) {
    for (Json& child : v) RoundLongIntegers(child);
  }
}

}  // namespace

Json JsonParse(const std::string& text) {
  // A UTF-8 byte-order mark is U+FEFF, which JSON.parse does not take as white space (nlohmann
  // skips it): found by the state runtime's judge (tests/port_fidelity_state_test.cc).
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) return Json(Json::value_t::discarded);
  Json v = JsParser(text).parse();
  if (v.is_discarded()) v = Json::parse(text, nullptr, false);
  if (!v.is_discarded() && MayHoldLongInteger(text)) RoundLongIntegers(v);
  return v;
}

std::u32string CodePoints(std::string_view s) {
  std::u32string out;
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const size_t len = b < 0x80         ? 1
                       : (b >> 5) == 6  ? 2
                       : (b >> 4) == 14 ? 3
                       : (b >> 3) == 30 ? 4
                                        : 0;
    bool ok = len > 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(s[i + k]) >> 6) == 2;
    if (!ok) {
      out += U'\uFFFD';
      ++i;
      continue;
    }
    char32_t cp = len == 1 ? b : b & (0x7Fu >> len);
    for (size_t k = 1; k < len; ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3Fu);
    out += cp;
    i += len;
  }
  return out;
}

std::string Utf8(std::u32string_view code_points) {
  std::string out;
  for (const char32_t cp : code_points) JsParser::utf8(cp, out);
  return out;
}

std::u16string Utf16(std::string_view s) {
  std::u16string out;
  for (char32_t cp : CodePoints(s)) {
    if (cp > 0xFFFF) {
      cp -= 0x10000;
      out += static_cast<char16_t>(0xD800 | (cp >> 10));
      out += static_cast<char16_t>(0xDC00 | (cp & 0x3FF));
    } else {
      out += static_cast<char16_t>(cp);
    }
  }
  return out;
}

nlohmann::ordered_json JsonParseOrdered(const std::string& text) {
  using OJson = nlohmann::ordered_json;
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) return OJson(OJson::value_t::discarded);
  OJson v = BasicJsParser<OJson>(text).parse();
  if (v.is_discarded()) v = OJson::parse(text, nullptr, false);
  if (!v.is_discarded() && MayHoldLongInteger(text)) RoundLongIntegers(v);
  return v;
}

template <typename Json>
BasicSpread<Json> SpreadForIncrement(const Json& value, const std::string& field) {
  BasicSpread<Json> s{Json::object(), 0};
  if (value.is_object()) {
    s.object = value;
  } else if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) s.object[std::to_string(i)] = value[i];
  } else if (value.is_string()) {
    // Each UTF-16 code unit: a character past U+FFFF is two, each a lone surrogate (WTF-8).
    size_t unit = 0;
    for (const char16_t u : Utf16(value.template get_ref<const std::string&>()))
      s.object[std::to_string(unit++)] = Utf8(std::u32string(1, u));
    if (field == "length") s.previous = static_cast<double>(unit);
  }
  if (value.is_array() && field == "length") s.previous = static_cast<double>(value.size());
  const auto it = s.object.find(field);
  if (it != s.object.end() && it->is_number()) s.previous = it->template get<double>();
  return s;
}
template BasicSpread<nlohmann::json> SpreadForIncrement(const nlohmann::json&, const std::string&);
template BasicSpread<nlohmann::ordered_json> SpreadForIncrement(const nlohmann::ordered_json&,
                                                                const std::string&);

const Json& ParseJsonMemo(const std::string& text) {
  constexpr size_t kMaxEntries = 4096;
  thread_local absl::flat_hash_map<std::string, Json> memo;
  // The entry found last: a port often parses one text twice in a row (a tombstone check, then
  // the envelope), and comparing it costs less than hashing it. Only an insertion moves entries,
  // and each one sets `last` again.
  thread_local const std::pair<const std::string, Json>* last = nullptr;
  if (last && last->first == text) return last->second;
  auto it = memo.find(text);
  if (it == memo.end()) {
    if (memo.size() >= kMaxEntries) memo.clear();
    it = memo.emplace(text, JsonParse(text)).first;
  }
  last = &*it;
  return it->second;
}

}  // namespace testbed::model
