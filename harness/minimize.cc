#include "harness/minimize.h"

#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace testbed::harness {

void OnThreads(size_t n, const std::function<void(size_t)>& fn) {
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto guarded = [&](size_t i) {
    try {
      fn(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
    }
  };
  if (n == 1) {
    guarded(0);
  } else {
    std::vector<std::thread> threads;
    for (size_t i = 0; i < n; ++i) threads.emplace_back(guarded, i);
    for (auto& t : threads) t.join();
  }
  if (failure) std::rethrow_exception(failure);
}

int64_t FirstFailing(size_t n, int64_t jobs, const std::function<bool(size_t)>& fails) {
  for (size_t begin = 0; begin < n; begin += static_cast<size_t>(jobs)) {
    const size_t end = std::min(n, begin + static_cast<size_t>(jobs));
    std::vector<char> failed(end - begin, 0);
    OnThreads(end - begin, [&](size_t i) { failed[i] = fails(begin + i) ? 1 : 0; });
    for (size_t i = begin; i < end; ++i)
      if (failed[i - begin]) return static_cast<int64_t>(i);
  }
  return -1;
}

namespace {

// The operations a run still makes, (client, index) in order.
std::vector<std::pair<int, int>> Remaining(const props::RunSpec& m) {
  std::vector<std::pair<int, int>> out;
  for (int c = 0; c < m.clients; ++c)
    for (int o = 0; o < m.ops; ++o)
      if (!m.skip.count({c, o})) out.emplace_back(c, o);
  return out;
}

}  // namespace

props::RunSpec Minimize(props::RunSpec m, int64_t jobs,
                        const std::function<bool(const props::RunSpec&)>& fails, bool try_pairs) {
  if (int64_t k = FirstFailing(static_cast<size_t>(m.clients), jobs,
                               [&](size_t i) {
                                 props::RunSpec x = m;
                                 x.clients = static_cast<int>(i) + 1;
                                 return fails(x);
                               });
      k >= 0)
    m.clients = static_cast<int>(k) + 1;
  if (int64_t k = FirstFailing(static_cast<size_t>(m.ops), jobs,
                               [&](size_t i) {
                                 props::RunSpec x = m;
                                 x.ops = static_cast<int>(i) + 1;
                                 return fails(x);
                               });
      k >= 0)
    m.ops = static_cast<int>(k) + 1;
  const std::vector<std::pair<int, int>> singles = Remaining(m);
  for (size_t from = 0; from < singles.size();) {
    const int64_t k = FirstFailing(singles.size() - from, jobs, [&](size_t i) {
      props::RunSpec x = m;
      x.skip.insert(singles[from + i]);
      return fails(x);
    });
    if (k < 0) break;
    m.skip.insert(singles[from + static_cast<size_t>(k)]);
    from += static_cast<size_t>(k) + 1;
  }
  // Then pairs, where a few operations are left: leaving one out moves its client's later
  // operations in time, so two may have to go together (the first pair that still fails, in
  // order). Past kMaxPairOperations the pairs are too many to try.
  if (!try_pairs) return m;
  const std::vector<std::pair<int, int>> left = Remaining(m);
  if (left.size() <= kSmallRun || left.size() > kMaxPairOperations) return m;
  std::vector<std::pair<size_t, size_t>> pairs;
  for (size_t i = 0; i < left.size(); ++i)
    for (size_t j = i + 1; j < left.size(); ++j) pairs.emplace_back(i, j);
  const int64_t k = FirstFailing(pairs.size(), jobs, [&](size_t i) {
    props::RunSpec x = m;
    x.skip.insert(left[pairs[i].first]);
    x.skip.insert(left[pairs[i].second]);
    return fails(x);
  });
  if (k >= 0) {
    m.skip.insert(left[pairs[static_cast<size_t>(k)].first]);
    m.skip.insert(left[pairs[static_cast<size_t>(k)].second]);
  }
  return m;
}

}  // namespace testbed::harness
