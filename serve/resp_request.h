// One client's request stream as Redis 7.0's processInputBuffer reads it (networking.c): RESP
// multibulk requests, or inline commands split as sdssplitargs splits them. A protocol error
// is Redis's own text; Redis replies with it and closes the connection. Like Redis, the parser
// keeps its place inside a multibulk request: each byte is read once, however the request is cut
// into reads, and a line is searched as strchr searches it (a NUL byte ends the search, so a
// line with one waits for more input, as Redis waits).
#pragma once

#include <string>
#include <string_view>

#include "sim/reply.h"

namespace testbed::serve {

class RequestParser {
 public:
  enum class Status { kNeedMore, kCommand, kError };
  void feed(std::string_view bytes) { buf_.append(bytes); }
  // The next complete request (an empty one, as "*0\r\n" or a blank line, is skipped), or
  // kNeedMore, or kError with the error text (without '-').
  Status next(sim::Argv* argv, std::string* error);
  size_t buffered() const { return buf_.size() - pos_; }

 private:
  Status multibulk(sim::Argv* argv, std::string* error);
  Status inline_command(sim::Argv* argv, std::string* error);
  void compact();
  // The first `c` at or after `from`, as strchr finds it in Redis's NUL-ended buffer: npos when
  // none, or when a NUL byte comes first.
  size_t find_stop(size_t from, char c) const;
  std::string buf_;
  size_t pos_ = 0;
  // Inside a multibulk request (processMultibulkBuffer's multibulklen, bulklen, argv): the
  // arguments still to come, the length of the one being read (-1: its header is not read
  // yet), and those read.
  long long multibulk_left_ = 0;
  long long bulk_len_ = -1;
  sim::Argv args_;
};

// sdssplitargs: words separated by white space, "double quoted" (with \xHH \n \r \t \b \a and
// \c escapes) or 'single quoted' (with \'); false for unbalanced quotes, or a closing quote
// not followed by white space.
bool SplitArgs(std::string_view line, sim::Argv* out);

// Redis's string2ll: an optional '-', then digits without a leading zero ("0" alone), within
// int64; nothing else.
bool StrictInt64(std::string_view s, long long* out);

}  // namespace testbed::serve
