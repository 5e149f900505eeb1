// testbed replay: runs saved scenarios (scenarios/*.json) of any registered system and says
// whether each still shows what it was saved for: its property's violation, of its anomaly
// class when it names one ("reproduced", exit 0), or not ("fixed or changed", exit 1). A
// recorded trace (testbed import) runs call by call on the emulator and a spawned redis-server:
// "reproduced" when both worlds reply alike and every script ran what the capture shows.
#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <fstream>
#include <nlohmann/json.hpp>
#include <memory>

#include "real/js_host.h"
#include "cmd/cli_internal.h"
#include "real/redis_server.h"
#include "real/script_catalog.h"
#include "harness/scenario.h"
#include "harness/baseline.h"
#include "harness/trace_replay.h"
#include "model/json_file.h"
#include "sim/clock.h"

namespace testbed::cli {
namespace {

using internal::AppendFlag;

void DefineReplay(CLI::App& app, ReplaySpec& s) {
  app.add_option("files", s.files, "scenario files or directories of them (scenarios/)")
      ->required();
  app.add_option("--redis", s.redis, "none (default): the emulator; spawn: a spawned redis-server")
      ->check(CLI::IsMember({"none", "spawn"}));
  app.add_option("--baseline", s.baseline,
                 "accepted anomaly classes for recorded traces: a baseline file, or a directory "
                 "of <system>/<version>.json (baselines/); a trace fails the replay only with a "
                 "judged class it does not accept");
  app.add_option("--jepsen", s.jepsen,
                 "write each scenario's judged histories here in Jepsen's forms (JSON as elle-cli "
                 "reads it, and EDN), with an index of their models and verdicts");
}

// Every file to replay, checked before any runs: directories give their *.json, sorted.
ReplaySpec ResolveReplay(const ReplaySpec& s) {
  if (!s.jepsen.empty()) internal::CheckWritable(s.jepsen, "jepsen");
  if (!s.baseline.empty()) {
    if (std::filesystem::is_regular_file(s.baseline)) {
      try {
        (void)harness::LoadBaseline(s.baseline);
      } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--baseline: ") + e.what());
      }
    } else if (!std::filesystem::is_directory(s.baseline)) {
      throw UsageError("--baseline " + s.baseline + " is neither a baseline file nor a directory");
    }
  }
  ReplaySpec out = s;
  out.files.clear();
  for (const std::string& f : s.files) {
    if (std::filesystem::is_directory(f)) {
      std::vector<std::string> in_dir;
      for (const auto& e : std::filesystem::directory_iterator(f))
        if (e.is_regular_file() && e.path().extension() == ".json")
          in_dir.push_back(e.path().string());
      if (in_dir.empty()) throw UsageError(f + " holds no scenario (*.json)");
      std::sort(in_dir.begin(), in_dir.end());
      out.files.insert(out.files.end(), in_dir.begin(), in_dir.end());
    } else if (!std::filesystem::is_regular_file(f)) {
      throw UsageError("cannot read scenario " + f);
    } else {
      out.files.push_back(f);
    }
  }
  return out;
}

}  // namespace

std::string ReplaySpec::Write() const {
  std::string line = "testbed replay";
  for (const std::string& f : files) {
    AppendFlag(line, "", f);
    line.erase(line.rfind(" --"), 3);  // a positional argument, not a flag
  }
  if (redis != "none") AppendFlag(line, "redis", redis);
  if (!jepsen.empty()) AppendFlag(line, "jepsen", jepsen);
  if (!baseline.empty()) AppendFlag(line, "baseline", baseline);
  return line;
}

ReplaySpec ParseReplay(const std::vector<std::string>& args) {
  return internal::ParseWith<ReplaySpec, ReplaySpec>("replay", args, DefineReplay, ResolveReplay);
}

