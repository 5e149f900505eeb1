// The shards of one check joined into the report the check would have written in one process
// (Merge), and the pick of a class's counterexample among the first runs that showed it, which
// the check and the merge share (PickCounterexample). reports/check_report.h.
#include <absl/strings/numbers.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "reports/check_report.h"

namespace testbed::reports {

bool ShrinkOtherRuns(const ViolationRow& first) {
  return first.status != "known" && first.operations > kSmallCounterexample;
}

size_t PickCounterexample(const std::vector<ViolationRow>& rows) {
  size_t best = 0;
  if (rows.empty() || !ShrinkOtherRuns(rows[0])) return best;
  for (size_t i = 1; i < rows.size() && i < kCounterexampleCandidates; ++i)
    if (std::make_pair(rows[i].operations, rows[i].clients) <
        std::make_pair(rows[best].operations, rows[best].clients))
      best = i;
  return best;
}

// A class's counterexample in the merged report: picked from the shards' candidates, the
// first runs of the check in seed order, as the single process picks (a shard of a schedule
// that is not shrunk has none: the owner's counterexample stands).
ViolationRow MergedCounterexample(const std::vector<CheckReport>& shards,
                                  const std::string& property, const std::string& cls,
                                  const ViolationRow& owners) {
  std::vector<ViolationRow> candidates;
  for (const CheckReport& s : shards)
    for (const ViolationRow& x : s.violations)
      if (x.property == property && x.cls == cls)
        candidates.insert(candidates.end(), x.candidates.begin(), x.candidates.end());
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const ViolationRow& x, const ViolationRow& y) { return x.seed < y.seed; });
  if (candidates.size() > kCounterexampleCandidates) candidates.resize(kCounterexampleCandidates);
  ViolationRow picked = candidates.empty() ? owners : candidates[PickCounterexample(candidates)];
  picked.candidates.clear();
  picked.operations = 0;
  return picked;
}

namespace {
// The seed a row's no_verdict_why names ("seed N: ..."; none: the largest).
uint64_t WhySeed(const std::string& why) {
  uint64_t seed = UINT64_MAX;
  if (why.rfind("seed ", 0) == 0 && !absl::SimpleAtoi(why.substr(5, why.find(':') - 5), &seed))
    seed = UINT64_MAX;
  return seed;
}
}  // namespace

