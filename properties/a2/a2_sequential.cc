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

constexpr int64_t kPresenceTtlMs = 1000;  // one ttlMs for every presence write (model choice)

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

namespace {

// The port's results in model/a2.h's shapes.
Json CauseJson(const std::optional<real::a2::Cause>& c) {
  if (!c) return Json();
  Json j = {{"index", c->index}, {"attempt", c->attempt}};
  if (c->batch_size) j["batchSize"] = *c->batch_size;
  return j;
}
template <typename T>
Json Opt(const std::optional<T>& v) {
  return v ? Json(*v) : Json();
}
Json EventRow(const real::a2::Event& e) {
  return Json{{"id", e.id},
              {"type", e.type},
              {"payload", e.payload},
              {"index", e.index},
              {"sessionId", e.session_id},
              {"createdAt", e.created_at}};
}
Json StoredRow(const real::a2::StoredEvent& e) {
  Json j = EventRow(e);
  j["cause"] = CauseJson(e.cause);
  j["lane"] = Opt(e.lane);
  j["processedAt"] = Opt(e.processed_at);
  j["processedByAttempt"] = Opt(e.processed_by_attempt);
  j["returnedEventIds"] = Opt(e.returned_event_ids);
  j["firstClaimedAt"] = Opt(e.first_claimed_at);
  j["lastClaimedAt"] = Opt(e.last_claimed_at);
  j["attemptCount"] = e.attempt_count;
  j["claimHolder"] = Opt(e.claim_holder);
  j["claimExpiresAt"] = Opt(e.claim_expires_at);
  j["failureCount"] = e.failure_count;
  j["lastFailedAt"] = Opt(e.last_failed_at);
  j["lastFailedAttempt"] = Opt(e.last_failed_attempt);
  j["lastError"] = Opt(e.last_error);
  j["failedAt"] = Opt(e.failed_at);
  return j;
}
Json Rows(const std::vector<real::a2::StoredEvent>& rows) {
  Json out = Json::array();
  for (const auto& r : rows) out.push_back(StoredRow(r));
  return out;
}
Json Events(const std::vector<real::a2::Event>& rows) {
  Json out = Json::array();
  for (const auto& r : rows) out.push_back(EventRow(r));
  return out;
}

// The call on the port; the answer in model/a2.h's shape. notified: null when the caller does
// not follow notifications.
sim::Task<Json> Perform(real::a2::Store& store, const Plan& p, Notified* notified,
                        bool* transport) {
  if (notified) notified->count.reset();
  *transport = false;
  Json out;
  try {
    if (p.op == "append") {
      const real::a2::AppendResult r = co_await store.append(p.session, p.events);
      out = Json{{"events", Rows(r.events)}, {"hasPending", r.has_pending}};
    } else if (p.op == "claim") {
      real::a2::ClaimOptions o;
      o.session_id = p.session;
      o.holder = p.holder;
      o.ttl_ms = p.lease;
      o.exclude_indexes = p.exclude;
      const real::a2::ClaimResult r = co_await store.claim_available(o);
      out = Json{{"outcome", r.outcome}};
      if (r.outcome == "claimed") out["events"] = Rows(r.events);
      if (r.outcome == "busy") out["retryAt"] = r.retry_at;
    } else if (p.op == "renew") {
      const real::a2::RenewResult r =
          co_await store.renew_claims(p.session, p.holder, p.refs, p.ttl);
      out = Json{{"renewed", r.renewed}, {"superseded", r.superseded}};
    } else if (p.op == "complete") {
      const real::a2::CompleteResult r =
          co_await store.complete_attempt(p.session, p.index, p.attempt, p.children);
      out = Json{{"outcome", r.outcome}};
      if (r.outcome == "completed") out["events"] = Rows(r.events);
    } else if (p.op == "fail") {
      const real::a2::FailResult r =
          co_await store.fail_attempt(p.session, p.index, p.attempt, p.error, p.max_failures);
      out = Json{{"outcome", r.outcome}, {"failureCount", r.failure_count}};
    } else if (p.op == "read") {
      out = Rows(co_await store.read(p.session, p.after, p.through));
    } else if (p.op == "readEvents") {
      out = Events(co_await store.read_events(p.session, p.after));
    } else if (p.op == "readState") {
      const real::a2::StateRead r = co_await store.read_state(p.session, p.reducer);
      out = Json{{"snapshot", Json()}, {"events", Events(r.events)}};
      if (r.snapshot)
        out["snapshot"] = Json{{"index", r.snapshot->index}, {"state", r.snapshot->state}};
    } else if (p.op == "putSnapshot") {
      co_await store.put_snapshot(p.session, p.reducer, p.index, p.state);
      out = Json::object();
    } else if (p.op == "presenceSet") {
      real::a2::PresenceMeta meta;
      meta.seen = p.seen;
      meta.at = p.at;
      meta.ttl_ms = p.ttl;
      const std::optional<real::a2::PresencePatch> r =
          co_await store.presence_set(p.ns, p.participant, p.values, meta);
      if (r)
        out = Json{{"participant", r->participant},
                   {"values", r->values},
                   {"seen", r->seen},
                   {"at", r->at}};
    } else if (p.op == "presenceRead") {
      out = Json::array();
      for (const real::a2::PresenceRow& row : co_await store.presence_read(p.ns))
        out.push_back(Json{{"participant", row.participant},
                           {"field", row.field},
                           {"value", row.value},
                           {"seen", row.seen},
                           {"at", row.at},
                           {"expiresAt", row.expires_at}});
    } else if (p.op == "listSessions") {
      const real::a2::SessionPage page = co_await store.list_sessions(p.session, p.limit, p.cursor);
      out = Json{{"sessions", Json::array()}, {"cursor", Opt(page.cursor)}};
      for (const real::a2::SessionSummary& s : page.sessions)
        out["sessions"].push_back(Json{{"sessionId", s.session_id},
                                       {"eventCount", s.event_count},
                                       {"pendingCount", s.pending_count},
                                       {"failedCount", s.failed_count},
                                       {"attemptCount", s.attempt_count},
                                       {"failureCount", s.failure_count},
                                       {"firstEventAt", s.first_event_at},
                                       {"updatedAt", s.updated_at}});
    } else if (p.op == "listSnapshots") {
      out = Json::array();
      for (const real::a2::SnapshotInfo& s : co_await store.list_snapshots(p.session))
        out.push_back(Json{
            {"reducerName", s.reducer_name}, {"index", Opt(s.index)}, {"updatedAt", s.updated_at}});
    } else {
      co_await store.mark_watched(p.session, p.ttl);
      out = Json::object();
    }
  } catch (const real::a2::A2Error& e) {
    out = Json{{"error", e.code}};
    *transport = e.transport;
  } catch (const real::a2::TypeError&) {
    out = Json{{"error", "TypeError"}};
  }
  if (notified && ((p.op == "append" && !out.contains("error")) ||
                   (p.op == "complete" && out.value("outcome", "") == "completed")))
    out["notified"] = Opt(notified->count);
  co_return out;
}

}  // namespace

