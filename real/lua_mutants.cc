#include "real/lua_mutants.h"

#include <absl/strings/ascii.h>
#include <absl/strings/str_cat.h>

#include <cctype>
#include <set>

namespace testbed::real {
namespace {

enum class Kind { kName, kNumber, kString, kOp };

struct Token {
  size_t at = 0, len = 0;
  int line = 1;
  Kind kind = Kind::kOp;
  std::string text;
};

// The end of a long bracket opened at `at` ("[[", "[==[") or npos when `at` opens none.
size_t LongBracketEnd(const std::string& s, size_t at) {
  if (at >= s.size() || s[at] != '[') return std::string::npos;
  size_t i = at + 1, level = 0;
  while (i < s.size() && s[i] == '=') ++i, ++level;
  if (i >= s.size() || s[i] != '[') return std::string::npos;
  const std::string close = "]" + std::string(level, '=') + "]";
  const size_t end = s.find(close, i + 1);
  return end == std::string::npos ? s.size() : end + close.size();
}

// Lua 5.1's lexical structure, enough to tell code from strings and comments.
std::vector<Token> Tokens(const std::string& s) {
  std::vector<Token> out;
  int line = 1;
  size_t i = 0;
  auto count_lines = [&](size_t from, size_t to) {
    for (size_t k = from; k < to && k < s.size(); ++k) line += s[k] == '\n';
  };
  while (i < s.size()) {
    const char c = s[i];
    if (c == '\n') {
      ++line, ++i;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (s.compare(i, 2, "--") == 0) {  // a comment: long or to the end of the line
      size_t end = LongBracketEnd(s, i + 2);
      if (end == std::string::npos) end = std::min(s.find('\n', i), s.size());
      count_lines(i, end);
      i = end;
      continue;
    }
    Token t;
    t.at = i;
    t.line = line;
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      t.kind = Kind::kName;
      t.len = j - i;
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '.' && i + 1 < s.size() &&
                std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      size_t j = i;
      while (j < s.size() &&
             (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '.' ||
              ((s[j] == '-' || s[j] == '+') && (s[j - 1] == 'e' || s[j - 1] == 'E'))))
        ++j;
      t.kind = Kind::kNumber;
      t.len = j - i;
    } else if (c == '"' || c == '\'') {
      size_t j = i + 1;
      while (j < s.size() && s[j] != c && s[j] != '\n') j += s[j] == '\\' ? 2 : 1;
      t.kind = Kind::kString;
      t.len = std::min(j + 1, s.size()) - i;
    } else if (const size_t end = LongBracketEnd(s, i); end != std::string::npos) {
      t.kind = Kind::kString;
      t.len = end - i;
    } else {
      static const char* kTwo[] = {"==", "~=", "<=", ">=", ".."};
      t.len = 1;
      for (const char* op : kTwo)
        if (s.compare(i, 2, op) == 0) t.len = 2;
      if (s.compare(i, 3, "...") == 0) t.len = 3;
    }
    t.text = s.substr(t.at, t.len);
    count_lines(i, i + t.len);
    i += t.len;
    out.push_back(std::move(t));
  }
  return out;
}

// Whether the token before a '+' or '-' ends an operand (so the operator is binary).
bool EndsOperand(const Token& t) {
  if (t.kind == Kind::kNumber || t.kind == Kind::kString) return true;
  if (t.kind == Kind::kName) {
    static const std::set<std::string> kKeywords = {
        "and",   "break", "do", "else",   "elseif", "for",  "function", "if",   "in",
        "local", "not",   "or", "repeat", "return", "then", "until",    "while"};
    return !kKeywords.count(t.text);
  }
  return t.text == ")" || t.text == "]" || t.text == "}";
}

// The replacements of one token (each one mutant), with its operator's name.
std::vector<std::pair<std::string, std::string>> Replacements(const std::vector<Token>& toks,
                                                              size_t k) {
  const Token& t = toks[k];
  const std::string& x = t.text;
  if (t.kind == Kind::kOp) {
    if (x == "<") return {{"rel", "<="}};
    if (x == "<=") return {{"rel", "<"}};
    if (x == ">") return {{"rel", ">="}};
    if (x == ">=") return {{"rel", ">"}};
    if (x == "==") return {{"rel", "~="}};
    if (x == "~=") return {{"rel", "=="}};
    const bool binary = k > 0 && EndsOperand(toks[k - 1]);
    if (x == "+" && binary) return {{"arith", "-"}};
    if (x == "-" && binary) return {{"arith", "+"}};
    if (x == "*") return {{"arith", "/"}};
    if (x == "/") return {{"arith", "*"}};
    return {};
  }
  if (t.kind == Kind::kName) {
    if (x == "and") return {{"logic", "or"}};
    if (x == "or") return {{"logic", "and"}};
    if (x == "not") return {{"logic", ""}};
    if (x == "true") return {{"bool", "false"}};
    if (x == "false") return {{"bool", "true"}};
    return {};
  }
  if (t.kind == Kind::kNumber && !x.empty() &&
      x.find_first_not_of("0123456789") == std::string::npos && x.size() < 10) {
    const long n = std::stol(x);
    std::vector<std::pair<std::string, std::string>> r = {{"int", std::to_string(n + 1)}};
    if (n > 0) r.push_back({"int", std::to_string(n - 1)});
    return r;
  }
  return {};
}

// A line that can go as a whole statement: it opens no block and its brackets balance.
bool Droppable(const std::vector<Token>& line) {
  if (line.empty()) return false;
  static const std::set<std::string> kOpeners = {
      "if", "elseif", "else", "end", "for", "while", "do", "function", "repeat", "until", "then"};
  if (kOpeners.count(line.front().text) || kOpeners.count(line.back().text)) return false;
  if (line.front().text == "local" && line.size() > 1 && line[1].text == "function") return false;
  int depth = 0;
  for (const Token& t : line) {
    if (t.kind != Kind::kOp) continue;
    if (t.text == "(" || t.text == "{" || t.text == "[") ++depth;
    if (t.text == ")" || t.text == "}" || t.text == "]") --depth;
    if (depth < 0) return false;
  }
  return depth == 0;
}

}  // namespace

std::vector<LuaMutant> MutantsOf(const std::string& body) {
  const std::vector<Token> toks = Tokens(body);
  std::vector<size_t> line_start = {0, 0};  // 1-based: line_start[n] is line n's first byte
  for (size_t i = 0; i < body.size(); ++i)
    if (body[i] == '\n') line_start.push_back(i + 1);
  auto line_text = [&](int n) {
    const size_t from = line_start[static_cast<size_t>(n)];
    const size_t to = std::min(body.find('\n', from), body.size());
    return body.substr(from, to - from);
  };
  std::vector<LuaMutant> out;
  size_t k = 0;
  while (k < toks.size()) {
    const int line = toks[k].line;
    size_t end = k;
    while (end < toks.size() && toks[end].line == line) ++end;
    int n = 0;
    auto add = [&](const std::string& op, const std::string& mutated_body, std::string after) {
      out.push_back({absl::StrCat(line, ".", ++n), line, op, line_text(line), std::move(after),
                     mutated_body});
    };
    for (size_t j = k; j < end; ++j) {
      for (const auto& [op, with] : Replacements(toks, j)) {
        std::string m = body;
        m.replace(toks[j].at, toks[j].len, with);
        // "not x" without "not " would leave a double space; drop the space after it too.
        if (with.empty() && m.size() > toks[j].at && m[toks[j].at] == ' ') m.erase(toks[j].at, 1);
        const size_t from = line_start[static_cast<size_t>(line)];
        const size_t to = std::min(m.find('\n', from), m.size());
        add(op, m, m.substr(from, to - from));
      }
    }
    // A statement on a line of its own (only tokens of this line, none of a multi-line one).
    const bool whole_line =
        toks[k].at ==
        line_start[static_cast<size_t>(line)] +
            (line_text(line).size() - absl::StripLeadingAsciiWhitespace(line_text(line)).size());
    if (whole_line &&
        Droppable({toks.begin() + static_cast<long>(k), toks.begin() + static_cast<long>(end)})) {
      std::string m = body;
      const size_t from = line_start[static_cast<size_t>(line)];
      const size_t to = std::min(body.find('\n', from), body.size());
      m.erase(from, to - from);
      add("drop", m, "");
    }
    k = end;
  }
  return out;
}

}  // namespace testbed::real
