// calls-linearizable's model of the a2 store (calls_linearizable.cc says what it takes on): the
// partition a call belongs to, what model/a2 answers to it, the step function the search runs,
// and the calls as a history. Internal to calls_linearizable.cc.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "checker/linearizability.h"
#include "checker/nearest_order.h"
#include "model/a2.h"
#include "properties/a2/a2_calls.h"

namespace testbed::props::a2::calls_linearizable {

using checker::CallHistory;
using checker::kNever;
using checker::Operation;
namespace m = model::a2;

std::string Partition(const Call& c) {
  const Plan& p = c.plan;
  if (p.op == "presenceSet" || p.op == "presenceRead") return "presence:" + p.ns;
  // An inspecting run has two sessions, and its listSessions spans both (their order, pages
  // and cursors): one partition.
  if (c.notify) return "sessions:" + absl::StrJoin(kInspectedSessions, ",");
  if (c.all_sessions) return "sessions";
  return "session:" + p.session;
}

// The instants of the storage clock the call may have run at: from when it was sent to when
// its reply came (with no reply, or re-sent: any time after it was sent).
std::pair<int64_t, int64_t> StorageSpan(const Call& c) {
  const bool open = c.ambiguous || c.resent || c.ret_ms == kNever;
  return {c.storage_now, open ? kNever : c.storage_now + (c.ret_ms - c.inv_ms)};
}

// The model's answer to a call, as the store's answers are kept. A caller that follows
// notifications (Call::notify) gets "notified" judged on the storage clock (rule 12): the
// marker ends its ttl after the instant the store ran markWatched, and a write notifies when
// the store ran it by then; where the instants the calls may have run at leave both open, the
// caller's answer is taken if it is one of the two.
Json Answered(m::Model& model, const Call& c) {
  const int64_t before = model.frontier(c.plan.session);
  Json a = ModelAnswer(model, c.plan, c.generated, c.now);
  Normalize(c.plan.op, a);
  if (!a.is_object()) return a;
  if (!c.notify) {
    a.erase("notified");
    return a;
  }
  const auto [lo, hi] = StorageSpan(c);
  if (c.plan.op == "markWatched")
    model.mark_watched_between(c.plan.session, lo + c.plan.ttl,
                               hi == kNever ? kNever : hi + c.plan.ttl);
  const int64_t count = model.frontier(c.plan.session);
  if (a.contains("notified") && count > before) {  // a write that appended events
    const int watched = model.watched_between(c.plan.session, lo, hi);
    const Json got = c.answer.is_object() ? c.answer.value("notified", Json()) : Json();
    a["notified"] = watched > 0                           ? Json(count)
                    : watched < 0                         ? Json()
                    : got.is_null() || got == Json(count) ? got
                                                          : Json(count);
  }
  return a;
}

// The linearizability model: a state is the model's, a step one call.
struct CallsModel {
  using State = m::Model;
  using Op = const Call*;
  using Answer = Json;
  unsigned weaknesses = 0;  // model/a2.h's Weakness: only ever to name a finding
  State init() const { return m::Model(weaknesses); }
  bool read_only(Op c) const { return ReadOnly(c->plan.op); }
  std::vector<std::pair<State, int64_t>> step(const State& s, Op c, int64_t lo, int64_t,
                                              bool ambiguous) const {
    State next = s;
    const Json a = Answered(next, *c);
    if (!ambiguous && a != c->answer) return {};
    std::vector<std::pair<State, int64_t>> out;
    out.emplace_back(std::move(next), lo);
    return out;
  }
  Json explain(const State& s, Op c, bool ambiguous, std::vector<State>& next) const {
    State n = s;
    const Json a = Answered(n, *c);
    if (ambiguous || a == c->answer) next.push_back(std::move(n));
    return a;
  }
  void append_key(const State& s, std::string& out) const { s.append_key(out); }
};

using History = CallHistory<CallsModel>;
using Stuck = checker::Stuck<CallsModel>;

// The calls as a history: a re-sent call also as an ambiguous twin (it may have taken effect
// once more, before the reply its caller got).
History MakeHistory(const std::vector<Call>& calls) {
  History h;
  for (const Call& c : calls) {
    Operation<const Call*> o;
    o.partition = Partition(c);
    o.actor = c.actor;
    o.invoke = c.invoke;
    o.ret = c.ambiguous ? kNever : c.ret;
    o.invoke_ms = 0;  // the model's answers do not depend on the linearization point
    o.ret_ms = kNever;
    o.ambiguous = c.ambiguous;
    o.op = &c;
    h.push_back(o);
    if (c.resent && !ReadOnly(c.plan.op)) {
      o.ambiguous = true;
      o.ret = kNever;
      h.push_back(o);
    }
  }
  return h;
}

}  // namespace testbed::props::a2::calls_linearizable