sim::Task<Json> PerformCall(real::a2::Store& store, const Plan& p, bool* transport,
                            Notified* notified) {
  Json out = co_await Perform(store, p, notified, transport);
  co_return out;
}

Json ModelAnswer(m::Model& model, const Plan& p, const std::vector<std::string>& generated,
                 int64_t now) {
  if (p.op == "append") {
    std::vector<m::AppendIn> in;
    size_t g = 0;
    for (const real::a2::NewEvent& e : p.events) {
      m::AppendIn a;
      a.id = e.id                   ? *e.id
             : g < generated.size() ? generated[g++]
                                    : absl::StrCat("unresolved-", g++);
      a.type = e.type;
      a.payload = e.payload;
      if (e.cause) a.cause = m::CauseIn{e.cause->index, e.cause->attempt, e.cause->batch_size};
      a.lane = e.lane;
      a.settled = e.settled;
      in.push_back(std::move(a));
    }
    return model.append(p.session, in, now);
  }
  if (p.op == "claim") return model.claim(p.session, p.holder, now, now + p.lease, p.exclude);
  if (p.op == "renew") {
    std::vector<std::pair<int64_t, int64_t>> refs;
    for (const real::a2::ClaimRef& r : p.refs) refs.emplace_back(r.index, r.attempt);
    return model.renew(p.session, p.holder, refs, now, now + p.ttl);
  }
  if (p.op == "complete") {
    std::vector<m::ChildIn> in;
    for (const real::a2::ChildEvent& c : p.children)
      in.push_back(m::ChildIn{c.id, c.type, c.payload, c.lane, c.settled});
    return model.complete(p.session, p.index, p.attempt, in, now);
  }
  if (p.op == "fail")
    return model.fail(p.session, p.index, p.attempt, p.error, p.max_failures, now);
  if (p.op == "read") return model.read(p.session, p.after, p.through);
  if (p.op == "readEvents") return model.read_events(p.session, p.after);
  if (p.op == "readState") return model.read_state(p.session, p.reducer);
  if (p.op == "putSnapshot") return model.put_snapshot(p.session, p.reducer, p.index, p.state, now);
  if (p.op == "presenceSet")
    return model.presence_set(p.ns, p.participant, p.values, p.seen, p.at, p.ttl, now);
  if (p.op == "presenceRead") return model.presence_read(p.ns, now);
  if (p.op == "listSessions") return model.list_sessions(p.session, p.limit, p.cursor);
  if (p.op == "listSnapshots") return model.list_snapshots(p.session);
  model.mark_watched(p.session, p.ttl, now);
  return Json::object();
}

