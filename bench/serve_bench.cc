// One client's PING round trips against `testbed serve` and against a spawned redis-server,
// with 0, 250 and 2,000 idle connections open beside it: what a wake-up of the server's event
// loop costs as connections grow. Read the ratio of /idle:2000 to /idle:0 of one server from one
// run (docs/performance.md).
#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "real/redis_server.h"
#include "serve/server.h"
#include "sim/clock.h"

namespace testbed {
namespace {

int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if (fd >= 0) close(fd);
    return -1;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

// One PING and its +PONG; false if the reply is anything else.
bool Ping(int fd) {
  static const char kPing[] = "*1\r\n$4\r\nPING\r\n";
  if (send(fd, kPing, sizeof kPing - 1, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof kPing - 1))
    return false;
  char buf[16];
  size_t got = 0;
  while (got < 7) {
    const ssize_t n = recv(fd, buf + got, sizeof buf - got, 0);
    if (n <= 0) return false;
    got += static_cast<size_t>(n);
  }
  return std::string(buf, got) == "+PONG\r\n";
}

// `idle` connections, each answered once (so the server has accepted it), then one client's
// PINGs, timed.
void PingWithIdle(benchmark::State& state, int port) {
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }
  std::vector<int> idle;
  for (int64_t i = 0; i < state.range(0); ++i) {
    const int fd = Connect(port);
    if (fd < 0 || !Ping(fd)) {
      state.SkipWithError("could not open the idle connections");
      for (const int f : idle) close(f);
      return;
    }
    idle.push_back(fd);
  }
  const int fd = Connect(port);
  for (auto _ : state)
    if (!Ping(fd)) {
      state.SkipWithError("PING did not get +PONG");
      break;
    }
  state.SetItemsProcessed(state.iterations());
  close(fd);
  for (const int f : idle) close(f);
}

void BM_PingWithIdleConnections_Serve(benchmark::State& state) {
  std::atomic<int> port{0};
  std::atomic<bool> stop{false};
  std::thread server([&] {
    serve::Serve(
        0, nullptr, nullptr, [&](int p) { port = p; }, [&] { return stop.load(); });
  });
  while (port.load() == 0) std::this_thread::yield();
  PingWithIdle(state, port.load());
  stop = true;
  server.join();
}

void BM_PingWithIdleConnections_RedisServer(benchmark::State& state) {
  real::RedisServer server(sim::kDefaultEpochMs);
  PingWithIdle(state, server.port());
}

BENCHMARK(BM_PingWithIdleConnections_Serve)
    ->ArgName("idle")
    ->Arg(0)
    ->Arg(250)
    ->Arg(2000)
    ->UseRealTime();
BENCHMARK(BM_PingWithIdleConnections_RedisServer)
    ->ArgName("idle")
    ->Arg(0)
    ->Arg(250)
    ->Arg(2000)
    ->UseRealTime();

}  // namespace
}  // namespace testbed

BENCHMARK_MAIN();
