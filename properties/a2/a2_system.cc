#include "properties/a2/a2_system.h"

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include <algorithm>
#include <map>
#include <optional>

#include "model/json_text.h"
#include "properties/a2/a2_sequential.h"
#include "real/a2/store.h"
#include "real/real_backend.h"
#include "sim/prng.h"
#include "sim/runtime.h"

namespace testbed::props::a2_system {
namespace {

using a2::Json;

constexpr int64_t kNever = INT64_MAX;
// A short lease, so that work (20 ms to 2.5 leases), renewals, pauses and skews are all of one
// scale in virtual time.
constexpr int64_t kLeaseMs = 100;
constexpr int64_t kHorizonMs = 4000;
constexpr int64_t kMaxFailures = 3;
constexpr const char* kSession = "session-1";
constexpr const char* kPrefix = "a2";
constexpr const char* kPresenceNs = "room-1";

// Times are the world's (real, virtual) ms since the run's start.
struct ClaimRec {
  int actor = 0;
  int64_t index = 0, attempt = 0;
  int64_t inv = 0, ret = 0;
  int64_t lease_end = 0;  // real time: the expiry asked for, then extended by renewals
};
struct SettleRec {
  int actor = 0;
  std::string op;  // complete, fail
  int64_t index = 0, attempt = 0;
  int64_t inv = 0, ret = kNever;
  std::string outcome;   // completed, superseded, failed, dead_lettered, or an error code
  bool unknown = false;  // failed in transport: it may have taken effect
};
struct AppendRec {
  int actor = 0;
  std::string id, type;
  Json payload;
  std::optional<std::string> lane;
  bool settled = false;
  int64_t index = 0;
  int64_t inv = 0, ret = 0;
};
struct PresenceWrite {
  int actor = 0;
  std::string field;
  Json value;  // null: a delete
  int64_t at = 0;
  int64_t inv = 0, ret = kNever;
  bool acked = false;
};

struct Recorder {
  sim::World* world = nullptr;
  std::string property;
  std::vector<ClaimRec> claims;
  std::vector<SettleRec> settles;
  std::vector<AppendRec> appends;
  std::optional<std::vector<a2::StoredEvent>> final_read;
  int64_t final_read_inv = 0;
  int final_reader = 0;
  std::vector<PresenceWrite> presence;
  std::optional<std::vector<a2::PresenceRow>> presence_read;
  int64_t presence_read_inv = 0;
  int64_t now() const { return world->now_ms() - world->start_ms(); }
};

bool PresenceWorkload(const std::string& property) { return property == "presence-lww"; }

std::string Actor(int id) { return absl::StrCat("client", id); }

// The producer: appends of one or two events, some in lanes, some settled; a retry after a
// failure in transport reuses the batch's ids (append is idempotent by id). Then, once the
// workers had time to drain, a read of the whole session.
Task<void> Producer(sim::Ctx& ctx, int id, uint64_t seed, int ops, const SkipSet* skip,
                    a2::Store& store, Recorder* rec) {
  for (int i = 0; i < ops; ++i) {
    if (skip->count({id, i})) continue;
    Prng rng(OpSeed(seed, id, i));
    co_await ctx.sleep(rng.range(0, 40));
    std::vector<a2::NewEvent> batch;
    const int n = rng.chance({1, 3}) ? 2 : 1;
    for (int k = 0; k < n; ++k) {
      a2::NewEvent e;
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
        const a2::AppendResult r = co_await store.append(kSession, batch);
        for (size_t k = 0; k < r.events.size() && k < batch.size(); ++k)
          rec->appends.push_back({id, *batch[k].id, batch[k].type, batch[k].payload, batch[k].lane,
                                  batch[k].settled, r.events[k].index, inv, rec->now()});
        break;
      } catch (const a2::A2Error& e) {
        if (!e.transport) break;
      } catch (const a2::TypeError&) {
        break;
      }
    }
  }
  co_await ctx.sleep(kHorizonMs / 2);
  rec->final_read_inv = rec->now();
  rec->final_reader = id;
  try {
    rec->final_read = co_await store.read(kSession);
  } catch (const a2::A2Error&) {
  } catch (const a2::TypeError&) {
  }
}

// The record goes in at invocation, with an unknown outcome, so a call whose caller crashed or
// was cut off by the horizon still counts as one that may have taken effect.
Task<void> Settle(sim::Ctx& ctx, int id, a2::Store& store, Prng& rng, a2::StoredEvent ev,
                  int64_t attempt, int i, Recorder* rec) {
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
      std::vector<a2::ChildEvent> children;
      if (rng.chance({1, 4})) {
        a2::ChildEvent c;
        c.id = absl::StrCat("c", id, "-", i, "-", ev.index);
        c.type = "result";
        c.payload = Json::object();
        c.payload["of"] = ev.index;
        children.push_back(std::move(c));
      }
      const a2::CompleteResult r =
          co_await store.complete_attempt(kSession, ev.index, attempt, std::move(children));
      outcome = r.outcome;
    } else {
      const a2::FailResult r =
          co_await store.fail_attempt(kSession, ev.index, attempt, "boom", kMaxFailures);
      outcome = r.outcome;
    }
  } catch (const a2::A2Error& e) {
    outcome = e.code;
    unknown = e.transport;
  } catch (const a2::TypeError&) {
    outcome = "TypeError";
  }
  rec->settles[at].outcome = outcome;
  rec->settles[at].unknown = unknown;
  rec->settles[at].ret = rec->now();
}

