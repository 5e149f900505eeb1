// The seeds' own code as the judge of the C++ ports (issue 30, part 3). The sequential a2 client
// plans its calls and makes them on the port (real/a2/store.cc) on the emulator; then the seed's
// store-redis-core.ts, verbatim, its types stripped by TypeScript (tests/js/a2/judge.mjs), makes
// the same calls, with the same clock and ids, against `testbed serve --record`. Call for call,
// the Redis commands must be the same, byte for byte, and so must the answers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "model/json_text.h"
#include "properties/a2/a2_sequential.h"
#include "properties/a2/a2_workload.h"
#include "sim/digest.h"
#include "sim/emulator.h"
#include "sim/monitor_text.h"
#include "sim/runtime.h"
#include "sim/strategies.h"
#include "tests/cli_run.h"
#include "tests/spawned_serve.h"
#include "tests/temp_dir.h"
#include "tests/test_catalogs.h"

namespace testbed {
namespace {

namespace a2 = props::a2;
using OJson = nlohmann::ordered_json;

// The calls a caller of the seed's store makes, as it would write them (object keys in the
// order a JavaScript caller's literal has them: the cause as {index, attempt, batchSize}).
OJson Js(const nlohmann::json& j) {
  if (j.is_object()) {
    OJson o = OJson::object();
    for (const auto& [k, v] : j.items()) o[k] = Js(v);
    return o;
  }
  if (j.is_array()) {
    OJson a = OJson::array();
    for (const auto& v : j) a.push_back(Js(v));
    return a;
  }
  if (j.is_string()) return j.get<std::string>();
  if (j.is_number_integer()) return j.get<int64_t>();
  if (j.is_number_float()) return j.get<double>();
  if (j.is_boolean()) return j.get<bool>();
  return nullptr;
}

// JSON.stringify of the call, keys in their order (JsonStringify writes strings and numbers as
// JavaScript does, lone surrogates as \udxxx escapes).
std::string Stringify(const OJson& j) {
  std::string out;
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      out += out.empty() ? "{" : ",";
      model::JsonAppendString(k, out);
      out += ":" + Stringify(v);
    }
    return out.empty() ? "{}" : out + "}";
  }
  if (j.is_array()) {
    for (const auto& v : j) out += (out.empty() ? "[" : ",") + Stringify(v);
    return out.empty() ? "[]" : out + "]";
  }
  if (j.is_string()) return model::JsonStringify(j.get<std::string>());
  if (j.is_number_integer()) return model::JsonStringify(j.get<int64_t>());
  if (j.is_number_float()) return model::JsonStringify(j.get<double>());
  return j.dump();
}
OJson CallJs(const a2::SequentialStep& s) {
  const a2::Plan& p = s.plan;
  OJson c = {{"op", p.op}, {"now", s.now}, {"ids", s.generated}};
  if (p.op == "append") {
    c["session"] = p.session;
    c["events"] = OJson::array();
    for (const real::a2::NewEvent& e : p.events) {
      OJson x;
      if (e.id) x["id"] = *e.id;
      x["type"] = e.type;
      x["payload"] = Js(e.payload);
      if (e.cause) {
        x["cause"] = {{"index", e.cause->index}, {"attempt", e.cause->attempt}};
        if (e.cause->batch_size) x["cause"]["batchSize"] = *e.cause->batch_size;
      }
      if (e.lane) x["lane"] = *e.lane;
      x["settled"] = e.settled;
      c["events"].push_back(x);
    }
  } else if (p.op == "claim") {
    c.update({{"session", p.session},
              {"holder", p.holder},
              {"ttl", a2::kLeaseMs},
              {"exclude", p.exclude}});
  } else if (p.op == "renew") {
    OJson refs = OJson::array();
    for (const real::a2::ClaimRef& r : p.refs)
      refs.push_back({{"index", r.index}, {"attempt", r.attempt}});
    c.update({{"session", p.session}, {"holder", p.holder}, {"refs", refs}, {"ttl", p.ttl}});
  } else if (p.op == "complete") {
    OJson children = OJson::array();
    for (const real::a2::ChildEvent& e : p.children) {
      OJson x = {{"id", e.id}, {"type", e.type}, {"payload", Js(e.payload)}};
      if (e.lane) x["lane"] = *e.lane;
      x["settled"] = e.settled;
      children.push_back(x);
    }
    c.update({{"session", p.session},
              {"index", p.index},
              {"attempt", p.attempt},
              {"children", children}});
  } else if (p.op == "fail") {
    c.update({{"session", p.session},
              {"index", p.index},
              {"attempt", p.attempt},
              {"maxFailures", p.max_failures}});
  } else if (p.op == "read") {
    c.update({{"session", p.session}, {"after", p.after}});
    if (p.through) c["through"] = *p.through;
  } else if (p.op == "readEvents") {
    c.update({{"session", p.session}, {"after", p.after}});
  } else if (p.op == "readState") {
    c.update({{"session", p.session}, {"reducer", p.reducer}});
  } else if (p.op == "putSnapshot") {
    c.update({{"session", p.session},
              {"reducer", p.reducer},
              {"index", p.index},
              {"state", Js(p.state)}});
  } else if (p.op == "presenceSet") {
    OJson values = OJson::array();
    for (const auto& [field, value] : p.values) values.push_back({field, Js(value)});
    c.update({{"ns", p.ns},
              {"participant", p.participant},
              {"values", values},
              {"seen", p.seen},
              {"at", p.at},
              {"ttl", p.ttl}});
  } else if (p.op == "presenceRead") {
    c["ns"] = p.ns;
  } else if (p.op == "listSessions") {
    c.update({{"session", p.session}, {"limit", p.limit}});
    if (p.cursor) c["cursor"] = *p.cursor;
  } else {  // listSnapshots, markWatched
    c.update({{"session", p.session}, {"ttl", p.ttl}});
  }
  return c;
}

