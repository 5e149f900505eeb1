#include "properties/a2/a2_workload.h"

#include <absl/strings/str_cat.h>

#include <algorithm>

#include "sim/prng.h"

namespace testbed::props::a2 {

using checker::kNever;
namespace {

// The producer: appends of one or two events, some in lanes, some settled; a retry after a
// failure in transport reuses the batch's ids (append is idempotent by id). Then, once the
// workers had time to drain, a read of the whole session.
sim::Task<void> Producer(sim::Ctx& ctx, int id, uint64_t seed, int ops, const SkipSet* skip,
                         real::a2::Store& store, Recorder* rec) {
  for (int i = 0; i < ops; ++i) {
    if (skip->count({id, i})) continue;
    sim::Prng rng(sim::OpSeed(seed, id, i));
    co_await ctx.sleep(rng.range(0, 40));
    std::vector<real::a2::NewEvent> batch;
    const int n = rng.chance({1, 3}) ? 2 : 1;
    for (int k = 0; k < n; ++k) {
      real::a2::NewEvent e;
      e.id = absl::StrCat("e", id, "-", i, "-", k);
      e.type = rng.chance({1, 2}) ? "task" : "note";
      e.payload = Json::object();
      e.payload["op"] = i;
      e.payload["k"] = k;
      const uint64_t lane = rng.below(4);
      if (lane == 1) e.lane = "L1";
      if (lane == 2) e.lane = "L2";
      e.settled = rng.chance({1, 6});
      batch.push_back(std::move(e));
    }
    for (int attempt = 0; attempt < 2; ++attempt) {
      const int64_t inv = rec->now();
      try {
        const real::a2::AppendResult r = co_await store.append(kSession, batch);
        for (size_t k = 0; k < r.events.size() && k < batch.size(); ++k)
          rec->appends.push_back({id, *batch[k].id, batch[k].type, batch[k].payload, batch[k].lane,
                                  batch[k].settled, r.events[k].index, inv, rec->now()});
        break;
      } catch (const real::a2::A2Error& e) {
        if (!e.transport) break;
      } catch (const real::a2::TypeError&) {
        break;
      }
    }
  }
  co_await ctx.sleep(kHorizonMs / 2);
  rec->final_read_inv = rec->now();
  rec->final_reader = id;
  try {
    rec->final_read = co_await store.read(kSession);
  } catch (const real::a2::A2Error&) {
  } catch (const real::a2::TypeError&) {
  }
}

// The record goes in at invocation, with an unknown outcome, so a call whose caller crashed or
// was cut off by the horizon still counts as one that may have taken effect.
sim::Task<void> Settle(sim::Ctx& ctx, int id, real::a2::Store& store, sim::Prng& rng,
                       real::a2::StoredEvent ev, int64_t attempt, int i, Recorder* rec) {
  const bool complete = rng.chance({3, 4});
  SettleRec s;
  s.actor = id;
  s.op = complete ? "complete" : "fail";
  s.index = ev.index;
  s.attempt = attempt;
  s.inv = rec->now();
  s.unknown = true;
  const size_t at = rec->settles.size();
  rec->settles.push_back(s);
  std::string outcome;
  bool unknown = false;
  try {
    if (complete) {
      std::vector<real::a2::ChildEvent> children;
      if (rng.chance({1, 4})) {
        real::a2::ChildEvent c;
        c.id = absl::StrCat("c", id, "-", i, "-", ev.index);
        c.type = "result";
        c.payload = Json::object();
        c.payload["of"] = ev.index;
        children.push_back(std::move(c));
      }
      const real::a2::CompleteResult r =
          co_await store.complete_attempt(kSession, ev.index, attempt, std::move(children));
      outcome = r.outcome;
    } else {
      const real::a2::FailResult r =
          co_await store.fail_attempt(kSession, ev.index, attempt, "boom", kMaxFailures);
      outcome = r.outcome;
    }
  } catch (const real::a2::A2Error& e) {
    outcome = e.code;
    unknown = e.transport;
  } catch (const real::a2::TypeError&) {
    outcome = "TypeError";
  }
  rec->settles[at].outcome = outcome;
  rec->settles[at].unknown = unknown;
  rec->settles[at].ret = rec->now();
}

// An append caused by the worker's attempt, recorded like a settle (op "append"): accepted
// means "appended".
sim::Task<void> CausedAppend(int id, real::a2::Store& store, const real::a2::StoredEvent& ev, int i,
                             Recorder* rec) {
  SettleRec s;
  s.actor = id;
  s.op = "append";
  s.index = ev.index;
  s.attempt = ev.attempt_count;
  s.inv = rec->now();
  s.unknown = true;
  const size_t at = rec->settles.size();
  rec->settles.push_back(s);
  real::a2::NewEvent note;
  note.id = absl::StrCat("n", id, "-", i, "-", ev.index);
  note.type = "progress";
  note.payload = Json::object();
  note.payload["of"] = ev.index;
  note.cause = real::a2::Cause{ev.index, ev.attempt_count, std::nullopt};
  note.settled = true;
  std::vector<real::a2::NewEvent> batch;
  batch.push_back(std::move(note));
  std::string outcome;
  bool unknown = false;
  try {
    co_await store.append(kSession, std::move(batch));
    outcome = "appended";
  } catch (const real::a2::A2Error& e) {
    outcome = e.code;
    unknown = e.transport;
  } catch (const real::a2::TypeError&) {
    outcome = "TypeError";
  }
  rec->settles[at].outcome = outcome;
  rec->settles[at].unknown = unknown;
  rec->settles[at].ret = rec->now();
}

// A worker: claim, then for each claimed event work for 20 ms to 2.5 leases (renewing half
// way, some of the time), then complete it (with a child event, some of the time) or fail it.
sim::Task<void> Worker(sim::Ctx& ctx, int id, uint64_t seed, int ops, const SkipSet* skip,
                       bool caused_appends, real::a2::Store& store, Recorder* rec) {
  const std::string holder = absl::StrCat("worker-", id);
  for (int i = 0; i < ops; ++i) {
    if (skip->count({id, i})) continue;
    sim::Prng rng(sim::OpSeed(seed, id, i));
    co_await ctx.sleep(rng.range(0, 30));
    real::a2::ClaimOptions o;
    o.session_id = kSession;
    o.holder = holder;
    o.ttl_ms = kLeaseMs;
    const int64_t inv = rec->now();
    const int64_t offset = ctx.now_ms() - ctx.world().now_ms();  // this actor's clock skew
    real::a2::ClaimResult claim;
    try {
      claim = co_await store.claim_available(o);
    } catch (const real::a2::A2Error&) {
      continue;
    } catch (const real::a2::TypeError&) {
      continue;
    }
    if (claim.outcome != "claimed") continue;
    std::vector<size_t> mine;
    for (const real::a2::StoredEvent& e : claim.events) {
      rec->claims.push_back({id, e.index, e.attempt_count, inv, rec->now(),
                             e.claim_expires_at.value_or(0) - offset - rec->world->start_ms()});
      mine.push_back(rec->claims.size() - 1);
    }
    for (size_t k = 0; k < claim.events.size(); ++k) {
      const real::a2::StoredEvent& ev = claim.events[k];
      const int64_t work = rng.range(20, kLeaseMs * 5 / 2);
      if (work > kLeaseMs / 2 && rng.chance({1, 2})) {
        co_await ctx.sleep(kLeaseMs / 2);
        const int64_t renew_offset = ctx.now_ms() - ctx.world().now_ms();
        const int64_t renew_inv_clock = ctx.now_ms();
        try {
          std::vector<real::a2::ClaimRef> refs(1, real::a2::ClaimRef{ev.index, ev.attempt_count});
          const real::a2::RenewResult r =
              co_await store.renew_claims(kSession, holder, std::move(refs), kLeaseMs);
          if (std::find(r.renewed.begin(), r.renewed.end(), ev.index) != r.renewed.end()) {
            ClaimRec& c = rec->claims[mine[k]];
            c.lease_end = std::max(
                c.lease_end, renew_inv_clock + kLeaseMs - renew_offset - rec->world->start_ms());
          }
        } catch (const real::a2::A2Error&) {
        }
        co_await ctx.sleep(work - kLeaseMs / 2);
      } else {
        co_await ctx.sleep(work);
      }
      // Workload::kEventsWithCausedAppends: half the time the worker first appends an event
      // caused by its attempt (a progress note), from a stream of its own so the other draws
      // stay as they were.
      sim::Prng note_rng(sim::OpSeed(seed, id, i) ^ 0x6361757365ULL);
      if (caused_appends && note_rng.chance({1, 2})) co_await CausedAppend(id, store, ev, i, rec);
      co_await Settle(ctx, id, store, rng, ev, ev.attempt_count, i, rec);
    }
  }
}

// A presence writer: fields of one shared participant (one person's several tabs), stamped
// with the writer's clock and delivered 0 to 30 ms later, so deliveries reorder; a delete is a
// write of null. Client 0 reads once every write is done.
sim::Task<void> PresenceWriter(sim::Ctx& ctx, int id, uint64_t seed, int ops, const SkipSet* skip,
                               real::a2::Store& store, Recorder* rec) {
  for (int i = 0; i < ops; ++i) {
    if (skip->count({id, i})) continue;
    sim::Prng rng(sim::OpSeed(seed, id, i));
    co_await ctx.sleep(rng.range(0, 20));
    PresenceWrite w;
    w.actor = id;
    w.field = rng.chance({1, 2}) ? "cursor" : "status";
    if (!rng.chance({1, 5})) {
      w.value = Json::object();
      w.value["by"] = id;
      w.value["n"] = i;
    }
    w.at = ctx.now_ms();
    co_await ctx.sleep(rng.range(0, 30));  // in flight
    w.inv = rec->now();
    real::a2::PresenceMeta meta;
    meta.seen = i;
    meta.at = w.at;
    meta.ttl_ms = 60'000;
    std::vector<std::pair<std::string, Json>> values;
    values.emplace_back(w.field, w.value);
    // Recorded at invocation, unacknowledged: a write whose writer crashed before the reply
    // may have been applied.
    const size_t at = rec->presence.size();
    rec->presence.push_back(std::move(w));
    bool acked = false;
    try {
      co_await store.presence_set(kPresenceNs, "participant-1", std::move(values), meta);
      acked = true;
    } catch (const real::a2::A2Error&) {
    }
    rec->presence[at].acked = acked;
    rec->presence[at].ret = rec->now();
  }
  if (id != 0) co_return;
  co_await ctx.sleep(kHorizonMs / 2);
  rec->presence_read_inv = rec->now();
  try {
    rec->presence_read = co_await store.presence_read(kPresenceNs);
  } catch (const real::a2::A2Error&) {
  }
}

}  // namespace

void ConcurrentRun::Start(sim::World& world) {
  rec_.world = &world;
  for (int c = 0; c < env_.spec.clients; ++c)
    world.add_actor(Actor(c), [this, c](sim::Ctx& ctx) { return Client(ctx, c); });
}

sim::Task<void> ConcurrentRun::Client(sim::Ctx& ctx, int id) {
  const RunSpec& s = env_.spec;
  uint64_t next_id = 0;
  real::a2::Store store(ctx, env_.bodies, kPrefix,
                        [id, &next_id] { return absl::StrCat("gen-", id, "-", next_id++); });
  if (workload_ == Workload::kPresence)
    co_await PresenceWriter(ctx, id, s.seed, s.ops, &s.skip, store, &rec_);
  else if (id == 0)
    co_await Producer(ctx, id, s.seed, s.ops, &s.skip, store, &rec_);
  else
    co_await Worker(ctx, id, s.seed, s.ops, &s.skip,
                    workload_ == Workload::kEventsWithCausedAppends, store, &rec_);
}

std::string Actor(int id) { return absl::StrCat("client", id); }

Involved Involve(int actor, int64_t from, int64_t to, const std::string& op) {
  return {Actor(actor), from, to == kNever ? INT64_MAX : to, op};
}

Deadline LeaseEnd(const ClaimRec& c) {
  return {Actor(c.actor), c.lease_end,
          absl::StrCat("lease of ", Actor(c.actor), " (event ", c.index, ", attempt ", c.attempt,
                       ") ends")};
}

std::string Ms(int64_t t) { return absl::StrCat("+", t, "ms"); }

std::string ClaimText(const ClaimRec& c) {
  return absl::StrCat(Actor(c.actor), " claimed event ", c.index, " as attempt ", c.attempt,
                      " (call ", Ms(c.inv), " to ", Ms(c.ret), ", lease until ", Ms(c.lease_end),
                      ")");
}

// When a claim's holder let go of it: the first complete or fail it sent for that attempt.
int64_t ReleasedAt(const Recorder& r, const ClaimRec& c) {
  int64_t t = kNever;
  for (const SettleRec& s : r.settles)
    if (s.op != "append" && s.index == c.index && s.attempt == c.attempt && s.actor == c.actor)
      t = std::min(t, s.inv);
  return t;
}

}  // namespace testbed::props::a2