void Normalize(const std::string& op, Json& answer) {
  if (op == "presenceRead" && answer.is_array())
    std::sort(answer.begin(), answer.end(), [](const Json& a, const Json& b) {
      return std::make_pair(a["participant"], a["field"]) <
             std::make_pair(b["participant"], b["field"]);
    });
  if (op == "listSessions" && answer.contains("sessions"))
    std::sort(answer["sessions"].begin(), answer["sessions"].end(),
              [](const Json& a, const Json& b) { return a["sessionId"] < b["sessionId"]; });
}

void Learn(Memory& mem, const Plan& p, const Json& answer, int64_t now) {
  if (p.op == "claim" && answer.value("outcome", "") == "claimed")
    for (const Json& e : answer["events"])
      mem.held.push_back(
          {p.session, p.holder, e["index"].get<int64_t>(), e["attemptCount"].get<int64_t>(), now});
  if (p.op == "listSessions" && answer.contains("cursor"))
    mem.cursor = answer["cursor"].is_null() ? std::nullopt
                                            : std::optional(answer["cursor"].get<std::string>());
  if (mem.held.size() > 6) mem.held.erase(mem.held.begin());
  if (p.op == "presenceSet" && answer.is_object() && answer.contains("values")) {
    for (const auto& [field, v] : answer["values"].items()) {
      if (v.is_null())
        mem.presence_rows.erase({p.participant, field});  // HDEL: no stamp stays
      else
        mem.presence_rows[{p.participant, field}] = {p.at, now + p.ttl};
    }
    mem.presence_key_end[p.ns] = now + p.ttl;
  }
  mem.pruned.clear();
  if (p.op == "presenceRead") {
    for (auto it = mem.presence_rows.begin(); it != mem.presence_rows.end();) {
      if (it->second.second <= now) {
        mem.pruned.emplace_back(p.ns, it->first.first, it->first.second, it->second.first);
        it = mem.presence_rows.erase(it);
      } else {
        ++it;
      }
    }
  }
  mem.wrote_sessions =
      (p.op == "append" && answer.is_object() && answer.contains("events") &&
       !answer["events"].empty()) ||
      (p.op == "complete" && answer.is_object() && answer.value("outcome", "") == "completed");
}

