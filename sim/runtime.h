// The deterministic simulation runtime: actors as coroutines, one scheduler, virtual time,
// planned faults, and a trace whose hash proves a run replays.
//
// Contract:
//   - Client logic is a coroutine taking a Ctx. Its only scheduling points are
//     `co_await ctx.call(argv)` (a Redis command) and `co_await ctx.sleep(ms)` / `ctx.join(t)`.
//   - At each step the Strategy picks which pending Redis call executes next; that choice and
//     the fault draws (from the world's one Prng, in a fixed order) are the only sources of
//     nondeterminism. Deliveries of replies and timers follow virtual time, ties by sequence.
//   - The Backend executes commands atomically at a virtual time: the emulator (sim/) or a
//     spawned redis-server whose clock follows the virtual clock (real/), so one schedule runs
//     in two worlds.
//   - Every step goes to the trace as a typed event (sim/trace.h); the run's XXH3-128 over the
//     events is its `trace-hash`.
#pragma once

#include <coroutine>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/clock.h"
#include "sim/emulator.h"
#include "sim/faults.h"
#include "sim/prng.h"
#include "sim/reply.h"
#include "sim/task.h"
#include "sim/trace.h"

namespace testbed::sim {

using ThreadId = int;
using ActorId = int;

struct LoggedCommand {
  Argv argv;
  int64_t at_ms;
};

// Where commands run. Restarts and failovers rebuild the store from a prefix of the command
// log (prefix-consistent at script granularity) and lose the script cache, as a restarted or
// promoted redis-server does.
class Backend {
 public:
  virtual ~Backend() = default;
  // `client`: the actor whose call it is (a real server gets each actor's calls over the
  // actor's own connection, as each client process has its own); -1: the world's own (a fault's
  // housekeeping, a dump).
  virtual Reply execute(const Argv& argv, int64_t now_ms, int client = -1) = 0;
  virtual void rebuild(const std::vector<LoggedCommand>& prefix, int64_t now_ms) = 0;
  virtual std::string describe_state(int64_t now_ms) = 0;  // canonical keyspace
  virtual std::string name() const = 0;
};

class EmulatorBackend : public Backend {
 public:
  explicit EmulatorBackend(EmulatorOptions options = {});
  Reply execute(const Argv& argv, int64_t now_ms, int client = -1) override;
  void rebuild(const std::vector<LoggedCommand>& prefix, int64_t now_ms) override;
  std::string describe_state(int64_t now_ms) override;
  std::string name() const override { return "emulator"; }

 private:
  EmulatorOptions options_;
  VirtualClock clock_;
  std::unique_ptr<Emulator> emulator_;
};

// World-level and actor-level faults at chosen times (planned ones come from FaultOptions).
enum class FaultKind {
  kSnapshot,
  kRestart,
  kFailover,
  kOutageStart,
  kOutageEnd,
  kClockJump,
  kPause,
  kCrash,
  kKeyLoss,  // value: which (drawn from the fault stream when planned)
};

// The fault kind (sim/faults.h) a planned event belongs to (a snapshot: to restart's).
inline Fault FaultOf(FaultKind k) {
  switch (k) {
    case FaultKind::kSnapshot:
    case FaultKind::kRestart:
      return Fault::kRestart;
    case FaultKind::kFailover:
      return Fault::kFailover;
    case FaultKind::kOutageStart:
    case FaultKind::kOutageEnd:
      return Fault::kOutage;
    case FaultKind::kClockJump:
      return Fault::kClockJump;
    case FaultKind::kPause:
      return Fault::kPause;
    case FaultKind::kCrash:
      return Fault::kCrash;
    case FaultKind::kKeyLoss:
      return Fault::kKeyLoss;
  }
  return Fault::kRestart;
}

struct WorldOptions {
  uint64_t seed = 1;
  int64_t start_ms = kDefaultEpochMs;
  int64_t horizon_ms = 60000;  // virtual time after which the run stops
  int64_t max_steps = 100000;  // executed calls after which the run stops
  FaultOptions faults;
  // Whether run() fills RunResult::trace_hash. The systems' runs leave it to Trace::Hash(),
  // asked only by those who compare hashes: hashing every event was a twentieth of a check.
  bool hash_trace = true;
  // How fault texts name the script bodies of the calls they hit (nullptr: by SHA1).
  const ScriptNames* script_names = nullptr;
};

class World;

struct Choice {
  ThreadId thread;
  ActorId actor;
  const Argv* argv;
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  // Index into `enabled` (sorted by thread, then submission). `prng` is the world's.
  virtual size_t choose(const std::vector<Choice>& enabled, Prng& prng) = 0;
  virtual std::string name() const = 0;
  World* world = nullptr;  // set by the World that runs with this strategy
};

class World;

class Ctx {
 public:
  Ctx(World& world, ActorId actor, ThreadId thread)
      : world_(world), actor_(actor), thread_(thread) {}

