#include "harness/system.h"

#include <absl/strings/numbers.h>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>
#include <absl/strings/str_split.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <stdexcept>

#include "harness/property.h"
#include "model/json_file.h"
#include "real/real_backend.h"
#include "sim/clock.h"
#include "sim/monitor_text.h"
#include "sim/runtime.h"
#include "sim/strategies.h"

namespace testbed::props {

Involved Since(sim::Ctx& ctx, int64_t from_ms) {
  const sim::World& w = ctx.world();
  return {w.actor_name(ctx.actor()), from_ms - w.start_ms(), w.now_ms() - w.start_ms()};
}

std::string ClassOf(const Finding& f) {
  if (!f.cls.empty()) return f.cls;
  const XXH64_hash_t h = XXH3_64bits(f.shape.data(), f.shape.size());
  return absl::StrCat("shape-", absl::Hex(h >> 32, absl::kZeroPad8));
}

std::string SentenceOf(const PropertyInfo& p, const std::string& cls) {
  for (const auto& c : p.classes)
    if (c.name == cls) return c.sentence;
  if (cls.rfind("shape-", 0) == 0) return "a counterexample no named class describes";
  // The class System::Run adds to any property whose run had a script fail at run time.
  if (cls == "script-error")
    return "a call failed with a script error: the script failed at run time (the SDK reports "
           "that as Redis being unavailable, an unknown outcome)";
  // The class it adds to any property whose run stopped at its limit of calls.
  if (cls == "calls-without-end")
    return "a client kept calling Redis without end: the run stopped at its limit of calls with "
           "an operation that never settled";
  return "";
}

RunOutcome System::Run(const RunSpec& spec, const real::ScriptCatalog& scripts,
                       real::RedisServer* server, sim::Strategy* strategy) const {
  const PropertyInfo* p = property(spec.property);
  if (!p) throw std::invalid_argument("unknown property '" + spec.property + "' of " + name());
  sim::FaultOptions faults = spec.faults.Options();
  p->sets_aside.DisableIn(faults);
  std::unique_ptr<PropertyRun> run;
  int64_t horizon = info().horizon_ms;
  int64_t operations = int64_t{spec.clients} * spec.ops;
  if (spec.trace.empty()) {
    run = Prepare(spec, faults, scripts);
  } else {
    const TraceSupport* t = trace_support(spec.version);
    if (!t || !t->judges(spec.property) || !t->explore)
      throw std::invalid_argument(absl::StrCat(spec.property, " of ", name(), " ", spec.version,
                                               " cannot be explored on a recorded trace"));
    const std::shared_ptr<const RecordedCalls> calls = LoadRecordedCalls(spec.trace);
    run = t->explore(spec.property, *calls, spec, faults, scripts);
    // A trace that spans the system's horizon or more: its operations are made again from its
    // first call's instant on, and the horizon runs that far past its last call's.
    const int64_t span = calls->empty() ? 0 : calls->back().at_ms - calls->front().at_ms;
    if (span >= horizon) horizon += span;
    operations = static_cast<int64_t>(calls->size());
  }
  return RunProperty(*run, spec.seed, horizon, faults, scripts, server, strategy,
                     std::max(kMinCallLimit, kCallsPerOperation * operations));
}

RunOutcome RunProperty(PropertyRun& run, uint64_t seed, int64_t horizon_ms,
                       const sim::FaultOptions& faults, const real::ScriptCatalog& scripts,
                       real::RedisServer* server, sim::Strategy* strategy, int64_t max_calls) {
  std::unique_ptr<sim::Backend> backend = real::MakeBackend(server);
  sim::RandomWalk walk;
  sim::WorldOptions o;
  o.hash_trace = false;  // RunOutcome::trace_hash() hashes on demand
  o.seed = seed;
  o.horizon_ms = horizon_ms;
  o.max_steps = max_calls;
  o.faults = faults;
  o.script_names = &scripts.names();
  sim::World world(o, *backend, strategy ? *strategy : walk);
  run.Start(world);
  RunOutcome out;
  out.run = world.run();
  out.trace = world.take_trace();
  // An exception that escaped client logic.
  if (!out.run.error.empty()) throw std::runtime_error(out.run.error);
  run.Check(world, out);
  // A script that fails at run time is a finding of whatever property ran it (class
  // script-error, its call and error), minimized and replayed as any other; the property's
  // other findings stand beside it.
  for (size_t i = 0; i < out.trace.events.size(); ++i) {
    const sim::TraceEvent& e = out.trace.events[i];
    if (e.kind != sim::EventKind::kReply || out.trace.argv_of(e).empty() ||
        out.trace.argv_of(e)[0] != "EVAL" || !e.reply.is_error())
      continue;
    out.script_errors.push_back(i);
    const int64_t from =
        e.call >= 0 ? out.trace.events[static_cast<size_t>(e.call)].at_ms : e.at_ms;
    out.findings.push_back({"script-error",
                            absl::StrCat(out.trace.actor_of(e), "'s ",
                                         sim::ShortArgv({out.trace.argv_of(e).begin(),
                                                         out.trace.argv_of(e).begin() + 2},
                                                        &scripts.names()),
                                         " at +", from, "ms failed: ", e.reply.str),
                            {},
                            {{out.trace.actor_of(e), from, e.at_ms}}});
  }
  // A run that stopped at its step limit: a client kept calling without end. No property's own
  // check sees it (the operation it would judge never settles, an unknown outcome), and no
  // workload needs that many: the shipped clients' runs stay far below it, faults or not.
  if (out.run.stop_reason == "max steps") {
    std::map<std::string, int64_t> calls;
    const sim::TraceEvent* last = nullptr;
    for (const sim::TraceEvent& e : out.trace.events) {
      if (e.kind == sim::EventKind::kReply) ++calls[std::string(out.trace.actor_of(e))];
      if (e.kind == sim::EventKind::kCall) last = &e;
    }
    const auto most =
        std::max_element(calls.begin(), calls.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; });
    if (most != calls.end() && last) {
      const std::string& actor = most->first;
      out.findings.push_back(
          {"calls-without-end",
           absl::StrCat(
               "the run stopped at its limit of ", out.run.steps, " calls at +", out.run.elapsed_ms,
               "ms, ", most->second, " of them answered to ", actor,
               ", which was still calling (the run's last call: ", out.trace.actor_of(*last), "'s ",
               sim::ShortArgv(out.trace.argv_of(*last), &scripts.names()), ")"),
           {},
           {{actor, 0, out.run.elapsed_ms}}});
    }
  }
  Conclude(out);
  return out;
}

