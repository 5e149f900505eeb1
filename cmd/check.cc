// testbed check: generated workloads of a registered system, checked against each of its
// properties; a per-property table, each violation minimized with its Redis calls and replay
// line, reports, and saved scenarios. Nothing here names a system (harness/system.h). Its flags
// are parsed in check_flags.cc.
#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>
#include <absl/strings/str_split.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <set>
#include <fstream>
#include <map>
#include <memory>
#include <optional>

#include "cmd/cli_internal.h"
#include "real/redis_server.h"
#include "real/script_catalog.h"
#include "reports/check_report.h"
#include "reports/terminal.h"
#include "reports/timeline.h"
#include "reports/trace_view.h"
#include "harness/baseline.h"
#include "harness/campaign.h"
#include "harness/scenario.h"
#include "harness/trace_replay.h"
#include "sim/clock.h"
#include "sim/lua_coverage.h"
#include "sim/strategies.h"

namespace testbed::cli {
namespace {

// A property's row of the report: its counts (a run without a verdict is never a pass), its
// classes with their sentences and `status(class)` against a baseline, and its notes.
reports::PropertyRow Row(const props::PropertyInfo& info, const harness::PropertyTally* t,
                         bool applies, bool faults_given, bool dfs,
                         const std::function<std::string(const std::string&)>& status) {
  if (!applies) return {info.name, 0, 0, 0, false};
  const harness::PropertyTally none;
  if (!t) t = &none;
  reports::PropertyRow row{info.name, t->done, t->done - t->violated - t->incomplete, t->violated};
  for (const std::string& c : t->order)
    row.classes.push_back({c, props::SentenceOf(info, c), t->classes.at(c).runs,
                           t->classes.at(c).first.seed, status(c)});
  row.no_verdict = t->incomplete;
  row.no_verdict_why = t->first_undecided;
  if (faults_given && !info.sets_aside.empty()) row.sets_aside = info.sets_aside.Describe();
  if (dfs) row.dfs_exhausted = t->exhausted ? 1 : 0;
  return row;
}

}  // namespace

namespace {

// A line on stderr while runs go on, when stderr is a terminal (never in files or CI logs).
class Progress {
 public:
  // total: the runs planned (0: a time budget of budget_seconds).
  Progress(bool on, int64_t total, int64_t budget_seconds, bool baseline)
      : on_(on && isatty(2)), start_(std::chrono::steady_clock::now()) {
    state_.total = total;
    state_.budget_seconds = budget_seconds;
    state_.baseline = baseline;
  }
  // classes(&fresh, &known) counts the classes so far; asked only when the line is redrawn.
  void update(int64_t runs, const std::function<void(int64_t*, int64_t*)>& classes) {
    if (!on_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(250)) return;
    last_ = now;
    state_.runs = runs;
    state_.seconds = std::chrono::duration<double>(now - start_).count();
    state_.fresh = state_.known = 0;
    classes(&state_.fresh, &state_.known);
    const std::string line = reports::ProgressLine(state_);
    width_ = std::max(width_, line.size() + 2);
    std::fprintf(stderr, "\r  %-*s", static_cast<int>(width_ - 2), line.c_str());
    shown_ = true;
  }
  ~Progress() {
    if (shown_) std::fprintf(stderr, "\r%*s\r", static_cast<int>(width_), "");
  }

