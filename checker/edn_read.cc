#include "checker/edn_read.h"

#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/json_file.h"

namespace testbed::checker {
namespace {

using Json = nlohmann::json;

bool Delimiter(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == '[' || c == ']' ||
         c == '(' || c == ')' || c == '{' || c == '}' || c == '"' || c == ';';
}

// Appends code point `cp` as UTF-8.
void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Four hex digits.
bool Hex(std::string_view digits, uint32_t& cp) {
  if (digits.size() != 4) return false;
  cp = 0;
  for (char c : digits) {
    const int v = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                         : -1;
    if (v < 0) return false;
    cp = cp * 16 + static_cast<uint32_t>(v);
  }
  return true;
}

// An open collection: a vector, list or set (an array), or a map (an object).
struct Open {
  char close;
  bool map;
  size_t line;
  Json value;
  bool has_key = false;
  std::string key;
  int discard = 0;  // forms still to drop (#_)
};

class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  Json Read() {
    while (Skip()) {
      const char c = text_[at_];
      if (c == '[' || c == '(' || c == '{') {
        ++at_;
        OpenCollection(c == '[' ? ']' : c == '(' ? ')' : '}', c == '{');
      } else if (c == ']' || c == ')' || c == '}') {
        ++at_;
        Close(c);
      } else if (c == '"') {
        Emit(String());
      } else if (c == '\\') {
        Emit(Character());
      } else if (c == '#') {
        Dispatch();
      } else {
        Emit(Atom());
      }
    }
    if (!open_.empty())
      Fail(absl::StrCat("a collection opened at line ", open_.back().line, " is not closed"));
    if (top_discard_ > 0) Fail("#_ before the end: nothing to discard");
    if (forms_.empty()) Fail("no form in it: an empty history file");
    if (forms_.size() == 1 && forms_[0].is_array()) return std::move(forms_[0]);
    return std::move(forms_);
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    throw std::invalid_argument(absl::StrCat("EDN, line ", line_, ": ", what));
  }

  // Skips whitespace, commas and comments; false at the end.
  bool Skip() {
    while (at_ < text_.size()) {
      const char c = text_[at_];
      if (c == '\n') {
        ++line_;
        ++at_;
      } else if (c == ' ' || c == '\t' || c == '\r' || c == ',') {
        ++at_;
      } else if (c == ';') {
        while (at_ < text_.size() && text_[at_] != '\n') ++at_;
      } else {
        return true;
      }
    }
    return false;
  }

  void OpenCollection(char close, bool map) {
    if (open_.size() >= model::kMaxJsonDepth)
      Fail(absl::StrCat("collections nested more than ", model::kMaxJsonDepth, " deep"));
    open_.push_back({close, map, line_, map ? Json::object() : Json::array()});
  }

  void Close(char c) {
    if (open_.empty()) Fail(absl::StrCat("'", std::string(1, c), "' closes nothing"));
    Open& o = open_.back();
    if (c != o.close)
      Fail(absl::StrCat("'", std::string(1, c), "' closes a collection opened at line ", o.line,
                        " with '",
                        std::string(1, o.close == ']'   ? '['
                                       : o.close == ')' ? '('
                                                        : '{'),
                        "'"));
    if (o.has_key)
      Fail(absl::StrCat("the map opened at line ", o.line, " has a key without a value"));
    if (o.discard > 0) Fail("#_ before a closing bracket: nothing to discard");
    Json value = std::move(o.value);
    open_.pop_back();
    Emit(std::move(value));
  }

  // A finished form goes into the collection that holds it (or the top level).
  void Emit(Json value) {
    if (open_.empty()) {
      if (top_discard_ > 0) {
        --top_discard_;
        return;
      }
      forms_.push_back(std::move(value));
      return;
    }
    Open& o = open_.back();
    if (o.discard > 0) {
      --o.discard;
      return;
    }
    if (!o.map) {
      o.value.push_back(std::move(value));
    } else if (!o.has_key) {
      o.key = !value.is_string() ? value.dump()
              : value.get_ref<const std::string&>().rfind(':', 0) == 0
                  ? value.get<std::string>().substr(1)
                  : value.get<std::string>();
      o.has_key = true;
    } else {
      o.value[o.key] = std::move(value);
      o.has_key = false;
    }
  }

