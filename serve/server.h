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
#include "sim/faults.h"
#include "sim/prng.h"
#include "sim/reply.h"

namespace testbed::serve {

// The server's clock: the wall clock plus an offset, or frozen; kept in microseconds (`wall`
// reads the wall clock in microseconds), so that TIME answers as Redis's does.
class ServedClock : public sim::Clock {
 public:
  explicit ServedClock(std::function<int64_t()> wall);
  int64_t now_ms() const override { return now_us() / 1000; }
  int64_t now_us() const override;
  void set(int64_t ms);
  void advance(int64_t ms) { set(now_ms() + ms); }
  void freeze();
  void follow();

 private:
  std::function<int64_t()> wall_;
  int64_t offset_ = 0;  // microseconds, as the two below
  bool frozen_ = false;
  int64_t frozen_at_ = 0;
};

// Faults at the server (serve --faults LIST --seed S), drawn for each command (TESTBED's aside)
// from one PRNG seeded by S, with the fault table's ratios:
//   lost-request: the connection drops before the command runs (the client sees it closed);
//   lost-reply:   the command runs, then the connection drops before its reply;
//   latency:      the reply leaves 1 to 20 ms later (wall clock); its connection's later
//                 replies wait behind it (one connection is FIFO).
// The other kinds act on a simulated world (client clocks, pauses, restarts): refused here.
class FaultInjector {
 public:
  static constexpr sim::Fault kInjected[] = {sim::Fault::kLostRequest, sim::Fault::kLostReply,
                                             sim::Fault::kLatency};
  // std::invalid_argument naming a kind serve cannot inject.
  FaultInjector(const sim::FaultList& list, uint64_t seed);
  struct Fate {
    bool drop_before = false, drop_after = false;
    int64_t delay_ms = 0;
  };
  Fate Next();  // one command's (none while off)
  void set_on(bool on) { on_ = on; }
  std::string Describe() const;  // "on: lost-reply,latency" / "off: ..."

 private:
  sim::FaultList list_;
  sim::FaultOptions options_;
  sim::Prng prng_;
  bool on_ = true;
};

// What one connection's commands reach: the emulator (whose command table holds the
// connection-level commands a client library sends on connecting: HELLO, CLIENT, SELECT, INFO,
// COMMAND DOCS, ..., and MULTI/EXEC), QUIT, and the TESTBED admin commands. Each connection is
// one of the emulator's clients (its database, its MULTI queue, its watched keys). Socket-free,
// so tests drive it directly. `wall_us` reads the wall clock in microseconds.
class Service {
 public:
  explicit Service(std::function<int64_t()> wall_us);
  ~Service();
  struct Client {
    int64_t id = 0;
    std::string address = "127.0.0.1:0";  // as MONITOR names it
    bool close_after_reply = false;
  };
  sim::Reply Execute(Client& client, const sim::Argv& argv);
  // The client's connection has closed: its watches and MULTI queue are forgotten.
  void Disconnected(const Client& client);
  // TESTBED's own commands: not Redis's, never recorded nor faulted.
  static bool IsAdmin(const sim::Argv& argv);
  ServedClock& clock() { return *clock_; }
  // From now on, every command is written to `out` as MONITOR prints it (at the virtual time;
  // a script's commands as [0 lua] lines after it), then its reply as a #reply line: the
  // capture `testbed import` reads. TESTBED commands are not Redis's: they are left out.
  void Record(std::ostream* out);
  // TESTBED FAULTS [ON | OFF] reaches `faults` (nullptr: the server injects none).
  void Faults(FaultInjector* faults) { faults_ = faults; }

 private:
  sim::Reply Run(Client& client, const sim::Argv& argv);  // Execute, unrecorded
  sim::Reply Admin(const sim::Argv& argv);
  std::unique_ptr<ServedClock> clock_;
  FaultInjector* faults_ = nullptr;
  struct State;
  std::unique_ptr<State> state_;
};

// Listens on 127.0.0.1:port (0: a free port), calls `ready` with the port bound, and serves
// until `stop` returns true (checked at least every 100 ms). Throws std::runtime_error when it
// cannot listen.
// `record`: nullptr, or where Service::Record writes; `faults`: nullptr, or what it injects.
void Serve(int port, std::ostream* record, FaultInjector* faults,
           const std::function<void(int)>& ready, const std::function<bool()>& stop);

}  // namespace testbed::serve
