// The seed's own handle runtime as the judge of the C++ port (issue 30, part 3): seed 002's
// handle.js, verbatim, on the seeds' state runtime (tests/js/handles/judge.mjs), and the port
// (real/handles/handle.cc) on the state port, make the same calls: creates, reads, updates,
// commits (with results and with failing work), discards, over handles written as a caller may
// write them (case, separators, Unicode white space, typos) and over records another writer
// left (a status that is not a string, another kind, another record version). Call for call,
// the Redis commands must be the same, byte for byte, and so must the answers and telemetry.
#include <gtest/gtest.h>

#include <absl/strings/ascii.h>
#include <absl/strings/escaping.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/json_text.h"
#include "real/handles/handle.h"
#include "real/handles/wordlist.h"
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
namespace handles = real::handles;

handles::HandleKind DraftKind() {
  handles::HandleKind k;
  k.name = "draft";
  k.type = "draft";
  k.access = "bound";
  k.field_name = "draftHandle";
  k.issued_by = "createDraft";
  k.idle_ttl_ms = 1000;
  k.max_ttl_ms = 5000;
  k.result_ttl_ms = 3000;
  k.max_entries = 3;
  k.max_value_bytes = 600;
  k.word_count = 2;
  return k;
}
handles::HandleKind CursorKind() {
  handles::HandleKind k;
  k.name = "cursor";
  k.type = "cursor";
  k.access = "public";
  k.field_name = "cursor";
  k.ttl_ms = 2000;
  k.max_entries = 4;
  k.max_value_bytes = 400;
  k.word_count = 4;
  return k;
}

// Data and results as JSON text with their members in sorted order at every level: the port's
// callers hand it an nlohmann::json, whose members are sorted, so the judge's caller writes its
// literals that way too and both hold the same object.
const std::vector<std::string> kData = {
    R"({"a":1,"items":[{"id":"x","qty":2}],"note":"snow ☃"})",
    R"({"b":null,"z":[1,2,3]})",
    R"("just a string")",
    R"([1,{"k":"v"}])",
    R"({"big":"yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"})",
    "0.5",
};

// Ways a caller writes a handle it was given.
const std::vector<std::string> kForms = {"exact",         "exact",  "upper",   "spaced",
                                         "unicode-space", "typo",   "garbage", "other-kind",
                                         "accent",        "wrapped"};

std::string Form(const std::string& handle, const std::string& form) {
  if (form == "upper") return absl::AsciiStrToUpper(handle);
  if (form == "spaced") {
    std::string s = handle;
    std::replace(s.begin(), s.end(), '_', ' ');
    std::replace(s.begin(), s.end(), '-', ' ');
    return "  " + s + " ";
  }
  if (form == "unicode-space") return "\u00A0" + handle + "\u2003";
  if (form == "typo") {
    std::string s = handle;
    const size_t at = s.find('_') + 2;
    if (at < s.size()) s[at] = s[at] == 'q' ? 'x' : 'q';
    return s;
  }
  if (form == "accent") {  // one letter replaced by a non-ASCII one: one edit in UTF-16
    std::string s = handle;
    const size_t at = s.find('_') + 2;
    return at < s.size() ? s.substr(0, at) + "é" + s.substr(at + 1) : s;
  }
  if (form == "wrapped") return "«`" + handle + "`.»";
  if (form == "garbage") return handle.substr(0, handle.find('_') + 1) + "???";
  if (form == "other-kind") return "cursor" + handle.substr(handle.find('_'));
  return handle;
}

// Records another writer left under a handle's key (the value of an envelope).
std::vector<std::string> ForeignRecords(int64_t now) {
  const std::string t = std::to_string(now), later = std::to_string(now + 4000);
  const std::string times = R"("created_at_ms":)" + t + R"(,"expires_at_ms":)" + later +
                            R"(,"max_expires_at_ms":)" + later;
  return {
      R"({"v":1,"kind":"draft","type":"draft","status":7,"data":{},)" + times + "}",
      R"({"v":1,"kind":"cursor","type":"cursor","status":"active","data":{},)" + times + "}",
      R"({"v":2,"kind":"draft","type":"draft","status":"active","data":{},)" + times + "}",
      R"({"v":1,"kind":"draft","type":"draft","status":"committed","data":{},"result":{"r":1},)" +
          times + "}",
      R"("not a record")"};
}

struct Call {
  OJson js;            // as the judge makes it
  int handle_of = -1;  // the create whose handle it names (-1: none)
  std::string form;    // how the caller writes that handle
  int foreign = -1;    // a foreign record's index (op foreign)
};

