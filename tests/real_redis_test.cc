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
  RedisServer server(kDefaultEpochMs);
  auto conn = server.connect_raw();
  expectations::RunAll(
      *conn, [&](int64_t ms) { server.set_time_ms(ms); }, kDefaultEpochMs);
}

TEST(RealRedis, TheServerClockFollowsTheVirtualClockToTheMillisecond) {
  RedisServer server(kDefaultEpochMs);
  auto conn = server.connect();
  for (int64_t t :
       {kDefaultEpochMs, kDefaultEpochMs + 1, kDefaultEpochMs + 999, kDefaultEpochMs + 86400000}) {
    server.set_time_ms(t);
    const Reply r = expectations::Call(*conn, {"TIME"});
    ASSERT_EQ(r.elements.size(), 2u);
    EXPECT_EQ(r.elements[0].str, std::to_string(t / 1000));
    EXPECT_EQ(r.elements[1].str, std::to_string((t % 1000) * 1000));
  }
}

TEST(RealRedis, TheServerStopsWhenItsOwnerGoesAway) {
  int port;
  {
    RedisServer server(kDefaultEpochMs);
    port = server.port();
    HiredisConnection c("127.0.0.1", port, 500);
    EXPECT_TRUE(c.connected());
  }
  HiredisConnection after("127.0.0.1", port, 500);
  EXPECT_FALSE(after.connected());
  const CallResult r = after.call({"PING"});
  EXPECT_TRUE(std::holds_alternative<TransportError>(r));
}

TEST(RealRedis, AMissingServerBinaryIsASetupErrorNotACrash) {
  setenv("TESTBED_REDIS_SERVER", "/nonexistent/redis-server", 1);
  EXPECT_THROW(RedisServer server(kDefaultEpochMs), SetupError);
  unsetenv("TESTBED_REDIS_SERVER");
}

TEST(RealRedis, HiredisRepliesAndTransportErrorsStayApart) {
  auto server = std::make_unique<RedisServer>(kDefaultEpochMs);
  auto conn = server->connect();
  const CallResult bad = conn->call({"GET"});
  ASSERT_TRUE(std::holds_alternative<Reply>(bad));
  EXPECT_EQ(std::get<Reply>(bad), Reply::Error("ERR wrong number of arguments for 'get' command"));
  server.reset();  // the server is gone: the next call is a transport error, not a reply
  EXPECT_TRUE(std::holds_alternative<TransportError>(conn->call({"PING"})));
}

}  // namespace
}  // namespace testbed
