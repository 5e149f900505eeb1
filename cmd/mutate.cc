// testbed mutate: how much the property suite of a system can be trusted, measured by what it
// kills. Every one-line mutant of every script of each version (real/lua_mutants.h) runs the
// same seeds and schedules as the shipped scripts; a mutant is killed when a run of it shows an
// anomaly class that the shipped scripts never showed on those seeds (nor the version's baseline
// accepts), or a script that fails at run time, or a client port that throws. A mutant that
// survives is a promise no property checks, unless a person argues it equivalent: the
// --equivalent file lists those, each with its reason, and its line as mutated (so the reason
// cannot drift onto another mutant). Exit 0 when every mutant that compiles and is not listed
// equivalent is killed, 1 when one survives.
#include <absl/hash/hash.h>
#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>
#include <absl/strings/str_split.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "cmd/cli_internal.h"
#include "real/js_host.h"
#include "real/lua_mutants.h"
#include "reports/terminal.h"
#include "harness/baseline.h"
#include "harness/campaign.h"
#include "model/json_file.h"
#include "sim/lua_coverage.h"

namespace testbed::cli {
namespace {

using internal::AppendFlag;

struct MutateRaw {
  std::map<std::string, std::string> values;  // the flags check shares, as given
  std::string equivalent, only, baselines, write_mutants;
  bool trust_equivalent = false;
  std::vector<std::string> runs_of;
};

void DefineMutate(CLI::App& app, MutateRaw& r) {
  for (const auto& [flag, help] : std::vector<std::pair<std::string, std::string>>{
           {"system", "the system under test (see testbed list)"},
           {"version", "one version (default: every version of the system)"},
           {"seed", "the first seed (default: drawn and printed)"},
           {"runs", "runs per property and mutant (default 60)"},
           {"clients", "clients per run (default: the system's)"},
           {"ops", "operations per client (default: the system's)"},
           {"faults", "all, none, or a comma list (see testbed list)"},
           {"properties", "a comma list (default: every property)"},
           {"client",
            "port (default): mutate the scripts; js: mutate the seeds' JavaScript client code "
            "(runs with --client js)"},
           {"jobs", "threads (default: the cores)"}})
    app.add_option("--" + flag, r.values[flag], help);
  app.add_option("--equivalent", r.equivalent,
                 "a JSON file of mutants argued equivalent: {\"mutants\": [{\"id\", \"after\", "
                 "\"why\"}]}");
  app.add_option("--runs-of", r.runs_of,
                 "PROPERTY=N: runs of one property per mutant, in place of --runs (repeat it "
                 "for more; a cheap sequential property can afford many)");
  app.add_option("--only", r.only, "one mutant, by its id (FILE:LINE.K, as the report prints it)");
  app.add_flag("--trust-equivalent", r.trust_equivalent,
               "do not run the mutants --equivalent lists (a gate that only asks whether a mutant "
               "outside the list survives: they cost the most, as none of them is ever killed)");
  app.add_option("--baselines", r.baselines,
                 "a directory of <version>.json baselines: their classes do not kill");
  app.add_option("--write-mutants", r.write_mutants,
                 "write each surviving mutant to DIR/<id>/ (a --scripts directory for check)");
  internal::AddSystemOptions(app, r.values);
}

MutateSpec ResolveMutate(const MutateRaw& r) {
  const CheckSpec c = internal::ParseAsCheck(r.values, "60", "mutate");
  MutateSpec m;
  m.system = c.system;
  const props::System& system = *props::FindSystem(c.system);
  if (!r.values.at("version").empty()) {
    m.versions = {c.version};
  } else {
    for (const auto& v : system.versions()) m.versions.push_back(v.name);
  }
  m.seed = c.seed;
  m.runs = c.runs;
  m.clients = c.clients;
  m.ops = c.ops;
  m.faults = c.faults;
  m.properties = c.properties;
  m.options = c.options;
  m.jobs = c.jobs;
  m.only = r.only;
  m.trust_equivalent = r.trust_equivalent;
  m.equivalent = r.equivalent;
  m.baselines = r.baselines;
  m.write_mutants = r.write_mutants;
  m.client = c.client;
  for (const std::string& item : r.runs_of) {
    const size_t eq = item.find('=');
    const std::string p = item.substr(0, eq);
    int64_t n = 0;
    if (eq == std::string::npos || !absl::SimpleAtoi(item.substr(eq + 1), &n) || n < 1)
      throw UsageError("--runs-of " + item + ": expected PROPERTY=N with N a positive count");
    if (!system.property(p))
      throw UsageError("--runs-of " + item + ": " + m.system + " has no property " + p +
                       " (see testbed list)");
    m.runs_of[p] = n;
  }
  if (!m.equivalent.empty() && !std::filesystem::is_regular_file(m.equivalent))
    throw UsageError("--equivalent " + m.equivalent + " is not a readable file");
  if (!m.baselines.empty() && !std::filesystem::is_directory(m.baselines))
    throw UsageError("--baselines " + m.baselines + " is not a directory");
  if (!m.write_mutants.empty()) internal::CheckWritable(m.write_mutants, "write-mutants");
  if (m.trust_equivalent && m.equivalent.empty())
    throw UsageError("--trust-equivalent needs --equivalent FILE: the mutants to trust");
  if (!m.only.empty() && (m.only.rfind("js/", 0) == 0) != (m.client == "js"))
    throw UsageError("--only " + m.only + ": " +
                     (m.client == "js"
                          ? "with --client js, ids are js/<system>/<version>/FILE:LINE.K"
                          : "a mutant of the JavaScript needs --client js"));
  if (!m.only.empty() && m.client == "js") {  // js/<system>/<version>/FILE:ID
    const std::vector<std::string> parts = absl::StrSplit(m.only, absl::MaxSplits('/', 3));
    if (parts.size() < 4 || parts[1] != m.system ||
        std::find(m.versions.begin(), m.versions.end(), parts[2]) == m.versions.end())
      throw UsageError("--only " + m.only + " names no JavaScript of " + m.system +
                       " (ids are js/<system>/<version>/FILE:LINE.K, as mutate prints them)");
    m.versions = {parts[2]};
  } else if (!m.only.empty()) {  // it names a mutant of one of the versions' scripts
    const real::ScriptCatalog shipped =
        real::ScriptCatalog::Load(real::ScriptCatalog::ShippedDir());
    std::vector<std::string> holding;  // the versions whose scripts hold it
    for (const std::string& v : m.versions)
      for (const real::ScriptFile& f : shipped.all())
        if (f.file.rfind(system.scripts_dir(v) + "/", 0) == 0)
          for (const real::LuaMutant& x : real::MutantsOf(f.body))
            if (m.only == f.file + ":" + x.id) holding.push_back(v);
    m.versions = holding;
    if (holding.empty())
      throw UsageError("--only " + m.only + " names no mutant of " + m.system +
                       " (ids are FILE:LINE.K, as mutate prints them)");
  }
  return m;
}

// A mutant argued equivalent: its id, its line as mutated, and why no caller can tell.
struct Equivalent {
  std::string after, why;
};
std::map<std::string, Equivalent> LoadEquivalent(const std::string& path) {
  std::map<std::string, Equivalent> out;
  if (path.empty()) return out;
  std::ifstream in(path);
  nlohmann::json j;
  try {
    j = model::ReadJson(in, "--equivalent " + path);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (j.is_discarded() || !j.contains("mutants") || !j["mutants"].is_array())
    throw UsageError("--equivalent " + path + ": not a JSON object with a \"mutants\" array");
  for (const auto& m : j["mutants"]) {
    if (!m.is_object() || !m.contains("id") || !m["id"].is_string() || !m.contains("after") ||
        !m["after"].is_string() || !m.contains("why") || !m["why"].is_string() ||
        m["why"].get<std::string>().empty())
      throw UsageError("--equivalent " + path + ": each mutant needs \"id\", \"after\", \"why\"");
    out[m["id"].get<std::string>()] = {m["after"].get<std::string>(), m["why"].get<std::string>()};
  }
  return out;
}

// What one run did, as a mutant is judged by it: its classes (a script that fails at run time is
// class script-error), whether the client port threw, and a digest of every call and reply (scripts
// named by file, so a mutant's other SHA1 digests alike).
struct RunSeen {
  props::RunSpec run;
  std::vector<std::string> classes;
  std::string failure;  // "": none; else how the client port failed
  size_t digest = 0;
  sim::LineCoverage coverage;  // the shipped scripts' runs only: the lines they ran
};

RunSeen RunOne(const props::System& system, const props::RunSpec& r,
               const real::ScriptCatalog& scripts, bool record_coverage = false) {
  RunSeen s;
  s.run = r;
  std::optional<sim::ScopedLineCoverage> recording;
  if (record_coverage) recording.emplace(&s.coverage);
  try {
    props::RunOutcome o = system.Run(r, scripts, nullptr);
    s.classes = o.classes;
    const sim::ScriptNames& names = scripts.names();  // (a script that fails at run time
                                                      // is class script-error)
    size_t h = 0;
    for (const sim::TraceEvent& e : o.trace.events)
      if (e.kind == sim::EventKind::kReply)
        h = absl::HashOf(h, sim::ShortArgv(o.trace.argv_of(e), &names), e.reply.debug());
    s.digest = h;
  } catch (const std::exception& e) {
    s.failure = absl::StrCat("the client throws: ", e.what()).substr(0, 240);
  }
  return s;
}

// One mutant's verdict.
struct Verdict {
  std::string version;
  std::string file;  // catalog file
  real::LuaMutant mutant;
  std::string state;             // stillborn, killed, equivalent, survived
  std::string how;               // killed: the first class or failure, with its property and seed
  int64_t runs = 0, differ = 0;  // runs made; runs whose calls or replies differ from shipped
  std::string why;               // equivalent: the reason given
  bool line_ran = true;          // the mutated line ran in the shipped scripts' runs
};

std::string FullId(const std::string& file, const real::LuaMutant& m) {
  return absl::StrCat(file, ":", m.id);
}

class MutateRun {
 public:
  MutateRun(const MutateSpec& spec, const props::System& system)
      : spec_(spec), system_(system), equivalent_(LoadEquivalent(spec.equivalent)) {}

  int Run() {
    std::printf("seed: %llu\n", static_cast<unsigned long long>(spec_.seed));
    for (const std::string& v : spec_.versions)
      if (!internal::Interrupted()) RunVersion(v);
    return Report();
  }

 private:
  harness::Plan PlanFor(const std::string& version) const {
    harness::Plan plan;
    CheckSpec as_check;
    as_check.system = spec_.system;
    as_check.version = version;
    const std::string old_version = as_check.OldVersion();
    plan.base.version = version;
    plan.base.old_version = old_version;
    plan.base.clients = static_cast<int>(spec_.clients);
    plan.base.ops = static_cast<int>(spec_.ops);
    plan.base.faults = spec_.faults;
    plan.base.options = spec_.options;
    plan.seed = spec_.seed;
    plan.count = spec_.runs;
    plan.counts = spec_.runs_of;
    plan.jobs = static_cast<size_t>(internal::JobsOrCores(spec_.jobs));
    plan.stop = [] { return internal::Interrupted() != 0; };  // at a run boundary
    std::vector<std::string> properties = spec_.properties;
    if (properties.empty())
      for (const auto& p : system_.properties()) properties.push_back(p.name);
    for (const std::string& p : properties)
      if (system_.property(p)->applies(version, old_version)) plan.properties.push_back(p);
    return plan;
  }

  void RunVersion(const std::string& version) {
    const props::SystemInfo::JsClientFile* js = nullptr;
    if (spec_.client == "js") {
      for (const auto& f : system_.info().js_client_files)
        if (std::find(f.versions.begin(), f.versions.end(), version) != f.versions.end()) js = &f;
      if (!js) {
        std::printf("%s %s: no JavaScript client the seeds show (nothing to mutate)\n",
                    spec_.system.c_str(), version.c_str());
        return;
      }
    }
    real::ScriptCatalog shipped = real::ScriptCatalog::Load(real::ScriptCatalog::ShippedDir());
    if (js) shipped.set_client({true, ""});
    const harness::Plan plan = PlanFor(version);
    std::set<std::pair<std::string, std::string>> known;  // (property, class) not killing
    if (!spec_.baselines.empty()) {
      const std::string path = spec_.baselines + "/" + version + ".json";
      if (std::filesystem::exists(path))
        for (const auto& a : harness::LoadBaseline(path).accepted)
          known.insert({a.property, a.cls});
    }
    // The shipped scripts' runs: every class they show, and each run's digest.
    std::map<std::pair<std::string, uint64_t>, size_t> digest;
    sim::LineCoverage ran;  // the lines the shipped scripts' runs executed
    harness::RunInOrder<RunSeen>(
        plan, [&](const props::RunSpec& r) { return RunOne(system_, r, shipped, true); },
        [&](RunSeen& s) {
          ran.Add(s.coverage);
          for (const std::string& c : s.classes) known.insert({s.run.property, c});
          digest[{s.run.property, s.run.seed}] = s.digest;
          if (!s.failure.empty())
            throw real::SetupError(absl::StrCat("the shipped scripts fail (", s.run.property,
                                                " seed ", s.run.seed, "): ", s.failure));
        });
    if (internal::Interrupted()) return;  // no mutant is judged against part of the baseline
    if (js) return RunJavaScriptMutants(version, *js, shipped, plan, known, digest);
    const std::string prefix = system_.scripts_dir(version) + "/";
    for (const real::ScriptFile& f : shipped.all()) {
      if (f.file.rfind(prefix, 0) != 0) continue;
      const reports::CoverageRow& row =
          coverage_.emplace_back(internal::CoverageRowOf(f, ran, "real/scripts/" + f.file));
      for (const real::LuaMutant& m : real::MutantsOf(f.body)) {
        if (!spec_.only.empty() && spec_.only != FullId(f.file, m)) continue;
        real::ScriptCatalog mutated = shipped;
        mutated.replace(f.file, m.body);
        Verdict v;
        v.version = version;
        v.file = f.file;
        v.mutant = m;
        v.line_ran = row.hits.count(m.line) > 0;
        if (!system_.FirstCompileError(mutated, version).empty()) {
          v.state = "stillborn";
        } else if (!TrustedEquivalent(v)) {
          Judge(plan, mutated, known, digest, v);
          if (v.state.empty()) return;  // interrupted before a verdict: not counted
        }
        Print(v);
        verdicts_.push_back(std::move(v));
      }
    }
  }

  // --trust-equivalent: a mutant the list argues equivalent, on its line as listed, is not run
  // (true: v says so).
  bool TrustedEquivalent(Verdict& v) const {
    const auto eq = equivalent_.find(FullId(v.file, v.mutant));
    if (!spec_.trust_equivalent || eq == equivalent_.end() ||
        Trim(eq->second.after) != Trim(v.mutant.after))
      return false;
    v.state = "equivalent";
    v.why = eq->second.why + " (not run: --trust-equivalent)";
    return true;
  }

  // The mutants of the seeds' JavaScript file `js` of `version`: each is the seeds' SDK build
  // with that one change, in a temporary directory of its own, run with --client js.
  void RunJavaScriptMutants(const std::string& version, const props::SystemInfo::JsClientFile& js,
                            const real::ScriptCatalog& shipped, const harness::Plan& plan,
                            const std::set<std::pair<std::string, std::string>>& known,
                            const std::map<std::pair<std::string, uint64_t>, size_t>& digest) {
    namespace fs = std::filesystem;
    std::string root_template = (fs::temp_directory_path() / "testbed-mutate-XXXXXX").string();
    if (::mkdtemp(root_template.data()) == nullptr)
      throw real::SetupError("cannot make a temporary directory for the JavaScript mutants");
    const fs::path root = root_template;
    struct Remove {
      fs::path dir;
      ~Remove() {
        std::error_code ec;
        fs::remove_all(dir, ec);
      }
    } remove{root};
    const fs::path seeds = root / "seeds";
    std::string text;
    std::vector<nlohmann::json> mutants;
    try {
      real::js::NodeOutput(
          {real::js::SourcePath("tests/js/sdk.mjs"), "write", version, seeds.string()});
      std::ifstream in(seeds / js.file, std::ios::binary);
      text.assign(std::istreambuf_iterator<char>(in), {});
      const std::string out =
          real::js::NodeOutput({real::js::SourcePath("real/js/mutants.mjs"),
                                (seeds / js.file).string(), absl::StrJoin(js.skip, ",")});
      for (absl::string_view line : absl::StrSplit(out, '\n', absl::SkipEmpty()))
        mutants.push_back(nlohmann::json::parse(line));
    } catch (const std::exception& e) {
      throw real::SetupError(std::string("the JavaScript mutants: ") + e.what());
    }
    const std::string file = "js/" + spec_.system + "/" + version + "/" + js.file;
    for (const nlohmann::json& j : mutants) {
      if (internal::Interrupted()) return;
      real::LuaMutant m;
      m.id = j["id"].get<std::string>();
      m.line = j["line"].get<int>();
      m.op = j["op"].get<std::string>();
      m.before = j["before"].get<std::string>();
      m.after = j["after"].get<std::string>();
      const size_t start = j["start"].get<size_t>(), end = j["end"].get<size_t>();
      m.body = text.substr(0, start) + j["text"].get<std::string>() + text.substr(end);
      if (!spec_.only.empty() && spec_.only != FullId(file, m)) continue;
      Verdict v;
      v.version = version;
      v.file = file;
      v.mutant = m;
      if (j["stillborn"].get<bool>()) {
        v.state = "stillborn";
      } else if (!TrustedEquivalent(v)) {
        const fs::path dir = root / "mutants" / m.id;
        fs::create_directories(dir);
        fs::copy(seeds, dir, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
        std::ofstream(dir / js.file, std::ios::binary | std::ios::trunc) << m.body;
        real::ScriptCatalog mutated = shipped;
        mutated.set_client({true, dir.string()});
        Judge(plan, mutated, known, digest, v);
        if (v.state.empty()) return;  // interrupted before a verdict: not counted
      }
      Print(v);
      verdicts_.push_back(std::move(v));
    }
  }

  void Judge(harness::Plan plan, const real::ScriptCatalog& mutated,
             const std::set<std::pair<std::string, std::string>>& known,
             const std::map<std::pair<std::string, uint64_t>, size_t>& digest, Verdict& v) {
    // A mutant killed needs no more runs; a signal stops the runs at a boundary.
    plan.stop = [&v] { return !v.how.empty() || internal::Interrupted() != 0; };
    harness::RunInOrder<RunSeen>(
        plan, [&](const props::RunSpec& r) { return RunOne(system_, r, mutated); },
        [&](RunSeen& s) {
          ++v.runs;
          const auto d = digest.find({s.run.property, s.run.seed});
          v.differ += d == digest.end() || d->second != s.digest;
          if (!v.how.empty()) return;
          const std::string where = absl::StrCat(" (", s.run.property, ", seed ", s.run.seed, ")");
          if (!s.failure.empty()) v.how = s.failure + where;
          for (const std::string& c : s.classes)
            if (v.how.empty() && !known.count({s.run.property, c}))
              v.how = absl::StrCat(s.run.property, " / ", c, where);
        });
    if (v.how.empty() && internal::Interrupted()) return;  // no verdict: v.state stays empty
    const auto eq = equivalent_.find(FullId(v.file, v.mutant));
    const bool listed = eq != equivalent_.end() && Trim(eq->second.after) == Trim(v.mutant.after);
    if (!v.how.empty()) {
      v.state = "killed";
      if (listed) v.why = "listed equivalent, but killed: " + eq->second.why;
    } else if (listed) {
      v.state = "equivalent";
      v.why = eq->second.why;
    } else {
      v.state = "survived";
      if (!spec_.write_mutants.empty()) WriteMutant(mutated, v);
    }
  }

  void WriteMutant(const real::ScriptCatalog& mutated, const Verdict& v) const {
    std::string dir_name = FullId(v.file, v.mutant);
    std::replace(dir_name.begin(), dir_name.end(), '/', '_');
    std::replace(dir_name.begin(), dir_name.end(), ':', '@');
    const std::filesystem::path dir = std::filesystem::path(spec_.write_mutants) / dir_name;
    if (mutated.client().js) {  // the mutant's SDK build: a --client-dir for check
      std::filesystem::create_directories(dir);
      std::filesystem::copy(mutated.client().dir, dir,
                            std::filesystem::copy_options::recursive |
                                std::filesystem::copy_options::overwrite_existing);
      return;
    }
    const std::filesystem::path file = dir / v.file;
    std::filesystem::create_directories(file.parent_path());
    for (const real::ScriptFile& f : mutated.all())
      if (f.file == v.file) std::ofstream(file, std::ios::binary) << f.body;
  }

  void Print(const Verdict& v) const {
    const std::string id = FullId(v.file, v.mutant);
    std::string line =
        absl::StrCat(v.state, " ", id, " [", v.mutant.op, "] `", Trim(v.mutant.before), "` -> `",
                     v.mutant.after.empty() ? "(line dropped)" : Trim(v.mutant.after), "`");
    if (v.state == "killed") absl::StrAppend(&line, "\n    by ", v.how);
    if (v.state == "survived") {
      absl::StrAppend(&line, "\n    ", v.runs, " runs, ", v.differ,
                      v.differ ? " with calls or replies that differ from the shipped scripts'"
                               : " differ: no run reaches a different call or reply");
      if (!v.line_ran)
        absl::StrAppend(&line, "\n    line ", v.mutant.line,
                        " never ran in the shipped scripts' runs: no workload reaches it");
      MutateSpec one = spec_;
      one.only = id;
      one.versions = {v.version};
      absl::StrAppend(&line, "\n    replay: ", one.Write());
    }
    if (!v.why.empty()) absl::StrAppend(&line, "\n    ", v.why);
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }

  static std::string Trim(const std::string& s) {
    const size_t a = s.find_first_not_of(" \t");
    return a == std::string::npos ? "" : s.substr(a);
  }

  int Report() const {
    std::map<std::string, std::map<std::string, int64_t>> per;  // version dir -> state -> count
    for (const Verdict& v : verdicts_) {
      const std::string version = std::filesystem::path(v.file).parent_path().string();
      ++per[version][v.state];
    }
    std::printf("\n%-24s %8s %9s %7s %10s %9s %7s\n", "scripts", "mutants", "stillborn", "killed",
                "equivalent", "survived", "score");
    int64_t survived = 0;
    for (const auto& [version, n] : per) {
      auto at = [&](const char* k) { return n.count(k) ? n.at(k) : int64_t{0}; };
      const int64_t live = at("killed") + at("survived");
      std::printf("%-24s %8lld %9lld %7lld %10lld %9lld %6s\n", version.c_str(),
                  static_cast<long long>(at("killed") + at("survived") + at("equivalent") +
                                         at("stillborn")),
                  static_cast<long long>(at("stillborn")), static_cast<long long>(at("killed")),
                  static_cast<long long>(at("equivalent")), static_cast<long long>(at("survived")),
                  live ? absl::StrCat(at("killed") * 100 / live, "%").c_str() : "-");
      survived += at("survived");
    }
    if (!coverage_.empty()) std::printf("%s", reports::CoverageText(coverage_).c_str());
    if (spec_.only.empty()) std::printf("\nreplay one: %s --only ID\n", spec_.Write().c_str());
    if (const int signal = internal::Interrupted(); signal != 0) {
      std::printf("incomplete: interrupted by %s after %s; the table covers the mutants judged\n",
                  internal::SignalName(signal).c_str(),
                  reports::Count(static_cast<int64_t>(verdicts_.size()), "mutant").c_str());
      return 128 + signal;
    }
    std::printf("result: %s\n", survived == 0
                                    ? "every mutant that compiles is killed or argued equivalent"
                                    : absl::StrCat(survived, " mutants survive").c_str());
    return survived == 0 ? 0 : 1;
  }

  const MutateSpec& spec_;
  const props::System& system_;
  const std::map<std::string, Equivalent> equivalent_;
  std::vector<Verdict> verdicts_;
  std::vector<reports::CoverageRow> coverage_;  // each version's scripts in its shipped runs
};

}  // namespace

std::string MutateSpec::Write() const {
  std::string line = "testbed mutate";
  AppendFlag(line, "system", system);
  if (versions.size() == 1) AppendFlag(line, "version", versions.front());
  if (!properties.empty()) AppendFlag(line, "properties", absl::StrJoin(properties, ","));
  AppendFlag(line, "seed", absl::StrCat(seed));
  AppendFlag(line, "runs", absl::StrCat(runs));
  for (const auto& [p, n] : runs_of) AppendFlag(line, "runs-of", absl::StrCat(p, "=", n));
  AppendFlag(line, "clients", absl::StrCat(clients));
  AppendFlag(line, "ops", absl::StrCat(ops));
  if (!faults.empty()) AppendFlag(line, "faults", faults.ToString());
  for (const auto& [flag, value] : options) AppendFlag(line, flag, value);
  if (!equivalent.empty()) AppendFlag(line, "equivalent", equivalent);
  if (!baselines.empty()) AppendFlag(line, "baselines", baselines);
  if (!only.empty()) AppendFlag(line, "only", only);
  if (trust_equivalent) AppendFlag(line, "trust-equivalent", "");
  if (client != "port") AppendFlag(line, "client", client);
  if (jobs > 0) AppendFlag(line, "jobs", absl::StrCat(jobs));
  return line;
}

MutateSpec ParseMutate(const std::vector<std::string>& args) {
  return internal::ParseWith<MutateRaw, MutateSpec>("mutate", args, DefineMutate, ResolveMutate);
}

int RunMutate(const MutateSpec& spec) {
  internal::CatchInterrupts("mutate");  // the first signal stops at a run boundary
  return MutateRun(spec, *props::FindSystem(spec.system)).Run();
}

namespace internal {
Command MutateCommand() {
  return internal::MakeCommand<MutateRaw, MutateSpec>(
      "mutate",
      "Runs every one-line mutant of a system's scripts on the same seeds as the shipped "
      "scripts; a mutant is killed when a property shows a class the shipped scripts never "
      "did, or a script fails at run time. Exit 1 when a mutant survives that is not argued "
      "equivalent.",
      DefineMutate, ResolveMutate, RunMutate);
}
}  // namespace internal

}  // namespace testbed::cli