std::vector<Call> HandlesPlan(uint64_t seed, int n) {
  sim::Prng rng(seed);
  std::vector<Call> calls;
  std::vector<int> creates;
  auto add = [&](int64_t dt, OJson js, int of = -1, std::string form = "exact") {
    js["dt"] = dt;
    calls.push_back({js, of, form});
    if (js["op"] == "create") creates.push_back(static_cast<int>(calls.size()) - 1);
  };
  // The edges first: a draft read, updated, committed and replayed; a commit whose work fails;
  // a read at the idle deadline's ms and past it; a discard; a record with a status that is not
  // a string.
  add(0, {{"op", "create"}, {"kind", "draft"}, {"dataJson", kData[0]}});
  add(1, {{"op", "read"}, {"kind", "draft"}}, 0, "upper");
  add(0, {{"op", "update"}, {"kind", "draft"}, {"dataJson", kData[1]}}, 0, "unicode-space");
  add(1, {{"op", "commit"}, {"kind", "draft"}, {"resultJson", R"({"ok":true})"}}, 0, "spaced");
  add(0, {{"op", "commit"}, {"kind", "draft"}, {"resultJson", R"({"again":1})"}}, 0);
  add(0, {{"op", "create"}, {"kind", "draft"}, {"dataJson", kData[2]}});
  add(0, {{"op", "commit"}, {"kind", "draft"}, {"workError", "upstream said no"}}, 5);
  add(999, {{"op", "read"}, {"kind", "draft"}}, 5);
  add(1000, {{"op", "read"}, {"kind", "draft"}}, 5);
  add(0, {{"op", "discard"}, {"kind", "draft"}}, 5);
  add(0, {{"op", "create"}, {"kind", "cursor"}, {"dataJson", kData[3]}});
  add(0, {{"op", "read"}, {"kind", "cursor"}}, 10, "typo");
  add(0, {{"op", "foreign"}, {"kind", "cursor"}}, 10);
  calls.back().foreign = 0;
  add(0, {{"op", "read"}, {"kind", "cursor"}}, 10);
  add(0, {{"op", "create"}, {"kind", "draft"}, {"dataJson", kData[0]}});
  add(0, {{"op", "foreign"}, {"kind", "draft"}}, 14);
  calls.back().foreign = 0;
  add(0, {{"op", "read"}, {"kind", "draft"}}, 14);
  add(0, {{"op", "discard"}, {"kind", "draft"}}, 14);
  // Data and a result JSON cannot hold (validateData, js 411; the result check, js 770).
  add(0, {{"op", "create"}, {"kind", "draft"}, {"dataJson", kData[1]}, {"nanAt", "bad"}});
  add(0, {{"op", "create"}, {"kind", "draft"}, {"dataJson", kData[1]}});
  add(0, {{"op", "update"}, {"kind", "draft"}, {"dataJson", kData[0]}, {"nanAt", "n"}}, 19);
  add(0, {{"op", "commit"}, {"kind", "draft"}, {"resultJson", R"({"r":1})"}, {"nanAt", "x"}}, 19);
  add(0, {{"op", "read"}, {"kind", "draft"}}, 19);
  // A cursor updated: its kind has no idle lifetime (js 446 reads kind.idleTtlMs).
  add(0, {{"op", "create"}, {"kind", "cursor"}, {"dataJson", kData[3]}});
  add(0, {{"op", "update"}, {"kind", "cursor"}, {"dataJson", kData[1]}}, 23);
  add(0, {{"op", "read"}, {"kind", "cursor"}}, 23);
  const std::vector<int64_t> steps = {0, 0, 1, 10, 500, 999, 1000, 1001, 2000, 3000, 5001};
  for (int i = 0; i < n; ++i) {
    const std::string kind = rng.below(3) ? "draft" : "cursor";
    const uint64_t r = rng.below(100);
    const int64_t dt = steps[rng.below(steps.size())];
    // Most calls name a handle of their own kind; the rest another kind's.
    std::vector<int> mine;
    for (const int i : creates)
      if (calls[i].js["kind"] == kind) mine.push_back(i);
    const std::vector<int>& pool = !mine.empty() && rng.below(5) != 0 ? mine : creates;
    const int of = pool.empty() ? -1 : pool[rng.below(pool.size())];
    const std::string form = kForms[rng.below(kForms.size())];
    if (r < 22 || of < 0) {
      add(dt, {{"op", "create"}, {"kind", kind}, {"dataJson", kData[rng.below(kData.size())]}});
    } else if (r < 45) {
      add(dt, {{"op", "read"}, {"kind", kind}}, of, form);
    } else if (r < 60) {
      add(dt, {{"op", "update"}, {"kind", kind}, {"dataJson", kData[rng.below(kData.size())]}}, of,
          form);
    } else if (r < 78) {
      OJson c = {{"op", "commit"}, {"kind", kind}};
      if (rng.below(4) == 0)
        c["workError"] = "boom";
      else
        c["resultJson"] = kData[rng.below(kData.size())];
      add(dt, c, of, form);
    } else if (r < 92) {
      add(dt, {{"op", "discard"}, {"kind", kind}}, of, form);
    } else {
      add(dt, {{"op", "foreign"}, {"kind", kind}}, of);
      calls.back().foreign = static_cast<int>(rng.below(5));
    }
  }
  return calls;
}