std::string Line(const sim::Argv& argv) {
  std::string out;
  for (const std::string& a : argv) out += (out.empty() ? "" : " ") + sim::monitor::Repr(a);
  return out;
}

std::string Short(const std::string& s) {
  return s.size() > 160 ? s.substr(0, 120) + "... (" + std::to_string(s.size()) + " bytes)" : s;
}

// Where two commands differ: their name, then the first argument that differs.
std::string CommandDifference(const sim::Argv* ours, const sim::Argv* theirs) {
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

// The calls of a command list by the key they name (without its last part: a session's count,
// log and meta keys are one group), each group in its order.
// whole_key: each key is a group (listSnapshots' branches read one key each).
std::map<std::string, std::vector<sim::Argv>> ByKey(const std::vector<sim::Argv>& commands,
                                                    bool whole_key = false) {
  std::map<std::string, std::vector<sim::Argv>> groups;
  for (const sim::Argv& c : commands) {
    const std::string key = c.size() > 1 ? c[1] : "";
    groups[whole_key ? key : key.substr(0, key.rfind(':'))].push_back(c);
  }
  return groups;
}

// A fan-out (Promise.all: listSessions, listSnapshots) whose branches' calls the port
// interleaved otherwise than Node did: the same calls, each branch's in the same order.
bool SameUpToInterleaving(const std::string& op, const std::vector<sim::Argv>& a,
                          const std::vector<sim::Argv>& b) {
  if (op == "listSessions") return ByKey(a) == ByKey(b);
  if (op == "listSnapshots") return ByKey(a, true) == ByKey(b, true);
  return false;
}

// Whether the port interleaved branches at all: some branch's call comes after another
// branch's, after a call of its own.
bool Interleaved(const std::vector<sim::Argv>& commands) {
  std::vector<std::string> order;
  for (const sim::Argv& c : commands) {
    const std::string key = c.size() > 1 ? c[1].substr(0, c[1].rfind(':')) : "";
    if (order.empty() || order.back() != key) order.push_back(key);
  }
  std::set<std::string> distinct(order.begin(), order.end());
  return distinct.size() < order.size();
}

struct Verdict {
  std::vector<std::string> differences;
  int fan_outs = 0, interleaved = 0;  // listSessions calls of two or more sessions; interleaved
};

struct PortRun {
  std::vector<a2::SequentialStep> steps;
  std::vector<std::vector<sim::Argv>> commands;  // per step
};

PortRun RunPort(uint64_t seed, int ops, const a2::Mix& mix) {
  sim::EmulatorBackend backend;
  sim::RandomWalk walk;
  sim::WorldOptions o;
  o.seed = seed;
  o.horizon_ms = 1'000'000'000;
  sim::World world(o, backend, walk);
  props::RunSpec spec;
  spec.version = "0.5.0";
  spec.seed = seed;
  spec.ops = ops;
  const real::a2::Scripts scripts(testing_catalogs::Shipped(), "0.5.0");
  a2::SequentialLog log;
  world.add_actor("client0", [&](sim::Ctx& ctx) {
    return a2::SequentialClient(ctx, spec, scripts, mix, a2::Against::kModel, &log);
  });
  const sim::RunResult r = world.run();
  EXPECT_EQ(r.error, "");
  PortRun out;
  for (const a2::SequentialStep& s : log.steps) {
    std::vector<sim::Argv> calls;
    for (size_t i = s.trace_from; i < s.trace_to; ++i)
      if (world.trace().events[i].kind == sim::EventKind::kCall)
        calls.push_back(world.trace().events[i].argv);
    out.commands.push_back(std::move(calls));
  }
  out.steps = std::move(log.steps);
  return out;
}

// The client commands of a serve --record capture, one list per call: the judge sends ECHO
// "judge: call N" before each; what comes before the first is the client's handshake.
std::vector<std::vector<sim::Argv>> CallsOfCapture(const std::string& path) {
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

// Every call of `ops` calls from each seed: the same commands and the same answer. Returns the
// differences, one line each (empty: none).
Verdict Differences(const a2::Mix& mix, int seeds, int ops) {
  const std::string node = PinnedNode();
  const std::string judge = TESTBED_SOURCE_DIR "/tests/js/a2/judge.mjs";
  Verdict v;
  std::vector<std::string>& found = v.differences;
  for (int seed = 1; seed <= seeds; ++seed) {
    const PortRun port = RunPort(static_cast<uint64_t>(seed), ops, mix);
    testing_dirs::TempDir dir("port-fidelity");
    OJson plans = {{"prefix", "a2"}, {"calls", OJson::array()}};
    for (const a2::SequentialStep& s : port.steps) plans["calls"].push_back(CallJs(s));
    std::ofstream(dir / "plans.json") << Stringify(plans);
    testing_cli::Result js;
    {
      Spawned server(dir / "capture.txt");
      EXPECT_GT(server.port(), 0) << server.first_line();
      js = testing_cli::Run(
          node, judge + " " + (dir / "plans.json") + " " + std::to_string(server.port()));
    }
    EXPECT_EQ(js.code, 0) << js.out;
    std::vector<nlohmann::json> answers;
    std::istringstream lines(js.out);
    for (std::string l; std::getline(lines, l);) answers.push_back(model::JsonParse(l));
    const std::vector<std::vector<sim::Argv>> commands = CallsOfCapture(dir / "capture.txt");
    EXPECT_EQ(answers.size(), port.steps.size()) << "seed " << seed << ": " << js.out;
    EXPECT_EQ(commands.size(), port.steps.size()) << "seed " << seed;
    for (size_t k = 0; k < port.steps.size() && k < answers.size() && k < commands.size(); ++k) {
      const a2::SequentialStep& s = port.steps[k];
      const std::string where =
          "seed " + std::to_string(seed) + " call " + std::to_string(k) + " " + s.call + ": ";
      const std::vector<sim::Argv>& ours = port.commands[k];
      const std::vector<sim::Argv>& theirs = commands[k];
      if (s.op == "listSessions" && ByKey(ours).size() > 2) {
        ++v.fan_outs;
        v.interleaved += Interleaved(ours);
      }
      const bool fan_out = SameUpToInterleaving(s.op, ours, theirs);
      for (size_t i = 0; !fan_out && i < std::max(ours.size(), theirs.size()); ++i) {
        if (i < ours.size() && i < theirs.size() && ours[i] == theirs[i]) continue;
        found.push_back(where + "command " + std::to_string(i) + ": " +
                        CommandDifference(i < ours.size() ? &ours[i] : nullptr,
                                          i < theirs.size() ? &theirs[i] : nullptr));
        break;
      }
      nlohmann::json answer = answers[k]["answer"];
      a2::Normalize(s.op, answer);
      if (answer != s.store) {
        const nlohmann::json patch = nlohmann::json::diff(s.store, answer);
        const std::string path = patch[0]["path"].get<std::string>();
        const nlohmann::json::json_pointer at(path);
        const auto value = [&](const nlohmann::json& j) {
          return j.contains(at) ? Short(model::JsonStringify(j.at(at))) : "(absent)";
        };
        found.push_back(where + "answer at " + path + ": port " + value(s.store) + ", seed code " +
                        value(answer));
      }
    }
  }
  return v;
}

std::string Joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

// The seeds' code the judges run is the seeds', byte for byte: each file's sha256 and line count
// as tests/js/seeds/manifest.json records them (with the seed lines each comes from).
TEST(PortFidelity, TheSeedsCodeIsKeptByteForByteAsItsManifestRecords) {
  const std::string dir = TESTBED_SOURCE_DIR "/tests/js/seeds/";
  const nlohmann::json manifest =
      nlohmann::json::parse(testing_cli::ReadFile(dir + "manifest.json"));
  ASSERT_EQ(manifest["files"].size(), 2u);
  for (const nlohmann::json& f : manifest["files"]) {
    const std::string text = testing_cli::ReadFile(dir + f["file"].get<std::string>());
    EXPECT_EQ(sim::Sha256Hex(text), f["sha256"]) << f["file"];
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), f["lines"].get<int64_t>()) << f["file"];
    EXPECT_NE(f["provenance"].get<std::string>().find("seed 00"), std::string::npos);
  }
}

