#include <absl/strings/str_cat.h>

#include <algorithm>
#include <map>
#include <memory>

#include "model/state_register.h"
#include "checker/jepsen_history.h"
#include "checker/linearizability.h"
#include "properties/state/state_workload.h"
#include "checker/version_order.h"

namespace testbed::props::state {

using model::RegisterOp;
using Op = checker::Operation<RegisterOp>;

namespace {
// The SDK call an operation of the register made, as a timeline names it.
std::string OpName(RegisterOp::Kind k) {
  switch (k) {
    case RegisterOp::Kind::kGet:
      return "get";
    case RegisterOp::Kind::kSet:
      return "set";
    case RegisterOp::Kind::kCas:
      return "compareAndSet";
    case RegisterOp::Kind::kDelete:
      return "delete";
  }
  return "operation";
}
}  // namespace

sim::Task<void> PlainOp(sim::Ctx& ctx, real::state::StateNamespace& ns, const StateWorkload& w,
                        int actor, int i, std::string key, sim::Prng& rng,
                        std::map<std::string, int64_t>& seen_version,
                        checker::RegisterHistory* history, Recorder* rec) {
  uint64_t roll = rng.below(100);
  if (w.cas_only && roll >= 35 && roll < 60) roll += 25;  // a set becomes a compareAndSet
  RegisterCall call;
  call.key = key;
  call.value = {{"client", actor}, {"n", i}};
  call.ttl = rng.chance({1, 3}) ? std::optional<int64_t>(rng.range(5, 200)) : std::nullopt;
  call.kind = roll < 35   ? RegisterOp::Kind::kGet
              : roll < 60 ? RegisterOp::Kind::kSet
              : roll < 90 ? RegisterOp::Kind::kCas
                          : RegisterOp::Kind::kDelete;
  if (call.kind == RegisterOp::Kind::kCas)
    call.expected = rng.chance({3, 4}) ? seen_version[key] : rng.range(0, 3);
  co_await MakeRegisterCall(ctx, ns, w, actor, call, seen_version, history, rec);
  const int64_t pause = rng.range(0, 15);
  co_await ctx.sleep(pause);
}

sim::Task<void> MakeRegisterCall(sim::Ctx& ctx, real::state::StateNamespace& ns,
                                 const StateWorkload& w, int actor, RegisterCall call,
                                 std::map<std::string, int64_t>& seen_version,
                                 checker::RegisterHistory* history, Recorder* rec) {
  const std::string& key = call.key;
  Op o;
  o.partition = call.partition.empty() ? key : call.partition;
  o.actor = actor;
  o.invoke = rec->seq++;
  o.invoke_ms = rec->world->now_ms();
  o.op.kind = call.kind;
  bool keep = true;
  const int64_t resent_before = ctx.resent_calls();
  try {
    if (call.kind == RegisterOp::Kind::kGet) {
      std::optional<real::state::StateValue> v = co_await ns.get(key);
      o.op.ok = v.has_value();
      if (v) {
        o.op.out_value = real::state::Stringify(v->value);
        o.op.out_version = v->version;
        seen_version[key] = v->version;
      }
    } else if (call.kind == RegisterOp::Kind::kSet) {
      o.op.value = real::state::Stringify(call.value);
      real::state::StateValue v = co_await ns.set(key, call.value, call.ttl);
      o.op.out_version = v.version;
      seen_version[key] = v.version;
    } else if (call.kind == RegisterOp::Kind::kCas) {
      o.op.value = real::state::Stringify(call.value);
      o.op.expected = call.expected;
      real::state::CasResult r =
          co_await ns.compare_and_set(key, o.op.expected, call.value, call.ttl);
      o.op.ok = r.ok;
      if (r.ok) {
        o.op.out_version = r.value->version;
      } else if (r.current) {
        o.op.out_version = r.current->version;
        o.op.out_value = real::state::Stringify(r.current->value);
      }
      seen_version[key] = o.op.out_version;
    } else {
      co_await ns.del(key);
      seen_version[key] = 0;
    }
  } catch (const real::state::StateError& e) {
    if (e.transport()) {
      o.ambiguous = true;  // the outcome is unknown
    } else {
      keep = false;  // quota and policy errors write nothing
      // The workload's namespace holds a few keys and admits w.ns.max_entries (rule 3): no
      // write of it may meet the quota.
      if (e.quota() && call.quota_error_is_finding)
        rec->findings.push_back(
            {"quota-error-below-max-entries",
             absl::StrCat("client ", actor, "'s write of ", key, " at +",
                          o.invoke_ms - sim::kDefaultEpochMs, "ms failed with \"", e.what(),
                          "\", in a namespace of maxEntries ", w.ns.max_entries,
                          " that holds at most ", w.keys, " keys"),
             {},
             {Since(ctx, o.invoke_ms)}});
    }
  }
  o.resent = ctx.resent_calls() > resent_before;
  o.op.expires_at_ms = ns.last_expires_at_ms();
  if (ns.expiry_is_relative() &&
      (o.op.kind == RegisterOp::Kind::kSet || o.op.kind == RegisterOp::Kind::kCas)) {
    // beta.3: SET ... PX ttl runs somewhere inside the operation (server time).
    o.op.expires_at_ms = o.invoke_ms + ns.last_ttl_ms();
    o.op.expires_hi_ms =
        (o.ambiguous ? o.invoke_ms + 600000 : rec->world->now_ms()) + ns.last_ttl_ms();
  }
  if (!o.ambiguous) {
    o.ret = rec->seq++;
    o.ret_ms = rec->world->now_ms();
  }
  if (keep) history->push_back(o);
}

std::vector<AnomalyClass> HistoryClasses(const std::string& key) {
  return {
      {"cas-fails-on-its-own-write",
       "a compareAndSet is reported as failed, yet the current value it reports is the one it "
       "wrote: it took effect (a request applied twice, as a client library's re-send after a "
       "reconnect does)"},
      {"resent-write-effect-hidden",
       "a write re-sent after a reconnect had already taken effect, and its caller saw only the "
       "re-sent request's outcome (a client library's re-send: the history has an order only when "
       "the first sending took effect too)"},
      {"duplicate-version", "two concurrent writers were acknowledged with the same version"},
      {"version-reused", "a key's version repeats: a later write gets an earlier one's version"},
      {"stale-cas-succeeds",
       "a compareAndSet succeeds against a version an acknowledged write had replaced"},
      {"get-misses-write", "get() finds nothing after an acknowledged write that is alive"},
      {"version-continues-after-delete",
       "a write that lands after a concurrent delete is numbered from the deleted value"},
      {kVersionContinuesAfterExpiry,
       "a write that lands after its key expired is numbered from the expired value"},
      {"quota-error-below-max-entries",
       "a write was refused with a quota error in a namespace far below its maxEntries"},
      {"no-single-order",
       absl::StrCat("the operations on ", key,
                    " cannot be put in one order that explains their results (a core no "
                    "narrower class describes; its shape is in the text)")}};
}

namespace {
// A key whose history the resends alone explain: a write its caller was told about once took
// effect twice. A compareAndSet told it failed whose reported current value is its own is
// cas-fails-on-its-own-write; any other such key is resent-write-applied-twice.
Finding ResentFinding(const checker::RegisterHistory& on_key, const std::string& key,
                      const StateWorkload& w, int64_t start_ms) {
  using K = RegisterOp::Kind;
  Finding f{"resent-write-effect-hidden", ""};
  std::string who;
  std::vector<Involved> involved;
  for (const auto& o : checker::RelativeTimes(on_key, start_ms)) {
    if (!o.resent || o.op.kind == K::kGet) continue;
    const bool own = o.op.kind == K::kCas && !o.ambiguous && !o.op.ok && !o.op.value.empty() &&
                     o.op.out_value == o.op.value;
    if (own) f.cls = "cas-fails-on-its-own-write";
    const std::string line = checker::FormatRegisterOperation(o);
    const char* kind = o.op.kind == K::kDelete ? "delete" : o.op.kind == K::kSet ? "set" : "cas";
    absl::StrAppend(&who, who.empty() ? "" : "; ", "client ", o.actor, "'s ", kind, " at +",
                    o.invoke_ms, "ms (", line.substr(line.find(kind)), ")",
                    own ? ", whose reported current value is the one it wrote itself" : "");
    involved.push_back({"client" + std::to_string(o.actor % w.clients), o.invoke_ms,
                        o.ret_ms == checker::kNever ? INT64_MAX : o.ret_ms,
                        absl::StrCat("client ", o.actor, ": ", OpName(o.op.kind))});
  }
  f.text = absl::StrCat(
      "a write on ", key,
      " was re-sent after a reconnect, and its caller saw only the re-sent request's outcome: ",
      who,
      ".\n  only with each re-sent write also taking effect before its reply was lost does the "
      "history of ",
      key, " have an order (nothing else is wrong with it).\n  the history of ", key,
      " (ms since the run's start):\n  actor invoke return invoke_ms return_ms operation -> "
      "result");
  for (const auto& o : checker::RelativeTimes(on_key, start_ms))
    absl::StrAppend(&f.text, "\n  ", checker::FormatRegisterOperation(o),
                    o.resent ? "  (re-sent)" : "");
  f.involved = std::move(involved);
  return f;
}

// A key's history longer than this, or with more operations pending at once than the hot key's
// nine actors, goes to the inference first.
constexpr size_t kLongHistory = 40;
constexpr int kManyPending = 9;

// The finding of a rejected key: the 1-minimal core of its history (or the core the inference
// found, `inferred_core`), in a sentence, the key's history, and the core's calls, named by its
// class. last_ms: when the run's last call returned (ms since its start).
Finding RejectedKeyFinding(const std::string& key, const checker::RegisterHistory& on_key,
                           const checker::RegisterHistory& twins,
                           const checker::RegisterHistory* inferred_core, const StateWorkload& w,
                           int64_t start_ms, bool hot_key, int64_t last_ms) {
  bool minimal = true;  // the inference's core is a pair, or one call rejected alone
  // Each step of the shrink searches a history a call shorter. On a long key (30 clients: 73
  // to 143 calls) 2,000,000 states a step took 19 to 71 s a key, most of a check's time
  // (docs/performance.md); 100,000 end the steps the search cannot finish sooner, and the
  // sentence then says the core may hold calls it does not need.
  const int64_t step_budget = hot_key ? 20'000 : on_key.size() > kLongHistory ? 100'000 : 2'000'000;
  const checker::RegisterHistory core =
      inferred_core ? *inferred_core : checker::RejectedCore(twins, step_budget, &minimal);
  // Times (ms, expiries too) relative to the run's start, as the trace prints them.
  std::string text = checker::RegisterSentence(core, key, twins) + ".\n";
  if (hot_key)
    text += "  (" + std::to_string(w.clients * kHotKeyThreadsPerClient) +
            " actors on one key: client c's thread t is actor c + " + std::to_string(w.clients) +
            " * t, and the sentence's \"client N\" is actor N)\n";
  text += "  the history of " + key +
          " (ms since the run's start):\n  actor invoke return invoke_ms return_ms "
          "operation -> result\n";
  for (const auto& o : checker::RelativeTimes(on_key, start_ms))
    text += "  " + checker::FormatRegisterOperation(o) + "\n";
  // The claim that each call is needed holds only where every check of the shrink decided.
  text += minimal ? "  the operations that cannot be ordered, whatever the key's other writes "
                    "did (dropping any one of them leaves an order"
                  : "  the operations that cannot be ordered, whatever the key's other writes "
                    "did (the search ran out of its budget before it could try dropping each "
                    "of them: some may not be needed";
  const bool pinned_in_core = std::any_of(core.begin(), core.end(), [&](const auto& c) {
    return !c.ambiguous && std::any_of(on_key.begin(), on_key.end(), [&](const auto& o) {
      return o.ambiguous && o.actor == c.actor && o.invoke == c.invoke;
    });
  });
  if (pinned_in_core)
    text +=
        "; a write whose reply was lost shows the version a later read returned its value "
        "at";
  text += "):";
  std::vector<Involved> involved;
  std::vector<Deadline> deadlines;
  for (const auto& o : checker::RelativeTimes(core, start_ms)) {
    text += "\n    " + checker::FormatRegisterOperation(o);
    const std::string client = "client" + std::to_string(o.actor % w.clients);
    // Named as the text names it ("client 8": on a hot key, an actor of client 2's threads).
    involved.push_back({client, o.invoke_ms, o.ret_ms == checker::kNever ? INT64_MAX : o.ret_ms,
                        absl::StrCat("client ", o.actor, ": ", OpName(o.op.kind))});
    if (o.op.expires_at_ms > 0 && o.op.expires_at_ms <= last_ms)
      deadlines.push_back({"", o.op.expires_at_ms,
                           absl::StrCat("TTL of client ", o.actor, "'s ", OpName(o.op.kind), " (+",
                                        o.invoke_ms, "ms) ends")});
  }
  // A core no named class describes has a shape, but shapes are too many to repeat from run
  // to run (beta.3's unguarded writes interleave in new ways every few hundred runs, and the
  // hot key's cores are longer still), so a shape names no class a baseline could hold: it is
  // "no-single-order", with its shape in the text.
  std::string cls = checker::RegisterClass(core, twins);
  if (cls.empty()) {
    cls = "no-single-order";
    text += "\n  shape: " + checker::RegisterShape(core);
  }
  return {cls, text, checker::RegisterShape(core), involved, deadlines};
}

}  // namespace

void JudgeHistory(const checker::RegisterHistory& history, const StateWorkload& w, int64_t start_ms,
                  bool hot_key, RunOutcome& out) {
  model::StateRegisterModel model;
  // Each key's history, in key order (shared with the Jepsen form below, which a report may ask
  // for after the run).
  const auto kept = std::make_shared<std::map<std::string, checker::RegisterHistory>>();
  std::map<std::string, checker::RegisterHistory>& keys = *kept;
  for (const auto& o : history) keys[o.partition].push_back(o);
  // Each key's history as Jepsen's cas-register, computed only if a report writes it.
  for (const auto& [key, on_key] : keys)
    out.histories.push_back(
        {key, "cas-register", [kept, key = key] {
           const checker::JepsenProjection p = checker::ProjectCasRegister(kept->at(key));
           return nlohmann::json{{"fits", p.fits}, {"history", p.history}, {"unfit", p.unfit}};
         }});
  // Version-order inference (checker/version_order.h, polynomial) decides the keys whose
  // versions alone show a conflict, on the history as the resends can make it (so what it
  // rejects, no resend explains). It goes first on long histories, which the search may take
  // minutes over or give up on; short ones go to the search first (where both decide, their
  // cores can be different pairs of one history, named by different classes, and the saved
  // scenarios and baselines name the search's), and to the inference when the search gives up.
  std::map<std::string, checker::RegisterHistory> inferred;
  auto infer = [&](const std::string& key) {
    auto core = checker::InferRejectedCore(
        checker::PinObservedWrites(checker::WithResentTwins(keys.at(key))));
    if (core) inferred[key] = std::move(*core);
    return core.has_value();
  };
  // A greedy walk that finds an order decides the other way (a witness needs no search).
  auto witnessed = [&](const std::string& key) {
    return checker::GreedyLinearization(checker::PinObservedWrites(keys.at(key)));
  };
  auto hard = [&](const std::string& key) {
    return keys.at(key).size() > kLongHistory || checker::MostPending(keys.at(key)) > kManyPending;
  };
  // A short key the greedy walk orders needs no search either: a witness decides it the way the
  // search would (tests/version_order_test.cc), and it names no class. Most of the histories a
  // violation's shrink tries are such keys.
  checker::RegisterHistory to_search;
  bool long_left = false;  // a long key that the inference and the greedy walk both left open
  for (const auto& [key, on_key] : keys)
    if (hard(key) ? !infer(key) && !witnessed(key) : !witnessed(key)) {
      to_search.insert(to_search.end(), on_key.begin(), on_key.end());
      long_left = long_left || on_key.size() > kLongHistory;
    }
  // Nine actors on one key, some operations of unknown outcome under faults: a history the
  // search may not finish. A smaller budget ends such a run in about a second with no verdict
  // (reported as incomplete, never as a pass) instead of tens of seconds. A long key (more than
  // 40 calls) left open gets a smaller one still: at 30 clients the search decided 7 of 365
  // such keys within 100,000 states, at 0.14 s each, most of a check's time
  // (docs/performance.md). What neither decides stays undecided, each key named with what made
  // it hard.
  const int64_t budget = !hot_key ? 50'000'000 : long_left ? 20'000 : 100'000;
  const checker::Verdict verdict = checker::Checker<model::StateRegisterModel>(model, budget)
                                       .check(checker::PinObservedWrites(to_search));
  std::vector<std::string> undecided;
  // (A short key was searched only because the greedy walk had not ordered it.)
  for (const std::string& key : verdict.undecided)
    if (hard(key) || !infer(key))
      undecided.push_back(checker::DescribeUndecided(key, keys.at(key)));
  // Every rejected key, in key order, each named by the 1-minimal core of its history
  // (lin::RejectedCore), or by the core the inference found.
  std::vector<std::string> rejected = verdict.rejected;
  for (const auto& [key, core] : inferred) rejected.push_back(key);
  std::sort(rejected.begin(), rejected.end());
  // A TTL is a deadline of the finding only if the run reached it: one that ends after the
  // last call of the run returned can explain no result (nor be drawn as if it had come).
  int64_t last_ms = 0;
  for (const auto& o : history)
    last_ms = std::max(last_ms, (o.ret_ms == checker::kNever ? o.invoke_ms : o.ret_ms) - start_ms);
  for (const std::string& key : rejected) {
    const checker::RegisterHistory& on_key = keys.at(key);
    const auto found = inferred.find(key);
    // A write re-sent after a reconnect may have taken effect twice: the history checked from here
    // on has its twin, so only what the resends cannot explain is blamed on the store.
    const checker::RegisterHistory twins =
        checker::PinObservedWrites(checker::WithResentTwins(on_key));
    if (found == inferred.end() && twins.size() > on_key.size()) {
      const checker::Verdict explained =
          checker::Checker<model::StateRegisterModel>(model, hot_key ? 100'000 : 50'000'000)
              .check(twins);
      if (explained.ok && explained.complete) {
        out.findings.push_back(ResentFinding(on_key, key, w, start_ms));
        continue;
      }
    }
    out.findings.push_back(RejectedKeyFinding(key, on_key, twins,
                                              found == inferred.end() ? nullptr : &found->second, w,
                                              start_ms, hot_key, last_ms));
  }
  out.incomplete = !undecided.empty();
  out.undecided = std::move(undecided);
}

}  // namespace testbed::props::state
