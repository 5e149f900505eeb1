// Lua line coverage: which lines of each script the runs executed, through the emulator's line
// hook (check --coverage, mutate's report). The hook costs time, so it is on only while a
// ScopedLineCoverage is alive on the thread that runs the scripts.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace testbed::sim {

// Per script body (by its SHA1, lower-case hex): each line that ran, and how many times.
struct LineCoverage {
  absl::flat_hash_map<std::string, std::map<int, int64_t>> lines;
  void Add(const LineCoverage& other);
};

// While alive, every script this thread's emulators run adds its lines to `into`; nested
// scopes restore the outer one.
class ScopedLineCoverage {
 public:
  explicit ScopedLineCoverage(LineCoverage* into);
  ~ScopedLineCoverage();
  ScopedLineCoverage(const ScopedLineCoverage&) = delete;
  ScopedLineCoverage& operator=(const ScopedLineCoverage&) = delete;

 private:
  LineCoverage* outer_;
};

// The coverage this thread records into (nullptr: none).
LineCoverage* CurrentLineCoverage();

// The lines of `body` that hold code, nested functions included (the compiled chunk's line
// information, as Redis compiles it): what coverage counts against. Empty when it does not
// compile.
std::vector<int> LinesWithCode(const std::string& body);

}  // namespace testbed::sim
