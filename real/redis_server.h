// A redis-server the testbed starts, owns and always stops: free loopback port, its own temp
// dir, no persistence, its wall clock driven by the virtual clock through our LD_PRELOAD shim.
//
// It dies with the test process (PR_SET_PDEATHSIG) and is stopped by the destructor. Because
// the testbed started it, and only then, the harness may FLUSHALL it between runs.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "real/hiredis_connection.h"
#include "real/resp_connection.h"

namespace testbed::real {

// Bad setup (no redis-server, cannot start it): the CLI reports it and exits with code 2.
struct SetupError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class RedisServer {
 public:
  // Starts the server with its wall clock at start_ms (virtual). Throws SetupError.
  explicit RedisServer(int64_t start_ms);
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  int port() const { return port_; }
  // The file the server's time shim reads its clock from (an int64 of microseconds): a process
  // other than this one (a Node client in tests) may move the clock by writing it.
  std::string clock_file() const { return dir_ + "/clock"; }
  // Moves the server's wall clock; every later command sees this time.
  void set_time_ms(int64_t ms);
  std::unique_ptr<HiredisConnection> connect() const;
  // A raw RESP2 connection that keeps null arrays apart from nil bulks (see resp_connection.h).
  std::unique_ptr<RespConnection> connect_raw() const;
  // FLUSHALL + SCRIPT FLUSH: allowed only because this server is ours.
  void reset();
  static std::string FindBinary();  // $TESTBED_REDIS_SERVER or redis-server on PATH; throws

 private:
  friend void StopSpawnedServers();
  void stop();
  void kill_now();
  int pid_ = -1;
  int port_ = 0;
  std::string dir_;
  volatile int64_t* clock_ = nullptr;
};

// Kills every redis-server this process started and not yet stopped, and removes their
// directories: for a process about to exit on a signal (the owners' later stop does nothing).
void StopSpawnedServers();

}  // namespace testbed::real