Json RecordJs(const handles::HandleRecord& r) {
  Json o = {{"handle", r.handle},        {"kind", r.kind},
            {"status", r.status},        {"data", r.data},
            {"createdAt", r.created_at}, {"expiresAt", r.expires_at}};
  if (r.result) o["result"] = *r.result;
  return o;
}

// Answers, built by plain functions outside the actor's coroutine.
// The data or result of a call: its JSON text, and NaN at member `nanAt` if it names one.
Json WithNaN(const OJson& c, const std::string& text_field) {
  Json v = model::JsonParse(c[text_field].get<std::string>());
  if (c.contains("nanAt")) v[c["nanAt"].get<std::string>()] = std::nan("");
  return v;
}

Json CommitJs(const handles::CommitOutcome& r) {
  return {{"status", r.status}, {"handle", r.handle}, {"result", r.result}};
}
Json ErrorJs(const handles::HandleError& e) {
  return {{"error", e.code}, {"message", e.what()}, {"details", e.details}};
}
Json OneField(const std::string& name, const std::string& text) { return {{name, text}}; }

struct HandlesPortRun {
  OJson plans;
  std::vector<Json> answers, telemetry;
  std::vector<std::vector<sim::Argv>> commands;
};

constexpr const char* kProvider = "prov ☃";
constexpr const char* kConnection = "conn ☃ 1";
constexpr int64_t kLeaseMs = 800;

HandlesPortRun RunHandlesPort(uint64_t seed, std::vector<Call> calls, const std::string& version) {
  fidelity::EmulatorWorld emulator;
  sim::World& world = emulator.world;
  const real::state::VersionScripts scripts(testing_catalogs::Shipped());
  const std::map<std::string, handles::HandleKind> kinds = {{"draft", DraftKind()},
                                                            {"cursor", CursorKind()}};
  HandlesPortRun out;
  const uint64_t prng_seed = seed * 7919 + 13;
  Json telemetry = Json::array();  // the current call's events (outside the actor's frame)
  world.add_actor("client0", [&](sim::Ctx& ctx) -> sim::Task<void> {
    sim::Prng rng(prng_seed);
    std::unique_ptr<handles::HandleState> state =
        handles::RedisState(version, ctx, scripts, kProvider);
    handles::HandleOptions options;
    options.provider_id = kProvider;
    options.state = state.get();
    options.connection_id = kConnection;
    options.commit_lease_ms = kLeaseMs;
    options.on_telemetry = [&](const handles::Telemetry& t) {
      telemetry.push_back({{"kind", t.kind},
                           {"type", t.type},
                           {"operation", t.operation},
                           {"outcome", t.outcome},
                           {"normalization", t.normalization},
                           {"words", t.words}});
    };
    handles::HandleContext h(options, ctx, rng);
    std::vector<std::string> created(calls.size());
    for (size_t k = 0; k < calls.size(); ++k) {
      Call& call = calls[k];
      OJson& c = call.js;
      co_await ctx.sleep(c["dt"].get<int64_t>());
      c["now"] = ctx.now_ms();
      const handles::HandleKind& kind = kinds.at(c["kind"].get<std::string>());
      if (call.handle_of >= 0) {
        const std::string& given = created[call.handle_of];
        c["handle"] = Form(given.empty() ? kind.name + "_nope-nope" : given, call.form);
      }
      telemetry = Json::array();
      const size_t from = ctx.world().trace().events.size();
      const std::string op = c["op"];
      Json answer = Json::object();
      try {
        // Every argument a local first: g++ 12 may destroy a temporary of a co_await's
        // full-expression twice (see Ctx::cmd).
        const std::string handle = c.value("handle", "");
        if (op == "create") {
          Json data = WithNaN(c, "dataJson");
          created[k] = co_await h.create(kind, std::move(data));
          answer["handle"] = created[k];
        } else if (op == "read") {
          handles::HandleRecord r = co_await h.read(kind, handle);
          answer["record"] = RecordJs(r);
        } else if (op == "update") {
          const Json data = WithNaN(c, "dataJson");
          std::function<Json(Json)> updater = [data](Json) { return data; };
          handles::HandleRecord r = co_await h.update(kind, handle, std::move(updater));
          answer["record"] = RecordJs(r);
        } else if (op == "commit") {
          const OJson spec = c;
          handles::Work work = [spec](Json) -> sim::Task<Json> {
            if (spec.contains("workError"))
              throw std::runtime_error(spec["workError"].get<std::string>());
            co_return WithNaN(spec, "resultJson");
          };
          handles::CommitOutcome r = co_await h.commit(kind, handle, std::move(work));
          answer = CommitJs(r);
        } else if (op == "discard") {
          co_await h.discard(kind, handle);
        } else {  // foreign: the record's envelope, written under the handle's key
          real::state::NamespaceOptions so;
          so.provider_scope = kind.access == "public";
          auto ns = real::state::MakeNamespace(
              version, ctx, scripts, kProvider, "handle." + kind.name, so,
              kind.access == "public" ? std::nullopt : std::optional<std::string>(kConnection));
          const std::string canonical =
              created[call.handle_of].empty() ? kind.name + "_nope-nope" : created[call.handle_of];
          const std::string raw =
              R"({"value":)" + ForeignRecords(ctx.now_ms())[call.foreign] +
              R"(,"version":3,"expiresAt":"2099-01-01T00:00:00.000Z","createdAt":"2026-01-01T00:00:00.000Z","updatedAt":"2026-01-01T00:00:00.000Z"})";
          c["redisKey"] = ns->redis_key(canonical);
          c["raw64"] = absl::Base64Escape(raw);
          co_await ctx.call(sim::MakeArgv("SET", ns->redis_key(canonical), raw));
        }
      } catch (const handles::HandleError& e) {
        answer = ErrorJs(e);
      } catch (const std::runtime_error& e) {
        if (c.contains("workError") && e.what() == c["workError"].get<std::string>())
          answer = OneField("workError", e.what());
        else
          answer = OneField("thrown", std::string("C++: ") + e.what());
      } catch (const std::exception& e) {
        answer = OneField("thrown", std::string("C++: ") + e.what());
      }
      out.commands.push_back(fidelity::CommandsSince(ctx, from));
      out.answers.push_back(fidelity::Canonical(answer));
      out.telemetry.push_back(telemetry);
    }
  });
  const sim::RunResult r = world.run();
  EXPECT_EQ(r.error, "");
  out.plans = {
      {"stateVersion", version},
      {"provider", kProvider},
      {"connection", kConnection},
      {"commitLeaseMs", kLeaseMs},
      {"prngSeed", prng_seed},
      {"words", handles::IssuableHandleWords()},
      {"kinds",
       {{"draft", handles::KindJs(DraftKind())}, {"cursor", handles::KindJs(CursorKind())}}},
      {"calls", OJson::array()}};
  for (const Call& c : calls) out.plans["calls"].push_back(c.js);
  return out;
}