void Conclude(RunOutcome& out) {
  out.violated = !out.findings.empty();
  out.classes.clear();
  out.description.clear();
  for (const Finding& f : out.findings) {
    const std::string c = ClassOf(f);
    if (std::find(out.classes.begin(), out.classes.end(), c) == out.classes.end())
      out.classes.push_back(c);
    absl::StrAppend(&out.description, "  ", f.text, "\n");
  }
}

std::string RecordedArgument(const nlohmann::json& a, const std::string& where) {
  if (a.is_string()) return a.get<std::string>();
  std::string bytes, error;
  if (a.is_object() && a.contains("repr") && a["repr"].is_string()) {
    if (sim::monitor::Unrepr(a["repr"].get<std::string>(), bytes, error)) return bytes;
    throw std::invalid_argument(where + ": " + error);
  }
  throw std::invalid_argument(where + ": an argument is neither a string nor {\"repr\": ...}");
}

RecordedCalls ReadRecordedCalls(const nlohmann::json& trace, int64_t* start_ms) {
  if (!trace.is_object() || !trace.contains("calls") || !trace["calls"].is_array())
    throw std::invalid_argument("not a recorded trace (no \"calls\" array)");
  const int64_t start_us = trace.value("start_us", sim::kDefaultEpochMs * 1000);
  if (start_ms) *start_ms = start_us / 1000;
  RecordedCalls calls;
  for (const nlohmann::json& c : trace["calls"]) {
    // Other applications' calls are replayed with the trace, never judged as the system's.
    if (c.is_object() && c.value("foreign", false)) continue;
    if (!c.is_object() || !c.contains("at_us") || !c["at_us"].is_number_integer() ||
        !c.contains("line") || !c["line"].is_number_integer() || !c.contains("argv") ||
        !c["argv"].is_array() || c["argv"].empty())
      throw std::invalid_argument("a call without an integer \"line\", \"at_us\" and an argv");
    RecordedCall r;
    r.line = c["line"].get<int64_t>();
    r.at_ms = (start_us + c["at_us"].get<int64_t>()) / 1000;
    r.client = c.value("client", 0);
    r.script = c.value("script", std::string());
    for (const nlohmann::json& a : c["argv"])
      r.argv.push_back(RecordedArgument(a, absl::StrCat("line ", r.line)));
    calls.push_back(std::move(r));
  }
  return calls;
}

std::shared_ptr<const RecordedCalls> LoadRecordedCalls(const std::string& path, int64_t* start_ms) {
  static std::mutex mu;
  static std::map<std::string, std::pair<std::shared_ptr<const RecordedCalls>, int64_t>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(path);
  if (it == cache.end()) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::invalid_argument("cannot read recorded trace " + path);
    const nlohmann::json j = model::ReadJson(in, "recorded trace " + path);
    if (j.is_discarded()) throw std::invalid_argument(path + " is not JSON");
    int64_t start = 0;
    auto calls = std::make_shared<const RecordedCalls>(ReadRecordedCalls(j, &start));
    it = cache.emplace(path, std::make_pair(std::move(calls), start)).first;
  }
  if (start_ms) *start_ms = it->second.second;
  return it->second.first;
}