CheckReport Merge(const std::vector<CheckReport>& shards) {
  if (shards.empty()) throw std::invalid_argument("no report to merge");
  const CheckReport& a = shards.front();
  const int64_t n = a.shard.count;
  if (n == 0) throw std::invalid_argument("the first report is not a shard (check --shard I/N)");
  std::vector<bool> seen(static_cast<size_t>(n), false);
  for (const CheckReport& s : shards) {
    if (s.shard.count != n)
      throw std::invalid_argument("shard " + std::to_string(s.shard.index) + "/" +
                                  std::to_string(s.shard.count) + " is not one of " +
                                  std::to_string(n) + " shards");
    if (s.shard.command != a.shard.command)
      throw std::invalid_argument("the shards ran different checks:\n  " + a.shard.command +
                                  "\n  " + s.shard.command);
    if (seen[static_cast<size_t>(s.shard.index - 1)])
      throw std::invalid_argument("shard " + std::to_string(s.shard.index) + "/" +
                                  std::to_string(n) + " is given twice");
    seen[static_cast<size_t>(s.shard.index - 1)] = true;
  }
  for (int64_t i = 0; i < n; ++i)
    if (!seen[static_cast<size_t>(i)])
      throw std::invalid_argument("shard " + std::to_string(i + 1) + "/" + std::to_string(n) +
                                  " is missing");
  CheckReport m;
  m.seed = a.seed;
  m.system = a.system;
  m.version = a.version;
  m.old_version = a.old_version;
  m.baseline = a.baseline;
  for (const CheckReport& s : shards)  // an interrupted shard leaves the merge incomplete
    if (!s.incomplete.empty() && m.incomplete.empty())
      m.incomplete = "shard " + std::to_string(s.shard.index) + " " + s.incomplete;
  for (size_t pi = 0; pi < a.properties.size(); ++pi) {
    PropertyRow row = a.properties[pi];
    row.runs = row.passed = row.violated = row.no_verdict = 0;
    row.no_verdict_why.clear();
    row.classes.clear();
    // A class's owner is the shard that ran its first seed; a run's classes keep their order.
    struct Owned {
      ClassRow row;
      size_t owner = 0, local = 0;
    };
    std::vector<Owned> classes;
    for (size_t si = 0; si < shards.size(); ++si) {
      const PropertyRow& p = shards[si].properties.at(pi);
      row.runs += p.runs;
      row.passed += p.passed;
      row.violated += p.violated;
      row.no_verdict += p.no_verdict;
      // The first run's, whichever shard ran it ("seed N: ...": the lowest seed).
      if (!p.no_verdict_why.empty() &&
          (row.no_verdict_why.empty() || WhySeed(p.no_verdict_why) < WhySeed(row.no_verdict_why)))
        row.no_verdict_why = p.no_verdict_why;
      row.dfs_exhausted = std::min(row.dfs_exhausted, p.dfs_exhausted);
      for (size_t ci = 0; ci < p.classes.size(); ++ci) {
        const ClassRow& c = p.classes[ci];
        auto it = std::find_if(classes.begin(), classes.end(),
                               [&](const Owned& o) { return o.row.cls == c.cls; });
        if (it == classes.end()) {
          classes.push_back({c, si, ci});
        } else {
          it->row.runs += c.runs;
          if (c.first_seed < it->row.first_seed) {
            it->row.first_seed = c.first_seed;
            it->owner = si;
            it->local = ci;
          }
        }
      }
    }
    std::stable_sort(classes.begin(), classes.end(), [](const Owned& x, const Owned& y) {
      return std::make_pair(x.row.first_seed, x.local) < std::make_pair(y.row.first_seed, y.local);
    });
    for (const Owned& o : classes) {
      row.classes.push_back(o.row);
      const auto& owner = shards[o.owner].violations;
      const auto v = std::find_if(owner.begin(), owner.end(), [&](const ViolationRow& x) {
        return x.property == row.property && x.cls == o.row.cls;
      });
      if (v == owner.end())
        throw std::invalid_argument("shard " + std::to_string(shards[o.owner].shard.index) +
                                    " has no counterexample for " + row.property + " / " +
                                    o.row.cls);
      m.violations.push_back(MergedCounterexample(shards, row.property, o.row.cls, *v));
    }
    m.properties.push_back(row);
  }
  // Coverage: every shard's hits, summed per script (the shards ran one check: the same
  // scripts).
  m.coverage = a.coverage;
  for (const CheckReport& s : shards)
    for (const CoverageRow& c : s.scripts) {
      auto it = std::find_if(m.scripts.begin(), m.scripts.end(),
                             [&](const CoverageRow& x) { return x.script == c.script; });
      if (it == m.scripts.end()) {
        m.scripts.push_back(c);
        continue;
      }
      for (const auto& [line, n] : c.hits) it->hits[line] += n;
    }
  std::sort(m.scripts.begin(), m.scripts.end(),
            [](const CoverageRow& x, const CoverageRow& y) { return x.script < y.script; });
  // Known but not seen: by no shard.
  for (const UnseenRow& u : a.unseen) {
    bool everywhere = true;
    for (const CheckReport& s : shards)
      everywhere = everywhere && std::any_of(s.unseen.begin(), s.unseen.end(), [&](const auto& x) {
                     return x.property == u.property && x.cls == u.cls;
                   });
    if (everywhere) m.unseen.push_back(u);
  }
  return m;
}

}  // namespace testbed::reports