// An append caused by the worker's attempt, recorded like a settle (op "append"): accepted
// means "appended".
Task<void> CausedAppend(int id, a2::Store& store, const a2::StoredEvent& ev, int i, Recorder* rec) {
  SettleRec s;
  s.actor = id;
  s.op = "append";
  s.index = ev.index;
  s.attempt = ev.attempt_count;
  s.inv = rec->now();
  s.unknown = true;
  const size_t at = rec->settles.size();
  rec->settles.push_back(s);
  a2::NewEvent note;
  note.id = absl::StrCat("n", id, "-", i, "-", ev.index);
  note.type = "progress";
  note.payload = Json::object();
  note.payload["of"] = ev.index;
  note.cause = a2::Cause{ev.index, ev.attempt_count, std::nullopt};
  note.settled = true;
  std::vector<a2::NewEvent> batch;
  batch.push_back(std::move(note));
  std::string outcome;
  bool unknown = false;
  try {
    co_await store.append(kSession, std::move(batch));
    outcome = "appended";
  } catch (const a2::A2Error& e) {
    outcome = e.code;
    unknown = e.transport;
  } catch (const a2::TypeError&) {
    outcome = "TypeError";
  }
  rec->settles[at].outcome = outcome;
  rec->settles[at].unknown = unknown;
  rec->settles[at].ret = rec->now();
}

