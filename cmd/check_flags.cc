// testbed check's and explore's flags: parsed once by CLI11 into a CheckSpec, checked before
// any work, and written back out as the replay line (CheckSpec::Write).
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
#include "real/js_host.h"
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
#include "model/json_file.h"
#include "sim/clock.h"
#include "sim/lua_coverage.h"
#include "sim/strategies.h"

namespace testbed::cli {
namespace {

using internal::AppendFlag;

inline constexpr int64_t kMaxBudgetSeconds = 30 * 24 * 3600;

struct CheckFlagsRaw {
  CheckSpec spec;
  bool has_seed = false, properties_given = false;
  std::string faults = "none", properties, skip, choices, shard;
  std::map<std::string, std::string> options;  // every registered system's own flags
};

void DefineCheckFlags(CLI::App& app, CheckFlagsRaw& r) {
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
  app.add_option("--client", r.spec.client,
                 "port (default): the clients' C++ ports; js: the seeds' own JavaScript, run in "
                 "Node inside the simulation (state and handles beta24 and beta30, a2 0.5.0; other "
                 "versions keep their port)")
      ->check(CLI::IsMember({"port", "js"}));
  app.add_option("--client-dir", r.spec.client_dir,
                 "with --client js: a build of the SDK laid out as the package, or of a2's store "
                 "core (node tests/js/sdk.mjs write VERSION DIR writes the seeds' own)");
  app.add_option("--baseline", r.spec.baseline,
                 "accepted anomaly classes (baselines/<system>/<version>.json): exit 1 only on a "
                 "new class (3 when nothing is new but some runs have no verdict)");
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
      if (!o.hidden && !added[o.flag]) {
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
  nlohmann::json file = model::ReadJson(in, path);
  if (!harness::IsRecordedTrace(file))
    throw UsageError((flag.empty() ? "" : flag + " ") + path +
                     " is not a recorded trace (testbed import writes them)");
  try {
    harness::ValidateTrace(file);
  } catch (const std::invalid_argument& e) {
    throw UsageError((flag.empty() ? "" : flag + " ") + path + ": " + e.what());
  }
  return file;
}

void ResolveTrace(const props::System& system, const CheckFlagsRaw& r, CheckSpec& s) {
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
    const props::RecordedCalls& calls = *props::LoadRecordedCalls(s.trace);
    ops = support->ops_per_client(calls);
    if (support->check_made_again) support->check_made_again(calls);
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

CheckSpec ResolveCheckFlags(const CheckFlagsRaw& r) {
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
      if (o.flag == flag && !o.hidden) known = &o;
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
  if (!s.client_dir.empty() && s.client != "js")
    throw UsageError("--client-dir " + s.client_dir + " is a JavaScript build: give --client js");
  if (const std::string why = real::js::Unavailable(s.ClientCode()); !why.empty())
    throw UsageError("--client js: " + why);
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
                                                   const std::string& version,
                                                   std::vector<std::string>& lines,
                                                   const std::string& flag) {
  std::vector<std::pair<std::string, std::string>> replaced;
  real::ScriptCatalog catalog;
  try {
    catalog = harness::CatalogWithOverrides(dir, system, version, &replaced);
  } catch (const std::invalid_argument& e) {
    throw UsageError("--" + flag + " " + dir + ": " + e.what());
  }
  for (const auto& [target, path] : replaced)
    lines.push_back("scripts: " + target + " replaced by " + path);
  return catalog;
}

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
  if (client != "port") AppendFlag(line, "client", client);
  if (!client_dir.empty()) AppendFlag(line, "client-dir", client_dir);
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

CheckSpec ParseCheck(const std::vector<std::string>& args) { return ParseCheckAs(args, "check"); }

CheckSpec ParseCheckAs(const std::vector<std::string>& args, const std::string& command) {
  return internal::ParseWith<CheckFlagsRaw, CheckSpec>(command, args, DefineCheckFlags,
                                                       ResolveCheckFlags);
}

namespace internal {
// testbed explore TRACE: check with --trace TRACE, for the trace's own system and version.
void DefineExplore(CLI::App& app, CheckFlagsRaw& r) {
  DefineCheckFlags(app, r);
  app.get_option("--system")
      ->required(false)
      ->description("the system under test (default: the trace's)");
  app.get_option("--version")->description("the version under test (default: the trace's)");
  // The trace is explore's argument: a --trace beside it would name a second one.
  app.remove_option(app.get_option("--trace"));
  app.add_option("recorded", r.spec.trace, "a recorded trace (testbed import's file)")->required();
}

CheckSpec ResolveExplore(const CheckFlagsRaw& r) {
  CheckFlagsRaw x = r;
  const nlohmann::json file = ReadTraceFile(x.spec.trace, "");
  if (x.spec.system.empty()) x.spec.system = file.value("system", std::string());
  const nlohmann::json version = file.value("version", nlohmann::json());
  if (x.spec.version.empty() && version.is_string()) x.spec.version = version.get<std::string>();
  if (x.spec.version.empty())
    throw UsageError(x.spec.trace +
                     ": its version is unknown (no script the capture ran names "
                     "one); give --version");
  return ResolveCheckFlags(x);
}

Command ExploreCommand() {
  return internal::MakeCommand<CheckFlagsRaw, CheckSpec>(
      "explore",
      "Explores the interleavings and faults around a recorded trace: each run's clients make the "
      "trace's clients' operations, each client its own in order, through the ported client; "
      "every check flag applies (--runs, --strategy, --faults, --save-scenarios), and each "
      "violation is minimized to the fewest recorded operations.",
      DefineExplore, ResolveExplore, RunExplore);
}

Command CheckCommand() {
  return internal::MakeCommand<CheckFlagsRaw, CheckSpec>(
      "check",
      "Runs generated multi-client workloads of a system's ported client against its scripts and "
      "checks every property; prints a per-property table, and for each violated property a "
      "minimized counterexample and a replay line. Exit 0 a pass, 1 a violation (a new class "
      "with --baseline), 3 no violation but runs the checker could not decide (no verdict, "
      "not a pass).",
      DefineCheckFlags, ResolveCheckFlags, RunCheck);
}
}  // namespace internal

}  // namespace testbed::cli