namespace {

// Isolation: the same calls under names free of ':', '*' and emptiness, on a second key prefix.
std::string Plain(const std::string& name) {
  std::string out = "n";
  for (unsigned char c : name) absl::StrAppend(&out, absl::Hex(c));
  return out;
}
Plan Renamed(Plan p) {
  p.session = p.op == "listSessions" ? p.session : Plain(p.session);
  p.reducer = Plain(p.reducer);
  p.ns = Plain(p.ns);
  return p;
}
// The plain-named answer with its names mapped back, to compare with the adversarial one.
void MapBack(Json& answer, const Plan& original, const Mix& mix) {
  if (answer.is_array()) {
    for (Json& a : answer) MapBack(a, original, mix);
    return;
  }
  if (!answer.is_object()) return;
  if (answer.contains("sessionId")) answer["sessionId"] = original.session;
  if (answer.contains("reducerName")) {
    for (const std::string& r : mix.reducers)
      if (answer["reducerName"] == Plain(r)) answer["reducerName"] = r;
  }
  for (auto& [k, v] : answer.items())
    if (v.is_array() || v.is_object()) MapBack(v, original, mix);
}

// Mix::expiry_edges: the renew `p` made with ttl 0, or sent 1 ms before, at or after the lease
// end of the claim it names first (the model's claimExpiresAt); the presence read sent 1 ms
// before, at or after a row's expiresAt (the earliest row's a quarter of the time, so that
// later rows keep the key alive after it); a quarter of the presence sets made older than a
// stamp the store holds (a sender whose clock is behind) and sent 1 ms before, at or after
// that row's expiry, or at the namespace key's last millisecond or the one after; or either
// left as it was. After a call that wrote the sessions index, a quarter of the time the next
// call lists the first session alone (a page boundary right after the write); after a presence
// read that found rows expired, half the time the next call writes one of their fields with a
// stamp older than the pruned one.
sim::Task<void> AimAtExpiryEdge(sim::Ctx& ctx, const RunSpec& spec, int i, const m::Model& model,
                                const Memory& mem, Plan& p) {
  sim::Prng edge(sim::OpSeed(spec.seed, 0, i) ^ 0x65646765ULL);  // "edge"
  sim::Prng page(sim::OpSeed(spec.seed, 0, i) ^ 0x70616765ULL);  // "page"
  if (mem.wrote_sessions && page.chance({1, 4})) {
    Plan list;
    list.op = "listSessions";
    list.limit = 1;
    p = std::move(list);
    co_return;
  }
  if (!mem.pruned.empty() && page.chance({1, 2})) {
    // A write older than the stamp the read before it pruned.
    const auto& [ns, participant, field, stamp] = mem.pruned[page.below(mem.pruned.size())];
    Plan set;
    set.op = "presenceSet";
    set.ns = ns;
    set.participant = participant;
    set.values = {{field, Json{{"n", i}}}};
    set.seen = i;
    set.at = stamp - 1;
    set.ttl = kPresenceTtlMs;
    p = std::move(set);
    co_return;
  }
  const uint64_t pick = edge.below(4);
  std::optional<int64_t> target;
  if (p.op == "renew") {
    if (pick == 1) p.ttl = 0;
    if (pick >= 2 && !p.refs.empty()) {
      const Json row = model.read(p.session, p.refs[0].index - 1, p.refs[0].index);
      if (!row.empty() && row[0]["claimExpiresAt"].is_number_integer())
        target = row[0]["claimExpiresAt"].get<int64_t>() + edge.range(-1, 1);
    }
  } else if (p.op == "presenceRead" && pick >= 2) {
    const Json rows = model.presence_read(p.ns, ctx.now_ms());
    if (!rows.empty()) {
      size_t r = edge.below(rows.size());
      if (pick == 3)
        for (size_t k = 0; k < rows.size(); ++k)
          if (rows[k]["expiresAt"] < rows[r]["expiresAt"]) r = k;
      target = rows[r]["expiresAt"].get<int64_t>() + edge.range(-1, 1);
    }
  } else if (p.op == "presenceSet" && pick >= 2 && !mem.presence_rows.empty()) {
    const auto row = std::next(mem.presence_rows.begin(),
                               static_cast<long>(edge.below(mem.presence_rows.size())));
    p.participant = row->first.first;
    p.values.resize(1);
    p.values[0].first = row->first.second;
    p.at = row->second.first - 1;
    const auto end = mem.presence_key_end.find(p.ns);
    if (pick == 2)
      target = row->second.second + edge.range(-1, 1);
    else if (end != mem.presence_key_end.end())
      target = end->second + edge.range(0, 1);
  }
  if (target && *target > ctx.now_ms()) co_await ctx.sleep(*target - ctx.now_ms());
}

}  // namespace

sim::Task<void> SequentialClient(sim::Ctx& ctx, const RunSpec& spec,
                                 const real::a2::Scripts& scripts, const Mix& mix, Against against,
                                 SequentialLog* log) {
  const bool isolation = against == Against::kPlainNames;
  std::vector<std::string> generated, generated_plain;
  uint64_t next_id = 0, next_plain = 0;
  Notified notified, notified_plain;
  real::a2::Store store(
      ctx, scripts, "a2",
      [&generated, &next_id] {
        generated.push_back(absl::StrCat("gen-", next_id++));
        return generated.back();
      },
      [&notified](const std::string&, int64_t count) { notified.count = count; });
  real::a2::Store plain(
      ctx, scripts, "b2",
      [&generated_plain, &next_plain] {
        generated_plain.push_back(absl::StrCat("gen-", next_plain++));
        return generated_plain.back();
      },
      [&notified_plain](const std::string&, int64_t count) { notified_plain.count = count; });
  m::Model model;
  Memory mem;
  for (int i = 0; i < spec.ops; ++i) {
    if (spec.skip.count({0, i})) continue;
    sim::Prng rng(sim::OpSeed(spec.seed, 0, i));
    // Pauses around the lease: half the calls come within a lease of the last, half later.
    int64_t pause = rng.range(0, 2 * kLeaseMs);
    if (!mix.late) pause = rng.range(0, kLeaseMs / 4);
    co_await ctx.sleep(pause);
    Plan p = MakePlan(rng, mix, mem, model, i, ctx.now_ms());
    if (mix.expiry_edges) co_await AimAtExpiryEdge(ctx, spec, i, model, mem, p);
    const int64_t now = ctx.now_ms();
    SequentialStep step;
    step.op = p.op;
    step.call = Describe(p);
    step.at = ctx.world().now_ms() - ctx.world().start_ms();
    generated.clear();
    bool transport = false;
    step.trace_from = ctx.world().trace().events.size();
    Json answer = co_await Perform(store, p, &notified, &transport);
    step.trace_to = ctx.world().trace().events.size();
    step.plan = p;
    step.now = now;
    step.generated = generated;
    if (isolation) {
      generated_plain.clear();
      const Plan q = Renamed(p);
      step.model = co_await Perform(plain, q, &notified_plain, &transport);
      MapBack(step.model, p, mix);
    } else {
      step.model = ModelAnswer(model, p, generated, now);
    }
    Learn(mem, p, answer, now);
    step.store = std::move(answer);
    Normalize(p.op, step.store);
    Normalize(p.op, step.model);
    log->steps.push_back(std::move(step));
  }
}

