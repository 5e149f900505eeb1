// A campaign: the runs of one `check`, or of both sides of a `diff`. Its runs go to threads a
// batch at a time and merge in run order, so what a campaign finds does not depend on the
// thread count; each property's anomaly classes are tallied in the order first seen; a class's
// first run is minimized into its counterexample and saved as a scenario; and the tallies become
// the report model's rows (reports/check_report.h), which `merge` joins and every output
// renders. Nothing here names a system.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/system.h"
#include "harness/minimize.h"

namespace testbed::harness {

// The runs a campaign makes: run indices first, first + stride, ... (`count` of them), each with
// every property in `properties` (those that apply, in the check's order), at seed + index.
struct Plan {
  props::RunSpec base;  // all but the property and the seed
  std::vector<std::string> properties;
  uint64_t seed = 0;
  int64_t first = 0, stride = 1, count = 0;  // INT64_MAX: until `stop` says so
  // Runs of one property in place of `count` (mutate --runs-of: a cheap sequential property
  // gets more runs); the plan runs until the largest.
  std::map<std::string, int64_t> counts;
  int64_t CountOf(const std::string& p) const {
    const auto it = counts.find(p);
    return it == counts.end() ? count : it->second;
  }
  int64_t Longest() const {
    int64_t n = count;
    for (const auto& [p, c] : counts) n = std::max(n, c);
    return n;
  }
  size_t jobs = 1;
  std::function<bool()> stop = {};  // asked before each batch (a time budget)
  // The j-th index's run of property p.
  props::RunSpec At(int64_t j, const std::string& p) const;
};

// Runs the plan: `run` for each run on `jobs` threads, `jobs` indices at a time (one thread does
// one index's properties), then `merge` on this thread for each result in run order.
template <typename Result>
void RunInOrder(const Plan& plan, const std::function<Result(const props::RunSpec&)>& run,
                const std::function<void(Result&)>& merge) {
  const int64_t jobs = static_cast<int64_t>(plan.jobs);
  const int64_t longest = plan.Longest();
  for (int64_t j0 = 0; j0 < longest; j0 += jobs) {
    if (plan.stop && plan.stop()) break;
    const int64_t n = std::min<int64_t>(jobs, longest - j0);
    std::vector<std::vector<Result>> results(static_cast<size_t>(n));
    OnThreads(static_cast<size_t>(n), [&](size_t k) {
      const int64_t j = j0 + static_cast<int64_t>(k);
      for (const std::string& p : plan.properties)
        if (j < plan.CountOf(p)) results[k].push_back(run(plan.At(j, p)));
    });
    for (auto& batch : results)
      for (Result& r : batch) merge(r);
  }
}

// A class as runs showed it: how many, and the first (with its schedule, under dfs).
struct ClassSeen {
  int64_t runs = 0;
  props::RunSpec first;
  std::vector<size_t> first_choices;
  // The next runs that showed the class, in run order, up to kMoreSeen: a random run's
  // counterexample may be shrunk from them too (reports::PickCounterexample).
  std::vector<props::RunSpec> more;
  static constexpr size_t kMoreSeen = 2;
};

// One property's runs: counts, and its classes in the order first seen.
struct PropertyTally {
  int64_t done = 0, violated = 0, incomplete = 0;
  std::string first_undecided;  // the first run without a verdict: its seed and why
  bool exhausted = true;        // dfs: every search explored its whole space
  std::vector<std::string> order;
  std::map<std::string, ClassSeen> classes;
};

// Every property's runs, merged in run order.
class Tally {
 public:
  // One run that showed `classes` (none: it passed, or had no verdict when incomplete).
  void Add(const props::RunSpec& r, const std::vector<std::string>& classes, bool incomplete,
           const std::vector<size_t>& choices = {});
  // dfs: each schedule of a search is Seen (its classes and verdict), and the search's totals
  // are added once it ends.
  void Seen(const props::RunSpec& r, const std::vector<std::string>& classes, bool incomplete,
            const std::vector<size_t>& choices);
  // Why a run had no verdict (the first one of each property is kept).
  void Undecided(const props::RunSpec& r, const std::string& why);
  void AddSearch(const std::string& property, int64_t schedules, int64_t violations,
                 bool exhausted);
  PropertyTally& operator[](const std::string& property) { return per_[property]; }
  const PropertyTally* find(const std::string& property) const;
  // (property, class), first seen first, across properties.
  const std::vector<std::pair<std::string, std::string>>& order() const { return order_; }
  int64_t runs() const { return runs_; }
  int64_t violations() const { return violations_; }

 private:
  std::map<std::string, PropertyTally> per_;
  std::vector<std::pair<std::string, std::string>> order_;
  int64_t runs_ = 0, violations_ = 0;
};

// A class's counterexample: its first run, minimized while it still shows the class, to a
// fixpoint (unless its schedule is fixed: dfs or given choices), and that run's outcome. Its
// replay line, run, minimizes to itself.
struct Counterexample {
  props::RunSpec spec;
  props::RunOutcome outcome;
  // The findings of the class, one "  "-indented line each, and the shape of a generic one.
  std::string text, shape;
};
// The class's counterexample shrunk from `from` (seen.first, or one of seen.more). `run` runs a
// spec on the campaign's strategy; with `recorded` (the final run), on the schedule the class
// was first seen on where the strategy recorded one (dfs).
Counterexample Shrink(
    const ClassSeen& seen, const props::RunSpec& from, const std::string& cls, bool fixed_schedule,
    bool thorough, int64_t jobs,
    const std::function<props::RunOutcome(const props::RunSpec&, const ClassSeen* recorded)>& run);

// How many operations a run makes: its clients' operations less those it skips.
int64_t Operations(const props::RunSpec& spec);

// Saves a counterexample as scenarios/<system>-<version>-<property>-<class>.json in dir, its
// trigger the counterexample's first line, its why the class's sentence, with the --scripts
// directory the runs used ("": the shipped scripts); returns the path.
std::string SaveCounterexample(const std::string& dir, const props::System& system,
                               const Counterexample& c, const std::string& cls,
                               const std::string& sentence, const std::string& scripts,
                               const real::ClientCode& client);

}  // namespace testbed::harness
