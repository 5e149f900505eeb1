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
#include "tests/port_fidelity.h"
#include "tests/test_catalogs.h"

namespace testbed {
namespace {

namespace a2 = props::a2;
using fidelity::OJson;
using fidelity::Stringify;

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

struct A2Verdict {
  std::vector<std::string> differences;
  int fan_outs = 0, interleaved = 0;  // listSessions calls of two or more sessions; interleaved
};

struct A2PortRun {
  std::vector<a2::SequentialStep> steps;
  std::vector<std::vector<sim::Argv>> commands;  // per step
};

A2PortRun RunA2Port(uint64_t seed, int ops, const a2::Mix& mix) {
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
  A2PortRun out;
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

// Every call of `ops` calls from each seed: the same commands and the same answer. Returns the
// differences, one line each (empty: none).
A2Verdict A2Differences(const a2::Mix& mix, int seeds, int ops) {
  A2Verdict v;
  std::vector<std::string>& found = v.differences;
  for (int seed = 1; seed <= seeds; ++seed) {
    const A2PortRun port = RunA2Port(static_cast<uint64_t>(seed), ops, mix);
    OJson plans = {{"prefix", "a2"}, {"calls", OJson::array()}};
    for (const a2::SequentialStep& s : port.steps) plans["calls"].push_back(CallJs(s));
    const fidelity::Judged judged = fidelity::RunJudge("a2/judge.mjs", plans);
    const std::vector<nlohmann::json>& answers = judged.answers;
    const std::vector<std::vector<sim::Argv>>& commands = judged.commands;
    const std::string& js_out = judged.output;
    EXPECT_EQ(answers.size(), port.steps.size()) << "seed " << seed << ": " << js_out;
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
      const std::string commands_differ = SameUpToInterleaving(s.op, ours, theirs)
                                              ? ""
                                              : fidelity::FirstCommandDifference(ours, theirs);
      if (!commands_differ.empty()) found.push_back(where + commands_differ);
      nlohmann::json answer = answers[k]["answer"];
      a2::Normalize(s.op, answer);
      const std::string answers_differ = fidelity::AnswerDifference(s.store, answer);
      if (!answers_differ.empty()) found.push_back(where + answers_differ);
    }
  }
  return v;
}

// The seeds' code the judges run is the seeds', byte for byte: each file's sha256 and line count
// as tests/js/seeds/manifest.json records them (with the seed lines each comes from). The state
// runtimes are rebuilt from diffs (tests/js/state/reconstruct.py): the seed's lines and the
// filled ones partition the file, and the seed's lines are the ones the manifest digested.
TEST(PortFidelity, TheSeedsCodeIsKeptByteForByteAsItsManifestRecords) {
  const std::string dir = TESTBED_SOURCE_DIR "/tests/js/";
  const nlohmann::json manifest =
      nlohmann::json::parse(testing_cli::ReadFile(dir + "seeds/manifest.json"));
  ASSERT_EQ(manifest["files"].size(), 2u);
  for (const nlohmann::json& f : manifest["files"]) {
    const std::string text = testing_cli::ReadFile(dir + "seeds/" + f["file"].get<std::string>());
    EXPECT_EQ(sim::Sha256Hex(text), f["sha256"]) << f["file"];
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), f["lines"].get<int64_t>()) << f["file"];
    EXPECT_NE(f["provenance"].get<std::string>().find("seed 00"), std::string::npos);
  }
  ASSERT_EQ(manifest["reconstructed"].size(), 2u);
  for (const nlohmann::json& f : manifest["reconstructed"]) {
    const std::string text = testing_cli::ReadFile(dir + f["file"].get<std::string>());
    EXPECT_EQ(sim::Sha256Hex(text), f["sha256"]) << f["file"];
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    ASSERT_EQ(static_cast<int64_t>(lines.size()), f["lines"].get<int64_t>()) << f["file"];
    std::vector<int> covered(lines.size() + 1, 0);
    std::string seed_text;
    for (const nlohmann::json& r : f["seed_lines"])
      for (int64_t k = r[0]; k <= r[1]; ++k) {
        ++covered[k];
        seed_text += lines[k - 1] + "\n";
      }
    for (const nlohmann::json& r : f["filled"])
      for (int64_t k = r["lines"][0]; k <= r["lines"][1]; ++k) ++covered[k];
    EXPECT_EQ(std::count(covered.begin() + 1, covered.end(), 1),
              static_cast<std::ptrdiff_t>(lines.size()))
        << f["file"] << ": the seed's and the filled lines must cover every line once";
    EXPECT_EQ(sim::Sha256Hex(seed_text), f["seed_lines_sha256"]) << f["file"];
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
  A2Verdict v = A2Differences(kEveryCall, 6, 40);
  const A2Verdict odd = A2Differences(kOddNames, 4, 40);
  v.differences.insert(v.differences.end(), odd.differences.begin(), odd.differences.end());
  v.fan_outs += odd.fan_outs;
  v.interleaved += odd.interleaved;
  EXPECT_TRUE(v.differences.empty()) << v.differences.size() << " differences:\n"
                                     << fidelity::Joined(v.differences);
  // listSessions' Promise.all is concurrent in the port too: the scheduler interleaves the
  // sessions' reads (one order of many is Node's).
  EXPECT_GT(v.fan_outs, 0);
  EXPECT_GT(v.interleaved, 0) << v.fan_outs << " listSessions calls, none interleaved";
  std::printf("%d listSessions calls read two or more sessions; the port interleaved %d\n",
              v.fan_outs, v.interleaved);
}

}  // namespace
}  // namespace testbed
