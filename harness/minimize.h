// Minimization of a failing run, for any system: the fewest clients, then the fewest operations
// per client, that still fail with the same seed; then single operations (client, index) are
// dropped greedily; then, where more than kSmallRun and at most kMaxPairOperations are left,
// the first pair of them that can go together. Candidates are tried `jobs` at a time on threads and
// the first failing one in order wins, so the result is the one a single thread finds.
#pragma once

#include <cstdint>
#include <functional>

#include "harness/system.h"

namespace testbed::harness {

// Runs fn(0), ..., fn(n - 1) on n threads (inline when n == 1); rethrows the first exception.
void OnThreads(size_t n, const std::function<void(size_t)>& fn);

// The smallest i in [0, n) with fails(i), trying `jobs` candidates at a time; -1 if none.
int64_t FirstFailing(size_t n, int64_t jobs, const std::function<bool(size_t)>& fails);

inline constexpr size_t kSmallRun = 4;
inline constexpr size_t kMaxPairOperations = 24;

// `pairs`: also try pairs (a class a baseline already knows is shrunk without them: a gate's
// counterexamples are not read).
props::RunSpec Minimize(props::RunSpec failing, int64_t jobs,
                        const std::function<bool(const props::RunSpec&)>& fails, bool pairs);

}  // namespace testbed::harness
