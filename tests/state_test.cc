// The provider state store end to end: the beta.30 port against its scripts in the simulated
// world, checked for linearizability; saved findings replay in both worlds; a broken script is
// caught; the CAS path alone stays linearizable under every fault.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

#include "properties/state/state_props.h"
#include "harness/scenario.h"
#include "tests/temp_dir.h"
#include "tests/state_spec.h"
#include "tests/test_catalogs.h"
#include "real/state/namespace.h"
#include "real/state/redis_common.h"
#include "real/state/v2.h"
#include "real/state/memory_beta30.h"
#include "sim/clock.h"

namespace testbed::props::state {
namespace {

using testing_catalogs::Shipped;

TEST(Findings, EveryScenarioOfEverySystemReplaysItsClassOnTheEmulatorAndOnRedisServer) {
  int scenarios = 0;
  real::RedisServer server(sim::kDefaultEpochMs);
  for (const auto& e : std::filesystem::directory_iterator(TESTBED_SOURCE_DIR "/scenarios")) {
    if (e.path().extension() != ".json") continue;
    ++scenarios;
    const harness::Scenario s = harness::Load(e.path());
    ASSERT_EQ(s.expect, "violated") << s.name;
    const real::ScriptCatalog scripts = harness::ScriptsOf(s);  // its own, or the shipped
    const RunOutcome sim = s.system->Run(s.spec, scripts, nullptr);
    const RunOutcome real = s.system->Run(s.spec, scripts, &server);
    EXPECT_TRUE(sim.violated) << s.name << " does not reproduce on the emulator";
    EXPECT_TRUE(real.violated) << s.name << " does not reproduce on redis-server";
    EXPECT_EQ(sim.trace_hash(), real.trace_hash()) << s.name << ": the two worlds traced apart";
    EXPECT_EQ(sim.description, real.description);
    if (!s.cls.empty()) {
      EXPECT_NE(std::find(sim.classes.begin(), sim.classes.end(), s.cls), sim.classes.end())
          << s.name << " no longer shows its class " << s.cls;
      EXPECT_EQ(sim.classes, real.classes) << s.name;
    }
  }
  EXPECT_GE(scenarios, 60);
}

// Issue 31: a saved finding's sentence is true of its own run. It names a clock that ran off
// only where one did, and a crash, a restart or a failover only where one happened.
TEST(Findings, EverySavedFindingNamesOnlyTheFaultsItsRunHad) {
  using sim::EventKind;
  using sim::Fault;
  struct Claim {
    std::vector<std::string> words;
    std::function<bool(const sim::TraceEvent&)> happened;
  };
  auto fault = [](Fault f) {
    return [f](const sim::TraceEvent& e) { return e.fault == f && !e.planned; };
  };
  const std::vector<Claim> claims = {
      {{"skew", "clock ran ahead", "clock runs ahead", "writer's own", "fast clock", "own clock",
        "clocks were skewed", "caller's clock"},
       [](const sim::TraceEvent& e) {
         return e.kind == EventKind::kClock && (!e.planned || e.fault == Fault::kSkew);
       }},
      {{"crash"}, fault(Fault::kCrash)},
      {{"restart"}, fault(Fault::kRestart)},
      {{"failover"}, fault(Fault::kFailover)}};
  int judged = 0;
  for (const auto& e : std::filesystem::directory_iterator(TESTBED_SOURCE_DIR "/scenarios")) {
    if (e.path().extension() != ".json") continue;
    const harness::Scenario s = harness::Load(e.path());
    const RunOutcome r = s.system->Run(s.spec, harness::ScriptsOf(s), nullptr);
    // The scenario's own words (its trigger and why) are read with each finding: they are what
    // `replay` prints beside it. (A class's sentence is shared by every run of the class, so it
    // may list what can cause it; a scenario speaks of its own run.)
    const std::string said = s.trigger + "\n" + s.why;
    for (const Finding& f : r.findings) {
      if (!s.cls.empty() && ClassOf(f) != s.cls) continue;
      std::string text = f.text + "\n" + said;
      std::transform(text.begin(), text.end(), text.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      ++judged;
      // Every instant the sentence says something happened at ("at +12ms", "from +3ms to +9ms")
      // is one the run reached: the last event of its trace, plus the longest a reply can still
      // be on its way (a delayed or slow reply; 100 ms is more than any fault's). keys-expire
      // reads the server once the run is over, at the instant it names ("on the server at").
      int64_t last_ms = 0;
      for (const sim::TraceEvent& ev : r.trace.events)
        if (!ev.planned) last_ms = std::max(last_ms, ev.at_ms);
      static const std::regex kAt(R"((on the server )?(?:at|from \+[0-9]+ms to) \+([0-9]+)ms)");
      for (std::sregex_iterator m(text.begin(), text.end(), kAt), end; m != end; ++m)
        if (!(*m)[1].matched) {
          EXPECT_LE(std::stoll((*m)[2].str()), last_ms + 100)
              << s.name << " names " << (*m)[0].str() << ", past its run's last event at +"
              << last_ms << "ms: " << f.text;
        }
      // So is every deadline drawn on its timeline (a lease's end, a key's TTL).
      for (const Deadline& d : f.deadlines) {
        EXPECT_LE(d.at_ms, last_ms + 100)
            << s.name << " draws \"" << d.what << "\" at +" << d.at_ms
            << "ms, past its run's last event at +" << last_ms << "ms";
      }
      for (const Claim& c : claims)
        for (const std::string& w : c.words)
          if (text.find(w) != std::string::npos) {
            EXPECT_TRUE(std::any_of(r.trace.events.begin(), r.trace.events.end(), c.happened))
                << s.name << " names \"" << w << "\" but its run had none: " << f.text;
          }
    }
  }
  EXPECT_GE(judged, 150);
}

// Every fault but resend: a request the client library re-sends after a reconnect is applied
// twice, which no script can tell from a new call (the next test).
TEST(StateBeta30, CompareAndSetAloneIsLinearizableUnderEveryFaultButResend) {
  const std::string property = "cas-versions-linearizable";
  std::string all_but_resend;
  for (const std::string& kind : sim::FaultOptions::Kinds())
    if (kind != "resend") all_but_resend += (all_but_resend.empty() ? "" : ",") + kind;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    RunSpec w = testing_state::Spec(property, seed);
    w.options["ops-mix"] = "cas";
    w.faults = sim::FaultList::Parse(seed % 2 ? all_but_resend : "none");
    const RunOutcome r = testing_state::Run(w, Shipped());
    EXPECT_FALSE(r.violated) << "seed " << seed << ": " << r.description
                             << "replay: ./build/testbed check --system state --seed " << seed
                             << " --runs 1 --ops-mix cas --faults "
                             << (seed % 2 ? "all but resend" : "none");
    EXPECT_FALSE(r.incomplete);
    EXPECT_GT(
        std::count_if(r.trace.events.begin(), r.trace.events.end(),
                      [](const sim::TraceEvent& e) { return e.kind == sim::EventKind::kReply; }),
        10);
  }
}

// ioredis re-sends a request whose reply was lost with its connection: a compareAndSet applied
// once succeeds, applied again it fails against its own write, and that second reply is what its
// caller gets.
TEST(StateBeta30, AResentCompareAndSetIsToldItFailedThoughItsWriteLanded) {
  int shown = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    RunSpec w = testing_state::Spec("cas-versions-linearizable", seed);
    w.options["ops-mix"] = "cas";
    w.faults = sim::FaultList::Parse("resend");
    const RunOutcome r = testing_state::Run(w, Shipped());
    shown += std::count(r.classes.begin(), r.classes.end(), "cas-fails-on-its-own-write");
  }
  EXPECT_GT(shown, 0);
}

TEST(StateBeta30, ABrokenCompareAndSetScriptIsCaught) {
  // The shipped catalog, with beta.30's CAS replaced by the copy that skips the version check.
  const real::ScriptCatalog broken = testing_catalogs::WithBroken(
      "broken-catalog", "state/beta30/COMPARE_AND_SET_WITH_QUOTA_SCRIPT.lua",
      "cas-without-version-check/COMPARE_AND_SET_WITH_QUOTA_SCRIPT.lua");
  const std::string property = "cas-versions-linearizable";
  int caught = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    RunSpec w = testing_state::Spec(property, seed);
    w.options["ops-mix"] = "cas";
    caught += testing_state::Run(w, broken).violated ? 1 : 0;
  }
  EXPECT_GE(caught, 5) << "the broken CAS script slipped through";
}

