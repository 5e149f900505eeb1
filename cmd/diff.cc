// testbed diff: validates a script or client change before it ships. The same seeds and
// schedules run on the shipped code and on a candidate: changed scripts (only --version's pods
// get them; old pods keep theirs), a changed JavaScript build (--candidate-client), or both,
// and the report says which anomaly classes the change introduces or removes, which runs flip
// between pass and fail, and where replies first differ on identical schedules. Exit 1 when
// the change introduces a class or turns a passing run into a failing one. Without --faults it
// makes two passes, fault-free and under every fault kind (the faults the shipped baselines were
// triaged under): a change that matters only under skew or a lost reply is not passed as
// harmless by a fault-free run (issue 62, item 5).
#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "cmd/cli_internal.h"
#include "real/js_host.h"
#include "reports/trace_view.h"
#include "harness/campaign.h"

namespace testbed::cli {
namespace {

using internal::AppendFlag;

// The flags as given; ResolveDiff checks the ones `check` shares through ParseCheck.
struct DiffRaw {
  std::vector<std::string> check_args;  // rebuilt for ParseCheck
  std::string candidate, candidate_client;
  std::map<std::string, std::string> values;
};

void DefineDiff(CLI::App& app, DiffRaw& r) {
  for (const auto& [flag, help] : std::vector<std::pair<std::string, std::string>>{
           {"system", "the system under test (see testbed list)"},
           {"version", "the version whose pods get the candidate (default: the newest)"},
           {"rolling-from", "the old pods' version (default: the version's predecessor)"},
           {"seed", "the first seed (default: drawn and printed)"},
           {"runs", "runs per property (default 50)"},
           {"clients", "clients per run (default: the system's)"},
           {"ops", "operations per client (default: the system's)"},
           {"faults",
            "all, none, or a comma list (see testbed list); default: two passes, fault-free "
            "and under every fault kind"},
           {"properties", "a comma list (default: every property)"},
           {"client",
            "port (default) or js: the client code both sides run (with --candidate-client: "
            "js)"},
           {"jobs", "threads (default: the cores)"}})
    app.add_option("--" + flag, r.values[flag], help);
  app.add_option("--candidate", r.candidate,
                 "the changed scripts: DIR/NAME replaces NAME of --version; "
                 "DIR/<system>/<version>/NAME replaces that version's");
  app.add_option("--candidate-client", r.candidate_client,
                 "a changed build of the SDK's JavaScript, laid out as the package: the candidate "
                 "runs it, the shipped side the seeds' own (both with --client js)");
  internal::AddSystemOptions(app, r.values);
}

DiffSpec ResolveDiff(const DiffRaw& r) {
  if (r.candidate.empty() && r.candidate_client.empty())
    throw UsageError(
        "nothing to compare: give --candidate DIR (changed scripts), --candidate-client DIR (a "
        "changed JavaScript build), or both");
  if (!r.candidate.empty() && !std::filesystem::is_directory(r.candidate))
    throw UsageError("--candidate " + r.candidate + " is not a directory");
  if (!r.candidate_client.empty()) {
    if (!std::filesystem::is_directory(r.candidate_client))
      throw UsageError("--candidate-client " + r.candidate_client + " is not a directory");
    if (const std::string why = real::js::Unavailable({true, r.candidate_client}); !why.empty())
      throw UsageError("--candidate-client: " + why);
  }
  const CheckSpec c = internal::ParseAsCheck(r.values, "50", "diff");
  DiffSpec d;
  d.system = c.system;
  d.version = c.version;
  d.rolling_from = c.rolling_from;
  d.candidate = r.candidate;
  d.candidate_client = r.candidate_client;
  d.client = c.client;
  d.seed = c.seed;
  d.runs = c.runs;
  d.clients = c.clients;
  d.ops = c.ops;
  d.faults = c.faults;
  d.faults_given = !r.values.at("faults").empty();
  d.properties = c.properties;
  d.options = c.options;
  d.jobs = c.jobs;
  return d;
}

// One run of one property on one catalog, as the diff compares it.
// A Redis call (or a fault or clock event) and its reply, scripts named by their files, so a
// behaviour-free edit of a script (another SHA1) compares equal.
struct Step {
  std::string what, reply;
  bool operator==(const Step&) const = default;
};
struct Side {
  std::vector<std::string> classes;
  std::vector<Step> steps;
};

Side RunSide(const props::System& system, const props::RunSpec& r,
             const real::ScriptCatalog& scripts, const reports::ScriptNames& names) {
  props::RunOutcome o = system.Run(r, scripts, nullptr);
  Side side{o.classes, {}};
  for (const sim::TraceEvent& e : o.trace.events) {
    if (e.kind == sim::EventKind::kReply)
      side.steps.push_back({absl::StrCat("+", e.at_ms, "ms ", o.trace.actor_of(e), " ",
                                         sim::ShortArgv(o.trace.argv_of(e), &names)),
                            e.reply.debug()});
    else if (e.kind == sim::EventKind::kFault || e.kind == sim::EventKind::kClock)
      side.steps.push_back({o.trace.Render(e, &names), ""});
  }
  return side;
}

// Scripts and their names, as a side of the diff runs them.
struct Catalog {
  const real::ScriptCatalog& scripts;
  const reports::ScriptNames& names;
};

// What a pair of runs left to report: their classes and, where the replies differ, the first
// difference (the sides' steps are dropped as soon as they are compared, so a diff's memory
// does not grow with --runs).
struct Pair {
  props::RunSpec run;
  std::vector<std::string> before, after;  // classes
  bool differ = false;
  size_t at = 0;  // the first step that differs
  std::string call_before, call_after, reply_before, reply_after;
};

// One run of one property on both catalogs (on a campaign thread).
Pair RunPair(const props::System& system, const props::RunSpec& r, const Catalog& shipped,
             const Catalog& candidate) {
  Pair x;
  x.run = r;
  Side before = RunSide(system, r, shipped.scripts, shipped.names);
  Side after = RunSide(system, r, candidate.scripts, candidate.names);
  x.before = std::move(before.classes);
  x.after = std::move(after.classes);
  x.differ = before.steps != after.steps;
  if (!x.differ) return x;
  while (x.at < before.steps.size() && x.at < after.steps.size() &&
         before.steps[x.at] == after.steps[x.at])
    ++x.at;
  auto what = [&](const std::vector<Step>& steps) {
    return x.at < steps.size() ? reports::Abbreviate(steps[x.at].what).substr(0, 600)
                               : std::string("(no further call)");
  };
  auto reply = [&](const std::vector<Step>& steps) {
    return x.at < steps.size() ? steps[x.at].reply.substr(0, 400) : std::string("-");
  };
  x.call_before = what(before.steps);
  x.call_after = what(after.steps);
  x.reply_before = reply(before.steps);
  x.reply_after = reply(after.steps);
  return x;
}

// What the pairs show, in run order: per property, and each side's campaign tally.
struct PerProperty {
  int64_t to_fail = 0, to_pass = 0, replies_differ = 0;
  std::optional<Pair> first_reply_diff;
  std::optional<props::RunSpec> first_to_fail;  // and the classes the candidate showed there
  std::vector<std::string> first_to_fail_classes;
};
struct DiffTally {
  std::map<std::string, PerProperty> per;
  harness::Tally before, after;
  void Add(Pair& x) {
    PerProperty& p = per[x.run.property];
    const bool failed_before = !x.before.empty(), failed_after = !x.after.empty();
    if (!failed_before && failed_after && p.to_fail++ == 0) {
      p.first_to_fail = x.run;
      p.first_to_fail_classes = x.after;
    }
    p.to_pass += failed_before && !failed_after;
    if (x.differ && p.replies_differ++ == 0) p.first_reply_diff = x;
    before.Add(x.run, x.before, false);
    after.Add(x.run, x.after, false);
  }
  // A class of one side that the other never showed, with its runs and first seed.
  static const harness::ClassSeen* Only(const harness::Tally& in, const harness::Tally& not_in,
                                        const std::pair<std::string, std::string>& key) {
    const harness::PropertyTally* other = not_in.find(key.first);
    if (other && other->classes.count(key.second)) return nullptr;
    return &in.find(key.first)->classes.at(key.second);
  }
};

// The first call of a pair whose replies differ, with both replies and a replay line.
void PrintFirstDifference(const DiffSpec& spec, const std::string& p, const Pair& d) {
  const size_t at = d.at;
  const std::string &call_before = d.call_before, &call_after = d.call_after;
  DiffSpec one = spec;
  one.properties = {p};
  one.seed = d.run.seed;
  one.runs = 1;
  one.jobs = 0;
  std::printf("\nfirst reply-level difference in %s (seed %llu, call %zu of the run):\n", p.c_str(),
              static_cast<unsigned long long>(d.run.seed), at + 1);
  if (call_before == call_after)
    std::printf("  call:              %s\n", call_before.c_str());
  else
    std::printf("  shipped call:      %s\n  candidate call:    %s\n", call_before.c_str(),
                call_after.c_str());
  std::printf("  shipped reply:     %s\n  candidate reply:   %s\n  replay: %s\n",
              d.reply_before.c_str(), d.reply_after.c_str(), one.Write().c_str());
}

}  // namespace

std::string DiffSpec::Write() const {
  std::string line = "testbed diff";
  AppendFlag(line, "system", system);
  AppendFlag(line, "version", version);
  if (!candidate.empty()) AppendFlag(line, "candidate", candidate);
  if (!candidate_client.empty()) AppendFlag(line, "candidate-client", candidate_client);
  if (client != "port") AppendFlag(line, "client", client);
  if (!properties.empty()) AppendFlag(line, "properties", absl::StrJoin(properties, ","));
  AppendFlag(line, "seed", absl::StrCat(seed));
  AppendFlag(line, "runs", absl::StrCat(runs));
  AppendFlag(line, "clients", absl::StrCat(clients));
  AppendFlag(line, "ops", absl::StrCat(ops));
  if (faults_given) AppendFlag(line, "faults", faults.ToString());
  for (const auto& [flag, value] : options) AppendFlag(line, flag, value);
  if (!rolling_from.empty()) AppendFlag(line, "rolling-from", rolling_from);
  if (jobs > 0) AppendFlag(line, "jobs", absl::StrCat(jobs));
  return line;
}

DiffSpec ParseDiff(const std::vector<std::string>& args) {
  return internal::ParseWith<DiffRaw, DiffSpec>("diff", args, DefineDiff, ResolveDiff);
}

namespace {

// The passes a diff makes: --faults's one, or fault-free and then under every fault kind.
std::vector<sim::FaultList> DiffPasses(const DiffSpec& spec) {
  if (spec.faults_given) return {spec.faults};
  return {sim::FaultList{}, sim::FaultList::Parse("all")};
}

// What one pass found, for the summary.
struct PassResult {
  int64_t introduced = 0, removed = 0, to_fail = 0, reply_runs = 0, pairs = 0;
  std::set<std::pair<std::string, std::string>> introduced_keys, removed_keys;  // property, class
  bool differs() const { return introduced + removed + to_fail + reply_runs > 0; }
  std::string Summary() const {
    if (!differs()) return absl::StrCat("no behavioural difference on ", pairs, " paired runs");
    return absl::StrCat(reports::Count(introduced, "class"), " introduced, ", removed, " removed, ",
                        reports::Count(to_fail, "run"), " pass->fail, ",
                        reports::Count(reply_runs, "run"), " with different replies");
  }
};

// What every pass shares: the system, its properties, both catalogs and `check`'s spec.
struct DiffSetup {
  const props::System& system;
  std::vector<std::string> properties;
  std::string old_version;
  Catalog shipped, candidate;
};

// One pass of the diff (`pass`: the spec with its faults, given): the pairs, their table, the
// classes introduced and removed, and the first reply-level difference per property.
PassResult RunPass(const DiffSpec& pass, const DiffSetup& d) {
  const props::System& system = d.system;
  props::RunSpec base;
  base.version = pass.version;
  base.old_version = d.old_version;
  base.clients = static_cast<int>(pass.clients);
  base.ops = static_cast<int>(pass.ops);
  base.faults = pass.faults;
  base.options = pass.options;
  harness::Plan plan;
  plan.base = base;
  plan.properties = d.properties;
  plan.seed = pass.seed;
  plan.count = pass.runs;
  plan.jobs = static_cast<size_t>(internal::JobsOrCores(pass.jobs));
  plan.stop = [] { return internal::Interrupted() != 0; };  // at a run boundary
  DiffTally tally;
  harness::RunInOrder<Pair>(
      plan, [&](const props::RunSpec& r) { return RunPair(system, r, d.shipped, d.candidate); },
      [&](Pair& x) { tally.Add(x); });
  auto& per = tally.per;

  std::printf("%-32s %6s %11s %11s %15s\n", "property", "runs", "pass->fail", "fail->pass",
              "replies differ");
  PassResult out;
  out.pairs = tally.before.runs();
  auto runs = [&](const std::string& p) {  // pairs of p: the runs either side's tally counted
    const harness::PropertyTally* t = tally.before.find(p);
    return t ? t->done : int64_t{0};
  };
  for (const std::string& p : d.properties) {
    const PerProperty& x = per[p];
    std::printf("%-32s %6lld %11lld %11lld %15lld\n", p.c_str(), static_cast<long long>(runs(p)),
                static_cast<long long>(x.to_fail), static_cast<long long>(x.to_pass),
                static_cast<long long>(x.replies_differ));
    out.to_fail += x.to_fail;
    out.reply_runs += x.replies_differ;
  }
  // A replay line of `check` on the candidate for one property and seed.
  auto check_line = [&](const std::string& p, uint64_t seed) {
    CheckSpec c;
    c.system = pass.system;
    c.version = pass.version;
    c.rolling_from = pass.rolling_from;
    c.scripts = pass.candidate;
    const real::ClientCode client = pass.CandidateClient();
    c.client = client.js ? "js" : "port";
    c.client_dir = client.dir;
    c.properties = {p};
    c.seed = seed;
    c.runs = 1;
    c.clients = pass.clients;
    c.ops = pass.ops;
    c.faults = pass.faults;
    c.options = pass.options;
    return c.Write();
  };
  for (const auto& key : tally.after.order()) {
    const harness::ClassSeen* s = DiffTally::Only(tally.after, tally.before, key);
    if (!s) continue;
    out.introduced_keys.insert(key);
    if (out.introduced++ == 0) std::printf("\nclasses the change introduces:\n");
    std::printf(
        "  %s / %s: %s (%s, first seed %llu)\n    replay: %s\n", key.first.c_str(),
        key.second.c_str(), props::SentenceOf(*system.property(key.first), key.second).c_str(),
        reports::Count(s->runs, "run").c_str(), static_cast<unsigned long long>(s->first.seed),
        check_line(key.first, s->first.seed).c_str());
  }
  for (const auto& key : tally.before.order()) {
    const harness::ClassSeen* s = DiffTally::Only(tally.before, tally.after, key);
    if (!s) continue;
    out.removed_keys.insert(key);
    if (out.removed++ == 0) std::printf("\nclasses the change removes:\n");
    std::printf(
        "  %s / %s: %s (%s on the shipped code, first seed %llu)\n", key.first.c_str(),
        key.second.c_str(), props::SentenceOf(*system.property(key.first), key.second).c_str(),
        reports::Count(s->runs, "run").c_str(), static_cast<unsigned long long>(s->first.seed));
  }
  // A run the change turns from pass to fail may show only classes the shipped code shows on
  // other seeds: the first such run of each property, with its classes and replay line.
  bool headed = false;
  for (const std::string& p : d.properties) {
    const PerProperty& x = per[p];
    if (!x.first_to_fail) continue;
    if (!headed) std::printf("\nruns the change turns from pass to fail:\n");
    headed = true;
    std::printf("  %s: %s, first seed %llu, where the candidate shows %s\n    replay: %s\n",
                p.c_str(), reports::Count(x.to_fail, "run").c_str(),
                static_cast<unsigned long long>(x.first_to_fail->seed),
                absl::StrJoin(x.first_to_fail_classes, ", ").c_str(),
                check_line(p, x.first_to_fail->seed).c_str());
  }
  for (const std::string& p : d.properties)
    if (per[p].first_reply_diff) PrintFirstDifference(pass, p, *per[p].first_reply_diff);
  return out;
}

}  // namespace

int RunDiff(const DiffSpec& spec) {
  internal::CatchInterrupts("diff");  // the first signal stops the pairs at a run boundary
  const props::System& system = *props::FindSystem(spec.system);
  CheckSpec as_check;  // what `check` would run: its old version
  as_check.system = spec.system;
  as_check.version = spec.version;
  as_check.rolling_from = spec.rolling_from;
  const std::string old_version = as_check.OldVersion();
  real::ScriptCatalog shipped = real::ScriptCatalog::Load(real::ScriptCatalog::ShippedDir());
  shipped.set_client(spec.ShippedClient());
  std::vector<std::string> replaced;
  real::ScriptCatalog candidate =
      internal::CatalogWithOverrides(spec.candidate, system, spec.version, replaced, "candidate");
  candidate.set_client(spec.CandidateClient());
  if (const std::string err = system.FirstCompileError(candidate, spec.version); !err.empty())
    throw real::SetupError("a candidate script does not compile: " + err);
  std::printf("seed: %llu\n", static_cast<unsigned long long>(spec.seed));
  // "shipped scripts against DIR", "the seeds' JavaScript against DIR", or both.
  std::vector<std::string> against;
  if (!spec.candidate.empty()) against.push_back("shipped scripts against " + spec.candidate);
  if (!spec.candidate_client.empty())
    against.push_back("the seeds' JavaScript against " + spec.candidate_client);
  std::printf(
      "diff: %s %s, %s (old pods: %s)%s\n", spec.system.c_str(), spec.version.c_str(),
      absl::StrJoin(against, ", ").c_str(), old_version.empty() ? "none" : old_version.c_str(),
      spec.candidate_client.empty() && spec.client == "js" ? "; clients: the JavaScript" : "");
  for (const std::string& line : replaced) std::printf("%s\n", line.c_str());
  std::fflush(stdout);  // the seed is seen at once, whatever the runs take
  DiffSetup setup{system,
                  spec.properties,
                  old_version,
                  {shipped, shipped.names()},
                  {candidate, candidate.names()}};
  if (setup.properties.empty())
    for (const auto& p : system.properties()) setup.properties.push_back(p.name);
  std::erase_if(setup.properties, [&](const std::string& p) {
    return !system.property(p)->applies(spec.version, old_version);
  });

  const std::vector<sim::FaultList> passes = DiffPasses(spec);
  std::vector<PassResult> results;
  for (size_t i = 0; i < passes.size() && internal::Interrupted() == 0; ++i) {
    DiffSpec pass = spec;
    pass.faults = passes[i];
    pass.faults_given = true;
    if (passes.size() > 1)
      std::printf("%spass %zu of %zu: %s\n", i == 0 ? "" : "\n", i + 1, passes.size(),
                  passes[i].empty()
                      ? "no faults (--faults none)"
                      : ("under every fault kind (--faults " + passes[i].ToString() + ")").c_str());
    results.push_back(RunPass(pass, setup));
  }
  std::printf("\n");
  PassResult all;
  std::vector<std::string> each;
  for (size_t i = 0; i < results.size(); ++i) {
    const PassResult& r = results[i];
    all.introduced_keys.insert(r.introduced_keys.begin(), r.introduced_keys.end());
    all.removed_keys.insert(r.removed_keys.begin(), r.removed_keys.end());
    all.to_fail += r.to_fail;
    all.reply_runs += r.reply_runs;
    all.pairs += r.pairs;
    each.push_back("--faults " + passes[i].ToString() + ": " + r.Summary());
  }
  // A class introduced (or removed) in both passes is one class of the change.
  all.introduced = static_cast<int64_t>(all.introduced_keys.size());
  all.removed = static_cast<int64_t>(all.removed_keys.size());
  std::printf("result: %s%s\n", all.Summary().c_str(),
              results.size() > 1 ? (" (" + absl::StrJoin(each, "; ") + ")").c_str() : "");
  const int code = all.introduced > 0 || all.to_fail > 0 ? 1 : 0;
  if (const int signal = internal::Interrupted(); signal != 0) {
    std::printf("incomplete: interrupted by %s after %s; the result covers the runs made\n",
                internal::SignalName(signal).c_str(),
                reports::Count(all.pairs, "paired run").c_str());
    return 128 + signal;
  }
  return code;
}

namespace internal {
Command DiffCommand() {
  return internal::MakeCommand<DiffRaw, DiffSpec>(
      "diff",
      "Runs the same seeds and schedules on the shipped code and on a candidate (changed "
      "scripts, a changed JavaScript build, or both), "
      "fault-free and under every fault kind unless --faults names one pass; reports the anomaly "
      "classes the change introduces and removes, runs that flip, and the first reply that "
      "differs. Exit 1 when the change introduces a class or breaks a passing run.",
      DefineDiff, ResolveDiff, RunDiff);
}
}  // namespace internal

}  // namespace testbed::cli