  std::string String() {
    const size_t from = line_;
    std::string out;
    for (++at_; at_ < text_.size(); ++at_) {
      const char c = text_[at_];
      if (c == '"') {
        ++at_;
        return out;
      }
      if (c == '\n') ++line_;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (++at_ >= text_.size()) break;
      const char e = text_[at_];
      static constexpr std::string_view kNamed = "ntrbf", kAs = "\n\t\r\b\f";
      if (const size_t k = kNamed.find(e); k != std::string_view::npos) {
        out += kAs[k];
      } else if (e == 'u') {
        uint32_t cp = 0;
        if (at_ + 4 >= text_.size() || !Hex(text_.substr(at_ + 1, 4), cp))
          Fail("a \\u escape without four hex digits");
        AppendUtf8(out, cp);
        at_ += 4;
      } else {
        out += e;  // \" \\ and any other
      }
    }
    line_ = from;
    Fail("a string that is not closed");
  }

  std::string Token() {
    const size_t from = at_;
    while (at_ < text_.size() && !Delimiter(text_[at_])) ++at_;
    return std::string(text_.substr(from, at_ - from));
  }

  Json Character() {
    ++at_;  // the backslash
    if (at_ >= text_.size()) Fail("a character without a name");
    // A delimiter right after the backslash is that character (\( or \,).
    if (Delimiter(text_[at_]) && text_[at_] != '\n') return std::string(1, text_[at_++]);
    const std::string name = Token();
    if (name == "newline") return "\n";
    if (name == "space") return " ";
    if (name == "tab") return "\t";
    if (name == "return") return "\r";
    if (name.size() == 5 && name[0] == 'u') {
      uint32_t cp = 0;
      if (Hex(std::string_view(name).substr(1), cp)) {
        std::string out;
        AppendUtf8(out, cp);
        return out;
      }
    }
    return name;
  }

  void Dispatch() {
    if (at_ + 1 >= text_.size()) Fail("'#' at the end");
    const char next = text_[at_ + 1];
    if (next == '{') {  // a set
      at_ += 2;
      OpenCollection('}', false);
    } else if (next == '_') {  // discard the next form
      at_ += 2;
      (open_.empty() ? top_discard_ : open_.back().discard) += 1;
    } else if (next == '#') {  // ##Inf, ##-Inf, ##NaN: JSON holds none of them
      ++at_;
      Emit(Token());
    } else if (next == '"') {  // a regular expression: its text
      ++at_;
      Emit(String());
    } else {  // a tag: the form that follows stands for itself
      ++at_;
      if (Token().empty()) Fail("'#' without a tag");
    }
  }

  Json Atom() {
    const std::string t = Token();
    if (t.empty()) Fail(absl::StrCat("unexpected '", std::string(1, text_[at_]), "'"));
    if (t == "nil") return nullptr;
    if (t == "true") return true;
    if (t == "false") return false;
    const char c = t[0];
    const bool numeric = (c >= '0' && c <= '9') ||
                         ((c == '-' || c == '+') && t.size() > 1 && t[1] >= '0' && t[1] <= '9');
    if (!numeric) return t;  // a keyword (":invoke") or a symbol
    std::string n = t;
    if (n.back() == 'N' || n.back() == 'M') n.pop_back();
    if (n.front() == '+') n.erase(0, 1);
    int64_t i = 0;
    if (absl::SimpleAtoi(n, &i)) return i;
    uint64_t u = 0;
    if (absl::SimpleAtoi(n, &u)) return u;
    double d = 0;
    if (const size_t slash = n.find('/'); slash != std::string::npos) {  // a ratio
      double a = 0, b = 0;
      if (absl::SimpleAtod(n.substr(0, slash), &a) && absl::SimpleAtod(n.substr(slash + 1), &b) &&
          b != 0)
        return a / b;
    } else if (absl::SimpleAtod(n, &d)) {
      return d;
    }
    Fail("not a number: " + t);
  }

  std::string_view text_;
  size_t at_ = 0, line_ = 1;
  std::vector<Open> open_;
  Json forms_ = Json::array();
  int top_discard_ = 0;
};

}  // namespace

Json ReadEdnHistory(std::string_view text) { return Reader(text).Read(); }

}  // namespace testbed::checker
