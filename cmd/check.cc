// testbed check: generated workloads of a registered system, checked against each of its
// properties; a per-property table, each violation minimized with its Redis calls and replay
// line, reports, and saved scenarios. Nothing here names a system (harness/system.h).
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

using internal::AppendFlag;

inline constexpr int64_t kMaxBudgetSeconds = 30 * 24 * 3600;

struct Raw {
  CheckSpec spec;
  bool has_seed = false, properties_given = false;
  std::string faults = "none", properties, skip, choices, shard;
  std::map<std::string, std::string> options;  // every registered system's own flags
};

void Define(CLI::App& app, Raw& r) {
  app.add_option("--system", r.spec.system, "the system under test (see testbed list)")->required();
  app.add_option("--version", r.spec.version,
                 "the version under test (default: the system's newest)");
  app.add_option("--trace", r.spec.trace,
                 "a recorded trace (testbed import's file): each run's clients make its clients' "
                 "operations, each client its own in order, in place of the workload's (what "
                 "testbed explore runs)");
  app.add_option("--rolling-from", r.spec.rolling_from,
                 "the old pods' version in rolling-deploy properties (default: its predecessor)");
  app.add_option("--scripts", r.spec.scripts,
                 "changed scripts: DIR/NAME replaces NAME of --version only; "
                 "DIR/<system>/<version>/NAME replaces that version's NAME");
  app.add_option("--baseline", r.spec.baseline,
                 "accepted anomaly classes (baselines/<system>/<version>.json): exit 1 only on a "
                 "new class");
  app.add_option("--junit", r.spec.junit,
                 "write JUnit XML here: a case per property and anomaly class, failing for new "
                 "ones");
  app.add_option("--write-baseline", r.spec.write_baseline,
                 "write the classes found (and --baseline's) to this file, new ones marked "
                 "unreviewed");
  internal::AddSeed(app, &r.spec.seed, &r.has_seed);
  internal::AddInt(app, "--runs", &r.spec.runs, 1, "runs per property (default 100)")
      ->excludes(internal::AddInt(app, "--budget-seconds", &r.spec.budget_seconds, 1,
                                  "run until this much time has passed (at most 30 days)", nullptr,
                                  kMaxBudgetSeconds));
  internal::AddInt(
      app, "--clients", &r.spec.clients, 1,
      absl::StrCat("clients per run (default: the system's; at most ", props::kMaxClients, ")"),
      nullptr, props::kMaxClients);
  internal::AddInt(
      app, "--ops", &r.spec.ops, 1,
      absl::StrCat("operations per client (default: the system's; at most ", props::kMaxOps,
                   ", and clients x ops at most ", props::kMaxClientOps, ")"),
      nullptr, props::kMaxOps);
  app.add_option("--faults", r.faults, "all, none, or a comma list (see testbed list)");
  app.add_option("--properties", r.properties, "a comma list (default: every property)")
      ->each([&r](const std::string&) { r.properties_given = true; });
  app.add_option("--skip", r.skip, "CLIENT:OP pairs the run leaves out (what shrinking removed)");
  app.add_option("--redis", r.spec.redis,
                 "none (default): the emulator; spawn: a spawned redis-server");
  internal::AddInt(
      app, "--real-sample", &r.spec.real_sample, 1,
      "replay every K-th run on a spawned redis-server; same verdict and trace required");
  internal::AddInt(app, "--jobs", &r.spec.jobs, 1,
                   "threads (default: the cores; 1 with a redis-server; at most 256)", nullptr,
                   256);
  app.add_option("--out", r.spec.out, "write report.json and report.md here");
  app.add_option("--save-scenarios", r.spec.save_scenarios, "save each minimized violation here");
  app.add_option("--html", r.spec.html,
                 "write a self-contained timeline page per counterexample here (report.md links "
                 "to them)");
  app.add_option("--jepsen", r.spec.jepsen,
                 "write each counterexample's judged histories here in Jepsen's forms (JSON as "
                 "elle-cli reads it, and EDN), with an index of their models and verdicts");
  app.add_option("--shard", r.shard,
                 "I/N: run only the I-th of N interleaved slices of the seed space (runs I-1, "
                 "I-1+N, ...); testbed merge joins the shards' report.json files");
  app.add_flag("--quiet", r.spec.quiet, "no progress or speed lines on stderr");
  app.add_flag("--verbose", r.spec.verbose,
               "print every class's counterexample in full (by default a class the baseline "
               "knows gets one line)");
  app.add_flag("--coverage", r.spec.coverage,
               "Lua line coverage: which lines of each script the runs executed (printed, in "
               "report.json, and --out DIR/coverage.lcov)");
  app.add_option("--format", r.spec.format,
                 "text (default), or github: also a workflow annotation (::error) per new class, "
                 "naming the script file where the finding names one")
      ->check(CLI::IsMember({"text", "github"}));
  app.add_option("--strategy", r.spec.strategy,
                 "random (default): a walk per seed; pct; dfs: every schedule of each seed's "
                 "workload; replay: --choices")
      ->check(CLI::IsMember({"random", "pct", "dfs", "replay"}));
  internal::AddInt(app, "--pct-depth", &r.spec.pct_depth, 1,
                   "PCT's bug depth d (default 2, at most 100)", nullptr, 100);
  internal::AddInt(app, "--preemption-bound", &r.spec.preemption_bound, 0,
                   "dfs: at most this many preemptions per schedule (default unbounded)");
  internal::AddInt(app, "--max-schedules", &r.spec.max_schedules, 1,
                   "dfs: stop a search after this many schedules (default 100000)");
  app.add_option("--choices", r.choices, "replay: the schedule, I,I,... (printed by dfs)");
  std::map<std::string, bool> added;
  for (const props::System* s : props::Systems())
    for (const auto& o : s->options())
      if (!added[o.flag]) {
        added[o.flag] = true;
        app.add_option("--" + o.flag, r.options[o.flag],
                       absl::StrCat(o.help, " (", s->name(), ")"));
      }
}

