// The simulation runtime: exploration counts match theory, PCT meets its probability bound,
// runs replay bit for bit, and every fault kind has a visible effect, the same on the emulator
// and on a spawned redis-server.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>
#include <set>

#include "real/real_backend.h"
#include "sim/runtime.h"
#include "sim/strategies.h"
#include "tests/toy/toy_system.h"

namespace testbed::sim {
namespace {

// A toy: each actor SETs its own keys `calls` times, logging the order of execution.
void AddToyActors(World& w, int actors, int calls, std::vector<std::string>* order,
                  bool same_key = false) {
  for (int a = 0; a < actors; ++a) {
    const std::string name(1, static_cast<char>('A' + a));
    w.add_actor(name, [=](Ctx& ctx) -> sim::Task<void> {
      for (int i = 1; i <= calls; ++i) {
        const std::string step = name + std::to_string(i);
        const std::string key = same_key ? std::string("x") : step;
        co_await ctx.cmd("SET", key, step);
        if (order) order->push_back(step);
      }
    });
  }
}

DfsResult ExploreToy(int actors, int calls, DfsOptions o, std::set<std::string>* finals = nullptr,
                     bool same_key = false) {
  return ExploreDfs(
      [&](Strategy& s, RunResult* r) {
        EmulatorBackend backend;
        World w(WorldOptions{}, backend, s);
        AddToyActors(w, actors, calls, nullptr, same_key);
        *r = w.run();
        if (finals) finals->insert(backend.describe_state(w.now_ms()));
        return false;
      },
      o);
}

// FailureOf<E>: the awaiter sees what `try { co_await t; } catch (const E&)` would see, whether
// the task ended with co_return Fail(...) (no throw) or threw; other errors still propagate.
sim::Task<int> Succeeds() { co_return 7; }
sim::Task<int> FailsByValue() { co_return sim::Fail(std::runtime_error("by value")); }
sim::Task<int> Throws() {
  throw std::runtime_error("thrown");
  co_return 0;
}
// Each result is bound to a name: g++ 12 destroys a temporary that holds a co_await's result
// twice when it lives on in the full expression.
sim::Task<void> Probe(std::vector<std::string>* seen) {
  auto show = [](const auto& e) { return e ? std::string(e->what()) : std::string("none"); };
  const std::optional<std::runtime_error> none =
      co_await sim::FailureOf<std::runtime_error>(Succeeds());
  seen->push_back(show(none));
  const std::optional<std::runtime_error> by_value =
      co_await sim::FailureOf<std::runtime_error>(FailsByValue());
  seen->push_back(show(by_value));
  const std::optional<std::exception> base =
      co_await sim::FailureOf<std::exception>(FailsByValue());
  seen->push_back(base ? "a std::exception" : "none");
  const std::optional<std::runtime_error> thrown =
      co_await sim::FailureOf<std::runtime_error>(Throws());
  seen->push_back(show(thrown));
  try {
    const std::optional<std::range_error> other =
        co_await sim::FailureOf<std::range_error>(FailsByValue());
    seen->push_back(other ? "caught as a range_error" : "swallowed");
  } catch (const std::runtime_error& e) {
    seen->push_back(std::string("propagated ") + e.what());
  }
}

TEST(FailureOf, ReturnsTheErrorAFailedTaskEndedWithAndPropagatesOthers) {
  std::vector<std::string> seen;
  sim::Task<void> t = Probe(&seen);
  t.handle().resume();  // nothing in it suspends: it runs to its end here
  ASSERT_TRUE(t.handle().done());
  EXPECT_FALSE(t.handle().promise().error);
  EXPECT_EQ(seen, (std::vector<std::string>{"none", "by value", "a std::exception", "thrown",
                                            "propagated by value"}));
}

TEST(Dfs, TwoActorsWithTwoAtomicCallsHaveExactlySixSchedules) {
  DfsResult r = ExploreToy(2, 2, {});
  EXPECT_TRUE(r.exhausted);
  EXPECT_EQ(r.schedules, 6);  // C(4, 2)
}

TEST(Dfs, PreemptionBoundsGiveTheCountsTheoryPredicts) {
  // Two threads of two steps: AABB and BBAA need no preemption; ABBA and BAAB one; ABAB and
  // BABA two.
  EXPECT_EQ(ExploreToy(2, 2, {.preemption_bound = 0}).schedules, 2);
  EXPECT_EQ(ExploreToy(2, 2, {.preemption_bound = 1}).schedules, 4);
  EXPECT_EQ(ExploreToy(2, 2, {.preemption_bound = 2}).schedules, 6);
  // Three threads of two steps: 6!/(2!2!2!) = 90 in all; with no preemption, 3! orders of
  // whole threads.
  EXPECT_EQ(ExploreToy(3, 2, {}).schedules, 90);
  EXPECT_EQ(ExploreToy(3, 2, {.preemption_bound = 0}).schedules, 6);
  // One step each: nothing to preempt, all 3! orders.
  EXPECT_EQ(ExploreToy(3, 1, {.preemption_bound = 0}).schedules, 6);
}

TEST(Dfs, StateHashingPrunesRevisitsWithoutLosingAnyReachableState) {
  // Writes to distinct keys commute: every order reaches the same state.
  DfsResult commuting = ExploreToy(2, 2, {.prune_visited_states = true});
  EXPECT_LT(commuting.schedules, 6);
  EXPECT_GT(commuting.pruned, 0);
  // Writes to one key do not: pruning must still reach every final state that full search does.
  std::set<std::string> all, pruned;
  DfsResult full = ExploreToy(2, 2, {}, &all, true);
  DfsResult cut = ExploreToy(2, 2, {.prune_visited_states = true}, &pruned, true);
  EXPECT_EQ(full.schedules, 6);
  EXPECT_LE(cut.schedules, full.schedules);
  EXPECT_EQ(pruned, all);
}

// A depth-2 ordering bug: B1 must run after A1 and before A2.
bool PlantedBugHit(Strategy& s, uint64_t seed) {
  std::vector<std::string> order;
  EmulatorBackend backend;
  WorldOptions o;
  o.seed = seed;
  World w(o, backend, s);
  AddToyActors(w, 3, 3, &order);
  w.run();
  auto pos = [&](const std::string& x) {
    return std::find(order.begin(), order.end(), x) - order.begin();
  };
  return pos("A1") < pos("B1") && pos("B1") < pos("A2");
}

TEST(Pct, FindsAPlantedDepthTwoBugAtLeastAsOftenAsItsBoundPromises) {
  const int n = 3, k = 9, d = 2, runs = 1000;
  int hits = 0, depth_one_hits = 0;
  for (uint64_t seed = 1; seed <= runs; ++seed) {
    Pct pct(d, k);
    hits += PlantedBugHit(pct, seed) ? 1 : 0;
    Pct strict(1, k);
    depth_one_hits += PlantedBugHit(strict, seed) ? 1 : 0;
  }
  const double bound = 1.0 / (n * std::pow(k, d - 1));
  std::printf("PCT d=2: %d / %d runs hit (bound %.4f -> %.1f expected at least)\n", hits, runs,
              bound, bound * runs);
  EXPECT_GE(hits, static_cast<int>(std::ceil(bound * runs)));
  // Without a change point PCT runs threads by strict priority: a depth-2 bug is out of reach,
  // which shows the planted bug really needs two ordering constraints.
  EXPECT_EQ(depth_one_hits, 0);
}

// The toy counter (tests/toy/), through the seam as `check` runs it: v1's read-modify-write
// race, every client renewing a lease from a child thread.
testbed::props::RunOutcome RunToy(Strategy* s, uint64_t seed, const std::string& faults,
                                  int clients, int ops) {
  static const std::unique_ptr<testbed::props::System> toy = testbed::toy::MakeCounterSystem();
  static const testbed::real::ScriptCatalog none;
  testbed::props::RunSpec spec;
  spec.property = "no-lost-increment";
  spec.version = "v1";
  spec.seed = seed;
  spec.clients = clients;
  spec.ops = ops;
  spec.faults = FaultList::Parse(faults);
  return toy->Run(spec, none, nullptr, s);
}

RunResult RunCounter(Strategy& s, uint64_t seed, const std::string& faults) {
  const testbed::props::RunOutcome o = RunToy(&s, seed, faults, 3, 5);
  RunResult r = o.run;
  r.trace_hash = o.trace_hash();
  return r;
}

TEST(Determinism, ThreeSeedsWithEveryFaultKindReplayToTheSameTraceHash) {
  std::set<std::string> distinct;
  for (uint64_t seed : {1, 2, 3}) {
    RandomWalk s1, s2;
    const RunResult first = RunCounter(s1, seed, "all");
    const RunResult second = RunCounter(s2, seed, "all");
    EXPECT_EQ(first.trace_hash, second.trace_hash) << "seed " << seed;
    EXPECT_GT(first.steps, 10);
    EXPECT_TRUE(first.error.empty()) << first.error;
    distinct.insert(first.trace_hash);
  }
  EXPECT_EQ(distinct.size(), 3u);
}

TEST(Strategies, FindTheCounterRaceAndDfsCountsTheSchedulesItExplored) {
  // Random walk: some seed in 20 loses an increment.
  int lost = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    RandomWalk walk;
    lost += RunToy(&walk, seed, "none", 2, 2).violated ? 1 : 0;
  }
  EXPECT_GT(lost, 0);
  // DFS explores every schedule within its preemption bound: with one preemption it finds the
  // race, and without a bound it explores more schedules than with none.
  auto explore = [](int bound) {
    return ExploreDfs(
        [](Strategy& s, RunResult* r) {
          const testbed::props::RunOutcome o = RunToy(&s, 1, "none", 2, 2);
          *r = o.run;
          return o.violated;
        },
        {.preemption_bound = bound});
  };
  const DfsResult none = explore(0), one = explore(1), all = explore(-1);
  EXPECT_TRUE(none.exhausted);
  EXPECT_GT(none.schedules, 0);
  EXPECT_GT(one.violations, 0);
  EXPECT_GE(one.schedules, none.schedules);
  EXPECT_GT(all.schedules, none.schedules);
}

TEST(Replay, RecordedChoicesReproduceARandomWalkExactly) {
  RandomWalk walk;
  const std::string f = "latency,lost-reply";
  const RunResult original = RunCounter(walk, 9, f);
  std::vector<size_t> picks;
  for (auto [n, pick] : original.choices) picks.push_back(pick);
  Replay replay(picks);
  const RunResult again = RunCounter(replay, 9, f);
  EXPECT_EQ(again.choices, original.choices);
  EXPECT_EQ(again.trace_hash, original.trace_hash);
  Replay wrong(std::vector<size_t>(picks.size(), 7));
  EXPECT_THROW(RunCounter(wrong, 9, f), ReplayDiverged);
}

// ---- faults, each in both worlds ----

struct Observed {
  std::vector<std::string> notes;
  void add(const std::string& s) { notes.push_back(s); }
};

std::string Show(const sim::CallResult& r) {
  if (auto* reply = std::get_if<sim::Reply>(&r)) return reply->debug();
  return "transport:" + std::get<sim::TransportError>(r).what;
}

struct FaultCase {
  std::string name;
  FaultOptions options;
  std::function<void(World&, Observed&)> build;
  std::function<void(const Observed&)> check;
};

// A case that makes one call, notes its reply and how long it took, then makes another.
std::function<void(World&, Observed&)> OneCall(sim::Argv first, sim::Argv then) {
  return [=](World& w, Observed& obs) {
    w.add_actor("A", [=, &obs](Ctx& ctx) -> sim::Task<void> {
      const int64_t t0 = ctx.now_ms();
      obs.add(Show(co_await ctx.call(first)));
      obs.add("elapsed " + std::to_string(ctx.now_ms() - t0));
      obs.add(Show(co_await ctx.call(then)));
    });
  };
}

// A request or reply lost, late or held back on the network.
void NetworkFaultCases(std::vector<FaultCase>& cases) {
  FaultOptions lost_request;
  lost_request.lost_request = {1, 1};
  cases.push_back({"lost-request", lost_request, OneCall({"SET", "k", "v"}, {"GET", "k"}),
                   [](const Observed& o) {
                     EXPECT_EQ(o.notes[0], "transport:timeout");
                     EXPECT_EQ(o.notes[1], "elapsed 250");
                     EXPECT_EQ(o.notes[2], "transport:timeout");  // every call is lost
                   }});
  FaultOptions lost_reply;
  lost_reply.lost_reply = {1, 2};
  cases.push_back({"lost-reply", lost_reply,
                   [](World& w, Observed& obs) {
                     w.add_actor("A", [&obs](Ctx& ctx) -> sim::Task<void> {
                       for (int i = 0; i < 20; ++i) {
                         sim::CallResult r = co_await ctx.cmd("SET", "k" + std::to_string(i), "v");
                         sim::CallResult g = co_await ctx.cmd("GET", "k" + std::to_string(i));
                         obs.add(Show(r) + " then " + Show(g));
                       }
                     });
                   },
                   [](const Observed& o) {
                     // Some SET replies are lost although the write was applied: ambiguous.
                     bool ambiguous = false;
                     for (const auto& n : o.notes) ambiguous |= n == "transport:timeout then \"v\"";
                     EXPECT_TRUE(ambiguous) << ::testing::PrintToString(o.notes);
                   }});
  FaultOptions latency;
  latency.latency_ms_min = latency.latency_ms_max = 7;
  cases.push_back(
      {"latency", latency, OneCall({"SET", "k", "v"}, {"GET", "k"}), [](const Observed& o) {
         EXPECT_EQ(o.notes[1], "elapsed 7");
         EXPECT_EQ(o.notes[2], "\"v\"");
       }});
  FaultOptions delay;
  delay.delayed_request = {1, 1};
  delay.delay_ms_max = 50;
  cases.push_back({"delay", delay,
                   [](World& w, Observed& obs) {
                     for (std::string who : {"a", "b", "c", "d"})
                       w.add_actor(who, [who](Ctx& ctx) -> sim::Task<void> {
                         co_await ctx.cmd("ZADD", "order", std::to_string(ctx.now_ms()), who);
                       });
                     w.add_actor("reader", [&obs](Ctx& ctx) -> sim::Task<void> {
                       co_await ctx.sleep(200);
                       obs.add(Show(co_await ctx.cmd("ZRANGE", "order", "0", "-1")));
                     });
                   },
                   [](const Observed& o) {
                     // All four were sent at the same instant; delays reorder their execution,
                     // and the reader's own call was delayed too but still runs after 200 ms.
                     ASSERT_EQ(o.notes.size(), 1u);
                     EXPECT_NE(o.notes[0].find("\"a\""), std::string::npos);
                   }});
}

// A client paused, crashed or on a clock of its own.
void ClientFaultCases(std::vector<FaultCase>& cases) {
  FaultOptions none;
  cases.push_back({"pause", none,
                   [](World& w, Observed& obs) {
                     const ActorId a = w.add_actor("A", [&obs](Ctx& ctx) -> sim::Task<void> {
                       co_await ctx.cmd("SET", "lease", "A", "PX", "100");
                       co_await ctx.sleep(10);
                       obs.add("after pause " +
                               std::to_string(ctx.now_ms() - sim::kDefaultEpochMs));
                       obs.add(Show(co_await ctx.cmd("GET", "lease")));
                     });
                     w.schedule(FaultKind::kPause, 5, a, 500);
                   },
                   [](const Observed& o) {
                     EXPECT_EQ(o.notes[0], "after pause 505");
                     EXPECT_EQ(o.notes[1], "(nil)");  // the lease expired during the pause
                   }});
  cases.push_back({"crash", none,
                   [](World& w, Observed& obs) {
                     const ActorId a = w.add_actor("A", [](Ctx& ctx) -> sim::Task<void> {
                       ctx.spawn("renew", [](Ctx& c) -> sim::Task<void> {
                         while (true) {
                           co_await c.cmd("SET", "lease", "A", "PX", "100");
                           co_await c.sleep(50);
                         }
                       });
                       co_await ctx.sleep(100000);
                     });
                     w.add_actor("B", [&obs](Ctx& ctx) -> sim::Task<void> {
                       co_await ctx.sleep(110);
                       obs.add(Show(co_await ctx.cmd("PTTL", "lease")));
                       co_await ctx.sleep(300);
                       obs.add(Show(co_await ctx.cmd("GET", "lease")));
                     });
                     w.schedule(FaultKind::kCrash, 120, a);
                   },
                   [](const Observed& o) {
                     EXPECT_EQ(o.notes[0], "(integer) 90");  // renewed at 100 ms
                     EXPECT_EQ(o.notes[1], "(nil)");         // no renewal after the crash
                   }});
  FaultOptions skew;
  skew.clock_skew_ms_max = 500;
  cases.push_back({"skew", skew,
                   [](World& w, Observed& obs) {
                     for (std::string who : {"A", "B", "C"})
                       w.add_actor(who, [&obs](Ctx& ctx) -> sim::Task<void> {
                         obs.add(std::to_string(ctx.now_ms() - ctx.world().now_ms()));
                         co_await ctx.cmd("PING");
                       });
                   },
                   [](const Observed& o) {
                     std::set<std::string> offsets(o.notes.begin(), o.notes.end());
                     EXPECT_GT(offsets.size(), 1u);  // the actors disagree about the time
                   }});
  cases.push_back({"clock-jump", none,
                   [](World& w, Observed& obs) {
                     const ActorId a = w.add_actor("A", [&obs](Ctx& ctx) -> sim::Task<void> {
                       const int64_t before = ctx.now_ms();
                       co_await ctx.sleep(20);
                       obs.add(std::to_string(ctx.now_ms() - before));
                       co_await ctx.cmd("PING");
                     });
                     w.schedule(FaultKind::kClockJump, 10, a, 5000);
                   },
                   [](const Observed& o) { EXPECT_EQ(o.notes[0], "5020"); }});
}

// The server restarted, failed over or out of reach.
void ServerFaultCases(std::vector<FaultCase>& cases) {
  const FaultOptions none = {};
  cases.push_back({"restart", none,
                   [](World& w, Observed& obs) {
                     w.add_actor("A", [&obs](Ctx& ctx) -> sim::Task<void> {
                       co_await ctx.cmd("SET", "a", "1");
                       sim::CallResult sha = co_await ctx.cmd("SCRIPT", "LOAD", "return 1");
                       co_await ctx.sleep(20);
                       co_await ctx.cmd("SET", "b", "1");
                       co_await ctx.sleep(20);
                       obs.add(Show(co_await ctx.cmd("GET", "a")));
                       obs.add(Show(co_await ctx.cmd("GET", "b")));
                       obs.add(
                           Show(co_await ctx.cmd("EVALSHA", std::get<sim::Reply>(sha).str, "0")));
                     });
                     w.schedule(FaultKind::kSnapshot, 10);
                     w.schedule(FaultKind::kRestart, 30);
                   },
                   [](const Observed& o) {
                     EXPECT_EQ(o.notes[0], "\"1\"");  // before the snapshot: kept
                     EXPECT_EQ(o.notes[1], "(nil)");  // acknowledged, then lost
                     EXPECT_EQ(o.notes[2], "(error) NOSCRIPT No matching script. Please use EVAL.");
                   }});
  cases.push_back({"failover", none,
                   [](World& w, Observed& obs) {
                     w.add_actor("A", [&obs](Ctx& ctx) -> sim::Task<void> {
                       co_await ctx.cmd("SET", "a", "1");
                       co_await ctx.cmd("SET", "b", "1");
                       co_await ctx.sleep(10);
                       obs.add(Show(co_await ctx.cmd("GET", "a")));
                       obs.add(Show(co_await ctx.cmd("GET", "b")));
                     });
                     w.schedule(FaultKind::kFailover, 5, -1, 1);
                   },
                   [](const Observed& o) {
                     EXPECT_EQ(o.notes[0], "\"1\"");
                     EXPECT_EQ(o.notes[1], "(nil)");  // the replica was one command behind
                   }});
  cases.push_back({"outage", none,
                   [](World& w, Observed& obs) {
                     w.add_actor("A", [&obs](Ctx& ctx) -> sim::Task<void> {
                       co_await ctx.sleep(15);
                       obs.add(Show(co_await ctx.cmd("SET", "k", "v")));
                       co_await ctx.sleep(10);
                       obs.add(Show(co_await ctx.cmd("SET", "k", "v")));
                     });
                     w.schedule(FaultKind::kOutageStart, 10);
                     w.schedule(FaultKind::kOutageEnd, 20);
                   },
                   [](const Observed& o) {
                     EXPECT_EQ(o.notes[0], "transport:connection refused (outage)");
                     EXPECT_EQ(o.notes[1], "OK");
                   }});
}

// Reordered requests, lost keys, SCAN's duplicates, and re-sent requests.
void OrderAndDataFaultCases(std::vector<FaultCase>& cases) {
  const FaultOptions none = {};
  FaultOptions reorder;
  reorder.reordered_request = {1, 2};
  reorder.reorder_ms_max = 100;
  cases.push_back({"reorder", reorder,
                   [](World& w, Observed& obs) {
                     // Two connections each append ten entries "<connection><sent at, ms>".
                     for (std::string who : {"A", "B"})
                       w.add_actor(who, [who, &obs](Ctx& ctx) -> sim::Task<void> {
                         int timeouts = 0;
                         for (int i = 0; i < 10; ++i) {
                           const std::string sent =
                               std::to_string(10000 + ctx.now_ms() - sim::kDefaultEpochMs);
                           sim::CallResult r = co_await ctx.cmd("XADD", "s", "*", "n", who + sent);
                           timeouts += std::holds_alternative<sim::TransportError>(r);
                         }
                         obs.add(who + " timeouts " + std::to_string(timeouts));
                       });
                     w.add_actor("reader", [&obs](Ctx& ctx) -> sim::Task<void> {
                       co_await ctx.sleep(10000);
                       for (int tries = 0; tries < 20; ++tries) {  // its own call may be held
                         sim::CallResult r = co_await ctx.cmd("XRANGE", "s", "-", "+");
                         if (auto* reply = std::get_if<sim::Reply>(&r)) {
                           for (const sim::Reply& e : reply->elements)
                             obs.add(e.elements.at(1).elements.at(1).str);
                           break;
                         }
                       }
                     });
                   },
                   [](const Observed& o) {
                     ASSERT_EQ(o.notes.size(), 22u);
                     EXPECT_NE(o.notes[0].find("timeouts"), std::string::npos);
                     EXPECT_NE(o.notes[0], "A timeouts 0");
                     // Every call was applied. One connection is FIFO: each connection's entries
                     // are in the order it sent them, although calls timed out and were applied
                     // late. Across connections, a held-back call is overtaken by a call the
                     // other connection sent later.
                     std::map<char, std::string> last;
                     bool overtaken = false;
                     std::string latest_sent;
                     for (size_t i = 2; i < o.notes.size(); ++i) {
                       const std::string& e = o.notes[i];
                       const std::string sent = e.substr(1);
                       EXPECT_LE(last[e[0]], sent) << "connection " << e[0] << " out of order";
                       last[e[0]] = sent;
                       overtaken |= sent < latest_sent;
                       latest_sent = std::max(latest_sent, sent);
                     }
                     EXPECT_TRUE(overtaken) << ::testing::PrintToString(o.notes);
                   }});
  cases.push_back({"key-loss", none,
                   [](World& w, Observed& obs) {
                     w.add_actor("A", [&obs](Ctx& ctx) -> sim::Task<void> {
                       co_await ctx.cmd("HSET", "h", "a", "1", "b", "2");
                       co_await ctx.cmd("ZADD", "z", "1", "m");
                       co_await ctx.cmd("XADD", "s", "1-0", "f", "v");
                       co_await ctx.cmd("SET", "k", "v");
                       co_await ctx.sleep(20);
                       obs.add(Show(co_await ctx.cmd("HGETALL", "h")));
                       obs.add(Show(co_await ctx.cmd("KEYS", "*")));
                     });
                     // 4: keys h, k, s, z -> h; then 4 / 4 = 1: an element (1 % 3 != 0), the
                     // first of the sorted fields a, b.
                     w.schedule(FaultKind::kKeyLoss, 10, -1, 4);
                   },
                   [](const Observed& o) { EXPECT_EQ(o.notes[0], "[\"b\", \"2\"]"); }});
  FaultOptions scan_duplicate;
  scan_duplicate.scan_duplicate = {1, 1};
  cases.push_back({"scan-duplicates", scan_duplicate,
                   [](World& w, Observed& obs) {
                     w.add_actor("A", [&obs](Ctx& ctx) -> sim::Task<void> {
                       co_await ctx.cmd("SET", "a", "1");
                       co_await ctx.cmd("SET", "b", "1");
                       sim::CallResult r = co_await ctx.cmd("SCAN", "0", "COUNT", "100");
                       std::vector<std::string> keys;
                       for (const sim::Reply& k : std::get<sim::Reply>(r).elements.at(1).elements)
                         keys.push_back(k.str);
                       std::sort(keys.begin(), keys.end());
                       for (const auto& k : keys) obs.add(k);
                     });
                   },
                   [](const Observed& o) {
                     ASSERT_EQ(o.notes.size(), 3u);  // a and b, one of them twice
                     EXPECT_TRUE(o.notes[0] == o.notes[1] || o.notes[1] == o.notes[2]);
                   }});
  FaultOptions resend;
  resend.resent_request = {1, 1};
  resend.resend_ms_max = 10;
  cases.push_back({"resend", resend, OneCall({"HINCRBY", "h", "n", "1"}, {"HGET", "h", "n"}),
                   [](const Observed& o) {
                     // Applied, re-sent after the reconnect and applied again: the caller sees
                     // the second reply, within the reconnect's 10 ms.
                     EXPECT_EQ(o.notes[0], "(integer) 2");
                     EXPECT_LE(std::stoi(o.notes[1].substr(8)), 10) << o.notes[1];
                     EXPECT_EQ(o.notes[2], "\"2\"");  // a GET applied twice changes nothing
                   }});
}

std::vector<FaultCase> FaultCases() {
  std::vector<FaultCase> cases;
  NetworkFaultCases(cases);
  ClientFaultCases(cases);
  ServerFaultCases(cases);
  OrderAndDataFaultCases(cases);
  return cases;
}

RunResult RunCase(const FaultCase& c, Backend& backend, Observed& obs) {
  RandomWalk walk;
  WorldOptions o;
  o.seed = 5;
  o.horizon_ms = 20000;
  o.faults = c.options;
  World w(o, backend, walk);
  c.build(w, obs);
  return w.run();
}

class Faults : public ::testing::TestWithParam<size_t> {};

TEST_P(Faults, HaveTheirEffectOnTheEmulatorAndTheSameRepliesOnRedisServer) {
  const FaultCase c = FaultCases()[GetParam()];
  SCOPED_TRACE(c.name);
  Observed on_emulator, on_redis;
  EmulatorBackend emulator;
  const RunResult sim = RunCase(c, emulator, on_emulator);
  ASSERT_TRUE(sim.error.empty()) << sim.error;
  c.check(on_emulator);
  real::RedisServer server(sim::kDefaultEpochMs);
  real::RealBackend real(server);
  const RunResult live = RunCase(c, real, on_redis);
  c.check(on_redis);
  EXPECT_EQ(on_emulator.notes, on_redis.notes);
  EXPECT_EQ(sim.trace_hash, live.trace_hash) << "the same schedule must trace the same";
}

INSTANTIATE_TEST_SUITE_P(EveryKind, Faults, ::testing::Range<size_t>(0, sim::kFaultCount),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           std::string n = FaultCases()[info.param].name;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

// One actor is one connection: two of its threads' calls run in the order they were sent, even
// when the first is delayed in the network or held back past its timeout (the old scheduler let
// the later call overtake, an order ioredis and hiredis cannot produce). Other actors overtake.
TEST(Faults, OneConnectionRunsItsCallsInTheOrderItSentThem) {
  for (const char* kind : {"delay", "reorder"})
    for (uint64_t seed = 1; seed <= 40; ++seed) {
      sim::EmulatorBackend b;
      RandomWalk walk;
      WorldOptions o;
      o.seed = seed;
      o.faults = FaultOptions::Parse(kind);
      o.faults.delayed_request = o.faults.delayed_request.numerator ? Ratio{1, 2} : Ratio{0, 1};
      o.faults.reordered_request = o.faults.reordered_request.numerator ? Ratio{1, 2} : Ratio{0, 1};
      World w(o, b, walk);
      w.add_actor("A", [](Ctx& ctx) -> sim::Task<void> {
        const ThreadId child = ctx.spawn("child", [](Ctx& c) -> sim::Task<void> {
          co_await c.sleep(1);  // sent 1 ms after the main thread's call
          co_await c.cmd("XADD", "order", "*", "n", "second");
        });
        co_await ctx.cmd("XADD", "order", "*", "n", "first");
        co_await ctx.join(child);
      });
      w.run();
      const sim::Reply r = b.execute({"XRANGE", "order", "-", "+"}, w.now_ms());
      ASSERT_EQ(r.elements.size(), 2u) << kind << " seed " << seed;
      EXPECT_EQ(r.elements[0].elements.at(1).elements.at(1).str, "first")
          << kind << " seed " << seed;
    }
}

TEST(Faults, EveryKindTheCliOffersHasATest) {
  std::set<std::string> tested;
  for (const auto& c : FaultCases()) tested.insert(c.name);
  for (const auto& k : FaultOptions::Kinds()) EXPECT_TRUE(tested.count(k)) << k;
  EXPECT_THROW(FaultOptions::Parse("lost-request,bogus"), std::invalid_argument);
}

}  // namespace
}  // namespace testbed::sim