TEST(StateBeta30, TheFullMixFindsTheConcurrentSetRace) {
  const std::string property = "cas-versions-linearizable";
  int violated = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    violated += testing_state::Run(testing_state::Spec(property, seed), Shipped()).violated ? 1 : 0;
  }
  EXPECT_GT(violated, 0);
}

TEST(StateBeta30, ListAndGetDisagreeExactlyAtTheExpiryInstant) {
  RunSpec w = testing_state::Spec("expiry-boundary-get-list");
  w.clients = 1;
  w.ops = 5;
  const RunOutcome r = testing_state::Run(w, Shipped());
  ASSERT_TRUE(r.violated);
  // Every probe lands on its expiry instant, so every probe shows it.
  EXPECT_EQ(r.findings.size(), 5u) << r.description;
  w.property = "no-such-property";
  EXPECT_THROW(testing_state::Run(w, Shipped()), std::invalid_argument);
}

TEST(StateBeta30, CompareAndSetBendsEmptyArraysAndLongNumbersButSetDoesNot) {
  RunSpec w = testing_state::Spec("value-read-back");
  w.clients = 1;
  w.ops = 40;
  const RunOutcome r = testing_state::Run(w, Shipped());
  const std::string found = r.description;
  EXPECT_NE(found.find("{\"list\":[]}) then get() read back {\"list\":{}}"), std::string::npos)
      << found;
  // Integers past 1e14 come back in %.14g (9007199254740991 as 9007199254741000), so do
  // binary fractions.
  EXPECT_TRUE(found.find("9007199254741000") != std::string::npos ||
              found.find("1234567890123500") != std::string::npos)
      << found;
  EXPECT_NE(found.find("read back {\"f\":0.3}"), std::string::npos) << found;
  // Values cjson keeps intact are not reported.
  EXPECT_EQ(found.find("{\"empty\":{}}) then"), std::string::npos) << found;
}

