#include "reports/trace_view.h"

#include <absl/strings/str_cat.h>

#include <regex>

#include "sim/lua_scripting.h"

namespace testbed::reports {

ScriptNames NamesOf(const ScriptCatalog& scripts) {
  ScriptNames names;
  for (const auto& f : scripts.all()) names[CachedSha1(f.body).substr(0, 12)] = f.id();
  return names;
}

std::string NameScripts(std::string line, const ScriptNames& names) {
  for (size_t at = line.find("<script "); at != std::string::npos;
       at = line.find("<script ", at + 1)) {
    auto it = names.find(line.substr(at + 8, 12));
    if (it != names.end()) line.replace(at + 1, 19, it->second);
  }
  return line;
}

std::string Abbreviate(const std::string& line) {
  static const std::regex digest("sha256:([0-9a-f]{8})[0-9a-f]{56}");
  static const std::regex index(":index:([A-Za-z0-9_-]{8})[A-Za-z0-9_-]+");
  return std::regex_replace(std::regex_replace(line, digest, "sha256:$1.."), index, ":index:$1..");
}

namespace {
bool IsCallOrFault(const sim::TraceEvent& e) {
  return e.kind == sim::EventKind::kReply || e.kind == sim::EventKind::kFault ||
         e.kind == sim::EventKind::kClock;
}
}  // namespace

std::vector<std::string> CallsInOrder(const sim::Trace& trace, const ScriptNames& names) {
  std::vector<std::string> out;
  for (const auto& e : trace.events)
    if (IsCallOrFault(e)) out.push_back(NameScripts(trace.Render(e), names));
  return out;
}

std::map<std::string, std::vector<std::string>> CallsPerActor(const sim::Trace& trace,
                                                              const ScriptNames& names) {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& e : trace.events)
    if (e.kind == sim::EventKind::kReply)
      out[trace.actor_of(e)].push_back(
          NameScripts(absl::StrCat("+", e.at_ms, "ms ", sim::ShortArgv(trace.argv_of(e)), " -> ",
                                   e.reply.debug()),
                      names));
  return out;
}

}  // namespace testbed::reports
