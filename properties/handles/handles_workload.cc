#include "properties/handles/handles_workload.h"

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>
#include <absl/strings/str_split.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "model/handles.h"
#include "checker/jepsen_history.h"
#include "properties/shared/json_bend.h"
#include "real/handles/handle.h"
#include "real/real_backend.h"
#include "sim/clock.h"
#include "sim/prng.h"
#include "sim/runtime.h"

namespace testbed::props::handles {

using checker::JepsenHistoryOf;
using checker::JepsenOp;
using checker::kNever;
namespace {

// The simulated upstream call of a commit: it takes `duration_ms`, and either fails before it
// has any effect or has its one side effect and returns a result.
// `call` is the commit's index in the recorder's calls, where the work's window is kept.
sim::Task<Json> Upstream(sim::Ctx& ctx, Recorder* rec, std::string draft, int actor, int op,
                         size_t call, int64_t duration_ms, bool fails) {
  rec->ops[call].work_start = rec->now();
  rec->ops[call].clock_work_start = rec->clock(actor);
  co_await ctx.sleep(duration_ms);
  rec->ops[call].work_end = rec->now();
  rec->ops[call].clock_work_end = rec->clock(actor);
  if (fails) throw std::runtime_error("upstream failed");
  Json result = Json::object();
  result["by"] = actor;
  result["op"] = op;
  rec->drafts[draft].effects.push_back({actor, rec->now(), result});
  co_return result;
}

// How an LLM caller retries: after HANDLE_BUSY ("Retry shortly with the same handle") and after
// HANDLE_STORAGE_UNAVAILABLE (storage "is not available": a transient condition, whether the
// call failed in transport or, like a commit whose result could not be persisted after the work
// completed, in the runtime), up to 3 attempts.
bool Retryable(const HandleError& e) {
  return e.code == "HANDLE_BUSY" || e.code == "HANDLE_STORAGE_UNAVAILABLE";
}

// A recorded trace's client (testbed explore): its operations in order, each after its recorded
// gap, through the port; an operation on a handle whose create did not land in this run (or
// that the trace never created) is not made, as a2's explore skips a claim this run did not get.
sim::Task<void> TraceClient(sim::Ctx& ctx, ClientArgs a) {
  Recorder* rec = a.rec;
  rec->actors[a.id] = &ctx;
  const TracePlans& plans = *a.trace;
  const std::vector<TracePlans::Op>& mine = plans.clients.at(static_cast<size_t>(a.id));
  sim::Prng rng(a.seed * 1000003 + static_cast<uint64_t>(a.id) + 17);  // randomInt, randomUUID
  auto state = a.make_state(a.version, ctx, *a.scripts, plans.provider_id);
  std::vector<std::unique_ptr<real::handles::HandleContext>> contexts;
  for (const std::optional<std::string>& connection : plans.connections) {
    real::handles::HandleOptions options;
    options.provider_id = plans.provider_id;
    options.state = state.get();
    options.connection_id = connection;
    options.commit_lease_ms = plans.lease_ms;
    contexts.push_back(std::make_unique<real::handles::HandleContext>(options, ctx, rng));
  }
  const int ops = std::min<int>(a.ops, static_cast<int>(mine.size()));
  for (int i = 0; i < ops; ++i) {
    if (a.skip->count({a.id, i})) continue;  // shrunk away
    const TracePlans::Op& p = mine[static_cast<size_t>(i)];
    co_await ctx.sleep(p.gap_ms);
    ctx.set_reply_latency(p.latency_ms);
    const real::handles::HandleKind& kind = plans.kinds.at(p.kind);
    real::handles::HandleContext& h = *contexts.at(p.connection);
    const bool cursor = !real::handles::IsDraftKind(kind);
    std::string handle;
    if (p.op != "create") {
      const auto known = rec->recorded_as.find(p.draft);
      if (known == rec->recorded_as.end()) continue;
      handle = known->second;
    }
    const size_t c = rec->begin(handle, p.op, a.id);
    rec->ops[c].cursor = cursor;
    try {
      if (p.op == "create") {
        rec->ops[c].sent = p.data;
        handle = co_await h.create(kind, p.data);
        rec->ops[c].draft = handle;
        if (cursor) rec->cursors.insert(handle);
        if (!p.draft.empty()) rec->recorded_as[p.draft] = handle;
        rec->end(c, "ok");
      } else if (p.op == "read" || p.op == "update") {
        const Json data = p.data;
        const std::function<Json(Json)> set = [data](Json) { return data; };
        real::handles::HandleRecord r;
        if (p.op == "read")  // (no co_await inside ?: with g++ 12)
          r = co_await h.read(kind, handle);
        else
          r = co_await h.update(kind, handle, set);
        Json seen = r.data;
        if (p.op == "read") seen["status"] = r.status;
        rec->end(c, "ok", false, seen);
      } else if (p.op == "commit") {
        const int64_t duration = p.work_ms;
        const bool fails = p.work_fails;
        const real::handles::Work work = [&ctx, rec, handle, id = a.id, i, c, duration,
                                          fails](Json) {
          return Upstream(ctx, rec, handle, id, i, c, duration, fails);
        };
        real::handles::CommitOutcome out = co_await h.commit(kind, handle, work);
        rec->end(c, out.status == "committed" ? "ok" : "replayed", false, out.result);
      } else {
        co_await h.discard(kind, handle);
        rec->end(c, "ok");
      }
    } catch (const HandleError& e) {
      rec->fail(c, e);
    } catch (const std::runtime_error&) {
      rec->end(c, "work-failed");
    }
  }
}

// One client of the drafts workload: its handle contexts on session-1 and, for reads of others'
// drafts, session-2.
struct Drafts {
  sim::Ctx& ctx;
  const ClientArgs& a;
  Recorder* rec;
  real::handles::HandleContext& h;
  real::handles::HandleContext& foreign;
  const real::handles::HandleKind& kind;
};

// A cursor (model/handles.h promise 7): every client reads it and may discard it, as a draft;
// no client updates or commits it (the SDK's types offer those for drafts only).
sim::Task<void> CreateCursor(Drafts& d, int i) {
  Recorder* rec = d.rec;
  Json data = Json::object();
  data["page"] = absl::StrCat("of client ", d.a.id);
  data["offset"] = i;
  const size_t c = rec->begin("", "create", d.a.id);
  rec->ops[c].cursor = true;
  rec->ops[c].sent = data;
  try {
    const std::string handle = co_await d.h.create(CursorKind(), data);
    rec->ops[c].draft = handle;
    rec->end(c, "ok");
    rec->pool.push_back(handle);
    rec->cursors.insert(handle);
  } catch (const HandleError& e) {
    rec->fail(c, e);
  }
}

// A draft's read back after its creator updated it (or failed to): what read() returned must be
// what the update left, unless the update's fate is unknown.
sim::Task<void> ReadBack(Drafts& d, const std::string& handle, const Json& data, const Json& want,
                         bool updated, bool resent) {
  Recorder* rec = d.rec;
  const size_t rd = rec->begin(handle, "read", d.a.id);
  real::handles::HandleRecord r;
  try {
    r = co_await d.h.read(d.kind, handle);
  } catch (const HandleError& e) {
    rec->fail(rd, e);
    co_return;
  }
  Json seen = r.data;
  seen["status"] = r.status;
  rec->end(rd, "ok", false, seen);
  const Json& expected = updated ? want : data;
  if (resent && r.data.contains("note"))
    rec->read_back_mismatches.push_back(
        {"failed-update-landed",
         absl::StrCat("client ", d.a.id, "'s update of ", handle,
                      " failed after a re-sent call, yet read() returned it: ",
                      real::state::Stringify(r.data)),
         {},
         {Since(d.ctx, sim::kDefaultEpochMs + rec->now())}});
  else if (r.data != expected && !resent)
    rec->read_back_mismatches.push_back(
        {updated && r.data == data ? "update-not-visible" : JsonBend(expected, r.data),
         absl::StrCat("client ", d.a.id, " ", updated ? "updated" : "created", " ", handle,
                      " with data ", real::state::Stringify(expected), "; read() returned ",
                      real::state::Stringify(r.data)),
         {},
         {Since(d.ctx, sim::kDefaultEpochMs + rec->now())}});
}

// create, then (before anyone else knows the handle) update and read it back.
sim::Task<void> CreateDraft(Drafts& d) {
  Recorder* rec = d.rec;
  Json data = Json::object();
  data["title"] = absl::StrCat("draft of client ", d.a.id);
  data["log"] = "";  // the updates applied, "c0-1,c2-3": a string, so no store bends it
  data["tags"] = Json::array();
  data["amount"] = 1234567890123456;
  const size_t c = rec->begin("", "create", d.a.id);
  std::string handle;
  try {
    rec->ops[c].sent = data;
    handle = co_await d.h.create(d.kind, data);
    rec->ops[c].draft = handle;
    rec->end(c, "ok");
  } catch (const HandleError& e) {
    rec->fail(c, e);
    co_return;
  }
  Json want = data;
  want["note"] = "caf\u00e9";
  bool updated = false, unknown = false;
  const int64_t resent_before = d.ctx.resent_calls();
  // (Recorded as ops: a call of them that failed in transport may land late, under
  // another client's claim, once the draft is in the pool.)
  const size_t u = rec->begin(handle, "update", d.a.id);
  try {
    // (g++ 12 destroys a lambda temporary inside a co_await expression twice: named locals.)
    const std::function<Json(Json)> add_note = [](Json x) {
      x["note"] = "caf\u00e9";
      return x;
    };
    co_await d.h.update(d.kind, handle, add_note);
    updated = true;
    rec->end(u, "ok");
  } catch (const HandleError& e) {
    unknown = e.transport;  // it may have landed: nothing to compare
    rec->fail(u, e);
  }
  // The client library re-sent one of the update's CASes: the first sending landed, the
  // re-send failed on the version it moved, and update retried into HANDLE_BUSY (js 590-613).
  const bool resent = !updated && d.ctx.resent_calls() > resent_before;
  if (!unknown) co_await ReadBack(d, handle, data, want, updated, resent);
  rec->pool.push_back(handle);
}

// commit, with a long upstream call now and then, retried up to three times when retryable.
sim::Task<void> CommitDraft(Drafts& d, int i, const std::string& draft, sim::Prng& op_rng) {
  Recorder* rec = d.rec;
  int64_t duration = op_rng.range(0, 500);
  if (duration > 200) duration = 200 + (duration - 200) * 9;  // a long upstream call
  const bool fails = op_rng.chance({1, 10});
  for (int attempt = 0; attempt < 3; ++attempt) {
    const size_t c = rec->begin(draft, "commit", d.a.id);
    bool retry = false;
    try {
      const real::handles::Work work = [&ctx = d.ctx, rec, draft, id = d.a.id, i, c, duration,
                                        fails](Json) {
        return Upstream(ctx, rec, draft, id, i, c, duration, fails);
      };
      real::handles::CommitOutcome out = co_await d.h.commit(d.kind, draft, work);
      rec->end(c, out.status == "committed" ? "ok" : "replayed", false, out.result);
    } catch (const HandleError& e) {
      rec->fail(c, e);
      retry = Retryable(e);
    } catch (const std::runtime_error&) {
      rec->end(c, "work-failed");
    }
    if (!retry) break;
    co_await d.ctx.sleep(op_rng.range(50, 150));
  }
}

// update, appending this operation's token to the draft's log, retried as a commit is.
sim::Task<void> UpdateDraft(Drafts& d, int i, const std::string& draft, sim::Prng& op_rng) {
  Recorder* rec = d.rec;
  const std::string token = absl::StrCat("c", d.a.id, "-", i);
  for (int attempt = 0; attempt < 3; ++attempt) {
    const size_t c = rec->begin(draft, "update", d.a.id);
    rec->ops[c].token = token;
    bool retry = false;
    try {
      const std::function<Json(Json)> append = [token](Json x) {
        x["log"] = absl::StrCat(x.value("log", ""), ",", token);
        return x;
      };
      real::handles::HandleRecord r = co_await d.h.update(d.kind, draft, append);
      rec->end(c, "ok", false, r.data);
    } catch (const HandleError& e) {
      rec->fail(c, e);
      retry = Retryable(e);
    }
    if (!retry) break;
    co_await d.ctx.sleep(op_rng.range(50, 150));
  }
}

sim::Task<void> ReadDraft(Drafts& d, const std::string& draft, bool cursor) {
  Recorder* rec = d.rec;
  const size_t c = rec->begin(draft, "read", d.a.id);
  rec->ops[c].cursor = cursor;
  try {
    real::handles::HandleRecord r = co_await d.h.read(cursor ? CursorKind() : d.kind, draft);
    Json seen = r.data;
    seen["status"] = r.status;
    rec->end(c, "ok", false, seen);
  } catch (const HandleError& e) {
    rec->fail(c, e);
  }
}

sim::Task<void> DiscardDraft(Drafts& d, const std::string& draft, bool cursor) {
  Recorder* rec = d.rec;
  const size_t c = rec->begin(draft, "discard", d.a.id);
  rec->ops[c].cursor = cursor;
  try {
    co_await d.h.discard(cursor ? CursorKind() : d.kind, draft);
    rec->end(c, "ok");
  } catch (const HandleError& e) {
    rec->fail(c, e);
  }
}

// A read on another connection (session-2) of a draft bound to session-1: it must fail.
sim::Task<void> ForeignRead(Drafts& d, const std::string& draft, bool cursor) {
  Recorder* rec = d.rec;
  const size_t c = rec->begin(draft, "foreign-read", d.a.id);
  rec->ops[c].cursor = cursor;
  try {
    real::handles::HandleRecord r = co_await d.foreign.read(cursor ? CursorKind() : d.kind, draft);
    rec->end(c, "ok", false, r.data);
    rec->foreign_reads.push_back(
        {kReadsOtherConnectionsDraft,
         absl::StrCat("client ", d.a.id, " on connection session-2 read ", draft,
                      ", a bound draft of session-1: ", real::state::Stringify(r.data)),
         {},
         {Involve(rec->ops[c])}});
  } catch (const HandleError& e) {
    rec->fail(c, e);
  }
}

}  // namespace

sim::Task<void> DraftsClient(sim::Ctx& ctx, ClientArgs a) {
  if (a.trace) {
    co_await TraceClient(ctx, a);
    co_return;
  }
  Recorder* rec = a.rec;
  rec->actors[a.id] = &ctx;
  sim::Prng rng(a.seed * 1000003 + static_cast<uint64_t>(a.id) + 17);  // randomInt, randomUUID
  auto state = a.make_state(a.version, ctx, *a.scripts, "provider-under-test");
  real::handles::HandleOptions options;
  options.state = state.get();
  options.connection_id = "session-1";
  options.commit_lease_ms = kLeaseMs;
  real::handles::HandleContext h(options, ctx, rng);
  real::handles::HandleOptions foreign_options = options;
  foreign_options.connection_id = "session-2";
  real::handles::HandleContext foreign(foreign_options, ctx, rng);
  Drafts d{ctx, a, rec, h, foreign, DraftKind()};
  for (int i = 0; i < a.ops; ++i) {
    if (a.skip->count({a.id, i})) continue;  // shrunk away
    sim::Prng op_rng(sim::OpSeed(a.seed, a.id, i));
    // LLM tool calls arrive in bursts: half of them at the next 50 ms boundary, where the
    // other app servers' calls on the same drafts meet them.
    if (op_rng.chance({1, 2}))
      co_await ctx.sleep(50 - rec->now() % 50);
    else
      co_await ctx.sleep(op_rng.range(0, 40));
    const uint64_t roll = op_rng.below(100);
    if ((rec->pool.empty() || roll < 15) && a.cursors && op_rng.chance({1, 3})) {
      co_await CreateCursor(d, i);
      continue;
    }
    if (rec->pool.empty() || roll < 15) {
      co_await CreateDraft(d);
      continue;
    }
    const std::string draft = rec->pool[op_rng.below(rec->pool.size())];
    const bool cursor = rec->cursors.count(draft) > 0;
    // (A cursor is read where a draft would be committed or updated.)
    const uint64_t what = cursor && (roll < 55 || (roll >= 75 && roll < 93)) ? 60 : roll;
    if (what < 55)
      co_await CommitDraft(d, i, draft, op_rng);
    else if (what < 75)
      co_await ReadDraft(d, draft, cursor);
    else if (what < 93)
      co_await UpdateDraft(d, i, draft, op_rng);
    else if (what < 97)
      co_await DiscardDraft(d, draft, cursor);
    else
      co_await ForeignRead(d, draft, cursor);
  }
}

sim::Task<void> EachOperation(sim::Ctx& ctx, ClientArgs a, OperationProbe probe) {
  for (int i = 0; i < a.ops; ++i) {
    if (a.skip->count({a.id, i})) continue;  // shrunk away
    sim::Prng op(sim::OpSeed(a.seed, a.id, i));
    co_await probe(ctx, a, i, op);
  }
}

const real::handles::HandleKind& DraftKind() {
  static const real::handles::HandleKind kind = [] {
    real::handles::HandleKind k;
    k.name = "draft";
    k.type = "draft";
    k.access = "bound";
    k.field_name = "draftHandle";
    k.issued_by = "drafts.create";
    k.idle_ttl_ms = 400;
    k.max_ttl_ms = 1500;
    k.result_ttl_ms = 1000;
    k.max_entries = 50;
    k.max_value_bytes = 4096;
    k.word_count = 2;
    return k;
  }();
  return kind;
}

const real::handles::HandleKind& CursorKind() {
  static const real::handles::HandleKind kind = [] {
    real::handles::HandleKind k = DraftKind();
    k.name = "page";
    k.type = "cursor";
    k.field_name = "pageToken";
    k.issued_by = "pages.list";
    k.ttl_ms = 600;
    return k;
  }();
  return kind;
}

const Op* CommitThatRan(const Recorder& rec, const std::string& draft, const Effect& e) {
  for (const Op& o : rec.ops)
    if (o.draft == draft && o.op == "commit" && o.actor == e.actor && o.inv <= e.at &&
        o.ret >= e.at)
      return &o;
  return nullptr;
}

Involved Involve(const Op& o) {
  return {absl::StrCat("client", o.actor), o.inv, o.ret == kNever ? INT64_MAX : o.ret, o.op};
}

std::string Show(const model::HandleAnswer& a) {
  if (!a.code.empty())
    return a.code + (a.deadline.empty() ? std::string() : " (" + a.deadline + ")");
  std::string s = a.status;
  if (!a.data.is_null()) s += " data " + real::state::Stringify(a.data);
  if (!a.result.is_null()) s += " result " + real::state::Stringify(a.result);
  if (a.expires_at_ms) s += " expiresAt " + real::state::IsoTime(a.expires_at_ms);
  return s;
}

bool Same(const model::HandleAnswer& got, const model::HandleAnswer& want) {
  if (got.code != want.code) return false;
  if (!got.code.empty()) return got.code != "HANDLE_EXPIRED" || got.deadline == want.deadline;
  return got.status == want.status && got.data == want.data && got.result == want.result &&
         got.expires_at_ms == want.expires_at_ms;
}

std::string Describe(const Op& o) {
  return absl::StrCat(
      "client ", o.actor, " ", o.op, " from +", o.inv, "ms to ",
      o.ret == kNever ? std::string("(never returned)") : absl::StrCat("+", o.ret, "ms"), " -> ",
      o.outcome, o.value.is_null() ? std::string() : " " + real::state::Stringify(o.value));
}

void HandlesRun::Start(sim::World& world) {
  rec_.world = &world;
  const RunSpec& spec = env_.spec;
  const int clients = workload_.clients > 0 ? workload_.clients : spec.clients;
  for (int c = 0; c < clients; ++c)
    world.add_actor(absl::StrCat("client", c), [this, c](sim::Ctx& ctx) {
      start_offsets_[c] = ctx.now_ms() - rec_.world->now_ms();
      const RunSpec& spec = env_.spec;
      return workload_.client(
          ctx, ClientArgs{workload_.cursors, spec.seed, c, spec.ops, spec.version, &spec.skip,
                          &env_.bodies, &rec_, env_.make_state, env_.trace.get()});
    });
}

nlohmann::json CommitClaimsAsMutex(const std::vector<Op>& ops, const std::string& draft) {
  std::vector<JepsenOp> history;
  // Real-time order from virtual ms: an invoke at t before a completion at t (concurrent).
  auto at = [](int64_t ms, bool completion) {
    return ms == kNever ? kNever : 2 * ms + (completion ? 1 : 0);
  };
  for (const Op& c : ops) {
    if (c.draft != draft || c.op != "commit") continue;
    if (c.work_start == kNever) {
      if (c.transport)  // the claim may have landed, and no work ran under it
        history.push_back({c.actor, at(c.inv, false), kNever, c.inv, kNever, "acquire", "info"});
      continue;
    }
    history.push_back(
        {c.actor, at(c.inv, false), at(c.work_start, true), c.inv, c.work_start, "acquire", "ok"});
    if (c.work_end == kNever) continue;  // crashed or cut off while working: still held
    // The finalize landed (ok); was refused (a definite error after the work succeeded: the
    // claim had moved on, so nothing was released); or may have landed (a reply lost, the
    // caller crashed, or the work failed and the best-effort restore's outcome is unknown).
    const bool done = c.ret != kNever && !c.transport && c.outcome != "work-failed";
    const char* type = !done ? "info" : c.outcome == "ok" ? "ok" : "fail";
    history.push_back({c.actor, at(c.work_end, false), done ? at(c.ret, true) : kNever, c.work_end,
                       done ? c.ret : kNever, "release", type});
  }
  return nlohmann::json{
      {"fits", true}, {"history", JepsenHistoryOf(history)}, {"unfit", nlohmann::json::array()}};
}

void HandlesRun::Check(sim::World& world, RunOutcome& out) {
  for (const auto& [c, start] : start_offsets_)
    rec_.behind[c] = std::max<int64_t>({0, -start, world.now_ms() - world.actor_clock_ms(c)});
  judge_(rec_, out);
  // Each draft's commit claims leave as Knossos's mutex (check --jepsen), computed only if a
  // report writes them.
  auto ops = std::make_shared<const std::vector<Op>>(rec_.ops);
  std::set<std::string> committed;
  for (const Op& o : rec_.ops)
    if (o.op == "commit" && (o.work_start != kNever || o.transport)) committed.insert(o.draft);
  for (const std::string& draft : committed)
    out.histories.push_back(
        {"commit-" + draft, "mutex", [ops, draft] { return CommitClaimsAsMutex(*ops, draft); }});
}

}  // namespace testbed::props::handles
