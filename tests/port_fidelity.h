// What the port-fidelity tests share (issue 30, part 3): each runs a seed's own code (a judge
// under tests/js/) against `testbed serve --record` and its C++ port on the emulator with the same
// calls, then compares, call for call, the Redis commands byte for byte and the answers.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "model/json_text.h"
#include "sim/monitor_text.h"
#include "sim/reply.h"
#include "sim/emulator.h"
#include "sim/runtime.h"
#include "sim/strategies.h"
#include "tests/cli_run.h"
#include "tests/spawned_serve.h"
#include "tests/temp_dir.h"

namespace testbed::fidelity {

using OJson = nlohmann::ordered_json;

// JSON.stringify of an ordered value (model/json_text.h: members in their order, array indices
// first; strings and numbers as JavaScript writes them).
inline std::string Stringify(const OJson& j) { return model::JsonStringify(j); }

inline std::string Line(const sim::Argv& argv) {
  std::string out;
  for (const std::string& a : argv) out += (out.empty() ? "" : " ") + sim::monitor::Repr(a);
  return out;
}

inline std::string Short(const std::string& s) {
  return s.size() > 160 ? s.substr(0, 120) + "... (" + std::to_string(s.size()) + " bytes)" : s;
}

// Where two commands differ: their name, then the first argument that differs.
inline std::string CommandDifference(const sim::Argv* ours, const sim::Argv* theirs) {
  if (!ours || !theirs)
    return "port " + (ours ? Short(Line(*ours)) : "(nothing)") + ", seed code " +
           (theirs ? Short(Line(*theirs)) : "(nothing)");
  if ((*ours)[0] != (*theirs)[0] || ours->size() != theirs->size())
    return "port " + Short(Line(*ours)) + ", seed code " + Short(Line(*theirs));
  size_t i = 1;
  while ((*ours)[i] == (*theirs)[i]) ++i;
  return (*ours)[0] + " argument " + std::to_string(i) + ": port " +
         Short(sim::monitor::Repr((*ours)[i])) + ", seed code " +
         Short(sim::monitor::Repr((*theirs)[i]));
}

// The first command of one call that differs, as a line ("" when the two lists are the same).
inline std::string FirstCommandDifference(const std::vector<sim::Argv>& ours,
                                          const std::vector<sim::Argv>& theirs) {
  for (size_t i = 0; i < std::max(ours.size(), theirs.size()); ++i) {
    if (i < ours.size() && i < theirs.size() && ours[i] == theirs[i]) continue;
    return "command " + std::to_string(i) + ": " +
           CommandDifference(i < ours.size() ? &ours[i] : nullptr,
                             i < theirs.size() ? &theirs[i] : nullptr);
  }
  return "";
}

// The first place two answers differ, as a line ("" when they are the same).
inline std::string AnswerDifference(const nlohmann::json& ours, const nlohmann::json& theirs) {
  if (ours == theirs) return "";
  const nlohmann::json patch = nlohmann::json::diff(ours, theirs);
  const std::string path = patch[0]["path"].get<std::string>();
  const nlohmann::json::json_pointer at(path);
  const auto value = [&](const nlohmann::json& j) {
    return j.contains(at) ? Short(model::JsonStringify(j.at(at))) : "(absent)";
  };
  return "answer at " + path + ": port " + value(ours) + ", seed code " + value(theirs);
}

// The client commands of a serve --record capture, one list per call: the judge sends ECHO
// "judge: call N" before each; what comes before the first is the client's handshake.
inline std::vector<std::vector<sim::Argv>> CallsOfCapture(const std::string& path) {
  std::vector<std::vector<sim::Argv>> calls;
  std::ifstream in(path);
  std::string text;
  while (std::getline(in, text)) {
    if (sim::monitor::IsReplyLine(text)) continue;
    sim::monitor::Line line;
    std::string error;
    EXPECT_TRUE(sim::monitor::Parse(text, line, error)) << error << ": " << text;
    if (line.lua() || line.argv.empty()) continue;
    if (line.argv.size() == 2 && line.argv[0] == "echo" &&
        line.argv[1].rfind("judge: call ", 0) == 0) {
      calls.emplace_back();
      continue;
    }
    if (!calls.empty()) calls.back().push_back(line.argv);
  }
  return calls;
}

// What a judge did with a plan: each call's answer (its printed line, parsed) and commands.
struct Judged {
  std::vector<nlohmann::json> answers;
  std::vector<std::vector<sim::Argv>> commands;
  std::string output;  // the judge's stdout and stderr, for failure messages
};

// Runs `judge` (a script under tests/js/) on the plan against a serve of its own.
inline Judged RunJudge(const std::string& judge, const OJson& plans) {
  testing_dirs::TempDir dir("port-fidelity");
  std::ofstream(dir / "plans.json") << Stringify(plans);
  testing_cli::Result js;
  {
    Spawned server(dir / "capture.txt");
    EXPECT_GT(server.port(), 0) << server.first_line();
    js = testing_cli::Run(PinnedNode(), std::string(TESTBED_SOURCE_DIR "/tests/js/") + judge + " " +
                                            (dir / "plans.json") + " " +
                                            std::to_string(server.port()));
  }
  EXPECT_EQ(js.code, 0) << js.out;
  Judged j;
  j.output = js.out;
  std::istringstream lines(js.out);
  for (std::string l; std::getline(lines, l);) j.answers.push_back(model::JsonParse(l));
  j.commands = CallsOfCapture(dir / "capture.txt");
  return j;
}

// A world on the emulator for one sequential client, with no horizon a plan could reach.
struct EmulatorWorld {
  static sim::WorldOptions Options() {
    sim::WorldOptions o;
    o.horizon_ms = 1'000'000'000;
    return o;
  }
  sim::EmulatorBackend backend;
  sim::RandomWalk walk;
  sim::World world{Options(), backend, walk};
};

// The Redis commands the world's trace holds from event `from` on.
inline std::vector<sim::Argv> CommandsSince(sim::Ctx& ctx, size_t from) {
  std::vector<sim::Argv> commands;
  const auto& events = ctx.world().trace().events;
  for (size_t i = from; i < events.size(); ++i)
    if (events[i].kind == sim::EventKind::kCall) commands.push_back(events[i].argv);
  return commands;
}

// Command names compare without case: ioredis's methods send them in lower case (get, eval),
// the ports as the seeds' scripts write them (GET, EVAL), and Redis reads both alike.
inline std::vector<sim::Argv> NamesLowered(std::vector<sim::Argv> commands) {
  for (sim::Argv& c : commands)
    if (!c.empty()) std::transform(c[0].begin(), c[0].end(), c[0].begin(), ::tolower);
  return commands;
}

// JSON.stringify, then JSON.parse: both sides' answers in one number representation.
inline nlohmann::json Canonical(const nlohmann::json& j) {
  return model::JsonParse(model::JsonStringify(j));
}

inline std::string Joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

}  // namespace testbed::fidelity