// A recorded trace's calls, with the replies the replay got, judged by each property its
// system can judge a trace by (harness/system.h, TraceSupport); the others are named with
// why they cannot be.
// The baseline --baseline gives for `system` `version`: the file itself when it is for them, or
// <dir>/<system>/<version>.json when that exists; none otherwise.
std::optional<harness::Baseline> BaselineFor(const std::string& path, const std::string& system,
                                             const std::string& version) {
  if (path.empty()) return std::nullopt;
  std::string file = path;
  if (std::filesystem::is_directory(path)) {
    file = path + "/" + system + "/" + version + ".json";
    if (!std::filesystem::is_regular_file(file)) return std::nullopt;
  }
  harness::Baseline b = harness::LoadBaseline(file);
  if (b.system != system || b.version != version) return std::nullopt;
  return b;
}

// Returns the number of properties judged violated with a class `baseline` does not accept.
int JudgeAs(const props::System* system, const nlohmann::json& version, const nlohmann::json& trace,
            const harness::TraceReplay& r, const std::string& baseline_path) {
  const props::TraceSupport* support =
      system && version.is_string() ? system->trace_support(version.get<std::string>()) : nullptr;
  if (!support) {
    std::printf("not judged: no property of %s %s is judged on a recorded trace yet\n",
                system ? system->name().c_str() : "an unknown system",
                version.is_string() ? version.get<std::string>().c_str() : "(version unknown)");
    return 0;
  }
  int64_t start_ms = 0;
  props::RecordedCalls calls = props::ReadRecordedCalls(trace, &start_ms);
  for (size_t i = 0; i < calls.size() && i < r.replies.size(); ++i) {
    calls[i].reply = r.replies[i];
    calls[i].has_reply = true;
  }
  std::vector<int> ops;
  try {
    ops = support->ops_per_client(calls);
  } catch (const std::invalid_argument& e) {  // a call the system's operations do not make
    std::printf("not judged: %s\n", e.what());
    return 0;
  }
  int64_t total = 0;
  for (int n : ops) total += n;
  const std::optional<harness::Baseline> baseline =
      BaselineFor(baseline_path, system->name(), version.get<std::string>());
  int violated = 0;
  for (const std::string& p : support->properties) {
    props::RunOutcome out;
    support->judge(p, calls, start_ms, out);
    props::Conclude(out);
    std::printf("judged: %s on %lld operation%s of %zu client%s: ", p.c_str(),
                static_cast<long long>(total), total == 1 ? "" : "s", ops.size(),
                ops.size() == 1 ? "" : "s");
    std::vector<std::string> fresh;  // the classes no baseline accepts
    for (const std::string& c : out.classes)
      if (!baseline || !baseline->find(p, c)) fresh.push_back(c);
    violated += out.violated && !fresh.empty() ? 1 : 0;
    if (out.violated)
      std::printf("violated (classes: %s%s)\n%s", absl::StrJoin(out.classes, ", ").c_str(),
                  !baseline ? ""
                  : fresh.empty()
                      ? "; the baseline accepts each"
                      : ("; new against the baseline: " + absl::StrJoin(fresh, ", ")).c_str(),
                  out.description.c_str());
    else
      std::printf("%s\n", out.incomplete ? "no verdict (the checker gave up)" : "no violation");
  }
  std::printf("not judged: the other properties of %s: %s\n", system->name().c_str(),
              support->others.c_str());
  return violated;
}

// The trace as its version, or, when the capture did not show which (a null version), as each
// version its calls fit (harness/trace_import.h).
int JudgeRecordedTrace(const nlohmann::json& trace, const harness::TraceReplay& r,
                       const std::string& baseline_path) {
  const props::System* system = props::FindSystem(trace.value("system", std::string()));
  const nlohmann::json version = trace.value("version", nlohmann::json());
  const nlohmann::json fitting = trace.value("versions_fitting", nlohmann::json::array());
  if (!version.is_null() || !fitting.is_array() || fitting.empty())
    return JudgeAs(system, version, trace, r, baseline_path);
  int violated = 0;
  for (const nlohmann::json& v : fitting) {
    std::printf("as %s %s (the calls fit %zu versions):\n", system->name().c_str(),
                v.get<std::string>().c_str(), fitting.size());
    violated += JudgeAs(system, v, trace, r, baseline_path);
  }
  return violated;
}

