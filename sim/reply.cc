#include "sim/reply.h"

#include <cstdio>

namespace testbed {
namespace {

void AppendResp2(const Reply& r, std::string& out) {
  switch (r.type) {
    case Reply::Type::kStatus: out += "+" + r.str + "\r\n"; return;
    case Reply::Type::kError: out += "-" + r.str + "\r\n"; return;
    case Reply::Type::kInteger: out += ":" + std::to_string(r.integer) + "\r\n"; return;
    case Reply::Type::kBulk:
      out += "$" + std::to_string(r.str.size()) + "\r\n" + r.str + "\r\n";
      return;
    case Reply::Type::kNil: out += "$-1\r\n"; return;
    case Reply::Type::kNilArray: out += "*-1\r\n"; return;
    case Reply::Type::kArray:
      out += "*" + std::to_string(r.elements.size()) + "\r\n";
      for (const Reply& e : r.elements) AppendResp2(e, out);
      return;
  }
}

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

}  // namespace

std::string Reply::resp2() const {
  std::string out;
  AppendResp2(*this, out);
  return out;
}

std::string Reply::debug() const {
  switch (type) {
    case Type::kStatus: return str;
    case Type::kError: return "(error) " + str;
    case Type::kInteger: return "(integer) " + std::to_string(integer);
    case Type::kBulk: return Quote(str);
    case Type::kNil: return "(nil)";
    case Type::kNilArray: return "(nil array)";
    case Type::kArray: {
      std::string out = "[";
      for (size_t i = 0; i < elements.size(); ++i) {
        if (i) out += ", ";
        out += elements[i].debug();
      }
      return out + "]";
    }
  }
  return "?";
}

std::string render_argv(const Argv& argv) {
  std::string out;
  for (size_t i = 0; i < argv.size(); ++i) {
    if (i) out += ' ';
    out += Quote(argv[i]);
  }
  return out;
}

}  // namespace testbed