// A worker: claim, then for each claimed event work for 20 ms to 2.5 leases (renewing half
// way, some of the time), then complete it (with a child event, some of the time) or fail it.
Task<void> Worker(sim::Ctx& ctx, int id, uint64_t seed, int ops, const SkipSet* skip,
                  a2::Store& store, Recorder* rec) {
  const std::string holder = absl::StrCat("worker-", id);
  for (int i = 0; i < ops; ++i) {
    if (skip->count({id, i})) continue;
    Prng rng(OpSeed(seed, id, i));
    co_await ctx.sleep(rng.range(0, 30));
    a2::ClaimOptions o;
    o.session_id = kSession;
    o.holder = holder;
    o.ttl_ms = kLeaseMs;
    const int64_t inv = rec->now();
    const int64_t offset = ctx.now_ms() - ctx.world().now_ms();  // this actor's clock skew
    a2::ClaimResult claim;
    try {
      claim = co_await store.claim_available(o);
    } catch (const a2::A2Error&) {
      continue;
    } catch (const a2::TypeError&) {
      continue;
    }
    if (claim.outcome != "claimed") continue;
    std::vector<size_t> mine;
    for (const a2::StoredEvent& e : claim.events) {
      rec->claims.push_back({id, e.index, e.attempt_count, inv, rec->now(),
                             e.claim_expires_at.value_or(0) - offset - rec->world->start_ms()});
      mine.push_back(rec->claims.size() - 1);
    }
    for (size_t k = 0; k < claim.events.size(); ++k) {
      const a2::StoredEvent& ev = claim.events[k];
      const int64_t work = rng.range(20, kLeaseMs * 5 / 2);
      if (work > kLeaseMs / 2 && rng.chance({1, 2})) {
        co_await ctx.sleep(kLeaseMs / 2);
        const int64_t renew_offset = ctx.now_ms() - ctx.world().now_ms();
        const int64_t renew_inv_clock = ctx.now_ms();
        try {
          std::vector<a2::ClaimRef> refs(1, a2::ClaimRef{ev.index, ev.attempt_count});
          const a2::RenewResult r =
              co_await store.renew_claims(kSession, holder, std::move(refs), kLeaseMs);
          if (std::find(r.renewed.begin(), r.renewed.end(), ev.index) != r.renewed.end()) {
            ClaimRec& c = rec->claims[mine[k]];
            c.lease_end = std::max(
                c.lease_end, renew_inv_clock + kLeaseMs - renew_offset - rec->world->start_ms());
          }
        } catch (const a2::A2Error&) {
        }
        co_await ctx.sleep(work - kLeaseMs / 2);
      } else {
        co_await ctx.sleep(work);
      }
      // fencing's workload: half the time the worker first appends an event caused by its
      // attempt (a progress note), from a stream of its own so the other draws stay as they were.
      Prng note_rng(OpSeed(seed, id, i) ^ 0x6361757365ULL);
      if (rec->property == "fencing" && note_rng.chance({1, 2}))
        co_await CausedAppend(id, store, ev, i, rec);
      co_await Settle(ctx, id, store, rng, ev, ev.attempt_count, i, rec);
    }
  }
}

// A presence writer: fields of one shared participant (one person's several tabs), stamped
// with the writer's clock and delivered 0 to 30 ms later, so deliveries reorder; a delete is a
// write of null. Client 0 reads once every write is done.
Task<void> PresenceWriter(sim::Ctx& ctx, int id, uint64_t seed, int ops, const SkipSet* skip,
                          a2::Store& store, Recorder* rec) {
  for (int i = 0; i < ops; ++i) {
    if (skip->count({id, i})) continue;
    Prng rng(OpSeed(seed, id, i));
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
    a2::PresenceMeta meta;
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
    } catch (const a2::A2Error&) {
    }
    rec->presence[at].acked = acked;
    rec->presence[at].ret = rec->now();
  }
  if (id != 0) co_return;
  co_await ctx.sleep(kHorizonMs / 2);
  rec->presence_read_inv = rec->now();
  try {
    rec->presence_read = co_await store.presence_read(kPresenceNs);
  } catch (const a2::A2Error&) {
  }
}

struct ClientArgs {
  const RunSpec* spec;
  int id;
  const a2::Scripts* scripts;
  Recorder* rec;
};

Task<void> Client(sim::Ctx& ctx, ClientArgs a) {
  uint64_t next_id = 0;
  const int id = a.id;
  a2::Store store(ctx, *a.scripts, kPrefix,
                  [id, &next_id] { return absl::StrCat("gen-", id, "-", next_id++); });
  const RunSpec& s = *a.spec;
  if (PresenceWorkload(s.property))
    co_await PresenceWriter(ctx, a.id, s.seed, s.ops, &s.skip, store, a.rec);
  else if (a.id == 0)
    co_await Producer(ctx, a.id, s.seed, s.ops, &s.skip, store, a.rec);
  else
    co_await Worker(ctx, a.id, s.seed, s.ops, &s.skip, store, a.rec);
}

Involved Involve(int actor, int64_t from, int64_t to) {
  return {Actor(actor), from, to == kNever ? INT64_MAX : to};
}

std::string Ms(int64_t t) { return absl::StrCat("+", t, "ms"); }

std::string ClaimText(const ClaimRec& c) {
  return absl::StrCat(Actor(c.actor), " claimed event ", c.index, " as attempt ", c.attempt,
                      " (call ", Ms(c.inv), " to ", Ms(c.ret), ", lease until ", Ms(c.lease_end),
                      ")");
}