std::vector<std::string> HandlesDifferences(const std::string& version, int seeds, int n) {
  std::vector<std::string> found;
  for (int seed = 1; seed <= seeds; ++seed) {
    const HandlesPortRun port = RunHandlesPort(
        static_cast<uint64_t>(seed), HandlesPlan(static_cast<uint64_t>(seed), n), version);
    const fidelity::Judged judged = fidelity::RunJudge("handles/judge.mjs", port.plans);
    EXPECT_EQ(judged.answers.size(), port.answers.size()) << judged.output;
    EXPECT_EQ(judged.commands.size(), port.commands.size());
    for (size_t k = 0;
         k < port.answers.size() && k < judged.answers.size() && k < judged.commands.size(); ++k) {
      const std::string where = version + " seed " + std::to_string(seed) + " call " +
                                std::to_string(k) + " " +
                                fidelity::Short(fidelity::Stringify(port.plans["calls"][k])) + ": ";
      const std::string commands = fidelity::FirstCommandDifference(
          fidelity::NamesLowered(port.commands[k]), fidelity::NamesLowered(judged.commands[k]));
      if (!commands.empty()) found.push_back(where + commands);
      const std::string answers = fidelity::AnswerDifference(
          port.answers[k], fidelity::Canonical(judged.answers[k]["answer"]));
      if (!answers.empty()) found.push_back(where + answers);
      const std::string telemetry = fidelity::AnswerDifference(
          port.telemetry[k], fidelity::Canonical(judged.answers[k]["telemetry"]));
      if (!telemetry.empty()) found.push_back(where + "telemetry: " + telemetry);
    }
  }
  return found;
}

TEST(PortFidelity, TheHandlesPortSendsWhatTheSeedsHandleJsSendsAndAnswersAsItDoes) {
  ASSERT_TRUE(std::filesystem::exists(PinnedNode()))
      << "tests/js is not installed: bash .ci/install (npm ci in tests/js)";
  for (const std::string version : {"beta30", "beta24"}) {
    const std::vector<std::string> found = HandlesDifferences(version, 4, 50);
    EXPECT_TRUE(found.empty()) << found.size() << " differences:\n" << fidelity::Joined(found);
  }
}

}  // namespace
}  // namespace testbed
