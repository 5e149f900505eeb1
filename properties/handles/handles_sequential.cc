// The handles' sequential caller (model-matches-implementation and memory-matches-redis): one
// client, no faults, every call compared with model/handles at the same instant, or with the
// same call on the memory backend in lockstep.
#include <absl/strings/str_cat.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/handles.h"
#include "properties/handles/handles_workload.h"
#include "real/handles/handle.h"
#include "sim/clock.h"
#include "sim/prng.h"
#include "sim/runtime.h"

namespace testbed::props::handles {
namespace {

// What a call returned, in the model's terms.
model::HandleAnswer Answer(const std::string& code) {
  model::HandleAnswer a;
  a.code = code;
  return a;
}

// One call of the sequential client, as the model and both backends see it.
struct SequentialStep {
  const real::handles::HandleKind* kind = nullptr;
  std::string op;  // create, read, update, commit, discard, foreign-read
  std::string handle;
  Json data;
  int64_t duration = 0;  // commit: the work's
  bool fails = false;    // commit: the work fails
  Json result;           // commit: what the work returns
};

// Runs a step on one context; `created` gets a create's handle, `work_end` the commit work's
// end (the caller's clock), `ran` whether the work ran.
sim::Task<model::HandleAnswer> Perform(sim::Ctx& ctx, real::handles::HandleContext& h,
                                       real::handles::HandleContext& foreign, SequentialStep step,
                                       std::string* created, int64_t* work_end, bool* ran) {
  const real::handles::HandleKind& kind = *step.kind;
  model::HandleAnswer got;
  const int64_t now = ctx.now_ms();
  try {
    if (step.op == "create") {
      *created = co_await h.create(kind, step.data);
      got.status = "active";
      got.data = step.data;
      got.expires_at_ms =
          now + (real::handles::IsDraftKind(kind) ? std::min(kind.idle_ttl_ms, kind.max_ttl_ms)
                                                  : kind.ttl_ms);
    } else if (step.op == "read" || step.op == "update") {
      const Json data = step.data;
      const std::function<Json(Json)> set = [data](Json) { return data; };
      real::handles::HandleRecord r;
      if (step.op == "read")  // (no co_await inside ?: with g++ 12)
        r = co_await h.read(kind, step.handle);
      else
        r = co_await h.update(kind, step.handle, set);
      got.status = r.status;
      got.data = r.data;
      if (r.result) got.result = *r.result;
      got.expires_at_ms = real::state::ParseIsoTime(r.expires_at).value_or(0);
    } else if (step.op == "commit") {
      const int64_t duration = step.duration;
      const bool fails = step.fails;
      const Json result = step.result;
      const real::handles::Work work = [&ctx, ran, work_end, duration, fails,
                                        result](Json) -> sim::Task<Json> {
        co_await ctx.sleep(duration);
        *ran = true;
        *work_end = ctx.now_ms();
        if (fails) throw std::runtime_error("upstream failed");
        co_return result;
      };
      real::handles::CommitOutcome c = co_await h.commit(kind, step.handle, work);
      got.status = c.status;
      got.result = c.result;
    } else if (step.op == "discard") {
      co_await h.discard(kind, step.handle);
    } else {
      real::handles::HandleRecord r = co_await foreign.read(kind, step.handle);
      got.status = r.status;
      got.data = r.data;
      if (r.result) got.result = *r.result;
      got.expires_at_ms = real::state::ParseIsoTime(r.expires_at).value_or(0);
    }
  } catch (const HandleError& e) {
    got = Answer(e.code);
    got.deadline = e.details.value("deadline", "");
  } catch (const std::runtime_error&) {
    got = Answer("work-failed");
  }
  co_return got;
}

// Three kinds: the workload's draft (its TTLs longer than the lease), a draft whose TTLs are
// all shorter than the lease (so the claim's lease is the longest term), and a public cursor.
std::vector<real::handles::HandleKind> SequentialKinds() {
  std::vector<real::handles::HandleKind> kinds(3, DraftKind());
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
  return kinds;
}

// The next call: a create (of kind *k), or a call on a known handle (its kind in *k).
SequentialStep DrawStep(sim::Prng& op, int i,
                        const std::vector<std::pair<std::string, size_t>>& known, size_t kind_count,
                        size_t* k) {
  const uint64_t roll = op.below(100);
  SequentialStep step;
  step.data = Json::object();
  step.data["n"] = i;
  *k = op.below(kind_count);
  if (known.empty() || roll < 20) {
    step.op = "create";
  } else {
    const auto& picked = known[op.below(known.size())];
    step.handle = picked.first;
    *k = picked.second;
    step.op = roll < 45   ? "read"
              : roll < 65 ? "update"
              : roll < 90 ? "commit"
              : roll < 96 ? "discard"
                          : "foreign-read";
    step.duration = op.range(0, 300);
    step.fails = op.chance({1, 8});
    step.result = Json::object();
    step.result["op"] = i;
  }
  return step;
}

// What model/handles answers to the call, and whether the work runs in it (commit).
model::HandleAnswer ModelAnswer(model::HandleModel& m, const SequentialStep& step,
                                const std::string& scope, const std::string& created, int64_t now,
                                int64_t end, bool public_kind, bool* model_ran) {
  model::HandleAnswer want;
  if (step.op == "create") {
    want = created.empty() ? Answer("") : m.create(scope, created, step.data, now);
  } else if (step.op == "read") {
    want = m.read(scope, step.handle, now);
  } else if (step.op == "update") {
    want = m.update(scope, step.handle, step.data, now);
  } else if (step.op == "commit") {
    want = m.commit(scope, step.handle, now, end,
                    step.fails ? std::nullopt : std::optional<Json>(step.result));
    *model_ran = want.work_runs;
  } else if (step.op == "discard") {
    want = m.discard(scope, step.handle, now);
  } else if (public_kind) {
    want = m.read(scope, step.handle, now);  // the same handle from every connection
  } else {
    want = Answer("HANDLE_NOT_FOUND");
  }
  return want;
}

}  // namespace

// model-matches-implementation (and memory-matches-redis): one client, no faults, every call
// compared with model/handles (or with the same call on the memory backend, in lockstep).
sim::Task<void> SequentialClient(sim::Ctx& ctx, ClientArgs a, bool against_memory) {
  const bool on_memory = against_memory && a.id == 1;
  Recorder* rec = a.rec;
  const std::vector<real::handles::HandleKind> kinds = SequentialKinds();
  std::vector<model::HandleModel> models;
  for (const auto& k : kinds)
    models.emplace_back(model::HandleKindModel{k.idle_ttl_ms, k.max_ttl_ms, k.result_ttl_ms,
                                               !real::handles::IsDraftKind(k), k.ttl_ms,
                                               k.access == "public"});
  // The model's name for a handle's scope: the connection, or the provider for public kinds.
  auto scope = [&](size_t k) { return kinds[k].access == "public" ? "provider" : "session-1"; };
  sim::Prng rng(a.seed * 1000003 + 17), memory_rng(a.seed * 1000003 + 17);  // the same words
  auto state = a.make_state(a.version, ctx, *a.scripts, "provider-under-test");
  auto memory = real::handles::MemoryStateFor(a.version, ctx, *a.scripts);
  real::handles::HandleOptions options;
  options.state = state.get();
  options.connection_id = "session-1";
  options.commit_lease_ms = kLeaseMs;
  real::handles::HandleContext h(options, ctx, rng);
  real::handles::HandleOptions other_options = options;
  other_options.connection_id = "session-2";
  real::handles::HandleContext other(other_options, ctx, rng);
  real::handles::HandleOptions memory_options = options;
  memory_options.state = memory.get();
  real::handles::HandleContext hm(memory_options, ctx, memory_rng);
  real::handles::HandleOptions memory_other_options = memory_options;
  memory_other_options.connection_id = "session-2";
  real::handles::HandleContext other_m(memory_other_options, ctx, memory_rng);
  std::vector<std::pair<std::string, size_t>> known;  // handle, kind
  std::vector<std::string> log;
  for (int i = 0; i < a.ops; ++i) {
    if (a.skip->count({0, i})) continue;  // shrunk away
    sim::Prng op(sim::OpSeed(a.seed, 0, i));
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
    size_t k = 0;
    SequentialStep step = DrawStep(op, i, known, kinds.size(), &k);
    // Update and commit are draft operations (the SDK's types offer them for drafts only).
    if (kinds[k].type == "cursor" && (step.op == "update" || step.op == "commit")) step.op = "read";
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
    bool model_ran = false;
    const model::HandleAnswer want =
        ModelAnswer(m, step, scope(k), created, now, end, kinds[k].access == "public", &model_ran);
    if (step.op != "commit") model_ran = ran;
    if (against_memory) {  // the model only steers the deadlines here; the backends compare
      (on_memory ? rec->on_memory : rec->on_redis)
          .push_back({absl::StrCat("+", now - sim::kDefaultEpochMs, "ms ", what), got, ran});
      continue;
    }
    log.push_back(absl::StrCat(
        "+", now - sim::kDefaultEpochMs, "ms ", what, " -> ", Show(got),
        ran != model_ran ? (ran ? " (the work ran)" : " (the work did not run)") : ""));
    if (!Same(got, want) || ran != model_ran) {
      std::string text = "the handle runtime and model/handles disagree; the last calls:";
      for (size_t k = log.size() > 8 ? log.size() - 8 : 0; k < log.size(); ++k)
        text += "\n    " + log[k];
      text += "\n    the model answers: " + Show(want);
      rec->findings.push_back(
          {"disagrees-on-" + (step.op == "foreign-read" ? std::string("read") : step.op),
           text,
           {},
           {Since(ctx, now)}});
      co_return;
    }
  }
}

}  // namespace testbed::props::handles
