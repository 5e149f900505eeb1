#include "sim/monitor_text.h"

#include <absl/strings/ascii.h>
#include <absl/strings/match.h>
#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_format.h>

namespace testbed::sim::monitor {
namespace {

bool Printable(unsigned char c) { return c >= 0x20 && c <= 0x7e; }  // isprint, C locale

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A client as getClientPeerId writes it: ip:port, [ipv6]:port, unix:/path; or "lua".
bool ValidClient(std::string_view c) {
  if (c == "lua") return true;
  if (c.substr(0, 5) == "unix:") return c.size() > 5;
  const size_t colon = c.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == c.size()) return false;
  for (char d : c.substr(colon + 1))
    if (!absl::ascii_isdigit(static_cast<unsigned char>(d))) return false;
  const std::string_view host = c.substr(0, colon);
  if (host.front() == '[') return host.size() > 2 && host.back() == ']';
  return host.find_first_of(" []") == std::string_view::npos;
}

// From just after an opening quote to just after its closing quote: the bytes in `arg`, `i`
// past the quote. False with what is wrong in `what`.
bool ScanQuoted(std::string_view rest, size_t& i, std::string& arg, std::string& what) {
  while (i < rest.size()) {
    const auto c = static_cast<unsigned char>(rest[i]);
    if (c == '"') {
      ++i;
      return true;
    }
    if (c != '\\') {
      if (!Printable(c)) {
        what = absl::StrFormat("byte 0x%02x written unescaped", c);
        return false;
      }
      arg += rest[i++];
      continue;
    }
    if (i + 1 >= rest.size()) break;  // truncated
    const char e = rest[i + 1];
    i += 2;
    switch (e) {
      case '\\':
        arg += '\\';
        break;
      case '"':
        arg += '"';
        break;
      case 'n':
        arg += '\n';
        break;
      case 'r':
        arg += '\r';
        break;
      case 't':
        arg += '\t';
        break;
      case 'a':
        arg += '\a';
        break;
      case 'b':
        arg += '\b';
        break;
      case 'x': {
        const int hi = i < rest.size() ? HexValue(rest[i]) : -1;
        const int lo = i + 1 < rest.size() ? HexValue(rest[i + 1]) : -1;
        if (hi < 0 || lo < 0) {
          what = "\\x without two hex digits";
          return false;
        }
        arg += static_cast<char>(hi * 16 + lo);
        i += 2;
        break;
      }
      default:
        what = absl::StrCat("unknown escape \\",
                            Printable(static_cast<unsigned char>(e))
                                ? std::string(1, e)
                                : absl::StrFormat("x%02x", static_cast<unsigned char>(e)));
        return false;
    }
  }
  what = "truncated (no closing quote)";
  return false;
}

}  // namespace

std::string Repr(std::string_view bytes) {
  std::string s = "\"";
  for (const char ch : bytes) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '\\':
      case '"':
        s += '\\';
        s += ch;
        break;
      case '\n':
        s += "\\n";
        break;
      case '\r':
        s += "\\r";
        break;
      case '\t':
        s += "\\t";
        break;
      case '\a':
        s += "\\a";
        break;
      case '\b':
        s += "\\b";
        break;
      default:
        if (Printable(c)) {
          s += ch;
        } else {
          absl::StrAppendFormat(&s, "\\x%02x", c);
        }
    }
  }
  return s + "\"";
}

std::string Format(const Line& line) {
  std::string s = absl::StrFormat("%d.%06d [%d %s]", line.micros / 1000000, line.micros % 1000000,
                                  line.db, line.client);
  for (const std::string& a : line.argv) absl::StrAppend(&s, " ", Repr(a));
  return s;
}

bool Parse(std::string_view text, Line& out, std::string& error) {
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  out = Line{};
  // "<seconds>.<6 digits> "
  const size_t dot = text.find('.');
  const size_t space = text.find(' ');
  int64_t seconds = 0, micros = 0;
  if (dot == std::string_view::npos || space == std::string_view::npos || dot > space ||
      space - dot != 7 || dot == 0 ||
      !absl::SimpleAtoi(std::string(text.substr(0, dot)), &seconds) ||
      !absl::SimpleAtoi(std::string(text.substr(dot + 1, 6)), &micros) ||
      !absl::ascii_isdigit(static_cast<unsigned char>(text[0])) ||
      !absl::ascii_isdigit(static_cast<unsigned char>(text[dot + 1]))) {
    error = "no timestamp (<seconds>.<microseconds>) at the start";
    return false;
  }
  out.micros = seconds * 1000000 + micros;
  std::string_view rest = text.substr(space + 1);
  // "[<db> <client>] "
  const size_t db_end = rest.find(' ');
  if (rest.empty() || rest[0] != '[' || db_end == std::string_view::npos ||
      !absl::SimpleAtoi(std::string(rest.substr(1, db_end - 1)), &out.db) || out.db < 0) {
    error = "no [<db> <client>] after the timestamp";
    return false;
  }
  rest.remove_prefix(db_end + 1);
  const size_t client_end = rest.find("] \"");
  if (client_end == std::string_view::npos) {
    error = "no \"] \" and a quoted command after the client";
    return false;
  }
  out.client = std::string(rest.substr(0, client_end));
  if (!ValidClient(out.client)) {
    error = absl::StrCat("client \"", out.client,
                         "\" is none of ip:port, [ipv6]:port, unix:/path or lua");
    return false;
  }
  rest.remove_prefix(client_end + 2);
  // "\"arg\" \"arg\" ..."
  size_t i = 0;
  while (true) {
    const size_t n = out.argv.size() + 1;
    if (i >= rest.size() || rest[i] != '"') {
      error = absl::StrCat("argument ", n, ": no opening quote");
      return false;
    }
    ++i;
    std::string arg;
    std::string what;
    if (!ScanQuoted(rest, i, arg, what)) {
      error = absl::StrCat("argument ", n, ": ", what);
      return false;
    }
    out.argv.push_back(std::move(arg));
    if (i == rest.size()) return true;
    if (rest[i] != ' ') {
      error = absl::StrCat("argument ", n, ": text after its closing quote");
      return false;
    }
    ++i;
  }
}

bool Unrepr(std::string_view inner, std::string& out, std::string& error) {
  const std::string quoted = std::string(inner) + "\"";
  size_t i = 0;
  out.clear();
  if (!ScanQuoted(quoted, i, out, error)) return false;
  if (i != quoted.size()) {
    error = "an unescaped quote";
    return false;
  }
  return true;
}

std::string FormatReply(std::string_view resp2) { return "#reply " + Repr(resp2); }

bool ParseReply(std::string_view text, std::string& resp2, std::string& error) {
  if (!IsReplyLine(text)) {
    error = "not a #reply line";
    return false;
  }
  std::string_view rest = text.substr(7);
  if (!rest.empty() && rest.back() == '\r') rest.remove_suffix(1);
  if (rest.size() < 2 || rest.front() != '"' || rest.back() != '"') {
    error = "a #reply line holds one quoted string";
    return false;
  }
  resp2.clear();
  return Unrepr(rest.substr(1, rest.size() - 2), resp2, error);
}

}  // namespace testbed::sim::monitor