std::string System::OldVersionsError(const std::string& version, const std::string& old) const {
  if (old.empty()) return "";
  const std::vector<std::string> parts = absl::StrSplit(old, ',');
  std::vector<std::string> names;
  for (const auto& v : versions()) names.push_back(v.name);
  if (static_cast<int>(parts.size()) > max_old_versions())
    return absl::StrCat(name(), " mixes at most ", max_old_versions(),
                        " old version(s) with the new one, not ", parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!this->version(parts[i]))
      return absl::StrCat("\"", parts[i], "\" is not a ported version of ", name(), " (",
                          absl::StrJoin(names, ", "), ")");
    if (parts[i] == version) return "the old pods' version must differ from the new one";
    for (size_t j = 0; j < i; ++j)
      if (parts[j] == parts[i]) return absl::StrCat("\"", parts[i], "\" is named twice");
  }
  return "";
}

std::string System::FirstCompileError(const real::ScriptCatalog& scripts,
                                      const std::string& version) const {
  sim::EmulatorBackend emulator;
  const std::string dir = scripts_dir(version) + "/";
  for (const auto& f : scripts.all()) {
    if (f.file.rfind(dir, 0) != 0) continue;
    const sim::Reply r = emulator.execute({"SCRIPT", "LOAD", f.body}, sim::kDefaultEpochMs);
    if (r.is_error()) return f.file + ": " + r.str;
  }
  return "";
}

void System::WriteScenarioFields(const RunSpec& spec, nlohmann::ordered_json& j) const {
  for (const auto& o : options())
    if (!o.hidden || spec.options.count(o.flag)) j[o.scenario_key] = option(spec, o.flag);
}

void System::ReadScenarioFields(const nlohmann::json& j, RunSpec& spec) const {
  for (const auto& o : options()) {
    const std::string v = j.value(o.scenario_key, o.default_value);
    if (o.choices.empty()) {  // a non-negative integer
      int64_t n = 0;
      if (!absl::SimpleAtoi(v, &n) || n < 0 || std::to_string(n) != v)
        throw std::invalid_argument(absl::StrCat(
            "field \"", o.scenario_key, "\" takes a non-negative integer, not \"", v, "\""));
    } else if (std::find(o.choices.begin(), o.choices.end(), v) == o.choices.end())
      throw std::invalid_argument(absl::StrCat("field \"", o.scenario_key, "\" takes ",
                                               absl::StrJoin(o.choices, " or "), ", not \"", v,
                                               "\""));
    if (v != o.default_value) spec.options[o.flag] = v;
  }
}

const PropertyInfo* System::property(const std::string& n) const {
  for (const auto& p : properties())
    if (p.name == n) return &p;
  return nullptr;
}

const VersionInfo* System::version(const std::string& n) const {
  for (const auto& v : versions())
    if (v.name == n) return &v;
  return nullptr;
}

std::string System::option(const RunSpec& spec, const std::string& flag) const {
  if (auto it = spec.options.find(flag); it != spec.options.end()) return it->second;
  for (const auto& o : options())
    if (o.flag == flag) return o.default_value;
  return "";
}

SkipSet ParseSkip(const std::string& list) {
  SkipSet out;
  if (list.empty()) return out;
  for (const std::string& item : std::vector<std::string>(absl::StrSplit(list, ','))) {
    int c = -1, i = -1;
    char tail = 0;
    if (std::sscanf(item.c_str(), "%d:%d%c", &c, &i, &tail) != 2 || c < 0 || i < 0)
      throw std::invalid_argument("--skip takes CLIENT:OP pairs such as 0:1,2:3, not '" + item +
                                  "'");
    out.insert({c, i});
  }
  return out;
}

std::string FormatSkip(const SkipSet& skip) {
  std::vector<std::string> items;
  for (const auto& [c, i] : skip) items.push_back(absl::StrCat(c, ":", i));
  return absl::StrJoin(items, ",");
}

std::vector<sim::fidelity::Script> FidelityScripts(const real::ScriptCatalog& scripts) {
  std::vector<sim::fidelity::Script> out;
  for (const real::ScriptFile& file : scripts.all()) {
    sim::fidelity::Script script{file.id(), file.body, nullptr};
    const System* system = FindSystem(file.id().substr(0, file.id().find('/')));
    if (system && system->script_shape())
      script.shape = [shape = system->script_shape(), &file](sim::fidelity::ArgDraws& d) {
        return shape(file, d);
      };
    out.push_back(std::move(script));
  }
  return out;
}

}  // namespace testbed::props
