// The managed redis-server: it starts on a free loopback port, follows the virtual clock to the
// millisecond through our LD_PRELOAD shim, answers what the emulator answers, and always stops.
#include <gtest/gtest.h>

#include <cstdlib>

#include "real/redis_server.h"
#include "sim/clock.h"
#include "tests/redis_expectations.h"

namespace testbed {
namespace {

TEST(RealRedis, SharedExpectationsHoldOnASpawnedServerWithVirtualTime) {
  real::RedisServer server(sim::kDefaultEpochMs);
  auto conn = server.connect_raw(), other = server.connect_raw();
  expectations::RunAll(
      *conn, *other, [&](int64_t ms) { server.set_time_ms(ms); }, sim::kDefaultEpochMs);
}

TEST(RealRedis, TheServerClockFollowsTheVirtualClockToTheMillisecond) {
  real::RedisServer server(sim::kDefaultEpochMs);
  auto conn = server.connect();
  for (int64_t t : {sim::kDefaultEpochMs, sim::kDefaultEpochMs + 1, sim::kDefaultEpochMs + 999,
                    sim::kDefaultEpochMs + 86400000}) {
    server.set_time_ms(t);
    const sim::Reply r = expectations::Call(*conn, {"TIME"});
    ASSERT_EQ(r.elements.size(), 2u);
    EXPECT_EQ(r.elements[0].str, std::to_string(t / 1000));
    EXPECT_EQ(r.elements[1].str, std::to_string((t % 1000) * 1000));
  }
}

TEST(RealRedis, TheServerStopsWhenItsOwnerGoesAway) {
  int port;
  {
    real::RedisServer server(sim::kDefaultEpochMs);
    port = server.port();
    real::HiredisConnection c("127.0.0.1", port, 500);
    EXPECT_TRUE(c.connected());
  }
  real::HiredisConnection after("127.0.0.1", port, 500);
  EXPECT_FALSE(after.connected());
  const sim::CallResult r = after.call({"PING"});
  EXPECT_TRUE(std::holds_alternative<sim::TransportError>(r));
}

TEST(RealRedis, AMissingServerBinaryIsASetupErrorNotACrash) {
  setenv("TESTBED_REDIS_SERVER", "/nonexistent/redis-server", 1);
  EXPECT_THROW(real::RedisServer server(sim::kDefaultEpochMs), real::SetupError);
  unsetenv("TESTBED_REDIS_SERVER");
}

TEST(RealRedis, HiredisRepliesAndTransportErrorsStayApart) {
  auto server = std::make_unique<real::RedisServer>(sim::kDefaultEpochMs);
  auto conn = server->connect();
  const sim::CallResult bad = conn->call({"GET"});
  ASSERT_TRUE(std::holds_alternative<sim::Reply>(bad));
  EXPECT_EQ(std::get<sim::Reply>(bad),
            sim::Reply::Error("ERR wrong number of arguments for 'get' command"));
  server.reset();  // the server is gone: the next call is a transport error, not a reply
  EXPECT_TRUE(std::holds_alternative<sim::TransportError>(conn->call({"PING"})));
}

}  // namespace
}  // namespace testbed