TEST(StateBeta30, ConcurrentIncrementsLoseAcknowledgedIncrementsButOneClientKeepsThemAll) {
  RunSpec w = testing_state::Spec("increments-all-kept");
  w.clients = 3;
  w.ops = 10;
  const RunOutcome r = testing_state::Run(w, Shipped());
  ASSERT_TRUE(r.violated);
  EXPECT_EQ(r.findings[0].cls, "lost-increment");
  EXPECT_NE(r.findings[0].text.find("30 increment(\"counter\", \"n\", 1) calls acknowledged"),
            std::string::npos)
      << r.description;
  // The same workload with one client has nothing to race with: every increment is kept, so
  // the property is not one that fails whatever happens.
  w.clients = 1;
  const RunOutcome alone = testing_state::Run(w, Shipped());
  EXPECT_FALSE(alone.violated) << alone.description;
}

TEST(StateBeta30, AValueNested1000DeepCannotBeCompareAndSetAndCrashesTheScript) {
  // beta.30 (and beta.23+): cjson's nesting limit meets the envelope's extra level. The script
  // error is a finding of this property (System::Run), never a failure of the run.
  props::RunSpec spec;
  spec.property = "valid-calls-never-script-error";
  spec.version = "beta30";
  spec.seed = 10;  // a seed whose first value is the one nested 1000 deep
  spec.clients = 1;
  spec.ops = 9;
  const props::System& state = *props::FindSystem("state");
  const props::RunOutcome r = state.Run(spec, Shipped(), nullptr);
  EXPECT_FALSE(r.script_errors.empty());  // the failed calls, for whoever renders them
  EXPECT_NE(std::find(r.classes.begin(), r.classes.end(), "script-error"), r.classes.end())
      << r.description;
  EXPECT_NE(std::find(r.classes.begin(), r.classes.end(), "cas-refused-at-current-version"),
            r.classes.end())
      << r.description;
  EXPECT_NE(r.description.find("Found too many nested data structures (1001)"), std::string::npos)
      << r.description;
  // beta.3 decodes nothing in Redis: the same workload passes, so the property is not one that
  // fails whatever happens.
  spec.version = "beta3";
  spec.old_version = "";
  EXPECT_FALSE(state.Run(spec, Shipped(), nullptr).violated);
}

