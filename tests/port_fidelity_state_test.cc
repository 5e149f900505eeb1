// The seeds' own state runtime as the judge of the C++ port (issue 30, part 3). Seeds 000 and
// 001 show state.ts only as diffs; tests/js/state/<version>/state.ts is each new side with its
// hidden lines filled (tests/js/state/README.md). A fixed plan of calls, odd inputs included
// (foreign and corrupt values, non-string fields, versions that are not integers, Unicode names,
// equal timestamps, expiry edges), runs on the port (real/state/v2.cc) on the emulator, and on
// the reconstructed runtime under Node against `testbed serve --record`. Call for call, the
// Redis commands must be the same, byte for byte, and so must the answers.
#include <gtest/gtest.h>

#include <absl/strings/escaping.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "model/json_text.h"
#include "real/state/namespace.h"
#include "sim/emulator.h"
#include "sim/prng.h"
#include "sim/runtime.h"
#include "sim/strategies.h"
#include "tests/port_fidelity.h"
#include "tests/test_catalogs.h"

namespace testbed {
namespace {

using fidelity::OJson;
using Json = nlohmann::json;

struct Space {
  std::optional<std::string> connection;
  std::string name;
  bool provider_scope = false;
  int64_t default_ttl = 60'000, max_ttl = 120'000, max_entries = 3, max_value_bytes = 160;
};

const std::vector<Space> kSpaces = {
    {"conn-1", "sessions"},
    {std::nullopt, "sessions"},  // no connection: the missing-connection scope
    {"conn-2", "shared", /*provider_scope=*/true},
    {"Ünïcode ☃ conn", "名前:with:colons", false, 50, 100, 2, 400},
};
const std::vector<std::string> kKeys = {"a", "b", "ключ", "a:b", "__index", ""};

// Values a provider's code may store, as JSON text (both sides parse the same text: a number
// past 2^53 is already a double for a JavaScript caller, and JsonParse rounds it the same way).
const std::vector<std::string> kValues = {
    R"({"z":1,"a":2,"m":{"y":true,"b":null}})",
    R"({"2":"two","b":1,"1":"one"})",
    R"("snow ☃ and 😀 and \ud800 alone")",
    R"([1,"x",{"k":[]},{}])",
    "1.5",
    "-0",
    "1e21",
    "0.1",
    "9007199254740993",
    "null",
    "true",
    R"({"n":41})",
    R"({"n":"41"})",
    R"("str")",
    R"([5,6])",
    R"({"big":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"})",
};

// Bytes another writer (an old pod, an operator, a corrupt restore) left under a key.
std::vector<std::string> ForeignValues() {
  const std::string env =
      R"("expiresAt":"2099-01-01T00:00:00.000Z","createdAt":"2026-01-01T00:00:00.000Z","updatedAt":"2026-01-01T00:00:00.000Z")";
  return {"not json",
          R"({"value":1,"version":"1",)" + env + "}",
          R"({"value":{"b":1,"a":2},"version":1.5,)" + env + "}",
          R"({"value":"v","version":9007199254740993,)" + env + "}",
          "\xEF\xBB\xBF{\"value\":1,\"version\":1," + env + "}",
          "\xFF",
          R"({"deleted":true})",
          R"({"deleted":"true"})",
          "[]",
          R"({"value":7,"version":3,"expiresAt":5,"createdAt":"c","updatedAt":"u"})",
          R"({"version":2,)" + env + "}"};
}

