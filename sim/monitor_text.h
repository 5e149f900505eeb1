// The text of a `redis-cli MONITOR` capture as Redis 7.0 writes it (replicationFeedMonitors in
// server.c, sdscatrepr in sds.c), and its exact inverse: a recorded trace enters the testbed
// through these lines (testbed import). Hand-written because it must match Redis byte for byte.
//
//   1796358929.964484 [0 127.0.0.1:45952] "eval" "return 1" "0"
//   1796358929.964640 [0 lua] "set" "k\"x] y" "v\x92\n\\"
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace testbed::sim::monitor {

// sdscatrepr: the bytes in double quotes, with \\ \" \n \r \t \a \b, and \xHH (lower-case hex)
// for every other byte that is not printable ASCII (0x20-0x7e).
std::string Repr(std::string_view bytes);

// The inverse of Repr for the text between the quotes (`v\x92\n`); false, with what is wrong in
// `error`, for an unknown escape, a short \x, an unescaped quote or a byte Repr never writes.
bool Unrepr(std::string_view inner, std::string& out, std::string& error);

struct Line {
  int64_t micros = 0;  // the timestamp, in microseconds since the Unix epoch
  int db = 0;
  std::string client;  // "127.0.0.1:45952", "[::1]:6000", "unix:/tmp/redis.sock", "lua"
  std::vector<std::string> argv;
  bool lua() const { return client == "lua"; }
};

// One line as redis-cli prints it (without the line break).
std::string Format(const Line& line);

// Parses one line (a trailing '\r' is allowed). On failure returns false and says what is wrong
// in `error` ("argument 3: unknown escape \q"), without the line number.
bool Parse(std::string_view text, Line& out, std::string& error);

// testbed serve --record writes, after each client command's line (and its script's lines), the
// reply it got as RESP2 bytes: `#reply "+OK\r\n"` (redis-cli MONITOR never prints one).
std::string FormatReply(std::string_view resp2);
inline bool IsReplyLine(std::string_view text) { return text.substr(0, 7) == "#reply "; }
// The reply's bytes of such a line (a trailing '\r' is allowed); false with what is wrong.
bool ParseReply(std::string_view text, std::string& resp2, std::string& error);

}  // namespace testbed::sim::monitor