std::vector<Finding> AttemptsIncrease(const Recorder& r) {
  std::vector<Finding> out;
  for (size_t a = 0; a < r.claims.size(); ++a)
    for (size_t b = 0; b < r.claims.size(); ++b) {
      const ClaimRec &x = r.claims[a], &y = r.claims[b];
      if (a == b || x.index != y.index) continue;
      if (a < b && x.attempt == y.attempt)
        out.push_back({"attempt-repeated",
                       ClaimText(x) + "; " + ClaimText(y),
                       {},
                       {Involve(x.actor, x.inv, x.ret), Involve(y.actor, y.inv, y.ret)}});
      else if (x.ret < y.inv && y.attempt < x.attempt)
        out.push_back({"attempt-decreased",
                       ClaimText(x) + "; later, " + ClaimText(y),
                       {},
                       {Involve(x.actor, x.inv, x.ret), Involve(y.actor, y.inv, y.ret)}});
    }
  return out;
}

// When a claim's holder let go of it: the first complete or fail it sent for that attempt.
int64_t ReleasedAt(const Recorder& r, const ClaimRec& c) {
  int64_t t = kNever;
  for (const SettleRec& s : r.settles)
    if (s.op != "append" && s.index == c.index && s.attempt == c.attempt && s.actor == c.actor)
      t = std::min(t, s.inv);
  return t;
}

std::vector<Finding> SingleHolder(const Recorder& r) {
  std::vector<Finding> out;
  for (const ClaimRec& x : r.claims)
    for (const ClaimRec& y : r.claims) {
      if (x.index != y.index || y.attempt <= x.attempt) continue;
      const int64_t live_until = std::min(x.lease_end, ReleasedAt(r, x));
      if (y.ret < live_until)
        out.push_back({"two-live-holders",
                       ClaimText(x) + "; " + ClaimText(y) + ", while the first lease was live",
                       {},
                       {Involve(x.actor, x.inv, x.ret), Involve(y.actor, y.inv, y.ret)}});
    }
  return out;
}

std::vector<Finding> Fencing(const Recorder& r) {
  std::vector<Finding> out;
  for (const SettleRec& s : r.settles) {
    const bool accepted = s.outcome == "completed" || s.outcome == "failed" ||
                          s.outcome == "dead_lettered" || s.outcome == "appended";
    if (!accepted) continue;
    const std::string what =
        absl::StrCat(Actor(s.actor), "'s ", s.op, "(event ", s.index, ", attempt ", s.attempt,
                     ") at ", Ms(s.inv), " was accepted (", s.outcome, ")");
    const ClaimRec* own = nullptr;
    for (const ClaimRec& c : r.claims)
      if (c.index == s.index && c.attempt == s.attempt && c.actor == s.actor) own = &c;
    for (const ClaimRec& c : r.claims)
      if (c.index == s.index && c.attempt > s.attempt && c.ret < s.inv) {
        out.push_back({s.op == "complete" ? "completed-by-superseded-attempt"
                       : s.op == "fail"   ? "failed-by-superseded-attempt"
                                          : "caused-append-by-superseded-attempt",
                       what + " after " + ClaimText(c),
                       {},
                       {Involve(c.actor, c.inv, c.ret), Involve(s.actor, s.inv, s.ret)}});
        break;
      }
    if (own && s.inv > own->lease_end)
      out.push_back({s.op == "complete" ? "completed-after-lease-expired"
                     : s.op == "fail"   ? "failed-after-lease-expired"
                                        : "caused-append-after-lease-expired",
                     what + ", after its lease had expired: " + ClaimText(*own),
                     {},
                     {Involve(own->actor, own->inv, own->ret), Involve(s.actor, s.inv, s.ret)}});
  }
  return out;
}

