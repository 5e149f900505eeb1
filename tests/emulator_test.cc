// Emulator behaviours the seeds depend on, with the values measured on redis-server 7.0.15.
// The same expectations run against a spawned server in real_redis_test.cc; the random
// differential check in fidelity_test.cc covers the rest of the subset.
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "sim/clock.h"
#include "sim/emulator.h"
#include "sim/prng.h"
#include "sim/redis_text.h"
#include "tests/redis_expectations.h"

namespace testbed {
namespace {

class EmulatorTest : public ::testing::Test {
 protected:
  VirtualClock clock;
  Emulator em{clock};
  Reply run(const Argv& a) { return em.execute(a); }
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
  Prng rng(7);
  for (int i = 0; i < 2000; ++i) {
    const int64_t v = static_cast<int64_t>(rng.next() >> (1 + rng.below(60)));
    values.push_back(static_cast<double>(i % 2 ? v : -v));
  }
  for (double d : values) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", d);
    EXPECT_EQ(redis_text::FormatLuaArgNumber(d), buf) << d;
  }
}

TEST_F(EmulatorTest, SharedExpectationsHold) {
  expectations::RunAll(
      em, [this](int64_t ms) { clock.set(ms); }, clock.now_ms());
}

TEST_F(EmulatorTest, ALongScriptStopsAtTheInstructionBudgetAndTheEmulatorGoesOn) {
  VirtualClock c;
  EmulatorOptions o;
  o.script_instruction_budget = 100000;
  Emulator small(c, o);
  Reply r = small.execute({"EVAL", "redis.call('SET', 'k', 'v') while true do end", "0"});
  ASSERT_TRUE(r.is_error());
  EXPECT_NE(r.str.find("instruction budget"), std::string::npos) << r.str;
  // Writes made before the stop are kept, as for any script error.
  EXPECT_EQ(small.execute({"GET", "k"}), Reply::Bulk("v"));
  // A pcall inside the script cannot swallow the stop.
  r = small.execute({"EVAL", "while true do pcall(function() while true do end end) end", "0"});
  EXPECT_NE(r.str.find("instruction budget"), std::string::npos) << r.str;
  EXPECT_EQ(small.execute({"EVAL", "return 7", "0"}), Reply::Integer(7));
}

TEST_F(EmulatorTest, CommandsOutsideTheSubsetAreRefusedClearly) {
  EXPECT_EQ(run({"INCR", "k"}), Reply::Error("ERR unsupported by the emulator: command 'INCR'"));
  EXPECT_EQ(run({"SET", "k", "v", "NX"}),
            Reply::Error("ERR unsupported by the emulator: SET option 'NX'"));
  EXPECT_EQ(run({"ZADD", "z", "XX", "1", "m"}),
            Reply::Error("ERR unsupported by the emulator: ZADD option 'XX'"));
}

TEST_F(EmulatorTest, AFullScanReturnsEveryKeyThatLivedThroughoutExactlyOnce) {
  for (int i = 0; i < 50; ++i) run({"SET", "key" + std::to_string(i), "v"});
  std::set<std::string> seen;
  std::string cursor = "0";
  int rounds = 0;
  do {
    Reply r = run({"SCAN", cursor, "COUNT", "7"});
    ASSERT_EQ(r.type, Reply::Type::kArray);
    cursor = r.elements[0].str;
    for (const Reply& k : r.elements[1].elements) EXPECT_TRUE(seen.insert(k.str).second) << k.str;
    // Keys written during the iteration must not hide the ones that were there from the start.
    run({"SET", "added" + std::to_string(rounds), "v"});
    ++rounds;
  } while (cursor != "0" && rounds < 100);
  for (int i = 0; i < 50; ++i) EXPECT_TRUE(seen.count("key" + std::to_string(i))) << i;
}

TEST_F(EmulatorTest, TheObserverSeesClientAndScriptCommands) {
  std::vector<std::string> seen;
  em.observer = [&](const Argv& a, bool from_script) {
    seen.push_back(a[0] + (from_script ? "@script" : ""));
  };
  run({"EVAL", "return redis.call('GET', KEYS[1])", "1", "k"});
  EXPECT_EQ(seen, (std::vector<std::string>{"EVAL", "GET@script"}));
}

TEST_F(EmulatorTest, InjectedDeviationsChangeBehaviourOnlyWhenAskedFor) {
  VirtualClock c;
  EmulatorOptions shifted;
  shifted.fault_expiry_shift_ms = -1;
  Emulator bad(c, shifted);
  bad.execute({"SET", "k", "v", "PX", "5"});
  c.advance(5);
  EXPECT_EQ(bad.execute({"GET", "k"}), Reply::Nil());  // Redis: still alive at T
  EmulatorOptions cjson;
  cjson.fault_cjson_empty_table_as_array = true;
  Emulator bad2(c, cjson);
  EXPECT_EQ(bad2.execute({"EVAL", "return cjson.encode({})", "0"}), Reply::Bulk("[]"));
}

}  // namespace
}  // namespace testbed