 private:
  bool on_, shown_ = false;
  size_t width_ = 0;
  reports::ProgressState state_;
  std::chrono::steady_clock::time_point start_, last_{};
};

}  // namespace

namespace {

// The spec as a command line that writes nothing but its stdout: no report, JUnit, timeline,
// scenario or baseline files, and not a shard.
CheckSpec WithoutOutputs(CheckSpec c) {
  c.out = c.save_scenarios = c.write_baseline = c.junit = c.html = c.jepsen = "";
  c.shard_index = c.shard_count = 0;
  c.verbose = c.coverage = false;
  c.format = "text";
  return c;
}

// The spec of a replay line: one run of `property` at `seed`, with no outputs and no sample of
// runs replayed on redis-server.
CheckSpec OneRun(const CheckSpec& spec, const std::string& property, uint64_t seed) {
  CheckSpec c = WithoutOutputs(spec);
  c.properties = {property};
  c.seed = seed;
  c.runs = 1;
  c.budget_seconds = 0;
  c.real_sample = 0;
  return c;
}

// One check: its inputs, set up once from the spec, its campaign's tally, and its report.
class CheckRun {
 public:
  explicit CheckRun(const CheckSpec& spec);
  int Run();

 private:
  // What one run leaves for the tally.
  struct Outcome {
    props::RunSpec run;
    bool incomplete = false;
    std::vector<std::string> classes;
    std::vector<std::string> undecided;  // why it has no verdict
    sim::LineCoverage coverage;          // --coverage: the lines its scripts ran
  };

  // The schedule of one run: a walk from the seed (nullptr), PCT, or recorded choices.
  std::unique_ptr<sim::Strategy> MakeStrategy(const props::RunSpec& r) const;
  // One run of one property (on a campaign thread).
  Outcome RunOne(const props::RunSpec& r);
  void RunDfs(Progress* progress);
  void RunRandom(Progress* progress);
  // The classes found so far, new and known against the baseline (all "new" without one).
  std::function<void(int64_t*, int64_t*)> CountClasses() const {
    return [this](int64_t* fresh, int64_t* known) {
      for (const std::string& p : properties)
        if (const harness::PropertyTally* t = tally.find(p))
          for (const std::string& c : t->order) ++*(StatusOf(p, c) == "known" ? known : fresh);
    };
  }
  bool OutOfTime() const {
    return spec.budget_seconds > 0 &&
           std::chrono::steady_clock::now() - start > std::chrono::seconds(spec.budget_seconds);
  }
  // With a baseline, a class is "new" or "known"; only new ones fail the check.
  std::string StatusOf(const std::string& p, const std::string& c) const {
    if (!baseline) return "";
    return baseline->find(p, c) ? "known" : "new";
  }
  void Summarize();
  // --coverage: the report's rows, every script of the versions run and any other that ran.
  void SummarizeCoverage();
  // The script file a finding's own words name, when they name exactly one: the --scripts
  // replacement if there is one, else the shipped file ("" when none or several).
  std::string ScriptFileOf(const reports::ViolationRow& v) const;
  // The file a script id's body comes from: its --scripts replacement, or the shipped file.
  std::string FileOfScript(const std::string& id) const;
  reports::ViolationRow RowOf(const std::string& p, const std::string& c,
                              const harness::Counterexample& x);
  reports::ViolationRow Violation(const std::string& p, const std::string& c);
  int Finish(int code, const harness::Baseline& written);

  const CheckSpec& spec;
  const props::System& system;
  const std::string old_version;
  const bool dfs;
  std::vector<std::string> properties;
  real::ScriptCatalog scripts;
  std::optional<harness::Baseline> baseline;
  std::unique_ptr<real::RedisServer> server, sample_server;
  reports::ScriptNames script_names;
  harness::Plan plan;  // --shard i/n: the indices i-1, i-1+n, ... of [0, --runs)
  std::chrono::steady_clock::time_point start;

