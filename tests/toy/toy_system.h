// A toy second system, registered only in its own CLI binary (testbed_toy_cli): proof that the
// seam carries a system that `check`, `list`, `replay` and scenario files have never heard of.
//
// "counter": clients increment one shared counter (a Redis hash field). Version v1 reads and
// writes it back (HGET then HSET: a read-modify-write race); v2 uses HINCRBY (atomic); a
// rolling deploy to v2 runs v1 pods on odd clients. Option --step adds 1 (default) or 2. Each
// client renews a lease from a child thread while it works. It is the one toy: the runtime's
// own tests (tests/runtime_test.cc) run it too.
#pragma once

#include <memory>

#include "harness/system.h"

namespace testbed::toy {

std::unique_ptr<props::System> MakeCounterSystem();

}  // namespace testbed::toy
