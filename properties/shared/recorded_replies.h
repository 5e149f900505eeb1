// The replies a recorded trace's calls got, when its file alone is read (testbed explore reads
// the file; testbed replay gives the replies it got): the trace judges and rebuilds of
// properties/*/ read what each call was answered, so calls without replies are answered by the
// emulator, one after another in the recorded order, each at its recorded instant.
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "harness/system.h"
#include "real/script_catalog.h"

namespace testbed::props {

// The shipped catalog, loaded once per process.
const real::ScriptCatalog& ShippedCatalog();

// The body a recorded EVAL or EVALSHA ran: a shipped script's shipped body (also when it was
// sent as deployed), else an EVAL's own ("" when neither the call nor the catalog holds it).
std::string RecordedBody(const RecordedCall& c);

// A trace's calls with their replies: `in` itself when every call has its reply; else a copy
// answered by the emulator in the recorded order (an EVALSHA runs as the EVAL of its body).
class RepliedCalls {
 public:
  explicit RepliedCalls(const RecordedCalls& in);
  RepliedCalls(const RepliedCalls&) = delete;
  RepliedCalls& operator=(const RepliedCalls&) = delete;
  const RecordedCalls& operator*() const { return *calls_; }

 private:
  RecordedCalls computed_;
  const RecordedCalls* calls_;
};

// The trace's clients, each with the indices of its calls, in call order.
std::map<int, std::vector<size_t>> CallsByClient(const RecordedCalls& calls);

// What `make` computes from a trace's calls, once per trace for a whole exploration (its runs
// share the calls LoadRecordedCalls keeps): keyed by the calls' address and checked against what
// they hold, since other calls may come to live at the address of calls that are gone.
template <typename T, typename Make>
std::shared_ptr<const T> OncePerTrace(const RecordedCalls& calls, Make make) {
  static std::mutex mu;
  static std::map<const RecordedCalls*, std::pair<RecordedCalls, std::shared_ptr<const T>>> cache;
  auto same = [&calls](const RecordedCalls& kept) {
    return kept.size() == calls.size() &&
           std::equal(kept.begin(), kept.end(), calls.begin(),
                      [](const RecordedCall& a, const RecordedCall& b) {
                        return a.line == b.line && a.at_ms == b.at_ms && a.client == b.client &&
                               a.argv == b.argv;
                      });
  };
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(&calls);
  if (it == cache.end() || !same(it->second.first))
    it =
        cache
            .insert_or_assign(&calls, std::make_pair(calls, std::make_shared<const T>(make(calls))))
            .first;
  return it->second.second;
}

}  // namespace testbed::props
