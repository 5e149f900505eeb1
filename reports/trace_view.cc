#include "reports/trace_view.h"

#include <absl/strings/str_cat.h>

#include <algorithm>

#include "sim/lua_scripting.h"

namespace testbed::reports {

namespace {
bool IsHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }
bool IsBase64Url(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}
}  // namespace

std::string Abbreviate(const std::string& line) {
  // "sha256:" + 64 hex digits -> the first 8 and ".."; ":index:" + 9 or more base64url
  // characters -> the first 8 and "..". (A scan, not std::regex: this runs on every line of
  // every counterexample.)
  std::string out;
  out.reserve(line.size());
  for (size_t i = 0; i < line.size();) {
    if (line.compare(i, 7, "sha256:") == 0 && i + 71 <= line.size() &&
        std::all_of(line.begin() + i + 7, line.begin() + i + 71, IsHex)) {
      out.append(line, i, 15).append("..");
      i += 71;
      continue;
    }
    if (line.compare(i, 7, ":index:") == 0) {
      size_t end = i + 7;
      while (end < line.size() && IsBase64Url(line[end])) ++end;
      if (end - (i + 7) >= 9) {
        out.append(line, i, 15).append("..");
        i = end;
        continue;
      }
    }
    out += line[i++];
  }
  return out;
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
    if (IsCallOrFault(e)) out.push_back(trace.Render(e, &names));
  return out;
}

std::map<std::string, std::vector<std::string>> CallsPerActor(const sim::Trace& trace,
                                                              const ScriptNames& names) {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& e : trace.events)
    if (e.kind == sim::EventKind::kReply)
      out[trace.actor_of(e)].push_back(absl::StrCat(
          "+", e.at_ms, "ms ", sim::ShortArgv(trace.argv_of(e), &names), " -> ", e.reply.debug()));
  return out;
}

}  // namespace testbed::reports