TEST(StateBeta30, AKeyAnotherWriterLeftUnreadableCanNeverBeCompareAndSet) {
  // get() reads a value that is not an envelope as null (version 0), and the CAS script refuses
  // it as corrupt: compareAndSet(0) fails, reporting current = null, for as long as it lives.
  RunSpec w = testing_state::Spec("foreign-values-consistent");
  w.clients = 2;
  w.ops = 8;
  std::map<std::string, int> seen;
  for (const std::string version : {"beta23", "beta24", "beta30", "beta3"}) {
    w.version = version;
    const RunOutcome r = testing_state::Run(w, Shipped());
    for (const Finding& f : r.findings) {
      ++seen[version];
      EXPECT_EQ(f.cls, "absent-but-cas-refused") << f.text;
      EXPECT_NE(f.text.find("current = null"), std::string::npos) << f.text;
    }
  }
  EXPECT_GT(seen["beta23"], 0);
  EXPECT_GT(seen["beta24"], 0);
  EXPECT_GT(seen["beta30"], 0);
  // beta.3 compares versions in the client, where the foreign value reads as version 0 too:
  // the same workload passes, so the property is not one that fails whatever happens.
  EXPECT_EQ(seen["beta3"], 0);
}

TEST(StateBeta30, TheQuotaAdmitsASecondEntryAtTheFirstOnesExpiryInstant) {
  RunSpec w = testing_state::Spec("quota-safety");
  w.clients = 2;
  w.ops = 3;
  const RunOutcome r = testing_state::Run(w, Shipped());
  EXPECT_EQ(r.findings.size(), 6u) << r.description;
}

TEST(StateBeta30, TheMemoryBackendAgreesWithRedisAwayFromExpiryInstants) {
  // With TTLs far longer than the run, nothing expires: the backends may differ only where
  // they are known to (which error a stale compareAndSet with a refused value reports, list()
  // order and what its limit keeps, values Redis's cjson bends or refuses), and those are all
  // seen.
  std::map<std::string, int> classes;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    RunSpec w = testing_state::Spec("memory-matches-redis", seed);
    w.options["default-ttl-ms"] = "60000";
    w.options["max-ttl-ms"] = "120000";
    w.options["probe-ttl-max-ms"] = "0";
    const RunOutcome r = testing_state::Run(w, Shipped());
    for (const Finding& f : r.findings) {
      ++classes[f.cls];
      EXPECT_EQ(f.cls.rfind("differs-on-", 0) == 0 && f.cls.rfind("differs-on-list-", 0) != 0,
                false)
          << "the backends disagreed without an expiry involved: " << f.text;
    }
  }
  EXPECT_GT(classes["error-precedence"], 0);
  EXPECT_GT(classes["cas-refused-at-current-version"], 0);  // a lone surrogate, stored
  EXPECT_GT(classes["value-differs"], 0);
  EXPECT_GT(classes["differs-on-list-order"] + classes["differs-on-list-limit"], 0);
  // The memory backend's own rules, directly: gone at the expiry instant, where Redis keeps it.
  sim::VirtualClock clock;
  real::state::memory_beta30::Namespace memory(clock, real::state::NamespaceOptions{});
  memory.set("k", real::state::Json(1), 10);
  clock.advance(9);
  EXPECT_TRUE(memory.get("k").has_value());
  clock.advance(1);
  EXPECT_FALSE(memory.get("k").has_value());
  // list() keeps the JavaScript Map's insertion order: an overwrite keeps a key's place, a
  // delete frees it.
  auto keys = [&memory] {
    std::string out;
    for (const real::state::StateValue& v : memory.list(std::nullopt, std::nullopt)) out += v.key;
    return out;
  };
  memory.set("b", real::state::Json(1), 100);
  memory.set("a", real::state::Json(1), 50);
  memory.set("b", real::state::Json(2), 10);
  EXPECT_EQ(keys(), "ba");
  memory.del("b");
  memory.set("b", real::state::Json(3), 10);
  EXPECT_EQ(keys(), "ab");
  EXPECT_EQ(memory.list(1, std::nullopt).front().key, "a");
}

TEST(StateBeta30, ConnectionsNeverReadEachOthersDataAndABrokenScopeIsCaught) {
  RunSpec w = testing_state::Spec("connection-isolation");
  w.clients = 4;
  w.ops = 20;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    w.seed = seed;
    const RunOutcome r = testing_state::Run(w, Shipped());
    EXPECT_FALSE(r.violated) << r.description;
  }
  w.options["broken-scope"] = "yes";
  const RunOutcome broken = testing_state::Run(w, Shipped());
  EXPECT_TRUE(broken.violated) << "one shared scope went unnoticed";
}

