#include "serve/resp_request.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstring>
#include <cstdint>
#include <limits>

namespace testbed::serve {
namespace {
constexpr size_t kInlineMax = 64 * 1024;             // PROTO_INLINE_MAX_SIZE
constexpr long long kMaxBulk = 512LL * 1024 * 1024;  // proto-max-bulk-len's default
constexpr long long kMaxMultibulk = INT_MAX;         // Redis 7.0's multibulk limit

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

size_t RequestParser::find_stop(size_t from, char c) const {
  const size_t at = buf_.find(c, from);
  const size_t end = at == std::string::npos ? buf_.size() : at;
  if (std::memchr(buf_.data() + from, '\0', end - from) != nullptr) return std::string::npos;
  return at;
}

RequestParser::Status RequestParser::next(sim::Argv* argv, std::string* error) {
  while (multibulk_left_ > 0 || pos_ < buf_.size()) {
    const Status s = multibulk_left_ > 0 || buf_[pos_] == '*' ? multibulk(argv, error)
                                                              : inline_command(argv, error);
    if (s == Status::kCommand && argv->empty()) continue;  // an empty request: skipped
    compact();
    return s;
  }
  compact();
  return Status::kNeedMore;
}

RequestParser::Status RequestParser::inline_command(sim::Argv* argv, std::string* error) {
  const size_t newline = find_stop(pos_, '\n');
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
  // A count line ("*N" or "$N"): consumed once the whole line with its '\n' is here (kNeedMore
  // before); *valid says whether N is an integer, *n is its value.
  const auto count_line = [&](std::string_view too_big, long long* n, bool* valid) -> Status {
    const size_t cr = find_stop(pos_, '\r');
    if (cr == std::string::npos) {
      if (buf_.size() - pos_ > kInlineMax) {
        *error = std::string(too_big);
        return Status::kError;
      }
      return Status::kNeedMore;
    }
    if (cr + 1 >= buf_.size()) return Status::kNeedMore;  // the '\n' after it
    if (multibulk_left_ > 0 && buf_[pos_] != '$') {
      *error = std::string("ERR Protocol error: expected '$', got '") + buf_[pos_] + "'";
      return Status::kError;
    }
    *valid = StrictInt64(std::string_view(buf_.data() + pos_ + 1, cr - pos_ - 1), n);
    pos_ = cr + 2;
    return Status::kCommand;
  };
  if (multibulk_left_ == 0) {
    long long count = 0;
    bool valid = false;
    const Status s = count_line("ERR Protocol error: too big mbulk count string", &count, &valid);
    if (s != Status::kCommand) return s;
    if (!valid || count > kMaxMultibulk) {
      *error = "ERR Protocol error: invalid multibulk length";
      return Status::kError;
    }
    argv->clear();
    if (count <= 0) return Status::kCommand;  // empty: skipped
    multibulk_left_ = count;
    args_.clear();
    args_.reserve(static_cast<size_t>(std::min<long long>(count, 1024)));
  }
  while (multibulk_left_ > 0) {
    if (bulk_len_ < 0) {
      long long len = 0;
      bool valid = false;
      const Status s = count_line("ERR Protocol error: too big bulk count string", &len, &valid);
      if (s != Status::kCommand) return s;
      if (!valid || len < 0 || len > kMaxBulk) {
        *error = "ERR Protocol error: invalid bulk length";
        return Status::kError;
      }
      bulk_len_ = len;
    }
    if (buf_.size() - pos_ < static_cast<size_t>(bulk_len_) + 2) return Status::kNeedMore;
    args_.emplace_back(buf_.data() + pos_, static_cast<size_t>(bulk_len_));
    pos_ += static_cast<size_t>(bulk_len_) + 2;
    bulk_len_ = -1;
    --multibulk_left_;
  }
  *argv = std::move(args_);
  args_.clear();
  return Status::kCommand;
}

}  // namespace testbed::serve