namespace {

std::string Short(const Json& j) {
  std::string s = model::JsonStringify(j);
  if (s.size() > 300) s = absl::StrCat(s.substr(0, 240), "... (", s.size(), " bytes)");
  return s;
}

std::string Ms(int64_t t) { return absl::StrCat("+", t, "ms"); }

// An answer in brief: each row as "#index id".
Json Brief(const Json& j) {
  if (j.is_object() && j.contains("index") && j.contains("id") && j.contains("createdAt"))
    return absl::StrCat("#", j["index"].dump(), " ",
                        j["id"].is_string() ? j["id"].get<std::string>() : "");
  if (j.is_array() || j.is_object()) {
    Json out = j;
    for (auto& [k, v] : out.items()) v = Brief(v);
    return out;
  }
  return j;
}

// Where two answers differ: "path: store X, model Y" (RFC 6902 paths).
std::string Difference(const Json& store, const Json& model) {
  std::vector<std::string> parts;
  for (const Json& op : Json::diff(model, store)) {
    const std::string path = op["path"].get<std::string>();
    const Json want = op["op"] == "add" ? Json("(absent)") : model.at(Json::json_pointer(path));
    const Json got = op["op"] == "remove" ? Json("(absent)") : op["value"];
    parts.push_back(absl::StrCat(path.empty() ? "/" : path, ": ", Short(Brief(got)),
                                 " (model: ", Short(Brief(want)), ")"));
    if (parts.size() == 6) break;
  }
  return absl::StrJoin(parts, "; ");
}

std::string Lines(const std::vector<SequentialStep>& steps, size_t upto) {
  // The calls up to and including the one that disagrees, the last few of them.
  std::string out;
  const size_t from = upto >= 6 ? upto - 6 : 0;
  for (size_t k = from; k <= upto; ++k)
    absl::StrAppend(&out, Ms(steps[k].at), " ", steps[k].call, " -> ", Short(Brief(steps[k].store)),
                    "\n");
  return out;
}

}  // namespace

std::vector<AnomalyClass> Disagreements(const std::string& prefix, const std::string& what,
                                        std::vector<AnomalyClass> out) {
  static const char* const kCalls[] = {
      "append",       "claim",        "renew",         "complete",    "fail",
      "read",         "readEvents",   "readState",     "putSnapshot", "presenceSet",
      "presenceRead", "listSessions", "listSnapshots", "markWatched"};
  for (const char* c : kCalls) out.push_back({prefix + c, absl::StrCat(c, " ", what)});
  return out;
}

void SequentialRun::Start(sim::World& world) {
  world.add_actor(Actor(0), [this](sim::Ctx& ctx) {
    return SequentialClient(ctx, env_.spec, env_.bodies, mix_, against_, &log_);
  });
}

void SequentialRun::Check(sim::World&, RunOutcome& out) {
  for (size_t k = 0; k < log_.steps.size(); ++k) {
    const SequentialStep& s = log_.steps[k];
    const std::string cls = classify_(log_.steps, k);
    if (cls.empty()) continue;
    if (cls == kDiverged) break;  // the model no longer describes the store
    out.findings.push_back(
        {cls,
         absl::StrCat(Lines(log_.steps, k), "the last call differs from ",
                      against_ == Against::kPlainNames ? "the same call under plain names"
                                                       : "the model (model/a2.h)",
                      ": ", Difference(s.store, s.model)),
         {},
         {{"client0", s.at, s.at}}});
    break;  // after the first disagreement the model no longer describes the store
  }
}

}  // namespace testbed::props::a2
