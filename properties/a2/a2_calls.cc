#include "properties/a2/a2_calls.h"

#include <absl/strings/str_cat.h>

#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "checker/jepsen_history.h"
#include "model/json_text.h"
#include "sim/prng.h"

namespace testbed::props::a2 {

using checker::JepsenHistoryOf;
using checker::JepsenOp;
using checker::kNever;
namespace {

// Weights: append, claim, renew, complete, fail, read, readEvents, readState, putSnapshot,
// presenceSet, presenceRead, listSessions, listSnapshots, markWatched (the last two of them only
// in inspecting runs: kInspectMix).
const Mix kA2CallsMix = {{18, 16, 6, 12, 8, 5, 2, 2, 2, 7, 3, 0, 1, 0},
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
  Mix m = kA2CallsMix;
  m.weights[11] = 4;  // listSessions
  m.weights[13] = 4;  // markWatched
  m.sessions = kInspectedSessions;
  return m;
}();

// What a recorded client's claims got, and what the same claims got in this run.
struct ClaimedAs {
  using Event = std::tuple<std::string, int64_t, int64_t>;  // session, index, attempt
  std::set<Event> recorded;                                 // every event a recorded claim got
  std::map<Event, std::pair<int64_t, int64_t>> here;        // -> this run's (index, attempt)
};

// The k-th event of a recorded claim is the k-th event of the same claim in this run.
void LearnClaims(const TracePlans::Op& recorded, const Json& answer, ClaimedAs& claimed) {
  if (recorded.plan.op != "claim" || recorded.answer.value("outcome", "") != "claimed") return;
  const Json& was = recorded.answer["events"];
  const Json none = Json::array();
  const Json& is = answer.value("outcome", "") == "claimed" ? answer["events"] : none;
  for (size_t k = 0; k < was.size(); ++k) {
    const ClaimedAs::Event e = {recorded.plan.session, was[k].value("index", int64_t{0}),
                                was[k].value("attemptCount", int64_t{0})};
    claimed.recorded.insert(e);
    claimed.here.erase(e);
    if (k < is.size())
      claimed.here[e] = {is[k].value("index", int64_t{0}), is[k].value("attemptCount", int64_t{0})};
  }
}

// A recorded operation as this run's client makes it: the claims it names are the ones this
// run's claims got in their place. An operation that names a claim of its client's which this
// run's client did not get is not made (nullopt): a worker completes, fails, renews and causes
// only what it holds; a renewal keeps the claims it still names. A claim the recorded client
// named without having got it (a stale or made-up one) stays as recorded.
std::optional<Plan> AsThisRun(Plan p, const ClaimedAs& claimed) {
  auto mine = [&claimed, &p](int64_t& index, int64_t& attempt) {
    const ClaimedAs::Event e = {p.session, index, attempt};
    if (!claimed.recorded.count(e)) return true;
    const auto it = claimed.here.find(e);
    if (it == claimed.here.end()) return false;
    index = it->second.first;
    attempt = it->second.second;
    return true;
  };
  if ((p.op == "complete" || p.op == "fail") && !mine(p.index, p.attempt)) return std::nullopt;
  if (p.op == "renew") {
    std::erase_if(p.refs, [&mine](real::a2::ClaimRef& r) { return !mine(r.index, r.attempt); });
    if (p.refs.empty()) return std::nullopt;
  }
  for (real::a2::NewEvent& e : p.events)
    if (e.cause && !mine(e.cause->index, e.cause->attempt)) return std::nullopt;
  return p;
}

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
  const Mix& mix = inspecting ? kInspectMix : kA2CallsMix;
  // (A named pointer: g++ 12 mishandles some temporaries of a co_await expression.)
  Notified* const follow = inspecting ? &notified : nullptr;
  // A recorded trace's client: its operations, and the events its claims were answered with,
  // as this run's claims answer them (complete, fail, renew and a caused append name them).
  const std::vector<TracePlans::Op>* recorded =
      trace_ ? &trace_->clients.at(static_cast<size_t>(id)) : nullptr;
  ClaimedAs claimed;
  const int ops = recorded ? std::min<int>(s.ops, static_cast<int>(recorded->size())) : s.ops;
  for (int i = 0; i < ops; ++i) {
    if (s.skip.count({id, i})) continue;
    sim::Prng rng(sim::OpSeed(s.seed, id, i));
    const int64_t pause =
        recorded ? (*recorded)[static_cast<size_t>(i)].gap_ms : rng.range(0, kLeaseMs);
    co_await ctx.sleep(pause);
    const int64_t now = ctx.now_ms();
    std::optional<Plan> replayed;
    if (recorded) {
      replayed = AsThisRun((*recorded)[static_cast<size_t>(i)].plan, claimed);
      if (!replayed) continue;
    }
    Call c;
    c.actor = id;
    c.plan =
        recorded ? *std::move(replayed) : MakePlan(rng, mix, mem, planning_, id * 1000 + i, now);
    c.line = Describe(c.plan);
    c.now = now;
    c.ahead = now - ctx.world().now_ms();
    c.notify = inspecting;
    c.all_sessions = trace_ && trace_->all_sessions;
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
    if (recorded) LearnClaims((*recorded)[static_cast<size_t>(i)], answer, claimed);
    Learn(mem, done.plan, answer, now);
    ModelAnswer(planning_, done.plan, done.generated, now);
  }
}

// (a2_calls.h)
nlohmann::json LeaseAsMutex(const std::vector<Call>& calls, const std::string& session,
                            int64_t index) {
  std::vector<JepsenOp> ops;
  std::vector<std::string> unfit;
  std::map<int64_t, int> released;   // attempt -> acknowledged releases
  std::set<int64_t> maybe_released;  // attempts with a release of unknown outcome
  // Each attempt's lease end as the store keeps it (the claim's claimExpiresAt, moved by every
  // acknowledged renewal), on the callers' clocks the scripts compare it with; an attempt a
  // renewal without a reply may have moved is uncertain.
  std::map<int64_t, int64_t> lease_end;
  std::set<int64_t> uncertain;
  auto op = [](const Call& c, const char* f) {
    JepsenOp j{c.actor, c.invoke, c.ambiguous ? kNever : c.ret, c.inv_ms,
               c.ambiguous ? kNever : c.ret_ms};
    j.f = f;
    j.type = c.ambiguous ? "info" : "ok";
    return j;
  };
  for (const Call& c : calls) {
    if (c.plan.session != session) continue;
    if (c.plan.op == "claim" && !c.ambiguous && c.answer.value("outcome", "") == "claimed") {
      for (const Json& e : c.answer["events"]) {
        if (e.value("index", int64_t{0}) != index) continue;
        const int64_t attempt = e.value("attemptCount", int64_t{0});
        const Json end = e.value("claimExpiresAt", Json());
        if (end.is_number_integer()) lease_end[attempt] = end.get<int64_t>();
        const int64_t before = attempt - 1;
        // Attempt k with no release of attempt k - 1: taken while held (the mutex rejects it),
        // or after that lease ran out, which the store does by time, without an operation.
        if (attempt > 1 && !released.count(before) && !maybe_released.count(before)) {
          if (!lease_end.count(before) || uncertain.count(before))
            unfit.push_back(absl::StrCat("attempt ", attempt, " was claimed with no release of ",
                                         "attempt ", before,
                                         ", whose lease end the calls do "
                                         "not show (a claim or renewal without a reply)"));
          else if (c.now >= lease_end.at(before))
            unfit.push_back(absl::StrCat(
                "attempt ", before, "'s lease lapsed: attempt ", attempt,
                " was claimed after it ran out with no release, and the store frees a lease by "
                "time, without an operation a mutex has"));
        }
        ops.push_back(op(c, "acquire"));
      }
    } else if (c.plan.op == "renew") {
      for (const real::a2::ClaimRef& r : c.plan.refs) {
        if (r.index != index) continue;
        if (c.ambiguous) {
          uncertain.insert(r.attempt);
        } else if (c.answer.contains("renewed")) {
          for (const Json& i : c.answer["renewed"])
            if (i == Json(index) && lease_end.count(r.attempt))
              lease_end[r.attempt] = c.now + c.plan.ttl;
        }
      }
    } else if ((c.plan.op == "complete" || c.plan.op == "fail") && c.plan.index == index) {
      const int64_t attempt = c.plan.attempt;
      if (c.ambiguous) {
        if (!lease_end.count(attempt)) continue;  // a release of a lock it never held: refused
        maybe_released.insert(attempt);
        ops.push_back(op(c, "release"));
        continue;
      }
      const std::string outcome = c.answer.value("outcome", "");
      const bool done = !c.answer.contains("error") && outcome != "superseded" &&
                        (c.plan.op == "fail" || outcome == "completed");
      if (!done) continue;  // refused: not an operation of the lock
      if (released[attempt]++ > 0)
        unfit.push_back(absl::StrCat("attempt ", attempt, "'s ", c.plan.op,
                                     " was acknowledged again (the store replays a repeated "
                                     "release): a mutex is released once"));
      if (!lease_end.count(attempt))
        unfit.push_back(absl::StrCat("attempt ", attempt,
                                     " was released with no acknowledged claim of it (its "
                                     "claim's reply was lost)"));
      ops.push_back(op(c, "release"));
    }
  }
  std::sort(unfit.begin(), unfit.end());
  unfit.erase(std::unique(unfit.begin(), unfit.end()), unfit.end());
  return Json{{"fits", unfit.empty()}, {"history", JepsenHistoryOf(ops)}, {"unfit", unfit}};
}

}  // namespace testbed::props::a2
