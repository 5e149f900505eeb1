// Emulator behaviours the seeds depend on, with the values measured on redis-server 7.0.15.
// The same expectations run against a spawned server in real_redis_test.cc; the random
// differential check in fidelity_test.cc covers the rest of the subset.
#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>
#include <vector>

extern "C" {
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
}

#include "real/script_catalog.h"
#include "sim/clock.h"
#include "sim/emulator.h"
#include "sim/lua_chunk.h"
#include "sim/prng.h"
#include "sim/redis_text.h"
#include "tests/redis_expectations.h"

namespace testbed {
namespace {

// The bytecode of `body` as lua_dump writes it ("" if it does not compile).
std::string DumpOf(const std::string& body) {
  lua_State* L = luaL_newstate();
  std::string dump;
  if (luaL_loadbuffer(L, body.data(), body.size(), "@user_script") == 0)
    lua_dump(
        L,
        [](lua_State*, const void* p, size_t n, void* out) {
          static_cast<std::string*>(out)->append(static_cast<const char*>(p), n);
          return 0;
        },
        &dump);
  lua_close(L);
  return dump;
}

TEST(LuaChunk, ReadsEveryGlobalNamedAndEveryWriteNestedFunctionsIncluded) {
  const auto plain = sim::GlobalsOfChunk(DumpOf(
      "local n = tonumber(ARGV[1]) return redis.call('GET', KEYS[1]) .. string.rep('x', n)"));
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->writes);
  EXPECT_EQ(plain->reads, (std::set<std::string>{"tonumber", "ARGV", "redis", "KEYS", "string"}));
  EXPECT_TRUE(sim::MayRunInGlobals(*plain));

  const auto nested = sim::GlobalsOfChunk(
      DumpOf("local function a() local function b() counter = 1.5 end return b end "
             "return {a, 'k', true}"));
  ASSERT_TRUE(nested);
  EXPECT_TRUE(nested->writes);
  EXPECT_FALSE(sim::MayRunInGlobals(*nested));

  for (const char* body :
       {"return _G.redis", "return getfenv(1)", "local s = setmetatable return 1",
        "return rawset({}, 'a', 1)", "return loadstring('return 1')()", "return debug"}) {
    const auto g = sim::GlobalsOfChunk(DumpOf(body));
    ASSERT_TRUE(g) << body;
    EXPECT_FALSE(g->writes) << body;
    EXPECT_FALSE(sim::MayRunInGlobals(*g)) << body << ": reaches the globals table";
  }
  // A library table held as a value could be written (Redis's are readonly): such a script runs
  // behind the proxy, where each library is a read-only proxy; reading its fields does not.
  for (const char* body : {"return redis.call('PING')", "return pcall(redis.call, 'PING')",
                           "local f = string.rep return f('a', 2) .. cjson.encode({})"}) {
    const auto g = sim::GlobalsOfChunk(DumpOf(body));
    ASSERT_TRUE(g) << body;
    EXPECT_FALSE(g->libraries_escape) << body;
    EXPECT_TRUE(sim::MayRunInGlobals(*g)) << body;
  }
  for (const char* body :
       {"local r = redis r.call = nil", "string.rep = nil", "local t = {math} t[1].floor = nil",
        "return type(table)", "local function f() return coroutine end f().wrap = nil"}) {
    const auto g = sim::GlobalsOfChunk(DumpOf(body));
    ASSERT_TRUE(g) << body;
    EXPECT_FALSE(g->writes) << body;
    EXPECT_TRUE(g->libraries_escape) << body;
    EXPECT_FALSE(sim::MayRunInGlobals(*g)) << body << ": holds a library table";
  }
}

TEST(LuaChunk, WhatIsNotALua51ChunkIsRefusedNotGuessed) {
  const std::string dump = DumpOf("return redis.call('GET', KEYS[1])");
  ASSERT_GT(dump.size(), 20u);
  EXPECT_TRUE(sim::GlobalsOfChunk(dump));
  EXPECT_FALSE(sim::GlobalsOfChunk(""));
  EXPECT_FALSE(sim::GlobalsOfChunk("return 1"));
  for (size_t cut : {size_t{11}, size_t{12}, dump.size() / 2, dump.size() - 1})
    EXPECT_FALSE(sim::GlobalsOfChunk(dump.substr(0, cut))) << "cut at " << cut;
  EXPECT_FALSE(sim::GlobalsOfChunk(dump + "x")) << "trailing bytes";
  std::string other_version = dump;
  other_version[4] = 0x52;
  EXPECT_FALSE(sim::GlobalsOfChunk(other_version));
}

// The speed of the emulator's scripts rests on this: every seed script runs in the globals
// table, not behind the proxy (LuaScripting::Compile).
TEST(LuaChunk, EverySeedScriptMayRunInTheGlobalsTable) {
  const real::ScriptCatalog catalog = real::ScriptCatalog::Load(real::ScriptCatalog::ShippedDir());
  ASSERT_GE(catalog.all().size(), 20u);  // state and a2
  for (const real::ScriptFile& f : catalog.all()) {
    const auto g = sim::GlobalsOfChunk(DumpOf(f.body));
    ASSERT_TRUE(g) << f.file;
    EXPECT_TRUE(sim::MayRunInGlobals(*g)) << f.file;
  }
}

class EmulatorTest : public ::testing::Test {
 protected:
  sim::VirtualClock clock;
  sim::Emulator em{clock};
  sim::Reply run(const sim::Argv& a) { return em.execute(a); }
};

TEST(LuaArgNumbers, TheIntegerFastPathWritesWhatPercent17gWrites) {
  std::vector<double> values = {0.0,
                                -0.0,
                                1.0,
                                -1.0,
                                1767225600000.0,
                                9007199254740991.0,
                                9007199254740993.0,
                                1e16,
                                99999999999999984.0,
                                1e17,
                                -1e17,
                                1e21,
                                0.5,
                                -2.25,
                                1e-7,
                                123456789012345678.0};
  sim::Prng rng(7);
  for (int i = 0; i < 2000; ++i) {
    const int64_t v = static_cast<int64_t>(rng.next() >> (1 + rng.below(60)));
    values.push_back(static_cast<double>(i % 2 ? v : -v));
  }
  for (double d : values) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", d);
    EXPECT_EQ(sim::redis_text::FormatLuaArgNumber(d), buf) << d;
  }
}