// A recorded trace (testbed import): its calls in both worlds, with the first difference, then
// judged. Returns 0 when it reproduced and no property is violated, 1 when the worlds differ,
// 2 when it reproduced and a judged property is violated.
int ReplayRecordedTrace(const std::string& file, const nlohmann::json& trace,
                        real::RedisServer& server, const real::ScriptCatalog& scripts,
                        const std::string& baseline) {
  const harness::TraceReplay r = harness::ReplayTrace(trace, server, scripts);
  const nlohmann::json version = trace.value("version", nlohmann::json());
  const int64_t foreign = trace.value("foreign_calls", int64_t{0});
  std::printf(
      "trace: %s (%s %s, segment %lld of %s, %lld calls from %zu clients%s)\n", file.c_str(),
      trace.value("system", std::string("?")).c_str(),
      version.is_string() ? version.get<std::string>().c_str() : "version unknown",
      static_cast<long long>(trace.value("segment", int64_t{0})),
      trace.value("source", std::string("?")).c_str(),
      static_cast<long long>(trace["calls"].size() - foreign),
      trace.value("clients", nlohmann::json::array()).size(),
      foreign == 0 ? "" : absl::StrCat(", and ", foreign, " of other applications").c_str());
  std::printf("world: the emulator and a spawned redis-server, call by call\n");
  if (r.difference_line == 0) {
    std::printf(
        "result: reproduced (%lld calls: the same replies in both worlds, and every "
        "script ran the commands the capture shows)\n",
        static_cast<long long>(r.calls));
    if (r.foreign > 0 || r.opaque > 0 || r.other_db > 0)
      std::printf(
          "other applications: %lld calls replayed and not judged; not replayed: %lld "
          "EVALSHAs of a body nobody knows, %lld calls in another database\n",
          static_cast<long long>(r.foreign), static_cast<long long>(r.opaque),
          static_cast<long long>(r.other_db));
    const int violated = JudgeRecordedTrace(trace, r, baseline);
    std::printf("\n");
    return violated > 0 ? 2 : 0;
  }
  std::printf("result: differs at line %lld of the capture: %s\n\n",
              static_cast<long long>(r.difference_line), r.difference.c_str());
  return 1;
}