  harness::Tally tally;
  sim::LineCoverage coverage;  // --coverage: every run's, added up in the runs' order
  std::vector<std::string> compiled_versions;  // the versions whose scripts the runs load
  reports::CheckReport report;
};

CheckRun::CheckRun(const CheckSpec& spec)
    : spec(spec),
      system(*props::FindSystem(spec.system)),
      old_version(spec.OldVersion()),
      dfs(spec.strategy == "dfs") {
  // Everything that can refuse the command is checked before the first line is printed.
  if (!spec.out.empty()) internal::CheckWritable(spec.out, "out");
  if (!spec.junit.empty()) internal::CheckWritableFile(spec.junit, "junit");
  if (!spec.write_baseline.empty())
    internal::CheckWritableFile(spec.write_baseline, "write-baseline");
  if (!spec.save_scenarios.empty()) internal::CheckWritable(spec.save_scenarios, "save-scenarios");
  if (!spec.html.empty()) internal::CheckWritable(spec.html, "html");
  if (!spec.jepsen.empty()) internal::CheckWritable(spec.jepsen, "jepsen");
  properties = spec.properties;
  if (properties.empty())
    for (const auto& p : system.properties()) properties.push_back(p.name);
  // A dfs search explores every schedule of one seed's workload: one seed unless told.
  const int64_t max_runs =
      spec.runs > 0 ? spec.runs : (spec.budget_seconds > 0 ? INT64_MAX : (dfs ? 1 : 100));
  std::vector<std::string> replaced;
  scripts = internal::CatalogWithOverrides(spec.scripts, system, spec.version, replaced);
  scripts.set_client(spec.ClientCode());
  if (!spec.baseline.empty()) baseline = harness::LoadBaseline(spec.baseline);
  compiled_versions = {spec.version};
  if (!old_version.empty())
    for (absl::string_view v : absl::StrSplit(old_version, ',')) compiled_versions.emplace_back(v);
  for (const std::string& v : compiled_versions)
    if (const std::string err = system.FirstCompileError(scripts, v); !err.empty())
      throw real::SetupError("a script does not compile: " + err);
  if (spec.redis == "spawn") server = std::make_unique<real::RedisServer>(sim::kDefaultEpochMs);
  if (spec.real_sample > 0)
    sample_server = std::make_unique<real::RedisServer>(sim::kDefaultEpochMs);
  script_names = scripts.names();
  std::printf("seed: %llu\n", static_cast<unsigned long long>(spec.seed));
  std::printf("version: %s %s (rolling-deploy properties run old pods of %s)\n",
              spec.system.c_str(), spec.version.c_str(),
              old_version.empty() ? "no earlier version" : old_version.c_str());
  for (const std::string& line : replaced) std::printf("%s\n", line.c_str());
  std::fflush(stdout);

  int64_t jobs = internal::JobsOrCores(spec.jobs);
  if (server || sample_server) jobs = 1;  // one spawned server serves one run at a time
  plan.jobs = static_cast<size_t>(jobs);
  plan.base.version = spec.version;
  plan.base.old_version = old_version;
  plan.base.clients = static_cast<int>(spec.clients);
  plan.base.ops = static_cast<int>(spec.ops);
  plan.base.skip = spec.skip;
  plan.base.faults = spec.faults;
  plan.base.options = spec.options;
  plan.base.trace = spec.trace;
  plan.seed = spec.seed;
  for (const std::string& p : properties)
    if (system.property(p)->applies(spec.version, old_version)) plan.properties.push_back(p);
  plan.first = spec.shard_count > 0 ? spec.shard_index - 1 : 0;
  plan.stride = spec.shard_count > 0 ? spec.shard_count : 1;
  plan.count = max_runs == INT64_MAX   ? INT64_MAX
               : max_runs > plan.first ? (max_runs - plan.first + plan.stride - 1) / plan.stride
                                       : 0;
  plan.stop = [this] { return OutOfTime() || internal::Interrupted() != 0; };
}

std::unique_ptr<sim::Strategy> CheckRun::MakeStrategy(const props::RunSpec& r) const {
  if (spec.strategy == "pct")
    return std::make_unique<sim::Pct>(static_cast<int>(spec.pct_depth),
                                      int64_t{r.clients} * r.ops * 8);
  if (spec.strategy == "replay") return std::make_unique<sim::Replay>(spec.choices);
  return nullptr;
}

CheckRun::Outcome CheckRun::RunOne(const props::RunSpec& run) {
  Outcome o;
  o.run = run;
  auto strategy = MakeStrategy(run);
  std::optional<sim::ScopedLineCoverage> recording;
  if (spec.coverage) recording.emplace(&o.coverage);
  props::RunOutcome r = system.Run(run, scripts, server.get(), strategy.get());
  recording.reset();
  o.classes = r.classes;
  o.incomplete = r.incomplete;
  o.undecided = r.undecided;
  const uint64_t i = run.seed - spec.seed;
  if (sample_server && i % static_cast<uint64_t>(spec.real_sample) == 0) {  // jobs == 1 here
    auto again = MakeStrategy(run);
    props::RunOutcome real = system.Run(run, scripts, sample_server.get(), again.get());
    ++report.sample.runs;
    const std::string real_hash = real.trace_hash(), hash = r.trace_hash();
    if (real_hash != hash || real.classes != r.classes)
      if (!report.sample.diverged++)
        report.sample.first_divergence =
            absl::StrCat(run.property, " seed ", run.seed, ": emulator trace ", hash.substr(0, 16),
                         ", redis-server trace ", real_hash.substr(0, 16));
  }
  return o;
}

// dfs: each seed's search runs here, one after another (a search is one long walk).
void CheckRun::RunDfs(Progress* progress) {
  for (int64_t j = 0; j < plan.count; ++j) {
    if (OutOfTime() || internal::Interrupted() != 0) break;
    for (const std::string& p : plan.properties) {
      const props::RunSpec r = plan.At(j, p);
      const sim::DfsResult d = sim::ExploreDfs(
          [&](sim::Strategy& strategy, sim::RunResult* run) {
            std::optional<sim::ScopedLineCoverage> recording;
            if (spec.coverage) recording.emplace(&coverage);
            const props::RunOutcome o = system.Run(r, scripts, server.get(), &strategy);
            *run = o.run;
            std::vector<size_t> choices;
            for (const auto& [n, k] : o.run.choices) choices.push_back(k);
            tally.Seen(r, o.classes, o.incomplete, choices);
            return o.violated;
          },
          {.preemption_bound = static_cast<int>(spec.preemption_bound),
           .prune_visited_states = false,
           .max_schedules = spec.max_schedules});
      tally.AddSearch(p, d.schedules, d.violations, d.exhausted);
      progress->update(tally.runs(), CountClasses());
    }
  }
}

void CheckRun::RunRandom(Progress* progress) {
  harness::RunInOrder<Outcome>(
      plan, [&](const props::RunSpec& r) { return RunOne(r); },
      [&](Outcome& o) {
        tally.Add(o.run, o.classes, o.incomplete);
        coverage.Add(o.coverage);
        if (!o.undecided.empty()) tally.Undecided(o.run, o.undecided.front());
        progress->update(tally.runs(), CountClasses());
      });
}

// The report's rows from the tally, and the table (and the baseline's line) on stdout.
void CheckRun::Summarize() {
  report.seed = spec.seed;
  report.system = spec.system;
  report.version = spec.version;
  report.old_version = old_version;
  report.baseline = spec.baseline;
  for (const std::string& p : properties) {
    const props::PropertyInfo& info = *system.property(p);
    report.properties.push_back(Row(info, tally.find(p), info.applies(spec.version, old_version),
                                    !spec.faults.empty(), dfs,
                                    [&](const std::string& c) { return StatusOf(p, c); }));
  }
  std::printf("%s", reports::SummaryText(report).c_str());
  SummarizeCoverage();
  if (report.coverage) std::printf("%s", reports::CoverageText(report.scripts).c_str());
  if (!baseline) return;
  for (const auto& a : baseline->accepted) {
    const harness::PropertyTally* t = tally.find(a.property);
    if (!t || !t->classes.count(a.cls)) report.unseen.push_back({a.property, a.cls, a.reason});
  }
  std::printf("%s", reports::BaselineText(report, spec.verbose).c_str());
}

void CheckRun::SummarizeCoverage() {
  if (!spec.coverage) return;
  report.coverage = true;
  for (const real::ScriptFile& f : scripts.all()) {
    const bool ours = std::any_of(
        compiled_versions.begin(), compiled_versions.end(),
        [&](const std::string& v) { return f.file.rfind(system.scripts_dir(v) + "/", 0) == 0; });
    reports::CoverageRow row = internal::CoverageRowOf(f, coverage, FileOfScript(f.id()));
    if (ours || !row.hits.empty()) report.scripts.push_back(std::move(row));
  }
  std::sort(report.scripts.begin(), report.scripts.end(),
            [](const reports::CoverageRow& x, const reports::CoverageRow& y) {
              return x.script < y.script;
            });
}

std::string CheckRun::ScriptFileOf(const reports::ViolationRow& v) const {
  std::set<std::string> named;  // "<state/beta30/SET_WITH_QUOTA_SCRIPT>"
  for (size_t at = v.counterexample.find("\"<"); at != std::string::npos;
       at = v.counterexample.find("\"<", at + 2)) {
    const size_t end = v.counterexample.find(">\"", at);
    if (end == std::string::npos) break;
    const std::string name = v.counterexample.substr(at + 2, end - at - 2);
    if (name.find('/') != std::string::npos && name.find(' ') == std::string::npos)
      named.insert(name);
  }
  if (named.size() != 1) return "";
  return FileOfScript(*named.begin());
}

std::string CheckRun::FileOfScript(const std::string& name) const {  // system/version/CONSTANT
  if (!spec.scripts.empty()) {  // DIR/<system>/<version>/NAME.lua, or DIR/NAME.lua for V's own
    const std::string nested = spec.scripts + "/" + name + ".lua";
    const std::string flat = spec.scripts + "/" + name.substr(name.rfind('/') + 1) + ".lua";
    if (std::filesystem::is_regular_file(nested)) return nested;
    if (name.rfind(system.scripts_dir(spec.version) + "/", 0) == 0 &&
        std::filesystem::is_regular_file(flat))
      return flat;
  }
  return "real/scripts/" + name + ".lua";
}

// A counterexample of class `c` of property `p` as its report row, with its calls and replay
// line.
reports::ViolationRow CheckRun::RowOf(const std::string& p, const std::string& c,
                                      const harness::Counterexample& x) {
  const harness::ClassSeen& seen = tally[p].classes.at(c);
  const props::RunSpec& m = x.spec;
  const std::string sentence = props::SentenceOf(*system.property(p), c);
  reports::ViolationRow row{p,      c,  sentence, StatusOf(p, c), m.seed, m.clients, m.ops,
                            x.text, {}, ""};
  row.shape = x.shape;
  row.operations = harness::Operations(m);
  row.redis_calls = reports::CallsInOrder(x.outcome.trace, script_names);
  for (auto& [actor, calls] : reports::CallsPerActor(x.outcome.trace, script_names))
    row.calls_per_actor.emplace_back(actor, std::move(calls));
  CheckSpec replay = OneRun(spec, p, m.seed);
  replay.clients = m.clients;
  replay.ops = m.ops;
  replay.skip = m.skip;
  replay.jobs = 0;
  replay.quiet = false;
  if (dfs) {
    replay.strategy = "replay";
    replay.choices = seen.first_choices;
    replay.preemption_bound = -1;
    replay.max_schedules = 100000;
  }
  row.replay = replay.Write();
  return row;
}

// The class `c` of property `p`: its counterexample (minimized unless its schedule is fixed,
// from the first run that showed it or, where that stays large, from the next ones:
// reports::PickCounterexample) with its calls and replay line, its timeline page and its
// scenario written. A shard's row carries every candidate, for merge to pick from.
reports::ViolationRow CheckRun::Violation(const std::string& p, const std::string& c) {
  const harness::ClassSeen& seen = tally[p].classes.at(c);
  const bool fixed = dfs || spec.strategy == "replay";
  // A class the baseline knows is shrunk from its first run alone, one operation at a time: a
  // gate's counterexamples are not read (--verbose prints them).
  const bool thorough = StatusOf(p, c) != "known";
  const auto shrink = [&](const props::RunSpec& from) {
    return harness::Shrink(seen, from, c, fixed, thorough, static_cast<int64_t>(plan.jobs),
                           [&](const props::RunSpec& s, const harness::ClassSeen* recorded) {
                             std::unique_ptr<sim::Strategy> strategy =
                                 dfs && recorded
                                     ? std::make_unique<sim::Replay>(recorded->first_choices)
                                     : MakeStrategy(s);
                             return system.Run(s, scripts, server.get(), strategy.get());
                           });
  };
  std::vector<harness::Counterexample> shrunk = {shrink(seen.first)};
  std::vector<reports::ViolationRow> rows = {RowOf(p, c, shrunk[0])};
  if (!fixed && (spec.shard_count > 0 || reports::ShrinkOtherRuns(rows[0])))
    for (const props::RunSpec& from : seen.more) {
      shrunk.push_back(shrink(from));
      rows.push_back(RowOf(p, c, shrunk.back()));
    }
  const size_t picked = reports::PickCounterexample(rows);
  const harness::Counterexample& x = shrunk[picked];
  reports::ViolationRow row = rows[picked];
  const std::string& sentence = row.sentence;
  if (!spec.html.empty()) {
    reports::TimelinePage page{absl::StrCat(system.name(), " ", spec.version, ": ", p, " / ", c),
                               sentence,
                               x.text,
                               row.replay,
                               {}};
    for (const props::Finding& f : x.outcome.findings)
      if (props::ClassOf(f) == c)
        for (const props::Deadline& d : f.deadlines)
          page.deadlines.push_back({d.actor, d.at_ms, d.what});
    if (!spec.out.empty())
      page.report_link =
          std::filesystem::relative(std::filesystem::absolute(spec.out) / "report.md",
                                    std::filesystem::absolute(spec.html))
              .string();
    for (const props::Finding& f : x.outcome.findings)
      if (props::ClassOf(f) == c)
        for (const props::Involved& i : f.involved)
          page.highlights.push_back({i.actor, i.from_ms, i.to_ms, i.op});
    row.html = absl::StrCat(
        spec.html, "/",
        reports::PageFileName(absl::StrCat(system.name(), "-", spec.version, "-", p, "-", c)));
    reports::WriteFileAtomically(row.html,
                                 reports::TimelineHtml(page, x.outcome.trace, script_names));
  }
  if (!spec.jepsen.empty() && !x.outcome.histories.empty())
    internal::WriteJepsenHistories(
        spec.jepsen, absl::StrCat(system.name(), "-", spec.version, "-", p, "-", c), x.outcome);
  if (!spec.save_scenarios.empty())
    row.scenario = harness::SaveCounterexample(spec.save_scenarios, system, x, c, sentence,
                                               spec.scripts, spec.ClientCode());
  if (spec.shard_count > 0 && !fixed) {
    row.candidates = rows;
    row.candidates[picked].html = row.html;
  }
  return row;
}

int CheckRun::Finish(int code, const harness::Baseline& written) {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (spec.shard_count > 0) {
    // What merge compares: the runs, not how they were run or where the outputs went (the
    // thread count, --quiet, a path spelt another way).
    CheckSpec command = WithoutOutputs(spec);
    command.coverage = spec.coverage;  // shards with and without coverage are not one check
    command.quiet = false;
    command.jobs = 0;
    std::error_code ec;
    if (!spec.baseline.empty())
      command.baseline = std::filesystem::weakly_canonical(spec.baseline, ec).string();
    if (!spec.scripts.empty())
      command.scripts = std::filesystem::weakly_canonical(spec.scripts, ec).string();
    report.shard = {spec.shard_index, spec.shard_count, command.Write(), seconds};
  }
  const int signal = internal::Interrupted();
  if (signal != 0)
    report.incomplete = absl::StrCat("interrupted by ", internal::SignalName(signal), " after ",
                                     reports::Count(tally.runs(), dfs ? "schedule" : "run"));
  internal::WriteReportFiles(report, spec.out, spec.junit, seconds);
  if (!spec.write_baseline.empty()) {
    harness::SaveBaseline(spec.write_baseline, written);
    std::printf("baseline written: %s (%s)\n", spec.write_baseline.c_str(),
                reports::Count(static_cast<int64_t>(written.accepted.size()), "class").c_str());
  }
  const int64_t no_verdict = reports::NoVerdict(report);
  if (no_verdict > 0 && code == 0) {
    std::printf("%s", reports::NoVerdictLine(no_verdict).c_str());
    code = 3;
  }
  std::printf("%s\n", reports::VerdictLine(report, spec.out).c_str());
  if (signal != 0) {
    std::printf("incomplete: %s; the report covers the runs made\n", report.incomplete.c_str());
    return 128 + signal;
  }
  return code;
}

int CheckRun::Run() {
  start = std::chrono::steady_clock::now();
  {
    // Runs planned: every property of each index (a time budget: counted against the clock).
    const int64_t total = plan.count == INT64_MAX
                              ? 0
                              : plan.count * static_cast<int64_t>(dfs ? 1 : plan.properties.size());
    Progress progress(!spec.quiet, dfs ? 0 : total, spec.budget_seconds, baseline.has_value());
    if (dfs)
      RunDfs(&progress);
    else
      RunRandom(&progress);
  }
  Summarize();
  if (!spec.quiet) {  // on stderr: the same seed prints the same stdout
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fflush(stdout);
    std::fprintf(stderr, "speed: %lld %s in %.2f s (%.0f per second)\n",
                 static_cast<long long>(tally.runs()), dfs ? "schedules" : "runs", secs,
                 secs > 0 ? tally.runs() / secs : 0.0);
  }
  std::printf("%s", reports::SampleText(report).c_str());
  int code = report.sample.diverged > 0 ? 1 : 0;
  harness::Baseline written;
  if (!spec.write_baseline.empty()) {
    written.system = spec.system;
    written.version = spec.version;
    if (baseline) written.accepted = baseline->accepted;
  }
  int64_t known = 0;  // classes the baseline knows: a line each in the table (--verbose: in full)
  for (const std::string& p : properties)
    for (const std::string& c : tally[p].order) {
      report.violations.push_back(Violation(p, c));
      const reports::ViolationRow& v = report.violations.back();
      if (v.status == "known" && !spec.verbose)
        ++known;
      else
        std::printf("%s", reports::ViolationText(v).c_str());
      if (v.status != "known") code = 1;
      if (!spec.write_baseline.empty() && !written.find(p, c))
        written.accepted.push_back({p, c, "unreviewed: " + v.sentence, v.scenario});
    }
  if (spec.format == "github")
    for (const reports::ViolationRow& v : report.violations)
      if (v.status != "known")
        std::printf("%s", reports::GithubAnnotation(v, ScriptFileOf(v)).c_str());
  if (known > 0)
    std::printf(
        "\n%s the baseline knows: the table lists them, --verbose prints their "
        "counterexamples\n",
        reports::Count(known, "class").c_str());
  return Finish(code, written);
}

}  // namespace

int RunExplore(const CheckSpec& spec) {
  internal::CatchInterrupts("explore");
  return RunCheck(spec);
}

int RunCheck(const CheckSpec& spec) {
  internal::CatchInterrupts("check");  // before a server is spawned: its stop is the destructor's
  return CheckRun(spec).Run();
}

}  // namespace testbed::cli
