// A Redis reply in RESP2 terms, and the seam through which client logic talks to a Redis.
//
// Contract: a Reply is what a server said (an error reply such as "-ERR ..." is a Reply);
// a TransportError is what the network did (timeout, reset, lost reply). Keep the two apart,
// as hiredis does: the ported client logic must be able to tell "the server refused" from
// "nobody knows what happened".
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace testbed::sim {

struct Reply {
  enum class Type { kStatus, kError, kInteger, kBulk, kNil, kArray, kNilArray };
  Type type = Type::kNil;
  std::string str;  // status text, error text (without '-'), bulk bytes
  int64_t integer = 0;
  std::vector<Reply> elements;

  static Reply Status(std::string s) { return {Type::kStatus, std::move(s), 0, {}}; }
  static Reply Error(std::string s) { return {Type::kError, std::move(s), 0, {}}; }
  static Reply Integer(int64_t v) { return {Type::kInteger, {}, v, {}}; }
  static Reply Bulk(std::string s) { return {Type::kBulk, std::move(s), 0, {}}; }
  static Reply Nil() { return {}; }
  static Reply NilArray() { return {Type::kNilArray, {}, 0, {}}; }
  static Reply Array(std::vector<Reply> e) { return {Type::kArray, {}, 0, std::move(e)}; }
  static Reply Ok() { return Status("OK"); }

  bool is_error() const { return type == Type::kError; }
  bool operator==(const Reply& o) const = default;

  // The exact bytes a RESP2 server would send for this reply.
  std::string resp2() const;
  // A one-line human rendering, e.g. [1, "abc", (nil), (error) ERR x].
  std::string debug() const;
};

struct TransportError {
  std::string what;  // "timeout", "connection reset", "lost reply", ...
  bool operator==(const TransportError& o) const = default;
};

using CallResult = std::variant<Reply, TransportError>;
using Argv = std::vector<std::string>;

// Argv{a, b, c} copies every string out of its initializer list (a script body, an envelope):
// this builds the vector once, moving what it is given.
template <typename... Args>
Argv MakeArgv(Args&&... args) {
  Argv argv;
  argv.reserve(sizeof...(Args));
  (argv.emplace_back(std::forward<Args>(args)), ...);
  return argv;
}

// The only way client logic reaches Redis. Implemented by the emulator (sim/) and by hiredis
// (real/).
class RedisConnection {
 public:
  virtual ~RedisConnection() = default;
  virtual CallResult call(const Argv& argv) = 0;
};

// The only way client logic reads time (Date.now() in the seeds).
class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t now_ms() const = 0;
  // Microseconds, for TIME: a simulated clock has none of its own (now_ms() * 1000).
  virtual int64_t now_us() const { return now_ms() * 1000; }
};

std::string render_argv(const Argv& argv);  // quoted, escaped, for traces and messages
// render_argv(argv), or when longer than `limit` its first `keep` characters followed by
// "...(N bytes)" with N the whole length; without rendering the whole (script bodies).
std::string render_argv_short(const Argv& argv, size_t limit, size_t keep);

}  // namespace testbed::sim
