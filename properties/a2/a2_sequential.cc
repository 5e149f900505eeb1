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

using Json = nlohmann::json;
namespace m = model::a2;

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