std::vector<Finding> LaneOrder(const Recorder& r) {
  std::vector<Finding> out;
  for (const AppendRec& earlier : r.appends) {
    if (!earlier.lane || earlier.settled) continue;
    // The earliest moment the earlier event may have been settled: a complete or fail that
    // was accepted or whose outcome is unknown.
    int64_t settled_at = kNever;
    for (const SettleRec& s : r.settles)
      if (s.op != "append" && s.index == earlier.index &&
          (s.outcome == "completed" || s.outcome == "dead_lettered" || s.unknown))
        settled_at = std::min(settled_at, s.inv);
    for (const AppendRec& later : r.appends) {
      if (later.lane != earlier.lane || later.index <= earlier.index) continue;
      for (const ClaimRec& c : r.claims)
        if (c.index == later.index && c.ret < settled_at) {
          out.push_back(
              {"lane-overtaken",
               absl::StrCat("events ", earlier.index, " and ", later.index, " are in lane ",
                            *earlier.lane, "; ", ClaimText(c), " before event ", earlier.index,
                            settled_at == kNever ? " was ever settled"
                                                 : " was settled (at " + Ms(settled_at) + ")"),
               {},
               {Involve(c.actor, c.inv, c.ret)}});
          break;
        }
    }
  }
  return out;
}

std::vector<Finding> AppendsReadable(const Recorder& r) {
  std::vector<Finding> out;
  if (!r.final_read) return out;
  std::map<int64_t, const a2::StoredEvent*> by_index;
  for (const a2::StoredEvent& e : *r.final_read) by_index[e.index] = &e;
  for (const AppendRec& a : r.appends) {
    const std::string what =
        absl::StrCat("append of ", a.id, " acknowledged at index ", a.index, " (", Ms(a.inv),
                     " to ", Ms(a.ret), "); the read at ", Ms(r.final_read_inv), " ");
    auto it = by_index.find(a.index);
    std::vector<Involved> inv = {Involve(a.actor, a.inv, a.ret),
                                 Involve(r.final_reader, r.final_read_inv, r.final_read_inv)};
    if (it == by_index.end())
      out.push_back({"acknowledged-append-missing", what + "has no event there", {}, inv});
    else if (it->second->id != a.id)
      out.push_back(
          {"index-names-another-event", what + "finds " + it->second->id + " there", {}, inv});
    else if (it->second->type != a.type || it->second->payload != a.payload)
      out.push_back({"event-changed",
                     what + "finds it as " + it->second->type + " " +
                         model::JsonStringify(it->second->payload),
                     {},
                     inv});
  }
  return out;
}

std::vector<Finding> PresenceLww(const Recorder& r) {
  std::vector<Finding> out;
  if (!r.presence_read) return out;
  for (const std::string field : {"cursor", "status"}) {
    // The newest write of the field acknowledged before the read began; a write still in
    // flight during the read, or of unknown outcome, may have won too, but only with a stamp as
    // new (ties go to the write applied last, PRESENCE_SET_LUA's comment).
    const PresenceWrite* newest = nullptr;
    for (const PresenceWrite& w : r.presence)
      if (w.field == field && w.acked && w.ret < r.presence_read_inv &&
          (!newest || w.at > newest->at))
        newest = &w;
    if (!newest) continue;
    bool may_be_deleted = false;
    for (const PresenceWrite& w : r.presence)
      if (w.field == field && w.value.is_null() && w.at >= newest->at) may_be_deleted = true;
    const a2::PresenceRow* row = nullptr;
    for (const a2::PresenceRow& p : *r.presence_read)
      if (p.field == field) row = &p;
    const std::string want = absl::StrCat(
        "the newest acknowledged write of ", field, " was ", Actor(newest->actor), "'s ",
        newest->value.is_null() ? "delete" : model::JsonStringify(newest->value), " stamped ",
        newest->at, " (sent ", Ms(newest->inv), ")");
    std::vector<Involved> inv = {Involve(newest->actor, newest->inv, newest->ret)};
    if (row && row->at < newest->at) {
      const bool resurrected = newest->value.is_null();
      out.push_back({resurrected ? "deleted-field-resurrected" : "older-write-won",
                     absl::StrCat(want, "; the read at ", Ms(r.presence_read_inv), " shows ",
                                  model::JsonStringify(row->value), " stamped ", row->at),
                     {},
                     inv});
    } else if (!row && !may_be_deleted) {
      out.push_back(
          {"newer-write-lost",
           absl::StrCat(want, "; the read at ", Ms(r.presence_read_inv), " shows no value"),
           {},
           inv});
    }
  }
  return out;
}

struct PropertyEntry {
  PropertyInfo info;
  std::vector<Finding> (*check)(const Recorder&);  // nullptr: a sequential property
};