// --trace: the trace is the system's and version's, and some property can judge it; clients and
// ops default to the trace's, properties to those a trace can be judged by.
// A recorded trace's file (testbed import's), or a usage error naming the flag it came with
// ("": explore's positional argument).
nlohmann::json ReadTraceFile(const std::string& path, const std::string& flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in || std::filesystem::is_directory(path))
    throw UsageError("cannot read " + (flag.empty() ? "recorded trace " : flag + " ") + path);
  nlohmann::json file = nlohmann::json::parse(in, nullptr, false);
  if (!harness::IsRecordedTrace(file))
    throw UsageError((flag.empty() ? "" : flag + " ") + path +
                     " is not a recorded trace (testbed import writes them)");
  return file;
}

void ResolveTrace(const props::System& system, const Raw& r, CheckSpec& s) {
  const nlohmann::json file = ReadTraceFile(s.trace, "--trace");
  const std::string version =
      file.value("version", nlohmann::json()).is_string() ? file["version"].get<std::string>() : "";
  if (file.value("system", std::string()) != s.system || version != s.version)
    throw UsageError(
        "--trace " + s.trace + " holds calls of " + file.value("system", std::string("?")) + " " +
        (version.empty() ? "(version unknown)" : version) + ", not " + s.system + " " + s.version);
  const props::TraceSupport* support = system.trace_support(s.version);
  if (!support)
    throw UsageError("--trace: no property of " + s.system + " " + s.version +
                     " is judged on a recorded trace yet");
  if (!support->explore)
    throw UsageError("--trace: " + s.system + " " + s.version +
                     "'s operations are judged on a recorded trace (testbed replay) but not made "
                     "again through the port yet");
  std::vector<int> ops;
  try {
    ops = support->ops_per_client(*props::LoadRecordedCalls(s.trace));
  } catch (const std::invalid_argument& e) {
    throw UsageError("--trace " + s.trace + ": " + e.what());
  }
  if (ops.empty())
    throw UsageError("--trace " + s.trace + " holds no operation of " + s.system +
                     " that a property can judge");
  if (s.clients == 0) s.clients = static_cast<int64_t>(ops.size());
  if (s.clients > static_cast<int64_t>(ops.size()))
    throw UsageError(absl::StrCat("--clients ", s.clients, ": --trace ", s.trace, " has ",
                                  ops.size(), " clients"));
  if (s.ops == 0) s.ops = *std::max_element(ops.begin(), ops.end());
  if (!r.properties_given) {
    s.properties = support->properties;
    return;
  }
  for (const std::string& p : std::vector<std::string>(absl::StrSplit(r.properties, ',')))
    if (!p.empty() && !support->judges(p))
      throw UsageError("--properties: " + p + " is not judged on a recorded trace (judged: " +
                       absl::StrJoin(support->properties, ", ") + "; " + support->others + ")");
}