int RunReplay(const ReplaySpec& spec) {
  std::vector<harness::Scenario> all;
  // Each scenario's scripts, where it replaces shipped ones (null: the shipped scripts).
  std::vector<std::unique_ptr<real::ScriptCatalog>> catalogs;
  std::vector<std::pair<std::string, nlohmann::json>> traces;
  for (const std::string& f : spec.files) {  // every file parses before anything runs
    try {
      std::ifstream in(f, std::ios::binary);
      const nlohmann::json file = model::ReadJson(in, f);
      if (harness::IsRecordedTrace(file)) {
        try {
          harness::ValidateTrace(file);
        } catch (const std::invalid_argument& e) {
          throw std::invalid_argument(f + ": " + e.what());
        }
        traces.emplace_back(f, file);
      } else {
        all.push_back(harness::Load(f));
        const harness::Scenario& sc = all.back();
        if (const std::string why = real::js::Unavailable(sc.client); !why.empty())
          throw UsageError(f + ": field \"client\": " + why);
        try {
          catalogs.push_back(sc.scripts.empty() && !sc.client.js
                                 ? nullptr
                                 : std::make_unique<real::ScriptCatalog>(harness::ScriptsOf(sc)));
        } catch (const std::invalid_argument& e) {
          throw UsageError(f + ": field \"scripts\": " + sc.scripts + ": " + e.what());
        }
      }
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  // A signal stops a spawned server and removes its directory before the process ends.
  if (spec.redis == "spawn" || !traces.empty())
    internal::CatchInterrupts("replay", /*at_boundary=*/false);
  std::unique_ptr<real::RedisServer> server;
  if (spec.redis == "spawn" || !traces.empty())
    server = std::make_unique<real::RedisServer>(sim::kDefaultEpochMs);
  const real::ScriptCatalog scripts = real::ScriptCatalog::Load(real::ScriptCatalog::ShippedDir());
  int differs = 0, violated = 0;
  for (const auto& [file, trace] : traces) {
    const int result = ReplayRecordedTrace(file, trace, *server, scripts, spec.baseline);
    differs += result == 1;
    violated += result == 2;
  }
  // A scenario's own runs go to the server only when --redis spawn asks for it.
  real::RedisServer* scenario_server = spec.redis == "spawn" ? server.get() : nullptr;
  int changed = 0;
  for (size_t k = 0; k < all.size(); ++k) {
    const harness::Scenario& sc = all[k];
    const props::RunSpec& r = sc.spec;
    std::printf("seed: %llu\nscenario: %s (%s %s, %s%s)\n", static_cast<unsigned long long>(r.seed),
                sc.name.c_str(), sc.system->name().c_str(), r.version.c_str(), r.property.c_str(),
                sc.cls.empty() ? "" : (", class " + sc.cls).c_str());
    if (!sc.severity.empty()) std::printf("severity: %s\n", sc.severity.c_str());
    if (!sc.trigger.empty()) std::printf("trigger: %s\n", sc.trigger.c_str());
    if (!sc.why.empty()) std::printf("why: %s\n", sc.why.c_str());
    if (!sc.scripts.empty())
      std::printf("scripts: %s in place of the shipped ones\n", sc.scripts.c_str());
    if (sc.client.js)
      std::printf("client: the JavaScript of %s\n",
                  sc.client.dir.empty() ? "the seeds" : sc.client.dir.c_str());
    const props::RunOutcome out =
        sc.system->Run(r, catalogs[k] ? *catalogs[k] : scripts, scenario_server);
    std::printf("world: %s\n", scenario_server ? "spawned redis-server" : "emulator");
    if (out.violated)
      std::printf("violated: %s (classes: %s)\n%s", r.property.c_str(),
                  absl::StrJoin(out.classes, ", ").c_str(), out.description.c_str());
    else
      std::printf("no violation of %s\n", r.property.c_str());
    std::printf("trace-hash: %s\n", out.trace_hash().c_str());
    if (!spec.jepsen.empty() && !out.histories.empty())
      internal::WriteJepsenHistories(spec.jepsen, sc.name, out);
    const bool shows =
        out.violated && (sc.cls.empty() || std::find(out.classes.begin(), out.classes.end(),
                                                     sc.cls) != out.classes.end());
    const bool reproduced = sc.expect == "passes" ? !out.violated : shows;
    std::printf("result: %s (expected: %s)\n\n", reproduced ? "reproduced" : "fixed or changed",
                sc.expect == "passes" ? "no violation"
                : sc.cls.empty()      ? "a violation"
                                      : ("class " + sc.cls).c_str());
    changed += reproduced ? 0 : 1;
  }
  if (all.size() > 1)
    std::printf("%zu scenarios: %zu reproduced, %d fixed or changed\n", all.size(),
                all.size() - changed, changed);
  if (traces.size() > 1)
    std::printf("%zu recorded traces: %zu reproduced (%d with a property violated), %d differ\n",
                traces.size(), traces.size() - differs, violated, differs);
  return changed || differs || violated ? 1 : 0;
}

namespace internal {
Command ReplayCommand() {
  return internal::MakeCommand<ReplaySpec, ReplaySpec>(
      "replay",
      "Replays saved scenarios (files or directories); exit 0 when each still shows what it was "
      "saved for (\"reproduced\"), 1 when one does not (\"fixed or changed\").",
      DefineReplay, ResolveReplay, RunReplay);
}
}  // namespace internal

}  // namespace testbed::cli
