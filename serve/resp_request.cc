#include "serve/resp_request.h"

#include <cctype>
#include <cstdint>
#include <limits>

namespace testbed::serve {
namespace {
constexpr size_t kInlineMax = 64 * 1024;             // PROTO_INLINE_MAX_SIZE
constexpr long long kMaxBulk = 512LL * 1024 * 1024;  // proto-max-bulk-len's default
constexpr long long kMaxMultibulk = 1024LL * 1024;   // Redis 7.0's multibulk limit

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

bool StrictInt64(std::string_view s, long long* out) {
  if (s.empty() || s.size() > 20) return false;
  if (s == "0") {
    *out = 0;
    return true;
  }
  size_t i = 0;
  const bool negative = s[0] == '-';
  if (negative) ++i;
  if (i >= s.size() || s[i] < '1' || s[i] > '9') return false;
  unsigned long long v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    const unsigned long long d = static_cast<unsigned long long>(s[i] - '0');
    if (v > (std::numeric_limits<unsigned long long>::max() - d) / 10) return false;
    v = v * 10 + d;
  }
  const unsigned long long limit =
      negative ? static_cast<unsigned long long>(std::numeric_limits<long long>::max()) + 1
               : static_cast<unsigned long long>(std::numeric_limits<long long>::max());
  if (v > limit) return false;
  *out = negative ? static_cast<long long>(0 - v) : static_cast<long long>(v);
  return true;
}

bool SplitArgs(std::string_view line, sim::Argv* out) {
  out->clear();
  size_t p = 0;
  const auto space = [](char c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f';
  };
  while (true) {
    while (p < line.size() && space(line[p])) ++p;
    if (p >= line.size()) return true;
    std::string current;
    bool inq = false, insq = false, done = false;
    while (!done) {
      if (inq) {
        if (p >= line.size()) return false;  // unterminated quotes
        if (line[p] == '\\' && p + 3 < line.size() && line[p + 1] == 'x' &&
            HexDigit(line[p + 2]) >= 0 && HexDigit(line[p + 3]) >= 0) {
          current += static_cast<char>(HexDigit(line[p + 2]) * 16 + HexDigit(line[p + 3]));
          p += 3;
        } else if (line[p] == '\\' && p + 1 < line.size()) {
          ++p;
          const char c = line[p];
          current += c == 'n'   ? '\n'
                     : c == 'r' ? '\r'
                     : c == 't' ? '\t'
                     : c == 'b' ? '\b'
                     : c == 'a' ? '\a'
                                : c;
        } else if (line[p] == '"') {
          // The closing quote must be followed by a space or nothing.
          if (p + 1 < line.size() && !space(line[p + 1])) return false;
          done = true;
        } else {
          current += line[p];
        }
      } else if (insq) {
        if (p >= line.size()) return false;
        if (line[p] == '\\' && p + 1 < line.size() && line[p + 1] == '\'') {
          ++p;
          current += '\'';
        } else if (line[p] == '\'') {
          if (p + 1 < line.size() && !space(line[p + 1])) return false;
          done = true;
        } else {
          current += line[p];
        }
      } else {
        if (p >= line.size()) {
          done = true;
          break;
        }
        switch (line[p]) {
          case ' ':
          case '\n':
          case '\r':
          case '\t':
          case '\0':
            done = true;
            break;
          case '"':
            inq = true;
            break;
          case '\'':
            insq = true;
            break;
          default:
            current += line[p];
        }
      }
      if (p < line.size()) ++p;
    }
    out->push_back(std::move(current));
  }
}

void RequestParser::compact() {
  if (pos_ > 0 && pos_ >= buf_.size() / 2) {
    buf_.erase(0, pos_);
    pos_ = 0;
  }
}

RequestParser::Status RequestParser::next(sim::Argv* argv, std::string* error) {
  while (pos_ < buf_.size()) {
    const Status s = buf_[pos_] == '*' ? multibulk(argv, error) : inline_command(argv, error);
    if (s == Status::kCommand && argv->empty()) continue;  // an empty request: skipped
    compact();
    return s;
  }
  compact();
  return Status::kNeedMore;
}

RequestParser::Status RequestParser::inline_command(sim::Argv* argv, std::string* error) {
  const size_t newline = buf_.find('\n', pos_);
  if (newline == std::string::npos) {
    if (buf_.size() - pos_ > kInlineMax) {
      *error = "ERR Protocol error: too big inline request";
      return Status::kError;
    }
    return Status::kNeedMore;
  }
  size_t end = newline;
  if (end > pos_ && buf_[end - 1] == '\r') --end;
  const std::string_view line(buf_.data() + pos_, end - pos_);
  if (!SplitArgs(line, argv)) {
    *error = "ERR Protocol error: unbalanced quotes in request";
    return Status::kError;
  }
  pos_ = newline + 1;
  return Status::kCommand;
}

RequestParser::Status RequestParser::multibulk(sim::Argv* argv, std::string* error) {
  // Nothing is consumed until the whole request is here: a partial one is read again.
  size_t at = pos_;
  const auto count_line = [&](std::string_view too_big, long long* n, char kind,
                              std::string_view invalid) -> Status {
    const size_t cr = buf_.find('\r', at);
    if (cr == std::string::npos) {
      if (buf_.size() - at > kInlineMax) {
        *error = std::string(too_big);
        return Status::kError;
      }
      return Status::kNeedMore;
    }
    if (cr + 1 >= buf_.size()) return Status::kNeedMore;  // the '\n' after it
    if (buf_[at] != kind) {
      *error = std::string("ERR Protocol error: expected '$', got '") + buf_[at] + "'";
      return Status::kError;
    }
    if (!StrictInt64(std::string_view(buf_.data() + at + 1, cr - at - 1), n)) *n = -2;
    at = cr + 2;
    if (*n == -2) {
      *error = std::string(invalid);
      return Status::kError;
    }
    return Status::kCommand;
  };
  long long count = 0;
  Status s = count_line("ERR Protocol error: too big mbulk count string", &count, '*',
                        "ERR Protocol error: invalid multibulk length");
  if (s != Status::kCommand) return s;
  if (count > kMaxMultibulk) {
    *error = "ERR Protocol error: invalid multibulk length";
    return Status::kError;
  }
  sim::Argv out;
  for (long long i = 0; i < count; ++i) {
    long long len = 0;
    if (at >= buf_.size()) return Status::kNeedMore;
    s = count_line("ERR Protocol error: too big bulk count string", &len, '$',
                   "ERR Protocol error: invalid bulk length");
    if (s != Status::kCommand) return s;
    if (len < 0 || len > kMaxBulk) {
      *error = "ERR Protocol error: invalid bulk length";
      return Status::kError;
    }
    if (buf_.size() - at < static_cast<size_t>(len) + 2) return Status::kNeedMore;
    out.emplace_back(buf_.data() + at, static_cast<size_t>(len));
    at += static_cast<size_t>(len) + 2;
  }
  pos_ = at;
  *argv = std::move(out);
  return Status::kCommand;
}

}  // namespace testbed::serve