// One class per call: "<prefix><call>".
std::vector<AnomalyClass> Disagreements(const std::string& prefix, const std::string& what,
                                        std::vector<AnomalyClass> out) {
  static const char* const kCalls[] = {
      "append",       "claim",        "renew",         "complete",    "fail",
      "read",         "readEvents",   "readState",     "putSnapshot", "presenceSet",
      "presenceRead", "listSessions", "listSnapshots", "markWatched"};
  for (const char* c : kCalls) out.push_back({prefix + c, absl::StrCat(c, " ", what)});
  return out;
}

const std::vector<PropertyEntry>& Table() {
  using F = sim::Fault;
  const auto always = [](const std::string&, const std::string&) { return true; };
  static const std::vector<PropertyEntry> kTable = {
      {{"attempts-increase",
        "each claim of an event gets a fresh attempt number, larger than every attempt granted "
        "before it",
        always,
        {F::kRestart, F::kFailover, F::kKeyLoss},
        {{"attempt-repeated", "two claims of one event got the same attempt number"},
         {"attempt-decreased", "a later claim got a smaller attempt number"}}},
       AttemptsIncrease},
      {{"single-holder",
        "at any instant at most one live claim holds an event (a lease lives until its expiry, "
        "extended by renewals, or until its holder completes or fails the event; real time)",
        always,
        {F::kRestart, F::kFailover, F::kKeyLoss},
        {{"two-live-holders", "an event was claimed again while another claim's lease was live"}}},
       SingleHolder},
      {{"fencing",
        "complete, fail and caused appends are accepted only from the current attempt of a live "
        "claim",
        always,
        {F::kRestart, F::kFailover, F::kKeyLoss},
        {{"completed-by-superseded-attempt",
          "a complete was accepted after a newer attempt had been granted"},
         {"failed-by-superseded-attempt",
          "a fail was accepted after a newer attempt had been granted"},
         {"completed-after-lease-expired", "a complete was accepted after its lease had expired"},
         {"failed-after-lease-expired", "a fail was accepted after its lease had expired"},
         {"caused-append-by-superseded-attempt",
          "an append caused by an attempt was accepted after a newer attempt had been granted"},
         {"caused-append-after-lease-expired",
          "an append caused by an attempt was accepted after its lease had expired"}}},
       Fencing},
      {{"lane-order",
        "the events of a lane are claimed in index order, one at a time: an event is not "
        "claimed before every earlier event of its lane is settled",
        always,
        {F::kRestart, F::kFailover, F::kKeyLoss},
        {{"lane-overtaken", "an event was claimed before an earlier event of its lane settled"}}},
       LaneOrder},
      {{"appends-readable",
        "an acknowledged append stays readable at its index, as the event it was",
        always,
        {F::kRestart, F::kFailover, F::kKeyLoss},
        {{"acknowledged-append-missing", "no event at an acknowledged index"},
         {"index-names-another-event", "an acknowledged index names another event"},
         {"event-changed", "the event at an acknowledged index reads back changed"}}},
       AppendsReadable},
      {{"presence-lww",
        "presence is per-field last-writer-wins by the sender's stamp, whatever the delivery "
        "order: a read after every write shows each field's newest write (a delete included)",
        always,
        {F::kRestart, F::kFailover, F::kKeyLoss},
        {{"older-write-won", "a read shows an older write than the newest acknowledged one"},
         {"deleted-field-resurrected",
          "a field deleted by the newest write reads back with an older value"},
         {"newer-write-lost", "a field whose newest write set a value reads back missing"}}},
       PresenceLww},
      {{"model-matches-implementation",
        "a sequential, fault-free caller gets from every call what the model of the store's "
        "contract (model/a2.h) answers at that instant",
        always, sim::FaultSet::All(),
        Disagreements("disagrees-on-", "answers other than the model",
                      {{"caused-append-not-fenced",
                        "an append caused by an attempt that no longer holds a live claim (it "
                        "completed, failed or expired) was accepted"},
                       {"presence-older-write-applied",
                        "presence.set applied a field although a newer stamp (a delete's "
                        "included) had been written"}})},
       nullptr},
      {{"drain",
        "hasPending is true exactly when some event is pending (dead letters are not), and a "
        "claim answers settled exactly when nothing is pending",
        always,
        sim::FaultSet::All(),
        {{"has-pending-without-pending-event",
          "append reported hasPending although no event is pending"},
         {"pending-event-not-reported", "append reported no pending event although one is"},
         {"settled-while-pending", "a claim answered settled although an event is pending"},
         {"claimed-after-drain", "a claim granted or waited although nothing is pending"},
         {"claimable-event-withheld",
          "a claim withheld an event the model grants (a lane stalled behind a dead letter, say)"},
         {"claim-outcome-differs", "a claim answered busy or claimed other than the model"}}},
       nullptr},
      {{"snapshots",
        "a reducer's snapshot never moves backward or past the session's frontier, and "
        "readState returns exactly the events after the snapshot",
        always,
        sim::FaultSet::AllBut({F::kScanDuplicate}),
        {{"snapshot-past-frontier", "readState returned a snapshot past the session's frontier"},
         {"snapshot-differs", "readState returned another snapshot than the last accepted one"},
         {"fold-differs", "readState returned other events than those after its snapshot"},
         {"listed-snapshot-differs", "listSnapshots listed other snapshots than were accepted"},
         {"snapshot-listed-twice", "listSnapshots listed one reducer twice"}}},
       nullptr},
      {{"isolation",
        "sessions, reducers and presence namespaces stay isolated: names with ':', '*' or "
        "nothing in them answer every call as plain names do",
        always, sim::FaultSet::All(),
        Disagreements("names-change-", "answers differently than under plain names", {})},
       nullptr},
      {{"valid-calls-never-script-error",
        "valid calls, with adversarial values (nested 1001 deep, 2^53 + 1, -0, unicode) and "
        "names, never fail with a script error",
        always,
        sim::FaultSet::All(),
        {},
        true},
       nullptr},
  };
  return kTable;
}

