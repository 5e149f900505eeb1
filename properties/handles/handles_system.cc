#include "properties/handles/handles_system.h"

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>
#include <absl/strings/str_split.h>

#include <algorithm>
#include <map>
#include <optional>

#include "model/handles.h"
#include "properties/json_bend.h"
#include "real/handles/handle.h"
#include "real/real_backend.h"
#include "sim/clock.h"
#include "sim/prng.h"
#include "sim/runtime.h"

namespace testbed::props::handles_system {
namespace {

using handles::HandleError;
using handles::Json;

constexpr int64_t kNever = INT64_MAX;
// The commit lease: the seed's commitLeaseMs option (default 5 minutes), shortened so that the
// drafts' deadlines, upstream work and the lease are all of one scale in virtual time: work
// takes 0 to 500 ms, so the renewal loop (every lease / 2) runs in most commits.
constexpr int64_t kLeaseMs = 200;
constexpr int64_t kHorizonMs = 4000;

// A bound draft kind with small TTLs: idle 400 ms, hard 1.5 s, results replay for 1 s.
const handles::HandleKind& DraftKind() {
  static const handles::HandleKind kind = [] {
    handles::HandleKind k;
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

// One call a client made, as it saw it. Times are virtual ms since the run's start.
struct Op {
  std::string draft, op;  // op: create, read, update, commit, discard, foreign-read
  int actor = 0;
  int64_t inv = 0, ret = kNever;  // kNever: never returned (its actor crashed)
  std::string outcome = "";       // "ok", "replayed", or the HandleError code
  bool transport = false;
  Json value = Json();  // commit: the result; read and update: the data
};

// The calls an operation made, for the timeline's highlights.
Involved Involve(const Op& o) {
  return {absl::StrCat("client", o.actor), o.inv, o.ret == kNever ? INT64_MAX : o.ret};
}

struct Draft {
  int effects = 0;                      // upstream side effects of work()
  std::vector<std::string> effect_log;  // who ran it, when
};

struct Recorder {
  sim::World* world = nullptr;
  std::vector<std::string> pool;  // drafts every client may use
  std::map<std::string, Draft> drafts;
  std::vector<Op> ops;
  std::vector<Finding> read_back, isolation, model;
  bool sequential = false;       // model-matches-implementation: one client, call for call
  bool memory_lockstep = false;  // memory-matches-redis: the same calls on both backends
  bool quota_probes = false;     // quota-counts-live-handles
  std::vector<Finding> quota;
  struct Answered {
    std::string what;
    model::HandleAnswer answer;
    bool ran = false;
  };
  std::vector<Answered> on_redis, on_memory;  // memory-matches-redis: client 0, client 1
  int64_t now() const { return world->now_ms() - kDefaultEpochMs; }
  size_t begin(const std::string& draft, const std::string& op, int actor) {
    ops.push_back({draft, op, actor, now()});
    return ops.size() - 1;
  }
  void end(size_t i, const std::string& outcome, bool transport = false, Json value = Json()) {
    ops[i].ret = now();
    ops[i].outcome = outcome;
    ops[i].transport = transport;
    ops[i].value = std::move(value);
  }
};

// The simulated upstream call of a commit: it takes `duration_ms`, and either fails before it
// has any effect or has its one side effect and returns a result.
Task<Json> Upstream(sim::Ctx& ctx, Recorder* rec, std::string draft, int actor, int op,
                    int64_t duration_ms, bool fails) {
  co_await ctx.sleep(duration_ms);
  if (fails) throw std::runtime_error("upstream failed");
  Draft& d = rec->drafts[draft];
  ++d.effects;
  d.effect_log.push_back(absl::StrCat("client ", actor, " at +", rec->now(), "ms"));
  Json result = Json::object();
  result["by"] = actor;
  result["op"] = op;
  co_return result;
}

// How an LLM caller retries: after HANDLE_BUSY ("Retry shortly with the same handle") and after
// a storage error that failed in transport, up to 3 attempts.
bool Retryable(const HandleError& e) {
  return e.code == "HANDLE_BUSY" || (e.code == "HANDLE_STORAGE_UNAVAILABLE" && e.transport);
}

struct ClientArgs {
  uint64_t seed;
  int id, ops;
  std::string version;
  const SkipSet* skip;
  const state::VersionScripts* scripts;
  Recorder* rec;
};

// What a call returned, in the model's terms.
model::HandleAnswer Answer(const std::string& code) {
  model::HandleAnswer a;
  a.code = code;
  return a;
}

std::string Show(const model::HandleAnswer& a) {
  if (!a.code.empty())
    return a.code + (a.deadline.empty() ? std::string() : " (" + a.deadline + ")");
  std::string s = a.status;
  if (!a.data.is_null()) s += " data " + state::Stringify(a.data);
  if (!a.result.is_null()) s += " result " + state::Stringify(a.result);
  if (a.expires_at_ms) s += " expiresAt " + state::IsoTime(a.expires_at_ms);
  return s;
}

bool Same(const model::HandleAnswer& got, const model::HandleAnswer& want) {
  if (got.code != want.code) return false;
  if (!got.code.empty()) return got.code != "HANDLE_EXPIRED" || got.deadline == want.deadline;
  return got.status == want.status && got.data == want.data && got.result == want.result &&
         got.expires_at_ms == want.expires_at_ms;
}

// One call of the sequential client, as the model and both backends see it.
struct Step {
  const handles::HandleKind* kind = nullptr;
  std::string op;  // create, read, update, commit, discard, foreign-read
  std::string handle;
  Json data;
  int64_t duration = 0;  // commit: the work's
  bool fails = false;    // commit: the work fails
  Json result;           // commit: what the work returns
};

// Runs a step on one context; `created` gets a create's handle, `work_end` the commit work's
// end (the caller's clock), `ran` whether the work ran.
Task<model::HandleAnswer> Perform(sim::Ctx& ctx, handles::HandleContext& h,
                                  handles::HandleContext& foreign, Step step, std::string* created,
                                  int64_t* work_end, bool* ran) {
  const handles::HandleKind& kind = *step.kind;
  model::HandleAnswer got;
  const int64_t now = ctx.now_ms();
  try {
    if (step.op == "create") {
      *created = co_await h.create(kind, step.data);
      got.status = "active";
      got.data = step.data;
      got.expires_at_ms =
          now +
          (handles::IsDraftKind(kind) ? std::min(kind.idle_ttl_ms, kind.max_ttl_ms) : kind.ttl_ms);
    } else if (step.op == "read" || step.op == "update") {
      const Json data = step.data;
      const std::function<Json(Json)> set = [data](Json) { return data; };
      handles::HandleRecord r;
      if (step.op == "read")  // (no co_await inside ?: with g++ 12)
        r = co_await h.read(kind, step.handle);
      else
        r = co_await h.update(kind, step.handle, set);
      got.status = r.status;
      got.data = r.data;
      if (r.result) got.result = *r.result;
      got.expires_at_ms = state::ParseIsoTime(r.expires_at).value_or(0);
    } else if (step.op == "commit") {
      const int64_t duration = step.duration;
      const bool fails = step.fails;
      const Json result = step.result;
      const handles::Work work = [&ctx, ran, work_end, duration, fails,
                                  result](Json) -> Task<Json> {
        co_await ctx.sleep(duration);
        *ran = true;
        *work_end = ctx.now_ms();
        if (fails) throw std::runtime_error("upstream failed");
        co_return result;
      };
      handles::CommitOutcome c = co_await h.commit(kind, step.handle, work);
      got.status = c.status;
      got.result = c.result;
    } else if (step.op == "discard") {
      co_await h.discard(kind, step.handle);
    } else {
      handles::HandleRecord r = co_await foreign.read(kind, step.handle);
      got.status = r.status;
      got.data = r.data;
      if (r.result) got.result = *r.result;
      got.expires_at_ms = state::ParseIsoTime(r.expires_at).value_or(0);
    }
  } catch (const HandleError& e) {
    got = Answer(e.code);
    got.deadline = e.details.value("deadline", "");
  } catch (const std::runtime_error&) {
    got = Answer("work-failed");
  }
  co_return got;
}

// model-matches-implementation (and memory-matches-redis): one client, no faults, every call
// compared with model/handles (or with the same call on the memory backend, in lockstep).
Task<void> SequentialClient(sim::Ctx& ctx, ClientArgs a, bool against_memory) {
  const bool on_memory = against_memory && a.id == 1;
  Recorder* rec = a.rec;
  // Three kinds: the workload's draft (its TTLs longer than the lease), a draft whose TTLs are
  // all shorter than the lease (so the claim's lease is the longest term), and a public cursor.
  std::vector<handles::HandleKind> kinds(3, DraftKind());
  kinds[1].name = "brief";
  kinds[1].idle_ttl_ms = 100;
  kinds[1].max_ttl_ms = 150;
  kinds[1].result_ttl_ms = 120;
  kinds[2].name = "page";
  kinds[2].type = "cursor";
  kinds[2].access = "public";
  kinds[2].field_name = "pageToken";
  kinds[2].ttl_ms = 300;
  kinds[2].word_count = 4;
  std::vector<model::HandleModel> models;
  for (const auto& k : kinds)
    models.emplace_back(model::HandleKindModel{k.idle_ttl_ms, k.max_ttl_ms, k.result_ttl_ms,
                                               !handles::IsDraftKind(k), k.ttl_ms,
                                               k.access == "public"});
  // The model's name for a handle's scope: the connection, or the provider for public kinds.
  auto scope = [&](size_t k) { return kinds[k].access == "public" ? "provider" : "session-1"; };
  Prng rng(a.seed * 1000003 + 17), memory_rng(a.seed * 1000003 + 17);  // the same words
  auto state = handles::RedisState(a.version, ctx, *a.scripts, "provider-under-test");
  handles::MemoryState memory(ctx.clock());
  handles::HandleOptions options;
  options.state = state.get();
  options.connection_id = "session-1";
  options.commit_lease_ms = kLeaseMs;
  handles::HandleContext h(options, ctx, rng);
  handles::HandleOptions other_options = options;
  other_options.connection_id = "session-2";
  handles::HandleContext other(other_options, ctx, rng);
  handles::HandleOptions memory_options = options;
  memory_options.state = &memory;
  handles::HandleContext hm(memory_options, ctx, memory_rng);
  handles::HandleOptions memory_other_options = memory_options;
  memory_other_options.connection_id = "session-2";
  handles::HandleContext other_m(memory_other_options, ctx, memory_rng);
  std::vector<std::pair<std::string, size_t>> known;  // handle, kind
  std::vector<std::string> log;
  for (int i = 0; i < a.ops; ++i) {
    if (a.skip->count({0, i})) continue;  // shrunk away
    Prng op(OpSeed(a.seed, 0, i));
    // A quarter of the calls land exactly on a deadline of a known handle (its idle or hard
    // deadline, the last millisecond of its grace, or the one after), as the model has them.
    int64_t pause = op.range(0, 300);
    if (!known.empty() && op.chance({1, 4})) {
      const auto& [handle, k] = known[op.below(known.size())];
      const std::vector<int64_t> d = models[k].deadlines(scope(k), handle);
      std::vector<int64_t> ahead;
      for (int64_t t : d)
        if (t >= ctx.now_ms()) ahead.push_back(t);
      if (!ahead.empty()) pause = ahead[op.below(ahead.size())] - ctx.now_ms();
    }
    co_await ctx.sleep(pause);
    const int64_t now = ctx.now_ms();
    const uint64_t roll = op.below(100);
    Step step;
    step.data = Json::object();
    step.data["n"] = i;
    size_t k = op.below(kinds.size());
    if (known.empty() || roll < 20) {
      step.op = "create";
    } else {
      const auto& picked = known[op.below(known.size())];
      step.handle = picked.first;
      k = picked.second;
      step.op = roll < 45   ? "read"
                : roll < 65 ? "update"
                : roll < 90 ? "commit"
                : roll < 96 ? "discard"
                            : "foreign-read";
      // Update and commit are draft operations (the SDK's types offer them for drafts only).
      if (kinds[k].type == "cursor" && (step.op == "update" || step.op == "commit"))
        step.op = "read";
      step.duration = op.range(0, 300);
      step.fails = op.chance({1, 8});
      step.result = Json::object();
      step.result["op"] = i;
    }
    step.kind = &kinds[k];
    model::HandleModel& m = models[k];
    std::string created;
    int64_t end = now;
    bool ran = false;
    model::HandleAnswer got;
    if (on_memory)
      got = co_await Perform(ctx, hm, other_m, step, &created, &end, &ran);
    else
      got = co_await Perform(ctx, h, other, step, &created, &end, &ran);
    if (!created.empty()) known.emplace_back(created, k);
    std::string what =
        step.op == "create" ? "create -> " + created : absl::StrCat(step.op, "(", step.handle, ")");
    if (step.op == "commit")
      absl::StrAppend(&what, " with work of ", step.duration, " ms",
                      step.fails ? " that fails" : "");
    model::HandleAnswer want;
    bool model_ran = false;
    if (step.op == "create") {
      want = created.empty() ? Answer("") : m.create(scope(k), created, step.data, now);
    } else if (step.op == "read") {
      want = m.read(scope(k), step.handle, now);
    } else if (step.op == "update") {
      want = m.update(scope(k), step.handle, step.data, now);
    } else if (step.op == "commit") {
      want = m.commit(scope(k), step.handle, now, end,
                      step.fails ? std::nullopt : std::optional<Json>(step.result));
      model_ran = want.work_runs;
    } else if (step.op == "discard") {
      want = m.discard(scope(k), step.handle, now);
    } else if (kinds[k].access == "public") {
      want = m.read(scope(k), step.handle, now);  // the same handle from every connection
    } else {
      want = Answer("HANDLE_NOT_FOUND");
    }
    if (step.op != "commit") model_ran = ran;
    if (against_memory) {  // the model only steers the deadlines here; the backends compare
      (on_memory ? rec->on_memory : rec->on_redis)
          .push_back({absl::StrCat("+", now - kDefaultEpochMs, "ms ", what), got, ran});
      continue;
    }
    log.push_back(absl::StrCat(
        "+", now - kDefaultEpochMs, "ms ", what, " -> ", Show(got),
        ran != model_ran ? (ran ? " (the work ran)" : " (the work did not run)") : ""));
    if (!Same(got, want) || ran != model_ran) {
      std::string text = "the handle runtime and model/handles disagree; the last calls:";
      for (size_t k = log.size() > 8 ? log.size() - 8 : 0; k < log.size(); ++k)
        text += "\n    " + log[k];
      text += "\n    the model answers: " + Show(want);
      rec->model.push_back(
          {"disagrees-on-" + (step.op == "foreign-read" ? std::string("read") : step.op),
           text,
           {},
           {Since(ctx, now)}});
      co_return;
    }
  }
}

// quota-counts-live-handles: a kind with maxEntries 2 (idle 100 ms, hard 300 ms) in a
// connection of the client's own; two drafts, then both go (idle expiry, discard, or a commit
// whose result then expires); a third create must be accepted, as no handle is live.
Task<void> QuotaProbe(sim::Ctx& ctx, ClientArgs a, int i, Prng& op) {
  handles::HandleKind kind = DraftKind();
  kind.name = "quota";
  kind.idle_ttl_ms = 100;
  kind.max_ttl_ms = 300;
  kind.result_ttl_ms = 100;
  kind.max_entries = 2;
  Prng rng(OpSeed(a.seed, a.id, i) + 1);
  auto state = handles::RedisState(a.version, ctx, *a.scripts, "provider-under-test");
  handles::HandleOptions options;
  options.state = state.get();
  options.connection_id = absl::StrCat("quota-", a.id, "-", i);
  options.commit_lease_ms = kLeaseMs;
  handles::HandleContext h(options, ctx, rng);
  const uint64_t how = op.below(3);
  std::string gone;
  try {
    const std::string x = co_await h.create(kind, Json::object());
    const std::string y = co_await h.create(kind, Json::object());
    if (how == 0) {
      co_await ctx.sleep(kind.idle_ttl_ms);  // both idle-expire: HANDLE_EXPIRED from here on
      gone = "both drafts expired (idle, 100 ms)";
    } else if (how == 1) {
      co_await h.discard(kind, x);
      co_await h.discard(kind, y);
      co_await ctx.sleep(2);  // the 1 ms tombstones lapse
      gone = "both drafts were discarded";
    } else {
      const handles::Work work = [](Json) -> Task<Json> { co_return Json::object(); };
      co_await h.commit(kind, x, work);
      co_await h.commit(kind, y, work);
      co_await ctx.sleep(kind.result_ttl_ms);  // both results expire
      gone = "both drafts were committed and their results expired (100 ms)";
    }
  } catch (const HandleError&) {
    co_return;  // the setup did not go through: nothing to judge
  }
  const int64_t t = a.rec->now();
  try {
    co_await h.create(kind, Json::object());
  } catch (const HandleError& e) {
    if (e.code == "HANDLE_STORAGE_UNAVAILABLE" && !e.transport)
      a.rec->quota.push_back({how == 0   ? "expired-drafts-hold-quota"
                              : how == 1 ? "discarded-drafts-hold-quota"
                                         : "expired-results-hold-quota",
                              absl::StrCat("a kind with maxEntries 2: two drafts; ", gone, "; at +",
                                           t, "ms, with no live handle, create failed: ", e.what()),
                              {},
                              {Since(ctx, kDefaultEpochMs + t)}});
  }
}

Task<void> Client(sim::Ctx& ctx, ClientArgs a) {
  if (a.rec->quota_probes) {
    for (int i = 0; i < a.ops; ++i) {
      if (a.skip->count({a.id, i})) continue;  // shrunk away
      Prng op(OpSeed(a.seed, a.id, i));
      co_await QuotaProbe(ctx, a, i, op);
    }
    co_return;
  }
  if (a.rec->sequential || a.rec->memory_lockstep) {
    if (a.id == 0 || (a.id == 1 && a.rec->memory_lockstep))
      co_await SequentialClient(ctx, a, a.rec->memory_lockstep);
    co_return;
  }
  Recorder* rec = a.rec;
  const handles::HandleKind& kind = DraftKind();
  Prng rng(a.seed * 1000003 + static_cast<uint64_t>(a.id) + 17);  // randomInt, randomUUID
  auto state = handles::RedisState(a.version, ctx, *a.scripts, "provider-under-test");
  handles::HandleOptions options;
  options.state = state.get();
  options.connection_id = "session-1";
  options.commit_lease_ms = kLeaseMs;
  handles::HandleContext h(options, ctx, rng);
  handles::HandleOptions foreign_options = options;
  foreign_options.connection_id = "session-2";
  handles::HandleContext foreign(foreign_options, ctx, rng);
  for (int i = 0; i < a.ops; ++i) {
    if (a.skip->count({a.id, i})) continue;  // shrunk away
    Prng op_rng(OpSeed(a.seed, a.id, i));
    // LLM tool calls arrive in bursts: half of them at the next 50 ms boundary, where the
    // other app servers' calls on the same drafts meet them.
    if (op_rng.chance({1, 2}))
      co_await ctx.sleep(50 - rec->now() % 50);
    else
      co_await ctx.sleep(op_rng.range(0, 40));
    const uint64_t roll = op_rng.below(100);
    if (rec->pool.empty() || roll < 15) {
      // create, then (before anyone else knows the handle) update and read it back.
      Json data = Json::object();
      data["title"] = absl::StrCat("draft of client ", a.id);
      data["log"] = "";  // the updates applied, "c0-1,c2-3": a string, so no store bends it
      data["tags"] = Json::array();
      data["amount"] = 1234567890123456;
      const size_t c = rec->begin("", "create", a.id);
      std::string handle;
      try {
        handle = co_await h.create(kind, data);
        rec->ops[c].draft = handle;
        rec->end(c, "ok");
      } catch (const HandleError& e) {
        rec->end(c, e.code, e.transport);
        continue;
      }
      Json want = data;
      want["note"] = "caf\u00e9";
      bool updated = false, unknown = false;
      try {
        // (g++ 12 destroys a lambda temporary inside a co_await expression twice: named locals.)
        const std::function<Json(Json)> add_note = [](Json d) {
          d["note"] = "caf\u00e9";
          return d;
        };
        co_await h.update(kind, handle, add_note);
        updated = true;
      } catch (const HandleError& e) {
        unknown = e.transport;  // it may have landed: nothing to compare
      }
      try {
        if (unknown) throw HandleError("", "");
        handles::HandleRecord r = co_await h.read(kind, handle);
        const Json& expected = updated ? want : data;
        if (r.data != expected)
          rec->read_back.push_back(
              {updated && r.data == data ? "update-not-visible" : JsonBend(expected, r.data),
               absl::StrCat("client ", a.id, " ", updated ? "updated" : "created", " ", handle,
                            " with data ", state::Stringify(expected), "; read() returned ",
                            state::Stringify(r.data)),
               {},
               {Since(ctx, kDefaultEpochMs + a.rec->now())}});
      } catch (const HandleError&) {
      }
      rec->pool.push_back(handle);
      continue;
    }
    const std::string draft = rec->pool[op_rng.below(rec->pool.size())];
    if (roll < 55) {
      const int64_t duration = op_rng.range(0, 500);
      const bool fails = op_rng.chance({1, 10});
      for (int attempt = 0; attempt < 3; ++attempt) {
        const size_t c = rec->begin(draft, "commit", a.id);
        bool retry = false;
        try {
          const handles::Work work = [&ctx, rec, draft, id = a.id, i, duration, fails](Json) {
            return Upstream(ctx, rec, draft, id, i, duration, fails);
          };
          handles::CommitOutcome out = co_await h.commit(kind, draft, work);
          rec->end(c, out.status == "committed" ? "ok" : "replayed", false, out.result);
        } catch (const HandleError& e) {
          rec->end(c, e.code, e.transport);
          retry = Retryable(e);
        } catch (const std::runtime_error&) {
          rec->end(c, "work-failed");
        }
        if (!retry) break;
        co_await ctx.sleep(op_rng.range(50, 150));
      }
    } else if (roll < 75) {
      const size_t c = rec->begin(draft, "read", a.id);
      try {
        handles::HandleRecord r = co_await h.read(kind, draft);
        Json seen = r.data;
        seen["status"] = r.status;
        rec->end(c, "ok", false, seen);
      } catch (const HandleError& e) {
        rec->end(c, e.code, e.transport);
      }
    } else if (roll < 93) {
      const std::string token = absl::StrCat("c", a.id, "-", i);
      for (int attempt = 0; attempt < 3; ++attempt) {
        const size_t c = rec->begin(draft, "update", a.id);
        bool retry = false;
        try {
          const std::function<Json(Json)> append = [token](Json d) {
            d["log"] = absl::StrCat(d.value("log", ""), ",", token);
            return d;
          };
          handles::HandleRecord r = co_await h.update(kind, draft, append);
          rec->end(c, "ok", false, r.data);
        } catch (const HandleError& e) {
          rec->end(c, e.code, e.transport);
          retry = Retryable(e);
        }
        if (!retry) break;
        co_await ctx.sleep(op_rng.range(50, 150));
      }
    } else if (roll < 97) {
      const size_t c = rec->begin(draft, "discard", a.id);
      try {
        co_await h.discard(kind, draft);
        rec->end(c, "ok");
      } catch (const HandleError& e) {
        rec->end(c, e.code, e.transport);
      }
    } else {
      const size_t c = rec->begin(draft, "foreign-read", a.id);
      try {
        handles::HandleRecord r = co_await foreign.read(kind, draft);
        rec->end(c, "ok", false, r.data);
        rec->isolation.push_back(
            {"reads-other-connections-draft",
             absl::StrCat("client ", a.id, " on connection session-2 read ", draft,
                          ", a bound draft of session-1: ", state::Stringify(r.data)),
             {},
             {Involve(rec->ops[c])}});
      } catch (const HandleError& e) {
        rec->end(c, e.code, e.transport);
      }
    }
  }
}

std::string Describe(const Op& o) {
  return absl::StrCat(
      "client ", o.actor, " ", o.op, " from +", o.inv, "ms to ",
      o.ret == kNever ? std::string("(never returned)") : absl::StrCat("+", o.ret, "ms"), " -> ",
      o.outcome, o.value.is_null() ? std::string() : " " + state::Stringify(o.value));
}

// ---- checks over what the callers saw ----

std::vector<Finding> WorkAtMostOnce(const Recorder& rec) {
  std::vector<Finding> out;
  for (const auto& [draft, d] : rec.drafts)
    if (d.effects > 1)
      out.push_back(
          {"work-ran-twice", absl::StrCat("work() ran ", d.effects, " times for ", draft, ": by ",
                                          absl::StrJoin(d.effect_log, ", by "))});
  return out;
}

std::vector<Finding> ResultReplayed(const Recorder& rec) {
  std::vector<Finding> out;
  for (const Op& c : rec.ops) {
    // The commit that ran the work and recorded its result (a replay's own return is later
    // than the result's start: it cannot anchor the window).
    if (c.op != "commit" || c.outcome != "ok") continue;
    // While the result is live (the first half of resultTtlMs after the success returned).
    const int64_t until = c.ret + DraftKind().result_ttl_ms / 2;
    for (const Op& o : rec.ops) {
      if (o.draft != c.draft || o.inv <= c.ret || o.inv >= until || o.ret == kNever) continue;
      // A caller that discarded the draft gave up its result (a choice: the seed guards a
      // committing record against discard, and is silent on a committed one).
      const bool discarded = std::any_of(rec.ops.begin(), rec.ops.end(), [&](const Op& d) {
        return d.draft == c.draft && d.op == "discard" && d.outcome == "ok" && d.inv <= o.ret &&
               d.ret >= c.inv;
      });
      if (discarded) continue;
      std::string cls;
      if (o.op == "commit" && (o.outcome == "ok" || o.outcome == "replayed") && o.value != c.value)
        cls = "different-result";
      else if ((o.op == "commit" || o.op == "read") &&
               (o.outcome == "HANDLE_NOT_FOUND" || o.outcome == "HANDLE_EXPIRED"))
        cls = "result-lost";
      else if (o.op == "read" && o.outcome == "ok" && o.value.value("status", "") != "committed")
        cls = "result-lost";
      if (cls.empty()) continue;
      out.push_back({cls,
                     absl::StrCat("on ", c.draft, ": ", Describe(c), "; then ", Describe(o)),
                     {},
                     {Involve(c), Involve(o)}});
      return out;  // the first one per run says it
    }
  }
  return out;
}

std::vector<Finding> BusyMeansCommitting(const Recorder& rec, const sim::Trace& trace) {
  std::map<int, int64_t> crashed_at;  // actor -> virtual ms
  for (const auto& e : trace.events)
    if (e.kind == sim::EventKind::kFault && e.text.rfind("fault crash client", 0) == 0)
      crashed_at[std::stoi(e.text.substr(std::string("fault crash client").size()))] = e.at_ms;
  std::vector<Finding> out;
  for (const Op& b : rec.ops) {
    if (b.outcome != "HANDLE_BUSY") continue;
    bool committing = false;
    for (const Op& c : rec.ops) {
      if (&c == &b || c.draft != b.draft || c.op != "commit" || c.inv > b.ret) continue;
      // A commit holds the draft until it returns; one that died or gave up, one lease more.
      int64_t end = c.ret;
      if (c.ret == kNever)
        end = crashed_at.count(c.actor) ? crashed_at[c.actor] + kLeaseMs : kNever;
      else if (c.outcome != "ok" && c.outcome != "replayed")
        end = c.ret + kLeaseMs;
      if (end >= b.inv) committing = true;
    }
    if (committing) continue;
    std::string cls = "busy-with-no-committer", with;
    for (const Op& c : rec.ops)
      if (c.draft == b.draft && c.op == "commit" && c.inv < b.inv &&
          (c.ret == kNever || (c.outcome != "ok" && c.outcome != "replayed"))) {
        cls = "busy-beyond-lease";
        with = absl::StrCat("; the last committer (", Describe(c),
                            c.ret == kNever && crashed_at.count(c.actor)
                                ? absl::StrCat(", crashed at +", crashed_at[c.actor], "ms")
                                : std::string(),
                            ") ended more than one lease (", kLeaseMs, " ms) before");
      }
    for (const Op& o : rec.ops)
      if (cls == "busy-with-no-committer" && &o != &b && o.draft == b.draft && o.inv <= b.ret &&
          o.ret >= b.inv &&
          (o.op == "read" || o.op == "foreign-read" || o.op == "update" || o.op == "discard")) {
        cls = "busy-from-concurrent-" + (o.op == "foreign-read" ? std::string("read") : o.op);
        with = "; concurrently " + Describe(o);
        break;
      }
    out.push_back(
        {cls,
         absl::StrCat("on ", b.draft, ": ", Describe(b), with, "; no commit of it was in flight"),
         {},
         {Involve(b)}});
  }
  return out;
}

std::vector<Finding> UpdatesExactlyOnce(const Recorder& rec) {
  std::vector<Finding> out;
  for (const Op& o : rec.ops) {
    // (value(): operator[] of a const json on a missing key is undefined behaviour.)
    if (o.outcome != "ok" || !o.value.is_object() || !o.value.value("log", Json()).is_string())
      continue;
    std::map<std::string, int> seen;
    for (const std::string& t :
         std::vector<std::string>(absl::StrSplit(o.value["log"].get<std::string>(), ',')))
      if (!t.empty() && ++seen[t] == 2) {
        out.push_back({"update-applied-twice",
                       absl::StrCat("on ", o.draft, ": the update ", t,
                                    " is in the data twice: ", Describe(o)),
                       {},
                       {Involve(o)}});
        return out;
      }
  }
  return out;
}

std::vector<Finding> MemoryMatchesRedis(const Recorder& rec) {
  for (size_t k = 0; k < std::min(rec.on_redis.size(), rec.on_memory.size()); ++k) {
    const auto& r = rec.on_redis[k];
    const auto& m = rec.on_memory[k];
    if (Same(r.answer, m.answer) && r.ran == m.ran) continue;
    std::string text =
        "the handle runtime on Redis and on the memory backend disagree; the last calls, on Redis:";
    for (size_t j = k > 7 ? k - 7 : 0; j <= k; ++j)
      text += absl::StrCat("\n    ", rec.on_redis[j].what, " -> ", Show(rec.on_redis[j].answer));
    text += "\n    the memory backend answers: " + Show(m.answer);
    std::string op = r.what.substr(r.what.find(' ') + 1);
    op = op.substr(0, op.find_first_of("( "));
    if (op == "foreign-read") op = "read";
    return {{"differs-on-" + op, text}};
  }
  return {};
}

struct HandlesProperty {
  PropertyInfo info;
  std::function<std::vector<Finding>(const Recorder&, const sim::Trace&)> check;
};

const std::vector<HandlesProperty>& Table() {
  using F = sim::Fault;
  // Restart and failover lose acknowledged writes by themselves (a replica behind, a store
  // rebuilt from a prefix): the properties about replies and reads set them aside, while
  // work-at-most-once and updates-exactly-once keep them, to show what the lease design does
  // when Redis loses a claim or a finalize.
  auto always = [](const std::string&, const std::string&) { return true; };
  static const std::vector<HandlesProperty> kTable = {
      {{"work-at-most-once",
        "work() runs at most once per draft, across every caller and retry",
        always,
        {},
        {{"work-ran-twice", "the upstream work of one draft ran twice"}}},
       [](const Recorder& r, const sim::Trace&) { return WorkAtMostOnce(r); }},
      {{"result-replayed",
        "once a commit returned a result, every later commit returns exactly that result and "
        "the draft reads as committed while the result is live",
        always,
        {F::kRestart, F::kFailover, F::kKeyLoss},  // they lose acknowledged writes by themselves
        {{"different-result", "a later commit returned another result than the first success"},
         {"result-lost", "after a successful commit the draft is missing or uncommitted"}}},
       [](const Recorder& r, const sim::Trace&) { return ResultReplayed(r); }},
      {{"busy-means-committing",
        "HANDLE_BUSY is reported only while a commit of the draft is in flight, or within one "
        "lease after its committer died or gave up",
        always,
        {F::kRestart, F::kFailover, F::kKeyLoss},
        {{"busy-beyond-lease", "BUSY more than one lease after the last committer died or gave up"},
         {"busy-from-concurrent-read",
          "a concurrent read (its sliding-TTL touch) made an operation report BUSY"},
         {"busy-from-concurrent-update", "a concurrent update made an operation report BUSY"},
         {"busy-from-concurrent-discard",
          "a concurrent discard made a commit report BUSY instead of not found"},
         {"busy-with-no-committer", "BUSY with no commit in flight and none died within a lease"}}},
       [](const Recorder& r, const sim::Trace& t) { return BusyMeansCommitting(r, t); }},
      {{"updates-exactly-once",
        "an update the caller retries after a lost reply is applied once",
        always,
        {},
        {{"update-applied-twice", "one update's entry is in the draft's data twice"}}},
       [](const Recorder& r, const sim::Trace&) { return UpdatesExactlyOnce(r); }},
      {{"data-read-back",
        "a draft's data reads back exactly as written (JSON equality)",
        always,
        {F::kRestart, F::kFailover, F::kKeyLoss},
        {{"empty-array-becomes-object", "an empty array reads back as an empty object"},
         {"number-bent", "a number reads back as a different number"},
         {"string-bent", "a string reads back with different characters"},
         {"structure-bent", "the data reads back with a different structure"},
         {"update-not-visible", "a read after an acknowledged update returns the data before it"}}},
       [](const Recorder& r, const sim::Trace&) { return r.read_back; }},
      {{"model-matches-implementation",
        "a sequential, fault-free caller gets from every call what the model of the handle "
        "lifecycle (model/handles.h) answers at that instant",
        always,
        sim::FaultSet::All(),
        {{"disagrees-on-create", "create answers other than the model"},
         {"disagrees-on-read", "read answers other than the model"},
         {"disagrees-on-update", "update answers other than the model"},
         {"disagrees-on-commit", "commit answers other than the model"},
         {"disagrees-on-discard", "discard answers other than the model"}}},
       [](const Recorder& r, const sim::Trace&) { return r.model; }},
      {{"memory-matches-redis",
        "the handle runtime on the memory backend (createTestHandleContext) answers a sequential "
        "caller as it does on Redis",
        [](const std::string& v, const std::string&) { return v == "beta30"; },
        sim::FaultSet::All(),
        {{"differs-on-create", "create answers differently on the two backends"},
         {"differs-on-read", "read answers differently on the two backends"},
         {"differs-on-update", "update answers differently on the two backends"},
         {"differs-on-commit", "commit answers differently on the two backends"},
         {"differs-on-discard", "discard answers differently on the two backends"}}},
       [](const Recorder& r, const sim::Trace&) { return MemoryMatchesRedis(r); }},
      {{"quota-counts-live-handles",
        "maxEntries limits the live handles of a kind: once the drafts are expired, discarded, or "
        "committed with expired results, a create is accepted",
        always,
        {F::kRestart, F::kFailover, F::kKeyLoss, F::kLatency, F::kDelay, F::kReorder, F::kPause,
         F::kSkew, F::kClockJump},
        {{"expired-drafts-hold-quota", "drafts past their deadline still count against maxEntries"},
         {"discarded-drafts-hold-quota", "discarded drafts still count against maxEntries"},
         {"expired-results-hold-quota",
          "committed drafts whose results expired still count against maxEntries"}}},
       [](const Recorder& r, const sim::Trace&) { return r.quota; }},
      {{"bound-isolation",
        "a bound draft is not found from another connection",
        always,
        {F::kRestart, F::kFailover, F::kKeyLoss},
        {{"reads-other-connections-draft", "another connection reads a bound draft"}}},
       [](const Recorder& r, const sim::Trace&) { return r.isolation; }},
  };
  return kTable;
}

class HandlesSystem : public System {
 public:
  HandlesSystem() {
    for (const auto& p : Table()) properties_.push_back(p.info);
  }
  std::string name() const override { return "handles"; }
  std::string what() const override {
    return "LLM-friendly handles: drafts committed once under a renewed lease, on the state "
           "store (seed 002)";
  }
  const std::vector<VersionInfo>& versions() const override {
    // The handle runtime (beta.61) on the state store of each ported version with scripts;
    // bound handles need connection scopes (beta.24 and later): on beta.23 every connection
    // shares one scope, which bound-isolation reports.
    static const std::vector<VersionInfo> kVersions = {
        {"beta23", "", "the handle runtime on state beta.23: no forConnection, so no bound scope"},
        {"beta24", "", "the handle runtime on state beta.24 (legacy claim, tombstones)"},
        {"beta30", "", "the handle runtime on state beta.30"},
    };
    return kVersions;
  }
  std::string default_version() const override { return "beta30"; }
  std::string scripts_dir(const std::string& version) const override { return "state/" + version; }
  const std::vector<PropertyInfo>& properties() const override { return properties_; }
  int default_ops() const override { return 8; }

 protected:
  RunOutcome DoRun(const RunSpec& spec, const sim::FaultOptions& faults,
                   const ScriptCatalog& scripts, RedisServer* server,
                   sim::Strategy& strategy) const override {
    state::VersionScripts bodies(scripts);
    std::unique_ptr<sim::Backend> backend = MakeBackend(server);
    sim::WorldOptions o;
    o.hash_trace = false;  // RunOutcome::trace_hash() hashes on demand
    o.seed = spec.seed;
    // A short horizon, so that planned faults (crashes, pauses, restarts, outages) land while
    // drafts are live and commits run; operations the horizon cuts off never return.
    o.horizon_ms = kHorizonMs;
    o.faults = faults;
    sim::World world(o, *backend, strategy);
    Recorder rec;
    rec.world = &world;
    rec.sequential = spec.property == "model-matches-implementation";
    rec.memory_lockstep = spec.property == "memory-matches-redis";
    rec.quota_probes = spec.property == "quota-counts-live-handles";
    // memory-matches-redis always runs its two clients (Redis and the memory backend).
    const int clients = rec.memory_lockstep ? 2 : spec.clients;
    for (int c = 0; c < clients; ++c)
      world.add_actor(absl::StrCat("client", c), [&, c](sim::Ctx& ctx) {
        return Client(ctx,
                      ClientArgs{spec.seed, c, spec.ops, spec.version, &spec.skip, &bodies, &rec});
      });
    RunOutcome out = RunWorld(world);
    for (const auto& p : Table())
      if (p.info.name == spec.property) out.findings = p.check(rec, out.trace);
    return out;
  }

 private:
  std::vector<PropertyInfo> properties_;
};

}  // namespace

std::unique_ptr<System> Make() { return std::make_unique<HandlesSystem>(); }

}  // namespace testbed::props::handles_system