TEST_F(EmulatorTest, SharedExpectationsHold) {
  sim::EmulatorClient first(em, 0), second(em, 1);
  expectations::RunAll(
      first, second, [this](int64_t ms) { clock.set(ms); }, clock.now_ms());
}

TEST_F(EmulatorTest, ALongScriptStopsAtTheInstructionBudgetAndTheEmulatorGoesOn) {
  sim::VirtualClock c;
  sim::EmulatorOptions o;
  o.script_instruction_budget = 100000;
  sim::Emulator small(c, o);
  sim::Reply r = small.execute({"EVAL", "redis.call('SET', 'k', 'v') while true do end", "0"});
  ASSERT_TRUE(r.is_error());
  EXPECT_NE(r.str.find("instruction budget"), std::string::npos) << r.str;
  // Writes made before the stop are kept, as for any script error.
  EXPECT_EQ(small.execute({"GET", "k"}), sim::Reply::Bulk("v"));
  // A pcall inside the script cannot swallow the stop.
  r = small.execute({"EVAL", "while true do pcall(function() while true do end end) end", "0"});
  EXPECT_NE(r.str.find("instruction budget"), std::string::npos) << r.str;
  EXPECT_EQ(small.execute({"EVAL", "return 7", "0"}), sim::Reply::Integer(7));
}

TEST_F(EmulatorTest, CommandsOutsideTheSubsetAreRefusedClearly) {
  EXPECT_EQ(run({"SORT", "k"}),
            sim::Reply::Error("ERR unsupported by the emulator: command 'SORT'"));
  EXPECT_EQ(run({"XADD", "s", "MAXLEN", "1", "*", "f", "v"}),
            sim::Reply::Error("ERR unsupported by the emulator: XADD option 'MAXLEN'"));
  EXPECT_EQ(run({"SCAN", "0", "TYPE", "string"}),
            sim::Reply::Error("ERR unsupported by the emulator: SCAN option 'TYPE'"));
  // A blocking pop with nothing to pop would block: refused, as blocking is not emulated.
  EXPECT_EQ(run({"BZPOPMIN", "z", "0"}),
            sim::Reply::Error("ERR unsupported by the emulator: blocking BZPOPMIN (no key has "
                              "members to pop, and the emulator does not block)"));
}

TEST_F(EmulatorTest, AFullScanReturnsEveryKeyThatLivedThroughoutExactlyOnce) {
  for (int i = 0; i < 50; ++i) run({"SET", "key" + std::to_string(i), "v"});
  std::set<std::string> seen;
  std::string cursor = "0";
  int rounds = 0;
  do {
    sim::Reply r = run({"SCAN", cursor, "COUNT", "7"});
    ASSERT_EQ(r.type, sim::Reply::Type::kArray);
    cursor = r.elements[0].str;
    for (const sim::Reply& k : r.elements[1].elements)
      EXPECT_TRUE(seen.insert(k.str).second) << k.str;
    // Keys written during the iteration must not hide the ones that were there from the start.
    run({"SET", "added" + std::to_string(rounds), "v"});
    ++rounds;
  } while (cursor != "0" && rounds < 100);
  for (int i = 0; i < 50; ++i) EXPECT_TRUE(seen.count("key" + std::to_string(i))) << i;
}

TEST_F(EmulatorTest, TheObserverSeesClientAndScriptCommands) {
  std::vector<std::string> seen;
  em.observer = [&](const sim::Argv& a, bool from_script) {
    seen.push_back(a[0] + (from_script ? "@script" : ""));
  };
  run({"EVAL", "return redis.call('GET', KEYS[1])", "1", "k"});
  EXPECT_EQ(seen, (std::vector<std::string>{"EVAL", "GET@script"}));
}

TEST_F(EmulatorTest, InjectedDeviationsChangeBehaviourOnlyWhenAskedFor) {
  sim::VirtualClock c;
  sim::EmulatorOptions shifted;
  shifted.fault_expiry_shift_ms = -1;
  sim::Emulator bad(c, shifted);
  bad.execute({"SET", "k", "v", "PX", "5"});
  c.advance(5);
  EXPECT_EQ(bad.execute({"GET", "k"}), sim::Reply::Nil());  // Redis: still alive at T
  sim::EmulatorOptions cjson;
  cjson.fault_cjson_empty_table_as_array = true;
  sim::Emulator bad2(c, cjson);
  EXPECT_EQ(bad2.execute({"EVAL", "return cjson.encode({})", "0"}), sim::Reply::Bulk("[]"));
}

}  // namespace
}  // namespace testbed