  struct CallAwaiter {
    Ctx* ctx;
    Argv argv;
    CallResult result;
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h);
    CallResult await_resume() { return std::move(result); }
  };
  struct SleepAwaiter {
    Ctx* ctx;
    int64_t ms;
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h);
    void await_resume() const noexcept {}
  };
  struct JoinAwaiter {
    Ctx* ctx;
    ThreadId target;
    bool await_ready() const;
    void await_suspend(std::coroutine_handle<> h);
    void await_resume() const noexcept {}
  };
  struct JoinAnyAwaiter {
    Ctx* ctx;
    std::vector<ThreadId> targets;
    bool await_ready() const;
    void await_suspend(std::coroutine_handle<> h);
    void await_resume() const noexcept {}
  };

  CallAwaiter call(Argv argv) { return CallAwaiter{this, std::move(argv), Reply::Nil()}; }
  // co_await ctx.cmd("SET", key, value): the same, for a literal command. (g++ 12 miscompiles
  // a braced list such as ctx.call({"SET", k, v}) inside a coroutine: "array used as
  // initializer"; building the Argv here, outside the coroutine, avoids it. For the same
  // compiler, compute conditional values into named locals before a co_await: a ?: temporary
  // inside the awaited full-expression is destroyed twice.)
  template <typename... Args>
  CallAwaiter cmd(Args&&... args) {
    return call(MakeArgv(std::forward<Args>(args)...));
  }
  SleepAwaiter sleep(int64_t ms) { return SleepAwaiter{this, ms}; }
  JoinAwaiter join(ThreadId t) { return JoinAwaiter{this, t}; }
  // Resumes when the first of `targets` ends (Promise.all's rejection: the first failure).
  JoinAnyAwaiter join_any(std::vector<ThreadId> targets) {
    return JoinAnyAwaiter{this, std::move(targets)};
  }
  ThreadId spawn(std::string name, std::function<Task<void>(Ctx&)> body);
  void cancel(ThreadId t);
  bool finished(ThreadId t) const;  // it returned, threw, was cancelled or its actor crashed
  int64_t now_ms() const;           // this actor's clock: virtual time + skew + jumps
  // How many of this thread's calls so far were applied and then re-sent after a reconnect (the
  // resend fault): a call made between two readings may have taken effect twice.
  int64_t resent_calls() const;
  // Every reply to this thread's later calls arrives `ms` later (0: none), on top of any latency
  // fault: a client that chooses how slow its own network is (the sequential callers aim a
  // call's span at an entry's expiry with it). Deterministic: no draw of the world's.
  void set_reply_latency(int64_t ms);
  const Clock& clock() const;
  ActorId actor() const { return actor_; }
  ThreadId thread() const { return thread_; }
  World& world() { return world_; }

 private:
  World& world_;
  ActorId actor_;
  ThreadId thread_;
};

struct RunResult {
  std::string trace_hash;  // empty unless WorldOptions::hash_trace
  int64_t steps = 0;
  int64_t elapsed_ms = 0;
  std::string stop_reason;                         // "all actors finished", "horizon", "max steps"
  std::vector<std::pair<size_t, size_t>> choices;  // (enabled count, index) per step
  std::string error;                               // an exception escaped client logic
};

class World {
 public:
  World(WorldOptions options, Backend& backend, Strategy& strategy);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  ActorId add_actor(std::string name, std::function<Task<void>(Ctx&)> body);
  // An actor's clock now (virtual time + its skew + its jumps), as its Ctx::now_ms() reads it.
  int64_t actor_clock_ms(ActorId a) const { return actor_time(a); }
  // A fault at start + offset_ms. value: pause length, clock jump, or failover lag (commands).
  void schedule(FaultKind kind, int64_t offset_ms, ActorId actor = -1, int64_t value = 0);
  RunResult run();