// A fixed plan of `n` calls from `seed`: each call as a JavaScript caller would make it.
OJson StatePlan(uint64_t seed, int n, const std::string& version) {
  sim::Prng rng(seed);
  auto pick = [&](auto& v) -> decltype(v[0]) { return v[rng.below(v.size())]; };
  const std::vector<std::string> foreign = ForeignValues();
  OJson plans = {{"version", version}, {"provider", "prov ☃"}, {"namespaces", OJson::array()}};
  for (const Space& s : kSpaces)
    plans["namespaces"].push_back({{"connection", s.connection ? OJson(*s.connection) : OJson()},
                                   {"name", s.name},
                                   {"scope", s.provider_scope ? "provider" : "connection"},
                                   {"defaultTtl", s.default_ttl},
                                   {"maxTtl", s.max_ttl},
                                   {"maxEntries", s.max_entries},
                                   {"maxValueBytes", s.max_value_bytes}});
  const std::vector<int64_t> steps = {0, 0, 1, 1, 10, 49, 50, 51, 1000, 60'000};
  const std::vector<int64_t> ttls = {-1, -1, 1, 50, 100, 120'000, 130'000};
  OJson calls = OJson::array();
  // First the edges, in sequence: an increment of a value that is not an object (a string, an
  // array: JavaScript spreads them), of a value cjson re-encoded (compareAndSet rewrites the
  // envelope), reads at the very ms of expiry and after, and (beta24) a v1 value claimed.
  auto at = [&](int64_t dt, int ns, OJson c) {
    c["dt"] = dt;
    c["ns"] = ns;
    calls.push_back(c);
  };
  at(0, 0, {{"op", "set"}, {"key", "s"}, {"valueJson", R"("str")"}});
  at(0, 0, {{"op", "increment"}, {"key", "s"}, {"field", "n"}, {"delta", 1.0}});
  at(0, 0, {{"op", "set"}, {"key", "s"}, {"valueJson", "[5,6]"}});
  at(0, 0, {{"op", "increment"}, {"key", "s"}, {"field", "n"}, {"delta", 1.0}});
  at(1, 2, {{"op", "cas"}, {"key", "c"}, {"expected", 0}, {"valueJson", kValues[0]}});
  at(0, 2, {{"op", "cas"}, {"key", "c"}, {"expected", 1}, {"valueJson", kValues[1]}});
  at(0, 2, {{"op", "increment"}, {"key", "c"}, {"field", "n"}, {"delta", 2.5}});
  at(0, 3, {{"op", "set"}, {"key", "e"}, {"valueJson", "1"}, {"ttl", 40}});
  at(39, 3, {{"op", "get"}, {"key", "e"}});
  at(1, 3, {{"op", "get"}, {"key", "e"}});
  at(0, 3, {{"op", "list"}});
  at(1, 3, {{"op", "get"}, {"key", "e"}});
  at(0, 0, {{"op", "foreign"}, {"key", "old"}, {"legacy", true}, {"raw", ForeignValues()[4]}});
  at(0, 0, {{"op", "get"}, {"key", "old"}});
  at(0, 0,
     {{"op", "foreign"},
      {"key", "old2"},
      {"legacy", true},
      {"raw",
       R"({"value":{"z":1,"a":[]},"version":4,"expiresAt":"2099-01-01T00:00:00.000Z","createdAt":"c","updatedAt":"u"})"}});
  at(0, 0, {{"op", "increment"}, {"key", "old2"}, {"field", "n"}, {"delta", 1.0}});
  at(0, 0, {{"op", "get"}, {"key", "old2"}});
  // A version that is not an integer (another writer's): read, then written over.
  at(0, 1, {{"op", "foreign"}, {"key", "v15"}, {"raw", ForeignValues()[2]}});
  at(0, 1, {{"op", "get"}, {"key", "v15"}});
  at(0, 1, {{"op", "set"}, {"key", "v15"}, {"valueJson", "2"}});
  for (int i = 0; i < n; ++i) {
    const uint64_t r = rng.below(100);
    OJson c;
    c["dt"] = pick(steps);
    c["ns"] = rng.below(kSpaces.size());
    const std::string key = pick(kKeys);
    const int64_t ttl = pick(ttls);
    // The value as JSON text: the judge's caller holds JSON.parse of it, the port's JsonParse.
    auto value = [&] { return pick(kValues); };
    if (r < 20) {
      c.update({{"op", "get"}, {"key", key}});
    } else if (r < 38) {
      c.update({{"op", "set"}, {"key", key}, {"valueJson", value()}});
      if (ttl >= 0) c["ttl"] = ttl;
    } else if (r < 56) {
      c.update({{"op", "cas"}, {"key", key}, {"expected", rng.below(4)}, {"valueJson", value()}});
      if (ttl >= 0) c["ttl"] = ttl;
    } else if (r < 64) {
      c.update({{"op", "delete"}, {"key", key}});
    } else if (r < 74) {
      c["op"] = "list";
      if (rng.below(2)) c["limit"] = rng.below(4);
      if (rng.below(2)) c["prefix"] = pick(kKeys);
    } else if (r < 86) {
      c.update({{"op", "increment"}, {"key", key}, {"field", rng.below(3) ? "n" : "1"}});
      c["delta"] = rng.below(4) ? 1.0 : 2.5;
    } else {
      c.update({{"op", "foreign"}, {"key", key}, {"raw", pick(foreign)}});
    }
    calls.push_back(c);
  }
  plans["calls"] = calls;
  return plans;
}

Json Value(const real::state::StateValue& v) {
  return {{"key", v.key},
          {"value", v.value},
          {"version", v.version},
          {"expiresAt", v.expires_at},
          {"createdAt", v.created_at},
          {"updatedAt", v.updated_at}};
}
Json Value(const std::optional<real::state::StateValue>& v) { return v ? Value(*v) : Json(); }

struct StatePortRun {
  std::vector<Json> answers;
  std::vector<std::vector<sim::Argv>> commands;
};

// Makes the plan's calls on the port, on the emulator; fills in each call's `now` (the
// actor's clock) and a foreign write's Redis key (the namespace's, as the port names it).
StatePortRun RunStatePort(OJson& plans) {
  fidelity::EmulatorWorld emulator;
  sim::World& world = emulator.world;
  const real::state::VersionScripts scripts(testing_catalogs::Shipped());
  const std::string version = plans["version"];
  StatePortRun out;
  world.add_actor("client0", [&](sim::Ctx& ctx) -> sim::Task<void> {
    std::vector<std::unique_ptr<real::state::StateNamespace>> spaces;
    for (const Space& s : kSpaces) {
      real::state::NamespaceOptions so;
      so.provider_scope = s.provider_scope;
      so.default_ttl_ms = s.default_ttl;
      so.max_ttl_ms = s.max_ttl;
      so.max_entries = s.max_entries;
      so.max_value_bytes = s.max_value_bytes;
      spaces.push_back(
          real::state::MakeNamespace(version, ctx, scripts, "prov ☃", s.name, so, s.connection));
    }
    for (OJson& c : plans["calls"]) {
      co_await ctx.sleep(c["dt"].get<int64_t>());
      c["now"] = ctx.now_ms();
      const size_t from = ctx.world().trace().events.size();
      real::state::StateNamespace& ns = *spaces[c["ns"].get<size_t>()];
      const std::string op = c["op"], key = c.value("key", "");
      const std::optional<int64_t> ttl =
          c.contains("ttl") ? std::optional<int64_t>(c["ttl"].get<int64_t>()) : std::nullopt;
      // The caller's object as JSON.parse gives it: members in the text's order.
      const nlohmann::ordered_json value =
          c.contains("valueJson") ? model::JsonParseOrdered(c["valueJson"].get<std::string>())
                                  : nlohmann::ordered_json();
      Json answer = Json::object();
      try {
        if (op == "get") {
          answer["value"] = Value(co_await ns.get(key));
        } else if (op == "set") {
          answer["value"] = Value(co_await ns.set(key, value, ttl));
        } else if (op == "cas") {
          real::state::CasResult r =
              co_await ns.compare_and_set(key, c["expected"].get<int64_t>(), value, ttl);
          answer["ok"] = r.ok;
          if (r.ok)
            answer["value"] = Value(r.value);
          else
            answer["current"] = Value(r.current);
        } else if (op == "delete") {
          co_await ns.del(key);
        } else if (op == "list") {
          std::optional<int64_t> limit;
          std::optional<std::string> prefix;
          if (c.contains("limit")) limit = c["limit"].get<int64_t>();
          if (c.contains("prefix")) prefix = c["prefix"].get<std::string>();
          answer["rows"] = Json::array();
          for (const real::state::StateValue& v : co_await ns.list(limit, prefix))
            answer["rows"].push_back(Value(v));
        } else if (op == "increment") {
          answer["value"] =
              Value(co_await ns.increment(key, c["field"], c["delta"].get<double>(), ttl));
        } else {  // foreign
          const std::string raw = c["raw"];
          // A v1 key (beta.3 to beta.23 wrote these): legacyProviderStateKey (s000:277-283).
          const Space& s = kSpaces[c["ns"].get<size_t>()];
          const std::string redis_key =
              c.value("legacy", false) ? "apifuse:provider-state:v1:prov ☃:" + s.name + ":" + key
                                       : ns.redis_key(key);
          c["redisKey"] = redis_key;
          c["raw64"] = absl::Base64Escape(raw);
          c.erase("raw");
          co_await ctx.call(sim::MakeArgv("SET", redis_key, raw));
        }
      } catch (const real::state::StateError& e) {
        answer = {{"error", e.what()}};
      } catch (const std::exception& e) {
        answer = {{"thrown", std::string("C++: ") + e.what()}};
      }
      out.commands.push_back(fidelity::CommandsSince(ctx, from));
      out.answers.push_back(fidelity::Canonical(answer));
    }
  });
  const sim::RunResult r = world.run();
  EXPECT_EQ(r.error, "");
  return out;
}

struct StateVerdict {
  std::vector<std::string> differences;
  // StateDifferences on the key that holds a version of 1.5 (another writer's): the one known
  // difference (docs/port-fidelity.md). The port's StateValue::version is an integer, as every
  // property and checker reads it, so it reads 1.5 as 1 and writes 2 over it where the seed
  // writes 2.5.
  std::vector<std::string> fractional_version;
};

StateVerdict StateDifferences(const std::string& version, int seeds, int n) {
  StateVerdict v;
  std::vector<std::string>& found = v.differences;
  for (int seed = 1; seed <= seeds; ++seed) {
    OJson plans = StatePlan(static_cast<uint64_t>(seed), n, version);
    const StatePortRun port = RunStatePort(plans);
    const fidelity::Judged judged = fidelity::RunJudge("state/judge.mjs", plans);
    EXPECT_EQ(judged.answers.size(), port.answers.size()) << judged.output;
    EXPECT_EQ(judged.commands.size(), port.commands.size());
    for (size_t k = 0;
         k < port.answers.size() && k < judged.answers.size() && k < judged.commands.size(); ++k) {
      const OJson& c = plans["calls"][k];
      const std::string where = version + " seed " + std::to_string(seed) + " call " +
                                std::to_string(k) + " " + fidelity::Short(fidelity::Stringify(c)) +
                                ": ";
      const std::vector<sim::Argv> ours = fidelity::NamesLowered(port.commands[k]),
                                   theirs = fidelity::NamesLowered(judged.commands[k]);
      const std::string commands = fidelity::FirstCommandDifference(ours, theirs);
      std::vector<std::string>& into = c.value("key", "") == "v15" ? v.fractional_version : found;
      if (!commands.empty()) into.push_back(where + commands);
      const std::string answers = fidelity::AnswerDifference(
          port.answers[k], fidelity::Canonical(judged.answers[k]["answer"]));
      if (!answers.empty()) into.push_back(where + answers);
    }
  }
  return v;
}

TEST(PortFidelity, TheStatePortSendsWhatTheSeedsStateRuntimeSendsAndAnswersAsItDoes) {
  ASSERT_TRUE(std::filesystem::exists(PinnedNode()))
      << "tests/js is not installed: bash .ci/install (npm ci in tests/js)";
  for (const std::string version : {"beta30", "beta24"}) {
    const StateVerdict v = StateDifferences(version, 4, 60);
    EXPECT_TRUE(v.differences.empty()) << v.differences.size() << " differences:\n"
                                       << fidelity::Joined(v.differences);
    // The known one is still there: when the port keeps 1.5, this fails; then drop the
    // allowance and say so in docs/port-fidelity.md.
    EXPECT_FALSE(v.fractional_version.empty()) << version;
    std::printf("%s: %zu known differences on a version of 1.5, the first: %s\n", version.c_str(),
                v.fractional_version.size(),
                v.fractional_version.empty() ? "none" : v.fractional_version[0].c_str());
  }
}

}  // namespace
}  // namespace testbed
