#include "properties/a2/a2_calls.h"

#include <absl/strings/str_cat.h>

#include "model/json_text.h"
#include "sim/prng.h"

namespace testbed::props::a2 {
namespace {

// Weights: append, claim, renew, complete, fail, read, readEvents, readState, putSnapshot,
// presenceSet, presenceRead, listSessions, listSnapshots, markWatched (the last two of them only
// in inspecting runs: kInspectMix).
const Mix kMix = {{18, 16, 6, 12, 8, 5, 2, 2, 2, 7, 3, 0, 1, 0},
                  {kInspectedSession},
                  {"sum"},
                  {"room-1"},
                  /*late=*/true,
                  /*adversarial=*/false,
                  /*past_frontier=*/false,
                  /*expired_own=*/true,
                  /*boundaries=*/true};

// An inspecting run's mix (CallsRun::inspect): listSessions and markWatched too, on two
// sessions (kInspectedSessions): listSessions spans both, so its order, pages and cursors are
// judged, in one partition of the calls on both.
const Mix kInspectMix = [] {
  Mix m = kMix;
  m.weights[11] = 4;  // listSessions
  m.weights[13] = 4;  // markWatched
  m.sessions = kInspectedSessions;
  return m;
}();

}  // namespace

const Json* RowList(const Json& answer) {
  const Json* list = answer.is_array()                                 ? &answer
                     : answer.is_object() && answer.contains("events") ? &answer["events"]
                                                                       : nullptr;
  return list && list->is_array() ? list : nullptr;
}

bool ReadOnly(const std::string& op) {
  return op == "read" || op == "readEvents" || op == "readState" || op == "presenceRead" ||
         op == "listSnapshots" || op == "listSessions";
}

std::string Short(const Json& j) {
  std::string s = model::JsonStringify(j);
  if (s.size() > 240) s = absl::StrCat(s.substr(0, 200), "... (", s.size(), " bytes)");
  return s;
}

std::string CallText(const Call& c) {
  return absl::StrCat(Actor(c.actor), " ", Ms(c.inv_ms), "..",
                      c.ret_ms == kNever ? std::string("?") : Ms(c.ret_ms), " ", c.line, " -> ",
                      c.ambiguous ? std::string("? (no reply)") : Short(c.answer));
}

void CallsRun::Start(sim::World& world) {
  world_ = &world;
  for (int c = 0; c < env_.spec.clients; ++c)
    world.add_actor(Actor(c), [this, c](sim::Ctx& ctx) { return Client(ctx, c); });
}

sim::Task<void> CallsRun::Client(sim::Ctx& ctx, int id) {
  const RunSpec& s = env_.spec;
  size_t current = 0;
  uint64_t next_id = 0;
  Notified notified;
  real::a2::Store store(
      ctx, env_.bodies, kPrefix,
      [this, id, &current, &next_id] {
        calls_[current].generated.push_back(absl::StrCat("gen-", id, "-", next_id++));
        return calls_[current].generated.back();
      },
      [&notified](const std::string&, int64_t count) { notified.count = count; });
  Memory mem;
  // A quarter of the runs also append to the lane "" (it dominates the runs it is in).
  mem.empty_lane = sim::Prng(s.seed ^ 0x6c616e65ULL).chance({1, 4});
  // Half the runs go deep (Memory::deep).
  mem.deep = sim::Prng(s.seed ^ 0x64656570ULL).chance({1, 2});
  // A quarter of an inspecting property's runs list sessions and mark the session watched too
  // (kInspectMix), and follow notifications; the others, and every run of the others, make the
  // calls they made before it.
  const bool inspecting = inspect_ && sim::Prng(s.seed ^ 0x696e7370ULL).chance({1, 4});
  const Mix& mix = inspecting ? kInspectMix : kMix;
  // (A named pointer: g++ 12 mishandles some temporaries of a co_await expression.)
  Notified* const follow = inspecting ? &notified : nullptr;
  for (int i = 0; i < s.ops; ++i) {
    if (s.skip.count({id, i})) continue;
    sim::Prng rng(sim::OpSeed(s.seed, id, i));
    co_await ctx.sleep(rng.range(0, kLeaseMs));
    const int64_t now = ctx.now_ms();
    Call c;
    c.actor = id;
    c.plan = MakePlan(rng, mix, mem, planning_, id * 1000 + i, now);
    c.line = Describe(c.plan);
    c.now = now;
    c.ahead = now - ctx.world().now_ms();
    c.notify = inspecting;
    c.storage_now = ctx.world().now_ms();
    c.invoke = seq_++;
    c.inv_ms = Now();
    current = calls_.size();
    calls_.push_back(std::move(c));
    const int64_t resent_before = ctx.resent_calls();
    bool transport = false;
    // The plan by value: other clients' calls grow calls_ while this one waits, so a reference
    // into it would dangle when the call resumes.
    const Plan plan = calls_[current].plan;
    Json answer = co_await PerformCall(store, plan, &transport, follow);
    Call& done = calls_[current];
    done.ret = seq_++;
    done.ret_ms = Now();
    done.ambiguous = transport;
    done.resent = ctx.resent_calls() > resent_before;
    Normalize(done.plan.op, answer);
    if (!inspecting && answer.is_object()) answer.erase("notified");
    done.answer = answer;
    Learn(mem, done.plan, answer, now);
    ModelAnswer(planning_, done.plan, done.generated, now);
  }
}

}  // namespace testbed::props::a2