  int64_t now_ms() const { return now_; }
  int64_t start_ms() const { return options_.start_ms; }
  const std::string& actor_name(ActorId a) const;  // "client0"
  const Trace& trace() const { return trace_; }
  Trace take_trace() { return std::move(trace_); }  // after run(): the trace, without a copy
  Prng& prng() { return prng_; }                    // the schedule's stream
  Backend& backend() { return backend_; }           // where the calls run
  // Called with the calling thread right after each call is applied on the backend (not for a
  // call a fault dropped): a probe may read the keyspace as that call left it, outside the trace.
  void observe_applied_calls(std::function<void(ThreadId)> observer) {
    applied_observer_ = std::move(observer);
  }
  // Hash of everything that decides the future (keyspace, threads, pending calls): DFS pruning.
  std::string state_hash();
  void note(const std::string& line) { record(-1, EventKind::kNote, line); }

 private:
  friend class Ctx;
  struct Thread;
  struct Actor;
  struct PendingCall {
    uint64_t seq;
    size_t event;  // its kCall event, which holds the argv
    ThreadId thread;
    Ctx::CallAwaiter* awaiter;
    std::coroutine_handle<> handle;
    int64_t ready_at;
    bool lose_request, lose_reply;
    int64_t latency;
    bool orphan = false;  // reordered: its client already timed out; nothing waits for it
    bool resend = false;  // applied, then re-sent after a reconnect and applied again
  };
  struct Wakeup {
    int64_t at;
    uint64_t seq;  // ties at one time wake in the order they were added
    ThreadId thread;
    std::coroutine_handle<> handle;  // null: start the thread
    // The heap's order: the latest (at, seq) is "less", so the front is the earliest.
    bool operator<(const Wakeup& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  struct Event {
    int64_t at;
    FaultKind kind;
    ActorId actor;
    int64_t value;
  };

  void plan_faults();
  void submit_call(Ctx::CallAwaiter* a, std::coroutine_handle<> h);
  void add_wakeup(ThreadId t, int64_t at, std::coroutine_handle<> h);
  void process_due();
  void resume(ThreadId t, std::coroutine_handle<> h);
  void execute(PendingCall call);
  void apply_event(const Event& e);
  void finish_thread(Thread& t);
  void lose_key(uint64_t pick);
  bool paused(ActorId a) const;
  int64_t actor_time(ActorId a) const;
  // Appends an event; returns its index. call: the kCall event it is about (-1: none).
  size_t record(ThreadId t, EventKind kind, std::string text, int64_t call = -1,
                const Reply* reply = nullptr);
  // A fault or clock event of `fault`'s kind about `actor` (-1: thread t's actor, or none).
  size_t record_fault(ThreadId t, Fault fault, ActorId actor, std::string text, int64_t call = -1,
                      bool planned = false);
  const Argv& argv_of(const PendingCall& c) const { return trace_.events[c.event].argv; }
  std::vector<LoggedCommand> LoggedPrefix() const;  // the kept log, for a restart or failover
  std::string who(ThreadId t) const;

  WorldOptions options_;
  Backend& backend_;
  Strategy& strategy_;
  // One seed, two streams: the strategy draws from prng_, faults from fault_prng_, so a replayed
  // schedule (which draws nothing) meets the same faults as the run it replays.
  Prng prng_;
  Prng fault_prng_;
  int64_t now_;
  uint64_t seq_ = 0;
  std::vector<std::unique_ptr<Actor>> actors_;
  std::vector<std::unique_ptr<Thread>> threads_;
  std::vector<PendingCall> calls_;
  std::vector<Wakeup> wakeups_;  // a heap (std::push_heap): front() wakes first
  std::vector<Event> events_;    // sorted by time
  size_t next_event_ = 0;
  std::vector<std::pair<size_t, int64_t>> log_;  // executed calls: kCall event, time
  size_t snapshot_size_ = 0;
  bool outage_ = false;
  std::function<void(ThreadId)> applied_observer_;
  Trace trace_;
  std::string error_;
};

}  // namespace testbed::sim
