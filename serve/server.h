// testbed serve: the emulator as a RESP2 server on loopback, for an application's own test
// suite (as miniredis or fakeredis are used), with Redis 7.0's Lua and cjson byte for byte and
// virtual time. One thread, poll(): every command runs to completion in arrival order across
// connections, as on redis-server.
//
// Virtual time follows the wall clock from the moment the server starts (an offset of 0: the
// real time) until a client sets, advances or freezes it:
//   TESTBED TIME                  -> the virtual time in ms since the epoch
//   TESTBED TIME SET <ms>         -> OK: the time is <ms> now (and follows the wall clock on)
//   TESTBED TIME ADVANCE <ms>     -> OK: <ms> later (keys whose TTL passes expire)
//   TESTBED TIME FREEZE           -> OK: the time stands still
//   TESTBED TIME FOLLOW           -> OK: it follows the wall clock again, from where it stood
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "sim/clock.h"
#include "sim/reply.h"

namespace testbed::serve {

// The server's clock: the wall clock plus an offset, or frozen.
class ServedClock : public sim::Clock {
 public:
  explicit ServedClock(std::function<int64_t()> wall);
  int64_t now_ms() const override;
  void set(int64_t ms);
  void advance(int64_t ms) { set(now_ms() + ms); }
  void freeze();
  void follow();

 private:
  std::function<int64_t()> wall_;
  int64_t offset_ = 0;
  bool frozen_ = false;
  int64_t frozen_at_ = 0;
};

// What one connection's commands reach: the emulator, the connection-level commands a client
// library sends on connecting (HELLO, CLIENT, SELECT, INFO, COMMAND DOCS, QUIT, ...), and the
// TESTBED admin commands. Socket-free, so tests drive it directly.
class Service {
 public:
  explicit Service(std::function<int64_t()> wall);
  ~Service();
  struct Client {
    int64_t id = 0;
    std::string name;
    std::string address = "127.0.0.1:0";  // as MONITOR names it
    bool close_after_reply = false;
  };
  sim::Reply Execute(Client& client, const sim::Argv& argv);
  ServedClock& clock() { return *clock_; }
  // From now on, every command is written to `out` as MONITOR prints it (at the virtual time;
  // a script's commands as [0 lua] lines after it), then its reply as a #reply line: the
  // capture `testbed import` reads. TESTBED commands are not Redis's: they are left out.
  void Record(std::ostream* out);

 private:
  sim::Reply Run(Client& client, const sim::Argv& argv);  // Execute, unrecorded
  sim::Reply Admin(const sim::Argv& argv);
  sim::Reply ClientCommand(Client& client, const sim::Argv& argv);
  std::unique_ptr<ServedClock> clock_;
  struct State;
  std::unique_ptr<State> state_;
};

// Listens on 127.0.0.1:port (0: a free port), calls `ready` with the port bound, and serves
// until `stop` returns true (checked at least every 100 ms). Throws std::runtime_error when it
// cannot listen.
// `record`: nullptr, or where Service::Record writes.
void Serve(int port, std::ostream* record, const std::function<void(int)>& ready,
           const std::function<bool()>& stop);

}  // namespace testbed::serve