class A2System : public System {
 public:
  A2System() {
    for (const auto& p : Table()) properties_.push_back(p.info);
  }
  std::string name() const override { return "a2"; }
  std::string what() const override {
    return "a2 event store: claims with leases and attempts, ordered lanes, presence (seed 003)";
  }
  const std::vector<VersionInfo>& versions() const override {
    static const std::vector<VersionInfo> kVersions = {
        {"0.5.0", "", "experimental-a2 0.5.0: store-redis-core.ts, nine Lua scripts"}};
    return kVersions;
  }
  std::string default_version() const override { return "0.5.0"; }
  const std::vector<PropertyInfo>& properties() const override { return properties_; }
  int default_ops() const override { return 16; }

 protected:
  RunOutcome DoRun(const RunSpec& spec, const sim::FaultOptions& faults,
                   const ScriptCatalog& scripts, RedisServer* server,
                   sim::Strategy& strategy) const override {
    a2::Scripts bodies(scripts, spec.version);
    std::unique_ptr<sim::Backend> backend = MakeBackend(server);
    sim::WorldOptions o;
    o.hash_trace = false;  // RunOutcome::trace_hash() hashes on demand
    o.seed = spec.seed;
    o.horizon_ms = kHorizonMs;
    o.faults = faults;
    sim::World world(o, *backend, strategy);
    if (IsSequential(spec.property)) {
      SequentialLog log;
      world.add_actor(Actor(0),
                      [&](sim::Ctx& ctx) { return SequentialClient(ctx, spec, bodies, &log); });
      RunOutcome out = RunWorld(world);
      out.findings = JudgeSequential(spec.property, log);
      return out;
    }
    Recorder rec;
    rec.world = &world;
    rec.property = spec.property;
    for (int c = 0; c < spec.clients; ++c)
      world.add_actor(Actor(c), [&, c](sim::Ctx& ctx) {
        return Client(ctx, ClientArgs{&spec, c, &bodies, &rec});
      });
    RunOutcome out = RunWorld(world);
    for (const auto& p : Table())
      if (p.info.name == spec.property && p.check) out.findings = p.check(rec);
    return out;
  }

 private:
  std::vector<PropertyInfo> properties_;
};

}  // namespace

std::unique_ptr<System> Make() { return std::make_unique<A2System>(); }

}  // namespace testbed::props::a2_system
