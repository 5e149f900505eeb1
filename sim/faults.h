// Fault kinds: one table (name, what it does, how to switch it on and off in FaultOptions), a
// typed set of kinds, and the knobs in one options struct, unit last (TigerBeetle's
// Storage.Options). `--faults`, the properties' set-aside lists, `testbed list` and replay lines
// all go through the table; nothing else spells a fault's name.
#pragma once

#include <bitset>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/prng.h"

namespace testbed::sim {

// Ratios are per call or per actor; times are planned from the seed inside [0, horizon).
struct FaultOptions {
  Ratio lost_request{0, 1};  // not applied; the client times out
  Ratio lost_reply{0, 1};    // applied; the client times out (ambiguous)
  // Waits in the network up to delay_ms_max: other connections' calls overtake it, while its own
  // connection's later calls wait behind it (one connection is FIFO).
  Ratio delayed_request{0, 1};
  int64_t delay_ms_max = 0;
  int64_t latency_ms_min = 0;  // per call, reply delivered after this
  int64_t latency_ms_max = 0;
  int64_t timeout_ms = 250;  // the SDK's DEFAULT_REDIS_TIMEOUT_MS
  Ratio actor_pause{0, 1};   // per actor: one pause of pause_ms (a GC pause longer than a lease)
  int64_t pause_ms = 0;
  Ratio actor_crash{0, 1};        // per actor: crash once; its threads and timers stop
  int64_t clock_skew_ms_max = 0;  // per actor: constant offset in [-max, max]
  Ratio clock_jump{0, 1};         // per actor: one jump of up to clock_jump_ms_max either way
  int64_t clock_jump_ms_max = 0;
  bool restart = false;  // one restart, losing writes since the last snapshot
  int64_t snapshot_every_ms = 1000;
  int64_t failover_lag_commands = -1;  // >= 0: one failover to a replica this many commands behind
  int64_t outage_ms = 0;               // > 0: one window of this length in which every call fails
  // Held back past the client's timeout (it sees a timeout and goes on), then applied late: other
  // connections' calls overtake it, its own connection's later calls wait behind it (a request
  // stuck in a retransmit queue; one connection is FIFO, as ioredis and hiredis use it).
  Ratio reordered_request{0, 1};
  int64_t reorder_ms_max = 0;  // how far past the timeout it runs, at most
  // Once: one key, or one hash field, sorted-set member or stream entry of a key, disappears,
  // as eviction under maxmemory-policy allkeys-random, a field TTL or an XTRIM would do it.
  bool key_loss = false;
  Ratio scan_duplicate{0, 1};  // a SCAN reply returns one of its elements twice
  // Applied, then the connection drops before the reply; the client library reconnects and
  // re-sends it first on the new connection (ioredis's autoResendUnfulfilledCommands, on by
  // default), so it is applied twice and the caller gets the second reply.
  Ratio resent_request{0, 1};
  int64_t resend_ms_max = 0;  // the reconnect takes 1 to this many ms

  static FaultOptions Parse(const std::string& list);  // "lost-reply,pause,..." (throws)
  static std::vector<std::string> Kinds();             // every name, in table order
};

enum class Fault : uint8_t {
  kLostRequest,
  kLostReply,
  kLatency,
  kDelay,
  kPause,
  kCrash,
  kSkew,
  kClockJump,
  kRestart,
  kFailover,
  kOutage,
  kReorder,
  kKeyLoss,
  kScanDuplicate,
  kResend,
};
inline constexpr size_t kFaultCount = 15;

struct FaultKindInfo {
  Fault kind;
  std::string name;
  std::string what;  // one line for `testbed list`
  void (*enable)(FaultOptions&);
  void (*disable)(FaultOptions&);
};

// The table, in the order `--faults all` lists them.
const std::vector<FaultKindInfo>& FaultKinds();
const FaultKindInfo& InfoOf(Fault f);

// A set of fault kinds (a property's set-aside list).
class FaultSet {
 public:
  FaultSet() = default;
  FaultSet(std::initializer_list<Fault> kinds) {
    for (Fault f : kinds) insert(f);
  }
  static FaultSet All();
  static FaultSet AllBut(std::initializer_list<Fault> kinds) {
    FaultSet s = All();
    for (Fault f : kinds) s.bits_.reset(static_cast<size_t>(f));
    return s;
  }
  void insert(Fault f) { bits_.set(static_cast<size_t>(f)); }
  bool contains(Fault f) const { return bits_.test(static_cast<size_t>(f)); }
  bool empty() const { return bits_.none(); }
  bool operator==(const FaultSet&) const = default;
  // "all", or the names in table order joined by ", " ("" when empty).
  std::string Describe() const;
  // Switches the kinds of this set off in `options`.
  void DisableIn(FaultOptions& options) const;

 private:
  std::bitset<kFaultCount> bits_;
};

// The kinds a user asked for, in the order given (so a replay line writes them back as given).
// "none" and "" are empty; "all" is every kind in table order and written back as "all".
struct FaultList {
  std::vector<Fault> kinds;
  // Throws std::invalid_argument. strict (a command line): an empty list or item and a kind named
  // twice are errors too.
  static FaultList Parse(const std::string& list, bool strict = false);
  std::string ToString() const;  // "none", "all" or "a,b,..."
  FaultOptions Options() const;
  bool empty() const { return kinds.empty(); }
  bool operator==(const FaultList&) const = default;
};

}  // namespace testbed::sim
