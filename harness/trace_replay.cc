#include "harness/trace_replay.h"

#include <absl/strings/ascii.h>
#include <absl/strings/str_cat.h>

#include <stdexcept>
#include <vector>

#include "harness/system.h"
#include "real/real_backend.h"
#include "sim/clock.h"
#include "sim/emulator.h"
#include "sim/monitor_text.h"

namespace testbed::harness {
namespace {

using Json = nlohmann::json;

std::string Arg(const Json& a, const std::string& where) {
  return props::RecordedArgument(a, where);
}

sim::Argv ArgvOf(const Json& argv, const std::string& where) {
  if (!argv.is_array() || argv.empty())
    throw std::invalid_argument(where + ": argv is not a non-empty array");
  sim::Argv out;
  for (const Json& a : argv) out.push_back(Arg(a, where));
  return out;
}

std::string Where(const Json& call) {
  return absl::StrCat("line ", call.value("line", int64_t{0}));
}

std::string Rendered(const sim::Argv& argv) {
  std::string s;
  for (const std::string& a : argv)
    absl::StrAppend(&s, s.empty() ? "" : " ", sim::monitor::Repr(a));
  return s;
}

}  // namespace

bool IsRecordedTrace(const Json& file) {
  return file.is_object() && file.value("kind", std::string()) == "recorded-trace";
}

void ValidateTrace(const Json& trace) {
  if (!IsRecordedTrace(trace)) throw std::invalid_argument("not a recorded trace");
  // The system and version it was recorded from: a system testbed knows, and one of its
  // versions or null (the capture did not show which).
  const Json system = trace.value("system", Json());
  const props::System* known = system.is_string() ? props::FindSystem(system) : nullptr;
  if (!known)
    throw std::invalid_argument("\"system\" is " + system.dump() +
                                ": not a system testbed knows (testbed list)");
  const Json version = trace.value("version", Json());
  if (!version.is_null()) {
    bool found = false;
    for (const props::VersionInfo& v : known->versions())
      found = found || (version.is_string() && v.name == version.get<std::string>());
    if (!found)
      throw std::invalid_argument("\"version\" is " + version.dump() + ": not a version of " +
                                  known->name() + ", nor null (the capture did not show it)");
  }
  for (const Json& v : trace.value("versions_fitting", Json::array())) {
    bool found = false;
    for (const props::VersionInfo& info : known->versions())
      found = found || (v.is_string() && info.name == v.get<std::string>());
    if (!found)
      throw std::invalid_argument("\"versions_fitting\" names " + v.dump() + ": not a version of " +
                                  known->name());
  }
  if (!trace.contains("calls") || !trace["calls"].is_array())
    throw std::invalid_argument("\"calls\" is not an array");
  if (!trace.contains("scripts") || !trace["scripts"].is_object())
    throw std::invalid_argument("\"scripts\" is not an object");
  for (const Json& call : trace["calls"]) {
    if (!call.is_object() || !call.contains("at_us") || !call["at_us"].is_number_integer() ||
        !call.contains("line") || !call["line"].is_number_integer())
      throw std::invalid_argument("a call without an integer \"line\" and \"at_us\"");
    ArgvOf(call.value("argv", Json()), Where(call));
    for (const Json& lua : call.value("lua", Json::array())) ArgvOf(lua, Where(call));
    if (call.contains("reply")) Arg(call["reply"], Where(call));
  }
}

TraceReplay ReplayTrace(const Json& trace, real::RedisServer& server,
                        const real::ScriptCatalog& catalog) {
  ValidateTrace(trace);
  sim::VirtualClock clock(sim::kDefaultEpochMs);
  sim::Emulator emulator(clock);
  std::vector<sim::Argv> ran;  // what the current call's script ran on the emulator
  emulator.observer = [&ran](const sim::Argv& argv, bool from_script) {
    if (from_script) ran.push_back(argv);
  };
  real::RealBackend redis(server);  // flushes the spawned server: a fresh world
  // Every script the capture ran is loaded first in both worlds, as an EVALSHA needs it to be.
  for (const auto& [sha1, script] : trace["scripts"].items()) {
    // The body as the capture ran it: a shipped script as deployed keeps its own.
    const std::string body = script.contains("id") && !script.contains("body")
                                 ? catalog.get(script["id"].get<std::string>()).body
                                 : Arg(script.value("body", Json()), "script " + sha1);
    const sim::Argv load = {"SCRIPT", "LOAD", body};
    clock.set(sim::kDefaultEpochMs);
    (void)emulator.execute(load);
    (void)redis.execute(load, sim::kDefaultEpochMs);
  }
  ran.clear();
  // Calls run at the capture's own instants: their arguments carry absolute times (a PXAT,
  // a script's "now"), which only the same clock reads alike. A file without the segment's
  // start (imported before it was kept) starts at the default epoch.
  const int64_t start_us = trace.value("start_us", sim::kDefaultEpochMs * 1000);
  TraceReplay out;
  for (const Json& call : trace["calls"]) {
    if (call.contains("opaque")) {  // nothing can run it: both worlds go on without it
      ++out.opaque;
      continue;
    }
    if (call.contains("other_db")) {  // another database: it cannot touch the system's keys
      ++out.other_db;
      continue;
    }
    const sim::Argv argv = ArgvOf(call["argv"], Where(call));
    const int64_t now = (start_us + call["at_us"].get<int64_t>()) / 1000;
    clock.set(now);
    ran.clear();
    const sim::Reply mine = emulator.execute(argv);
    const sim::Reply theirs = redis.execute(argv, now);
    ++out.calls;
    if (call.value("foreign", false))
      ++out.foreign;
    else
      out.replies.push_back(mine);
    const int64_t line = call["line"].get<int64_t>();
    if (!(mine == theirs)) {
      out.difference_line = line;
      out.difference =
          absl::StrCat("the emulator replied ", mine.debug(), ", redis-server replied ",
                       theirs.debug(), " to ", Rendered(argv));
      return out;
    }
    if (call.contains("reply")) {  // recorded by testbed serve --record
      const std::string recorded = Arg(call["reply"], Where(call));
      if (mine.resp2() != recorded) {
        out.difference_line = line;
        out.difference = absl::StrCat("the capture's reply was ", sim::monitor::Repr(recorded),
                                      ", the emulator and redis-server replied ",
                                      sim::monitor::Repr(mine.resp2()), " to ", Rendered(argv));
        return out;
      }
    }
    const Json recorded = call.value("lua", Json::array());
    if (!call.contains("script")) continue;
    for (size_t k = 0; k < std::max(ran.size(), recorded.size()); ++k) {
      const std::string got = k < ran.size() ? Rendered(ran[k]) : "nothing more";
      const std::string want =
          k < recorded.size() ? Rendered(ArgvOf(recorded[k], Where(call))) : "nothing more";
      if (got != want) {
        out.difference_line = line;
        out.difference = absl::StrCat("the script's command ", k + 1, " was ", got,
                                      " on the emulator; the capture shows ", want);
        return out;
      }
    }
  }
  return out;
}

}  // namespace testbed::harness
