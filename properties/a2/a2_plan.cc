// The sequential workload's calls: each drawn from its mix and the client's memory
// (MakePlan), and shown as a caller writes it (Describe). a2_sequential.h.
#include "properties/a2/a2_sequential.h"

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include "model/json_text.h"
#include "sim/prng.h"

namespace testbed::props::a2 {
namespace {

using Json = nlohmann::json;
namespace m = model::a2;

const char* const kOps[] = {"append",        "claim",       "renew",        "complete",
                            "fail",          "read",        "readEvents",   "readState",
                            "putSnapshot",   "presenceSet", "presenceRead", "listSessions",
                            "listSnapshots", "markWatched"};
constexpr size_t kOpCount = sizeof(kOps) / sizeof(kOps[0]);

std::string CauseText(const std::optional<real::a2::Cause>& c) {
  return c ? absl::StrCat("{index:", c->index, ",attempt:", c->attempt, "}") : "";
}

std::string Quote(const std::string& s) { return model::JsonStringify(Json(s)); }

Json ValueFor(sim::Prng& rng, const Mix& mix, int i) {
  if (mix.adversarial && rng.chance({1, 2})) {
    static const std::vector<Json> kValues = [] {
      std::vector<Json> v;
      Json deep = Json::array();
      for (int d = 1; d < 1001; ++d) deep = Json::array({deep});
      v.push_back(deep);  // nested 1001 deep
      Json deep_obj = Json::object();
      for (int d = 1; d < 1001; ++d) deep_obj = Json{{"a", deep_obj}};
      v.push_back(deep_obj);
      v.push_back(Json::parse("[[[]],{},[{}]]"));
      v.push_back(Json{{"big", 9007199254740993.0}, {"z", -0.0}});
      v.push_back(Json::parse(R"({"b":1,"a":"caf\u00e9 \ud83d\ude00"})"));
      // A JavaScript string holding a lone surrogate (kept as its WTF-8 bytes; the port's
      // JSON.stringify writes "\ud83d"), and 2^53 + 1 as raw JSON text would carry it.
      v.push_back(Json{{"s", std::string("x\xED\xA0\xBDy")}});
      return v;
    }();
    return kValues[rng.below(kValues.size())];
  }
  return Json{{"n", i}};
}

// An index that names no event of the session: 0, or one past the frontier.
int64_t NoEvent(sim::Prng& rng, const m::Model& model, const std::string& session) {
  return rng.chance({1, 2}) ? 0 : model.frontier(session) + 1;
}

}  // namespace

namespace {

// append's events, or a retry of a batch sent before.
void PlanAppend(sim::Prng& rng, const Mix& mix, Memory& mem, const m::Model& model, int i,
                int64_t now, bool deep, Plan& p) {
  if (!mem.batches.empty() && rng.chance({1, 6})) {
    // A retry of a batch sent before (its ack lost, as the client would see it).
    const auto& b = mem.batches[rng.below(mem.batches.size())];
    p.session = b.first;
    p.events = b.second;
    if (rng.chance({1, 3}) && p.events.size() == 1) {  // stored and fresh ids mixed
      real::a2::NewEvent fresh = p.events[0];
      fresh.id = absl::StrCat("e", i, "-x");
      p.events.push_back(fresh);
    }
    return;
  }
  const int n = rng.chance({1, 12}) ? 0 : rng.chance({1, 3}) ? 2 : 1;
  for (int k = 0; k < n; ++k) {
    real::a2::NewEvent e;
    if (!rng.chance({1, 8})) e.id = absl::StrCat("e", i, "-", k);
    // A deep run's ids sometimes spell another argument of the call that stores them: the
    // session's name, a type, a flag.
    if (deep && rng.chance({1, 8})) {
      const std::string spelt[] = {p.session, "result", "cause", "0", "1"};
      e.id = spelt[rng.below(std::size(spelt))];
    }
    e.type = rng.chance({1, 2}) ? "task" : "note";
    e.payload = ValueFor(rng, mix, i);
    const uint64_t lane = rng.below(4);
    if (lane == 1) e.lane = "L1";
    if (lane == 2) e.lane = "L2";
    if (mix.boundaries && mem.empty_lane && lane == 3 && rng.chance({1, 2}))
      e.lane = "";  // a lane named ""
    e.settled = rng.chance({1, 6});
    if (deep && lane != 2) {  // a long lane with processed runs
      e.lane = "L1";
      e.settled = rng.chance({1, 3});
    }
    if (!mem.held.empty() && rng.chance({1, 6})) {
      const Held& h = mem.held[rng.below(mem.held.size())];
      if (h.session == p.session &&
          (mix.expired_own || !model.expired(h.session, h.index, h.attempt, now)))
        e.cause = real::a2::Cause{h.index, h.attempt, std::nullopt};
    }
    // A deep run's cause sometimes names no event: index 0, or one past the frontier.
    if (deep && e.cause && rng.chance({1, 3})) e.cause->index = NoEvent(rng, model, p.session);
    p.events.push_back(std::move(e));
  }
  mem.batches.emplace_back(p.session, p.events);
}

// complete's children: a retry of the completion, or new ones.
void PlanChildren(sim::Prng& rng, const Memory& mem, const Held& h, bool deep, int i, Plan& p) {
  auto done = mem.completions.find({h.session, h.index});
  if (done != mem.completions.end() && rng.chance({1, 2})) {
    p.children = done->second;  // a retry of the completion
  } else {
    const int n = static_cast<int>(rng.below(deep ? 5 : 3));
    for (int c = 0; c < n; ++c) {
      real::a2::ChildEvent ch;
      ch.id = absl::StrCat("c", i, "-", c);
      // A deep run's child sometimes takes an id the store already holds.
      if (deep && !mem.batches.empty() && rng.chance({1, 3})) {
        const auto& b = mem.batches[rng.below(mem.batches.size())];
        if (!b.second.empty() && b.second[0].id) ch.id = *b.second[0].id;
      }
      ch.type = deep && rng.chance({1, 4}) ? "cause" : "result";
      ch.payload = Json{{"of", h.index}};
      if (rng.chance({1, 3})) ch.lane = "L1";
      ch.settled = rng.chance({1, 4});
      p.children.push_back(std::move(ch));
    }
  }
}

// renew, complete or fail of a claim the client holds (or claim again when its lease ran out).
void PlanHeld(sim::Prng& rng, const Mix& mix, Memory& mem, const m::Model& model, int i,
              int64_t now, bool deep, Plan& p) {
  // The newest claim mostly; an older (perhaps stale) one when late calls are on.
  size_t k = mem.held.size() - 1;
  if (mix.late && rng.chance({1, 3})) k = rng.below(mem.held.size());
  const Held h = mem.held[k];
  if (!mix.expired_own && model.expired(h.session, h.index, h.attempt, now)) {
    p.op = "claim";  // the worker saw its lease run out and claims again
    return;
  }
  p.session = h.session;
  p.holder = h.holder;
  p.index = h.index;
  p.attempt = h.attempt;
  // A deep run's complete or fail sometimes names no event: index 0, or one past the
  // frontier.
  if (deep && p.op != "renew" && rng.chance({1, 4})) p.index = NoEvent(rng, model, p.session);
  if (p.op == "renew") {
    p.refs.push_back({h.index, h.attempt});
    p.ttl = kLeaseMs;
    // A renew from a worker that does not hold the claim.
    if (mix.boundaries && rng.chance({1, 5})) p.holder = h.holder == "w1" ? "w2" : "w1";
    // A deep run's renew names every claim held in the session, in an order of its own.
    if (deep) {
      for (const Held& o : mem.held)
        if (o.session == h.session && (o.index != h.index || o.attempt != h.attempt) &&
            std::none_of(p.refs.begin(), p.refs.end(),
                         [&o](const real::a2::ClaimRef& r) { return r.index == o.index; }))
          p.refs.push_back({o.index, o.attempt});
      for (size_t a = p.refs.size(); a > 1; --a) std::swap(p.refs[a - 1], p.refs[rng.below(a)]);
      if (rng.chance({1, 6})) p.ttl = 0;  // a renewal to now, which must not shorten a lease
    }
  } else if (p.op == "fail") {
    // Limits below, at and above the event's failure count.
    if (mix.boundaries) p.max_failures = rng.range(1, 3);
  } else if (p.op == "complete") {
    PlanChildren(rng, mem, h, deep, i, p);
    mem.completions[{h.session, h.index}] = p.children;
  }
  if (!mix.late && p.op != "renew") mem.held.erase(mem.held.begin() + static_cast<long>(k));
}

// The calls that need no claim: read, readEvents, putSnapshot, presenceSet, listSessions,
// markWatched.
void PlanOther(sim::Prng& rng, const Mix& mix, Memory& mem, const m::Model& model, int i,
               int64_t now, Plan& p) {
  if (p.op == "read") {
    const int64_t frontier = model.frontier(p.session);
    p.after = rng.range(0, frontier);
    if (rng.chance({1, 3})) p.through = rng.range(0, frontier + 1);
  } else if (p.op == "readEvents") {
    p.after = rng.range(0, model.frontier(p.session));
  } else if (p.op == "putSnapshot") {
    // Mostly an index the client has seen; sometimes one past the frontier.
    p.index =
        rng.range(0, model.frontier(p.session) + (mix.past_frontier && rng.chance({1, 4}) ? 2 : 0));
    p.state = ValueFor(rng, mix, i);
    if (!mix.adversarial) p.state = Json{{"upTo", p.index}};
  } else if (p.op == "presenceSet") {
    p.participant = rng.chance({1, 2}) ? "p1" : "p2";
    const int n = rng.chance({1, 4}) ? 2 : 1;
    for (int k = 0; k < n; ++k) {
      const std::string field = k == 0 ? (rng.chance({1, 2}) ? "cursor" : "status") : "typing";
      p.values.emplace_back(field, rng.chance({1, 5}) ? Json() : ValueFor(rng, mix, i));
    }
    p.seen = i;
    p.at = now - rng.range(0, 50);  // the sender's clock, behind the store's
    const auto last = mem.stamps.find({p.participant, p.values[0].first});
    if (mix.boundaries && last != mem.stamps.end() && rng.chance({1, 3}))
      p.at = last->second;  // a tie with the field's last stamp: the incoming write wins
    for (const auto& [field, v] : p.values) mem.stamps[{p.participant, field}] = p.at;
    p.ttl = kPresenceTtlMs;
  } else if (p.op == "listSessions") {
    p.limit = rng.range(1, 3);
    if (mem.cursor && rng.chance({1, 2})) p.cursor = mem.cursor;
    p.session = rng.chance({1, 2}) ? "" : "s";  // the prefix
  } else if (p.op == "markWatched") {
    p.ttl = rng.range(50, 400);
  }
}

}  // namespace

Plan MakePlan(sim::Prng& rng, const Mix& mix, Memory& mem, const m::Model& model, int i,
              int64_t now) {
  Plan p;
  int total = 0;
  for (int w : mix.weights) total += w;
  int roll = static_cast<int>(rng.below(static_cast<uint64_t>(total)));
  size_t op = 0;
  while (roll >= mix.weights[op]) roll -= mix.weights[op++];
  p.op = kOps[op];
  auto pick = [&rng](const std::vector<std::string>& v) { return v[rng.below(v.size())]; };
  p.session = mix.sessions.empty() ? "s1" : pick(mix.sessions);
  if (!mix.reducers.empty()) p.reducer = pick(mix.reducers);
  if (!mix.namespaces.empty()) p.ns = pick(mix.namespaces);
  p.holder = rng.chance({1, 2}) ? "w1" : "w2";
  const bool deep = mix.boundaries && mem.deep;  // Memory::deep
  // Calls that need a claim fall back to a claim when the client holds none.
  const bool needs_claim = p.op == "renew" || p.op == "complete" || p.op == "fail";
  if (!mix.late)  // a prompt worker lets go of a claim whose lease is about to run out
    std::erase_if(mem.held, [now](const Held& h) { return now - h.claimed_at >= kLeaseMs - 10; });
  if (needs_claim && mem.held.empty()) p.op = "claim";
  if (p.op == "append") {
    PlanAppend(rng, mix, mem, model, i, now, deep, p);
  } else if (p.op == "claim") {
    const int64_t frontier = model.frontier(p.session);
    if (frontier > 0 && rng.chance({1, 8})) p.exclude.push_back(rng.range(1, frontier));
  } else if (needs_claim) {
    PlanHeld(rng, mix, mem, model, i, now, deep, p);
  } else {
    PlanOther(rng, mix, mem, model, i, now, p);
  }
  return p;
}

std::string Describe(const Plan& p) {
  if (p.op == "append") {
    std::vector<std::string> evs;
    for (const real::a2::NewEvent& e : p.events)
      evs.push_back(absl::StrCat("{", e.id ? "id:" + *e.id + "," : "", e.type,
                                 e.lane ? ",lane:" + *e.lane : "", e.settled ? ",settled" : "",
                                 e.cause ? ",cause:" + CauseText(e.cause) : "", "}"));
    return absl::StrCat("append(", Quote(p.session), ", [", absl::StrJoin(evs, ", "), "])");
  }
  if (p.op == "claim")
    return absl::StrCat("claimAvailable(", Quote(p.session), ", holder ", p.holder, ", ttl ",
                        p.lease, p.exclude.empty() ? "" : ", exclude ",
                        absl::StrJoin(p.exclude, ","), ")");
  if (p.op == "renew") {
    std::vector<std::string> refs;
    for (const real::a2::ClaimRef& r : p.refs)
      refs.push_back(absl::StrCat(r.index, "/", r.attempt));
    return absl::StrCat("renewClaims(", Quote(p.session), ", holder ", p.holder, ", events ",
                        absl::StrJoin(refs, ","), ", ttl ", p.ttl, ")");
  }
  if (p.op == "complete") {
    std::vector<std::string> ids;
    for (const real::a2::ChildEvent& c : p.children) ids.push_back(c.id);
    return absl::StrCat("completeAttempt(", Quote(p.session), ", event ", p.index, " attempt ",
                        p.attempt, ", children [", absl::StrJoin(ids, ","), "])");
  }
  if (p.op == "fail")
    return absl::StrCat("failAttempt(", Quote(p.session), ", event ", p.index, " attempt ",
                        p.attempt, ")");
  if (p.op == "read")
    return absl::StrCat("read(", Quote(p.session), ", after ", p.after,
                        p.through ? absl::StrCat(", through ", *p.through) : "", ")");
  if (p.op == "readEvents")
    return absl::StrCat("readEvents(", Quote(p.session), ", after ", p.after, ")");
  if (p.op == "readState")
    return absl::StrCat("readState(", Quote(p.session), ", ", Quote(p.reducer), ")");
  if (p.op == "putSnapshot") {
    std::string state = model::JsonStringify(p.state);
    if (state.size() > 60)
      state = absl::StrCat(state.substr(0, 40), "... (", state.size(), " bytes)");
    return absl::StrCat("putSnapshot(", Quote(p.session), ", ", Quote(p.reducer), ", index ",
                        p.index, ", ", state, ")");
  }
  if (p.op == "presenceSet") {
    std::vector<std::string> vs;
    for (const auto& [f, v] : p.values) {
      std::string text = model::JsonStringify(v);
      if (text.size() > 60)
        text = absl::StrCat(text.substr(0, 40), "... (", text.size(), " bytes)");
      vs.push_back(absl::StrCat(f, ":", text));
    }
    return absl::StrCat("presence.set(", Quote(p.ns), ", ", p.participant, ", {",
                        absl::StrJoin(vs, ", "), "}, at ", p.at, ", ttl ", p.ttl, ")");
  }
  if (p.op == "presenceRead") return absl::StrCat("presence.read(", Quote(p.ns), ")");
  if (p.op == "listSessions")
    return absl::StrCat("listSessions(prefix ", Quote(p.session), ", limit ", p.limit,
                        p.cursor ? ", cursor " + Quote(*p.cursor) : "", ")");
  if (p.op == "listSnapshots") return absl::StrCat("listSnapshots(", Quote(p.session), ")");
  return absl::StrCat("markWatched(", Quote(p.session), ", ", p.ttl, ")");
}

}  // namespace testbed::props::a2
