// When each operation of a recorded trace may have happened (issue 29, the trace judges of
// properties/*/): a capture holds when each call reached the server and no reply times, and a
// client makes one operation at a time (Jepsen's process), so an operation began after its
// client's previous call ran and returned before its client's next call ran. Those are its
// window, as wide as the capture allows: a narrower one could order what the callers could not
// have seen in order, which would be a false finding.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include "harness/system.h"

namespace testbed::props {

class RecordedWindows {
 public:
  // Positions in the capture's order (call j is 2j) and instants (ms since the Unix epoch).
  struct Window {
    int64_t invoke = 0, ret = 0, invoke_ms = 0, ret_ms = 0;
  };
  explicit RecordedWindows(const RecordedCalls& calls)
      : calls_(static_cast<int64_t>(calls.size())) {
    // The capture's instants, never going back: a segment starts at the FLUSHALL that ended the
    // run before it, and a simulated server's clock is set back at a run's start.
    for (size_t i = 0; i < calls.size(); ++i) {
      instants_.push_back(std::max(calls[i].at_ms, i == 0 ? calls[i].at_ms : instants_.back()));
      by_client_[calls[i].client].push_back(i);
      client_.push_back(calls[i].client);
    }
  }
  bool empty() const { return instants_.empty(); }
  int64_t first_ms() const { return instants_.front(); }
  int64_t instant(size_t call) const { return instants_[call]; }  // of call `call`
  // The window of the operation whose calls are first..last (indices into the trace, one
  // client's): from just after its client's previous call (or the trace's start) to just before
  // its client's next call (or the trace's end).
  Window of(size_t first, size_t last) const {
    const std::vector<size_t>& mine = by_client_.at(client_[first]);
    const auto before = std::lower_bound(mine.begin(), mine.end(), first);
    const auto after = std::upper_bound(mine.begin(), mine.end(), last);
    Window w;
    w.invoke = before == mine.begin() ? -1 : 2 * static_cast<int64_t>(*(before - 1)) + 1;
    w.invoke_ms = before == mine.begin() ? instants_.front() : instants_[*(before - 1)];
    w.ret = after == mine.end() ? 2 * calls_ : 2 * static_cast<int64_t>(*after) - 1;
    w.ret_ms = after == mine.end() ? instants_.back() : instants_[*after];
    return w;
  }

 private:
  int64_t calls_;
  std::vector<int64_t> instants_;
  std::vector<int> client_;                       // by call
  std::map<int, std::vector<size_t>> by_client_;  // each client's calls, in order
};

}  // namespace testbed::props