// Every kind of call, with the adversarial payloads and the deep runs' boundaries (issue 28's
// reach): lanes, causes, children, dead letters, presence ties, snapshots past the frontier.
const a2::Mix kEveryCall = {{18, 14, 5, 10, 6, 5, 3, 5, 5, 7, 4, 3, 3, 2},
                            {"s1", "s2"},
                            {"sum", "count"},
                            {"room-1"},
                            /*late=*/true,
                            /*adversarial=*/true,
                            /*past_frontier=*/true,
                            /*expired_own=*/true,
                            /*boundaries=*/true};

// Names that are globs, prefixes of other keys, or empty (isolation's), with the adversarial
// values.
const a2::Mix kOddNames = {{20, 10, 0, 6, 0, 6, 4, 10, 12, 8, 6, 4, 12, 2},
                           {"s", "s:snap:r", "s*", ""},
                           {"q", "r:snap:q", "*"},
                           {"s", "s:presence", "*"},
                           /*late=*/true,
                           /*adversarial=*/true};

TEST(PortFidelity, TheA2PortSendsWhatTheSeedsTypeScriptSendsAndAnswersAsItDoes) {
  ASSERT_TRUE(std::filesystem::exists(PinnedNode()))
      << "tests/js is not installed: bash .ci/install (npm ci in tests/js)";
  Verdict v = Differences(kEveryCall, 6, 40);
  const Verdict odd = Differences(kOddNames, 4, 40);
  v.differences.insert(v.differences.end(), odd.differences.begin(), odd.differences.end());
  v.fan_outs += odd.fan_outs;
  v.interleaved += odd.interleaved;
  EXPECT_TRUE(v.differences.empty()) << v.differences.size() << " differences:\n"
                                     << Joined(v.differences);
  // listSessions' Promise.all is concurrent in the port too: the scheduler interleaves the
  // sessions' reads (one order of many is Node's).
  EXPECT_GT(v.fan_outs, 0);
  EXPECT_GT(v.interleaved, 0) << v.fan_outs << " listSessions calls, none interleaved";
  std::printf("%d listSessions calls read two or more sessions; the port interleaved %d\n",
              v.fan_outs, v.interleaved);
}

}  // namespace
}  // namespace testbed
