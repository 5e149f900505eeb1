#include "sim/reply.h"

#include <cstdint>
#include <cstdio>

namespace testbed::sim {
namespace {

void AppendResp2(const Reply& r, std::string& out) {
  switch (r.type) {
    case Reply::Type::kStatus:
      out += "+" + r.str + "\r\n";
      return;
    case Reply::Type::kError:
      out += "-" + r.str + "\r\n";
      return;
    case Reply::Type::kInteger:
      out += ":" + std::to_string(r.integer) + "\r\n";
      return;
    case Reply::Type::kBulk:
      out += "$" + std::to_string(r.str.size()) + "\r\n" + r.str + "\r\n";
      return;
    case Reply::Type::kNil:
      out += "$-1\r\n";
      return;
    case Reply::Type::kNilArray:
      out += "*-1\r\n";
      return;
    case Reply::Type::kArray:
      out += "*" + std::to_string(r.elements.size()) + "\r\n";
      for (const Reply& e : r.elements) AppendResp2(e, out);
      return;
  }
}

// Appends the quoted, escaped form of s to out, at most `room` characters of it (the rest is
// only counted); returns the length of the whole quoted form.
size_t AppendQuoted(const std::string& s, std::string& out, size_t room) {
  static const char* kHex = "0123456789abcdef";
  size_t total = 2;
  for (unsigned char c : s) total += c == '"' || c == '\\' ? 2 : (c < 0x20 || c >= 0x7f ? 4 : 1);
  if (room == 0) return total;
  const size_t start = out.size();
  out += '"';
  for (unsigned char c : s) {
    if (out.size() - start >= room) break;
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (out.size() - start < room) out += '"';
  if (out.size() - start > room) out.resize(start + room);
  return total;
}

std::string Quote(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 2);
  AppendQuoted(s, out, SIZE_MAX);
  return out;
}

}  // namespace

std::string Reply::resp2() const {
  std::string out;
  AppendResp2(*this, out);
  return out;
}

std::string Reply::debug() const {
  switch (type) {
    case Type::kStatus:
      return str;
    case Type::kError:
      return "(error) " + str;
    case Type::kInteger:
      return "(integer) " + std::to_string(integer);
    case Type::kBulk:
      return Quote(str);
    case Type::kNil:
      return "(nil)";
    case Type::kNilArray:
      return "(nil array)";
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

std::string render_argv_short(const Argv& argv, size_t limit, size_t keep) {
  std::string out;
  size_t total = 0;
  const size_t room = limit + 1;  // enough to know whether the whole exceeds limit
  for (size_t i = 0; i < argv.size(); ++i) {
    if (i) {
      if (total < room) out += ' ';
      ++total;
    }
    total += AppendQuoted(argv[i], out, total < room ? room - total : 0);
  }
  if (total <= limit) return out;
  return out.substr(0, keep) + "...(" + std::to_string(total) + " bytes)";
}

std::string render_argv(const Argv& argv) {
  std::string out;
  for (size_t i = 0; i < argv.size(); ++i) {
    if (i) out += ' ';
    out += Quote(argv[i]);
  }
  return out;
}

}  // namespace testbed::sim
