#include "harness/campaign.h"

#include <absl/strings/str_cat.h>

#include <algorithm>

#include "harness/scenario.h"

namespace testbed::harness {

props::RunSpec Plan::At(int64_t j, const std::string& p) const {
  props::RunSpec r = base;
  r.property = p;
  r.seed = seed + static_cast<uint64_t>(first + j * stride);
  return r;
}

void Tally::Seen(const props::RunSpec& r, const std::vector<std::string>& classes, bool incomplete,
                 const std::vector<size_t>& choices) {
  PropertyTally& t = per_[r.property];
  if (incomplete) ++t.incomplete;
  for (const std::string& c : classes) {
    ClassSeen& seen = t.classes[c];
    if (seen.runs++ == 0) {
      t.order.push_back(c);
      order_.emplace_back(r.property, c);
      seen.first = r;
      seen.first_choices = choices;
    } else if (seen.more.size() < ClassSeen::kMoreSeen) {
      seen.more.push_back(r);
    }
  }
}

void Tally::Add(const props::RunSpec& r, const std::vector<std::string>& classes, bool incomplete,
                const std::vector<size_t>& choices) {
  PropertyTally& t = per_[r.property];
  ++t.done;
  ++runs_;
  if (!classes.empty()) {
    ++t.violated;
    ++violations_;
  }
  Seen(r, classes, incomplete, choices);
}

void Tally::Undecided(const props::RunSpec& r, const std::string& why) {
  PropertyTally& t = per_[r.property];
  if (t.first_undecided.empty()) t.first_undecided = absl::StrCat("seed ", r.seed, ": ", why);
}

void Tally::AddSearch(const std::string& property, int64_t schedules, int64_t violations,
                      bool exhausted) {
  PropertyTally& t = per_[property];
  t.done += schedules;
  t.violated += violations;
  t.exhausted = t.exhausted && exhausted;
  runs_ += schedules;
  violations_ += violations;
}

const PropertyTally* Tally::find(const std::string& property) const {
  const auto it = per_.find(property);
  return it == per_.end() ? nullptr : &it->second;
}

int64_t Operations(const props::RunSpec& spec) {
  int64_t skipped = 0;
  for (const auto& [client, op] : spec.skip)
    if (client < spec.clients && op < spec.ops) ++skipped;
  return static_cast<int64_t>(spec.clients) * spec.ops - skipped;
}

Counterexample Shrink(
    const ClassSeen& seen, const props::RunSpec& from, const std::string& cls, bool fixed_schedule,
    bool thorough, int64_t jobs,
    const std::function<props::RunOutcome(const props::RunSpec&, const ClassSeen* recorded)>& run) {
  auto shows = [&](const props::RunOutcome& o) {
    return std::find(o.classes.begin(), o.classes.end(), cls) != o.classes.end();
  };
  // Each class is shrunk while it still shows, so its counterexample is its own. A schedule
  // found by dfs or given as choices belongs to its workload: it is not shrunk.
  // Minimized to a fixpoint: a pass that removes a client or an operation can make another
  // removable, and a replay line must not shrink further when it is run.
  Counterexample c;
  c.spec = from;
  while (!fixed_schedule) {
    const props::RunSpec smaller = Minimize(
        c.spec, jobs, [&](const props::RunSpec& x) { return shows(run(x, nullptr)); }, thorough);
    if (smaller == c.spec) break;
    c.spec = smaller;
  }
  c.outcome = run(c.spec, &seen);
  for (const props::Finding& f : c.outcome.findings)
    if (props::ClassOf(f) == cls) {
      c.text += "  " + f.text + "\n";
      if (f.cls.empty()) c.shape = f.shape;
    }
  return c;
}

std::string SaveCounterexample(const std::string& dir, const props::System& system,
                               const Counterexample& c, const std::string& cls,
                               const std::string& sentence, const std::string& scripts,
                               const real::ClientCode& client) {
  Scenario sc;
  sc.scripts = scripts;
  sc.client = client;
  sc.system = &system;
  sc.spec = c.spec;
  sc.name = system.name() + "-" + c.spec.version + "-" + c.spec.property + "-" + cls;
  sc.cls = cls;
  // The counterexample's first line, until someone words it better.
  sc.trigger = c.text.substr(0, c.text.find('\n'));
  sc.trigger.erase(0, sc.trigger.find_first_not_of(' '));
  sc.why = sentence;
  sc.severity = "unrated";
  return Save(dir, sc);
}

}  // namespace testbed::harness