CheckSpec Resolve(const Raw& r) {
  CheckSpec s = r.spec;
  const props::System* system = props::FindSystem(s.system);
  if (!system) {
    std::vector<std::string> names;
    for (const auto* x : props::Systems()) names.push_back(x->name());
    throw UsageError("--system " + s.system + " is not a registered system (" +
                     absl::StrJoin(names, ", ") + "; see testbed list)");
  }
  std::vector<std::string> versions;
  for (const auto& v : system->versions()) versions.push_back(v.name);
  if (s.version.empty()) s.version = system->default_version();
  if (!system->version(s.version))
    throw UsageError("--version " + s.version + " is not a ported version of " + s.system + " (" +
                     absl::StrJoin(versions, ", ") + "; see testbed list)");
  if (const std::string err = system->OldVersionsError(s.version, s.rolling_from); !err.empty())
    throw UsageError("--rolling-from " + s.rolling_from + ": " + err);
  if (!r.has_seed) s.seed = FreshSeed();
  if (!r.shard.empty()) {
    const std::vector<std::string> parts = absl::StrSplit(r.shard, '/');
    auto decimal = [](const std::string& t, int64_t* v) {
      return !t.empty() && t.size() < 10 &&
             std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
             absl::SimpleAtoi(t, v);
    };
    int64_t i = 0, n = 0;
    if (parts.size() != 2 || !decimal(parts[0], &i) || !decimal(parts[1], &n) || n < 1 || i < 1 ||
        i > n)
      throw UsageError("--shard " + r.shard + ": expected I/N with 1 <= I <= N, as 2/4");
    if (!r.has_seed)
      throw UsageError("--shard needs --seed: every shard must slice the same seed space");
    s.shard_index = i;
    s.shard_count = n;
  }
  s.choices = ParseChoices(r.choices);
  if (s.strategy == "replay" && s.choices.empty())
    throw UsageError("--strategy replay needs --choices");
  if (s.strategy != "replay" && !s.choices.empty())
    throw UsageError("--choices needs --strategy replay");
  if (!s.trace.empty()) ResolveTrace(*system, r, s);
  if (s.clients == 0) s.clients = system->default_clients();
  if (s.ops == 0) s.ops = system->default_ops();
  if (s.clients * s.ops > props::kMaxClientOps)
    throw UsageError(absl::StrCat("--clients x --ops must be at most ", props::kMaxClientOps,
                                  ", not ", s.clients, " x ", s.ops));
  try {
    s.faults = sim::FaultList::Parse(r.faults, /*strict=*/true);
    s.skip = props::ParseSkip(r.skip);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (r.properties_given)
    for (const std::string& p : std::vector<std::string>(absl::StrSplit(r.properties, ','))) {
      if (p.empty()) throw UsageError("--properties '" + r.properties + "' has an empty item");
      if (!system->property(p))
        throw UsageError("unknown property '" + p + "' of " + s.system + " (see testbed list)");
      if (std::find(s.properties.begin(), s.properties.end(), p) != s.properties.end())
        throw UsageError("--properties names " + p + " twice");
      s.properties.push_back(p);
    }
  for (const auto& [flag, value] : r.options) {
    if (value.empty()) continue;
    const props::SystemOption* known = nullptr;
    for (const auto& o : system->options())
      if (o.flag == flag) known = &o;
    if (!known) throw UsageError("--" + flag + " is not an option of system " + s.system);
    if (std::find(known->choices.begin(), known->choices.end(), value) == known->choices.end())
      throw UsageError("--" + flag + " takes " + absl::StrJoin(known->choices, " or ") + ", not '" +
                       value + "'");
    if (value != known->default_value) s.options[flag] = value;
  }
  if (s.redis.find(':') != std::string::npos)
    throw UsageError(
        "--redis " + s.redis +
        ": check moves the server's clock with virtual time, which only a redis-server it "
        "spawns (under its time shim) allows, and it never writes to a server it did not "
        "start; use --redis spawn");
  CheckRedisFlag(s.redis);
  if (s.real_sample > 0 && s.redis != "none")
    throw UsageError(
        "--real-sample compares emulator runs with a spawned redis-server; use it with --redis "
        "none");
  if (!s.scripts.empty() && !std::filesystem::is_directory(s.scripts))
    throw UsageError("--scripts " + s.scripts + " is not a directory");
  if (!s.baseline.empty()) {
    if (!std::filesystem::is_regular_file(s.baseline))
      throw UsageError("--baseline " + s.baseline + " is not a baseline file" +
                       (std::filesystem::is_directory(s.baseline) ? " (a directory)" : ""));
    try {
      const harness::Baseline b = harness::LoadBaseline(s.baseline);
      if (b.system != s.system || b.version != s.version)
        throw UsageError("--baseline " + s.baseline + " is for " + b.system + " " + b.version +
                         ", not " + s.system + " " + s.version);
      for (const auto& a : b.accepted)
        if (!system->property(a.property))
          throw UsageError("--baseline " + s.baseline + " names an unknown property '" +
                           a.property + "' of " + s.system);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  return s;
}

}  // namespace

// --scripts DIR (harness::CatalogWithOverrides), with a line for each replacement.
real::ScriptCatalog internal::CatalogWithOverrides(const std::string& dir,
                                                   const props::System& system,
                                                   const std::string& version) {
  std::vector<std::pair<std::string, std::string>> replaced;
  real::ScriptCatalog catalog;
  try {
    catalog = harness::CatalogWithOverrides(dir, system, version, &replaced);
  } catch (const std::invalid_argument& e) {
    throw UsageError("--scripts " + dir + ": " + e.what());
  }
  for (const auto& [target, path] : replaced)
    std::printf("scripts: %s replaced by %s\n", target.c_str(), path.c_str());
  return catalog;
}

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

std::string CheckSpec::OldVersion() const {
  if (!rolling_from.empty()) return rolling_from;
  const props::System* s = props::FindSystem(system);
  const props::VersionInfo* v = s ? s->version(version) : nullptr;
  return v ? v->rolling_from : "";
}

std::string CheckSpec::Write() const {
  std::string line = "testbed check";
  AppendFlag(line, "system", system);
  AppendFlag(line, "version", version);
  if (!trace.empty()) AppendFlag(line, "trace", trace);
  if (!properties.empty()) AppendFlag(line, "properties", absl::StrJoin(properties, ","));
  AppendFlag(line, "seed", absl::StrCat(seed));
  if (runs > 0) AppendFlag(line, "runs", absl::StrCat(runs));
  if (budget_seconds > 0) AppendFlag(line, "budget-seconds", absl::StrCat(budget_seconds));
  AppendFlag(line, "clients", absl::StrCat(clients));
  AppendFlag(line, "ops", absl::StrCat(ops));
  if (!faults.empty()) AppendFlag(line, "faults", faults.ToString());
  for (const auto& [flag, value] : options) AppendFlag(line, flag, value);
  if (!rolling_from.empty()) AppendFlag(line, "rolling-from", rolling_from);
  if (!skip.empty()) AppendFlag(line, "skip", props::FormatSkip(skip));
  if (!scripts.empty()) AppendFlag(line, "scripts", scripts);
  if (!baseline.empty()) AppendFlag(line, "baseline", baseline);
  if (!write_baseline.empty()) AppendFlag(line, "write-baseline", write_baseline);
  if (!junit.empty()) AppendFlag(line, "junit", junit);
  if (redis != "none") AppendFlag(line, "redis", redis);
  if (real_sample > 0) AppendFlag(line, "real-sample", absl::StrCat(real_sample));
  if (jobs > 0) AppendFlag(line, "jobs", absl::StrCat(jobs));
  if (!out.empty()) AppendFlag(line, "out", out);
  if (!save_scenarios.empty()) AppendFlag(line, "save-scenarios", save_scenarios);
  if (!html.empty()) AppendFlag(line, "html", html);
  if (!jepsen.empty()) AppendFlag(line, "jepsen", jepsen);
  if (shard_count > 0) AppendFlag(line, "shard", absl::StrCat(shard_index, "/", shard_count));
  if (quiet) AppendFlag(line, "quiet", "");
  if (verbose) AppendFlag(line, "verbose", "");
  if (coverage) AppendFlag(line, "coverage", "");
  if (format != "text") AppendFlag(line, "format", format);
  if (strategy != "random") AppendFlag(line, "strategy", strategy);
  if (pct_depth != 2) AppendFlag(line, "pct-depth", absl::StrCat(pct_depth));
  if (preemption_bound != -1) AppendFlag(line, "preemption-bound", absl::StrCat(preemption_bound));
  if (max_schedules != 100000) AppendFlag(line, "max-schedules", absl::StrCat(max_schedules));
  if (!choices.empty()) AppendFlag(line, "choices", absl::StrJoin(choices, ","));
  return line;
}

CheckSpec ParseCheck(const std::vector<std::string>& args) {
  return internal::ParseWith<Raw, CheckSpec>("check", args, Define, Resolve);
}

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
  std::printf("seed: %llu\n", static_cast<unsigned long long>(spec.seed));
  std::fflush(stdout);
  std::printf("version: %s %s (rolling-deploy properties run old pods of %s)\n",
              spec.system.c_str(), spec.version.c_str(),
              old_version.empty() ? "no earlier version" : old_version.c_str());
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
  scripts = internal::CatalogWithOverrides(spec.scripts, system, spec.version);
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

// The class `c` of property `p`: its counterexample (minimized unless its schedule is fixed)
// with its calls and replay line, its timeline page and its scenario written.
reports::ViolationRow CheckRun::Violation(const std::string& p, const std::string& c) {
  const harness::ClassSeen& seen = tally[p].classes.at(c);
  const harness::Counterexample x =
      harness::Shrink(seen, c, dfs || spec.strategy == "replay", static_cast<int64_t>(plan.jobs),
                      [&](const props::RunSpec& s, const harness::ClassSeen* recorded) {
                        std::unique_ptr<sim::Strategy> strategy =
                            dfs && recorded ? std::make_unique<sim::Replay>(recorded->first_choices)
                                            : MakeStrategy(s);
                        return system.Run(s, scripts, server.get(), strategy.get());
                      });
  const props::RunSpec& m = x.spec;
  const std::string sentence = props::SentenceOf(*system.property(p), c);
  reports::ViolationRow row{p,      c,  sentence, StatusOf(p, c), m.seed, m.clients, m.ops,
                            x.text, {}, ""};
  row.shape = x.shape;
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
    row.scenario =
        harness::SaveCounterexample(spec.save_scenarios, system, x, c, sentence, spec.scripts);
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
    std::printf(
        "no verdict for %s: the check is not a pass (fewer --clients or --ops keep the "
        "histories checkable)\n",
        reports::Count(no_verdict, "run").c_str());
    code = 1;
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

int RunCheck(const CheckSpec& spec) {
  internal::CatchInterrupts();  // before a server is spawned: its stop is the destructor's
  return CheckRun(spec).Run();
}

namespace internal {
// testbed explore TRACE: check with --trace TRACE, for the trace's own system and version.
void DefineExplore(CLI::App& app, Raw& r) {
  Define(app, r);
  app.get_option("--system")
      ->required(false)
      ->description("the system under test (default: the trace's)");
  app.get_option("--version")->description("the version under test (default: the trace's)");
  app.add_option("recorded", r.spec.trace, "a recorded trace (testbed import's file)")->required();
}

CheckSpec ResolveExplore(const Raw& r) {
  Raw x = r;
  const nlohmann::json file = ReadTraceFile(x.spec.trace, "");
  if (x.spec.system.empty()) x.spec.system = file.value("system", std::string());
  const nlohmann::json version = file.value("version", nlohmann::json());
  if (x.spec.version.empty() && version.is_string()) x.spec.version = version.get<std::string>();
  if (x.spec.version.empty())
    throw UsageError(x.spec.trace +
                     ": its version is unknown (no script the capture ran names "
                     "one); give --version");
  return Resolve(x);
}

Command ExploreCommand() {
  return internal::MakeCommand<Raw, CheckSpec>(
      "explore",
      "Explores the interleavings and faults around a recorded trace: each run's clients make the "
      "trace's clients' operations, each client its own in order, through the ported client; "
      "every check flag applies (--runs, --strategy, --faults, --save-scenarios), and each "
      "violation is minimized to the fewest recorded operations.",
      DefineExplore, ResolveExplore, RunCheck);
}

Command CheckCommand() {
  return internal::MakeCommand<Raw, CheckSpec>(
      "check",
      "Runs generated multi-client workloads of a system's ported client against its scripts and "
      "checks every property; prints a per-property table, and for each violated property a "
      "minimized counterexample and a replay line.",
      Define, Resolve, RunCheck);
}
}  // namespace internal

}  // namespace testbed::cli