TEST(StateBeta30, KeysAndScopesFollowTheSeed) {
  // connectionScopeDiscriminator (157-161) and indexKey (299-312).
  EXPECT_EQ(real::state::v2::ConnectionScopeDiscriminator(std::nullopt),
            "scope:connection:missing");
  EXPECT_EQ(
      real::state::v2::ConnectionScopeDiscriminator(std::string("abc")),
      "scope:connection:sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(real::state::IsoTime(sim::kDefaultEpochMs + 1234), "2026-01-01T00:00:01.234Z");
  EXPECT_EQ(real::state::IsoTime(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(real::state::IsoTime(951782400999), "2000-02-29T00:00:00.999Z");  // a leap day
  // The date is cached per day: going back and forth across midnight, and before 1970.
  EXPECT_EQ(real::state::IsoTime(951782399999), "2000-02-28T23:59:59.999Z");
  EXPECT_EQ(real::state::IsoTime(951782400000), "2000-02-29T00:00:00.000Z");
  EXPECT_EQ(real::state::IsoTime(-1), "1969-12-31T23:59:59.999Z");
  EXPECT_EQ(real::state::IsoTime(-86400000), "1969-12-31T00:00:00.000Z");
  EXPECT_EQ(real::state::IsoTime(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(real::state::IsoTime(253402300799999), "9999-12-31T23:59:59.999Z");
  // Buffer.from(s).toString("base64url") in Node: no padding, '-' and '_' (RFC 4648 vectors).
  EXPECT_EQ(real::state::Base64Url(""), "");
  EXPECT_EQ(real::state::Base64Url("f"), "Zg");
  EXPECT_EQ(real::state::Base64Url("fo"), "Zm8");
  EXPECT_EQ(real::state::Base64Url("foobar"), "Zm9vYmFy");
  EXPECT_EQ(real::state::Base64Url("\xfb\xff\xbf"), "-_-_");
  EXPECT_FALSE(real::state::EnvelopeFromJson("k", std::string("{not json")).has_value());
  EXPECT_FALSE(real::state::EnvelopeFromJson("k", std::string("[1]")).has_value());
  EXPECT_TRUE(real::state::IsStateTombstone(std::string("{\"deleted\":true}")));
  EXPECT_FALSE(real::state::IsStateTombstone(std::string("{\"deleted\":1}")));
}

TEST(StateBeta30, AMalformedScenarioIsAClearError) {
  testing_dirs::TempDir tmp("bad-scenario");
  const std::string path = tmp / "bad-scenario.json";
  { std::ofstream(path) << "{\"system\":\"state\",\"name\":\"x\"}"; }
  EXPECT_THROW(harness::Load(path), std::invalid_argument);
  EXPECT_THROW(harness::Load("/nonexistent.json"), std::invalid_argument);
  // The message names the bad field, not a JSON library's exception.
  std::ofstream(path)
      << R"({"system":"state","name":"x","property":"quota-safety","version":"beta30",)"
      << R"("seed":1,"clients":"two","ops":3})";
  try {
    harness::Load(path);
    ADD_FAILURE() << "accepted clients \"two\"";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "field \"clients\" must be an integer from 1 to 200, not \"two\""),
              std::string::npos)
        << e.what();
  }
  // A seed that is negative, past the integers or not one becomes no other seed; a misspelt
  // class is an error, not a scenario that replays as "fixed or changed".
  for (const auto& [fields, named] : std::vector<std::pair<std::string, std::string>>{
           {R"("seed":-7,"clients":1,"ops":3)", "field \"seed\""},
           {R"("seed":1e30,"clients":1,"ops":3)", "field \"seed\""},
           {R"("seed":7.5,"clients":1,"ops":3)", "field \"seed\""},
           {R"("seed":1,"clients":1,"ops":100001)", "field \"ops\""},
           {R"("seed":1,"clients":200,"ops":1000)", "\"clients\" x \"ops\""},
           {R"("seed":1,"clients":1,"ops":3,"class":"overfil")", "has no class \"overfil\""}}) {
    std::ofstream(path) << R"({"system":"state","name":"x","property":"quota-safety",)"
                        << R"("version":"beta30",)" << fields << "}";
    try {
      harness::Load(path);
      ADD_FAILURE() << "accepted " << fields;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace testbed::props::state
