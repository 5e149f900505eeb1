// Property "calls-linearizable" of handles: what concurrent app servers get from their calls on
// the drafts they share, under faults, is explained by the handle contract (model/handles.h)
// taking the calls one at a time in an order that respects real time. A call that got no reply
// (or failed in transport) may have taken effect or not; an update re-sent after a reconnect
// may have taken effect twice.
//
// The model's step is model/handles.h's, one call at a time, with two refinements the
// concurrency needs, both from the seed:
//   - commit is three steps: the claim (active -> committing, between the call and the start of
//     its work), then the finalize (committing -> committed with the work's result, between the
//     end of the work and the reply) or, when the work failed, the restore (committing ->
//     active, best effort: it may not land, js 735). While a draft is committing, update,
//     discard and commit answer HANDLE_BUSY and read shows status "committing" (js 518, 600,
//     680, 809). BUSY is also an answer to a lost CAS race (js 613, 657, 826), so it is
//     accepted, without effect, from any draft that is there.
//   - time: each deadline is a stamp of the clock of the caller that wrote it, and each call
//     judges it by its own clock (js 518), so the model keeps a deadline as the span of values
//     its writer's clock may have given it and judges it by the span the caller's clock read
//     during the call. The key itself lives on Redis's clock (its storage TTL, js 454): the model
//     keeps when it may vanish in virtual time. A slid deadline, a slide whose call failed in
//     transport and an expiry inside a call's window are branches of the search, so the model
//     never cries wolf at an instant it cannot place.
//     A read's touch (js 577) is taken as landed unless it may move the deadline earlier: its
//     CAS loses only to a write that loaded before it landed, and a touch that moves the
//     deadline later followed by that write is the same state.
// A quarter of the runs (by seed) hold cursors beside the drafts (promise 7): a cursor's one
// deadline is its creator's clock plus ttlMs, reads never slide it, and past it a read answers
// HANDLE_EXPIRED ("ttl") through the grace, then HANDLE_NOT_FOUND.
// Faults that lose writes (restart, failover, key loss) are set aside: work-at-most-once and
// updates-exactly-once show what those do.
//
// The search is partitioned by draft, with a budget past which the run is "no verdict", never a
// pass. A rejected draft is cut to its shortest rejected prefix without the reads it does not
// need (checker/nearest_order.h), and the call the nearest order stops at names the class:
// the answer the caller got where the model gives another ("update-answered-ok-not-busy"), the
// part of an answer that differs ("read-data"), or, for a commit whose work ran, the state the
// claim or the finalize found ("commit-claimed-committing": the work ran under another claim).
#include <absl/strings/ascii.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>
#include <absl/strings/str_replace.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <optional>

#include "properties/handles/calls_linearizable_model.h"
#include "properties/handles/handles_workload.h"
#include "properties/shared/json_bend.h"
#include "checker/nearest_order.h"
#include "sim/prng.h"

namespace testbed::props::handles {

using checker::CallHistory;
using checker::kNever;
using checker::NearestOrder;
using checker::Operation;
namespace {

constexpr int64_t kMaxStates = 20'000;
constexpr int64_t kShrinkStates = 5'000;

}  // namespace

using namespace calls_linearizable;  // the model and its steps (calls_linearizable_model.h)

namespace {

bool Definite(const Step& s);

// The steps of the calls on the drafts every client shares. A step without a definite answer
// may land after its call returned (a request held back in the network, fault "reorder"), so
// its virtual-time window has no end; its values were computed before the call returned, so its
// clock's window has.
std::vector<Step> Steps(const Recorder& rec) {
  std::vector<Step> steps;
  for (size_t i = 0; i < rec.ops.size(); ++i) {
    const Op& o = rec.ops[i];
    if (o.draft.empty()) continue;  // a create that drew no handle
    const int index = static_cast<int>(i);
    const bool answered = o.ret != kNever && !o.transport;
    if (o.op != "commit" || o.work_start == kNever) {
      // (A commit whose claim may have landed without its work starting is a claim.)
      const bool claim = o.op == "commit" && !answered;
      steps.push_back(Window(o, index, claim ? Step::kClaim : Step::kWhole, o.inv, o.clock_inv,
                             o.ret, o.clock_ret));
      continue;
    }
    Step claim =
        Window(o, index, Step::kClaim, o.inv, o.clock_inv, o.work_start, o.clock_work_start);
    claim.behind = rec.behind.count(o.actor) ? rec.behind.at(o.actor) : 0;
    steps.push_back(claim);
    if (o.work_end == kNever) continue;  // the horizon cut the work off
    // The work's result, as its side effect recorded it; a work without one failed, and its
    // commit restores the draft (whether or not the caller lived to hear of it).
    Step end = Window(o, index, Step::kFinalize, o.work_end, o.clock_work_end, o.ret, o.clock_ret);
    if (auto d = rec.drafts.find(o.draft); d != rec.drafts.end())
      for (const Effect& e : d->second.effects)
        if (e.actor == o.actor && e.at == o.work_end) end.result = e.result;
    if (end.result.is_null()) end.part = Step::kRestore;
    steps.push_back(end);
  }
  for (Step& s : steps)
    if (!Definite(s)) s.world.hi = kNever;
  return steps;
}

// A step's definite answer: a whole call that was answered, a claim whose work ran, a finalize
// whose caller was told the result.
bool Definite(const Step& s) {
  const Op& o = *s.op;
  const bool answered = o.ret != kNever && !o.transport;
  switch (s.part) {
    case Step::kWhole:
      return answered;
    case Step::kClaim:
      return o.work_start != kNever;
    case Step::kFinalize:
      return answered && (o.outcome == "ok" || o.outcome == "replayed");
    case Step::kRestore:
      return false;  // best effort (js 735)
  }
  return false;
}

// `twins` keeps the steps the history adds for re-sent calls.
History MakeHistory(const std::vector<Step>& steps, std::deque<Step>& twins) {
  History h;
  for (const Step& s : steps) {
    Operation<const Step*> o;
    o.partition = s.op->draft;
    o.actor = s.op->actor;
    o.ambiguous = !Definite(s);
    o.invoke = s.world.lo;
    o.ret = o.ambiguous ? kNever : s.world.hi;
    o.op = &s;
    h.push_back(o);
    // A re-sent call: a discard may land once more (harmlessly); an update again, and a claim
    // although its caller was told BUSY, only as the known weaknesses (kUpdateReapplied,
    // kOwnClaimBusy).
    if (!s.op->resent || s.part != Step::kWhole) continue;
    o.ambiguous = true;
    o.ret = kNever;
    Step twin = s;
    twin.world.hi = kNever;
    if (s.op->op == "commit") {
      twin.part = Step::kClaim;
      twin.needs = kOwnClaimBusy;
    } else if (s.op->op == "update") {
      twin.needs = kUpdateReapplied;
    } else if (s.op->op != "discard") {
      continue;
    }
    // An update's every attempt (three, js 590) may have landed: one that answered BUSY may
    // have applied three times.
    for (int k = 0; k < (s.op->op == "update" ? 3 : 1); ++k) {
      o.op = &twins.emplace_back(twin);
      h.push_back(o);
    }
  }
  std::stable_sort(h.begin(), h.end(),
                   [](const auto& a, const auto& b) { return a.invoke < b.invoke; });
  return h;
}

std::string KindOf(const std::string& code) {
  if (code.empty()) return "ok";
  std::string k = absl::AsciiStrToLower(absl::StrReplaceAll(code, {{"HANDLE_", ""}, {"_", "-"}}));
  return k;
}

// What the caller got, as a kind of answer.
std::string Got(const Op& o) {
  if (o.outcome == "ok") return "ok";
  if (o.outcome == "replayed") return "replayed";
  return KindOf(o.outcome);
}

constexpr const char* kClaimClass = "claim-lost-by-committer-clock";

// The call's clock was behind virtual time (Redis's clock) at its start or its end.
bool ClockBehind(const Op& o) {
  return o.clock_inv < o.inv || (o.ret != kNever && o.clock_ret < o.ret);
}

std::string ClassOfStuck(const Stuck& s) {
  const Step& at = *s.op->op;
  const Op& o = *at.op;
  const model::HandleAnswer& want = s.model_answer;
  if (at.part == Step::kClaim) {
    const std::string why = want.code.empty() ? "there" : KindOf(want.code);
    return "commit-ran-work-" +
           (why == "busy" ? std::string("under-another-claim") : "when-" + why);
  }
  if (at.part == Step::kFinalize && o.outcome != "replayed") {
    const std::string why = want.code.empty() ? "there" : KindOf(want.code);
    return "commit-result-" + (why == "there" ? std::string("other-than-the-work") : "when-" + why);
  }
  const std::string op = o.op == "foreign-read" ? "read" : o.op;
  const std::string got = Got(o);
  const std::string model =
      want.code.empty() ? (want.status == "replayed" ? "replayed" : "ok") : KindOf(want.code);
  // The draft vanished under a live claim: the claim's key expires at a stamp of the
  // committer's clock (SET ... PXAT: its renewals write now + lease, js 700), so a committer
  // whose clock is behind Redis's sets that instant in Redis's past.
  if (got == "not-found" && model == "busy")
    for (const auto* b : s.before)
      if (b->op->part == Step::kClaim && ClockBehind(*b->op->op)) return kClaimClass;
  if (got != model) return absl::StrCat(op, "-answered-", got, "-not-", model);
  if (got == "expired") return op + "-deadline";
  if (o.op == "commit") return "commit-result";
  if (o.op == "read" && o.value.value("status", "") != want.status) return "read-status";
  return op + "-data";
}

// "client 0 commit from +10ms to +230ms -> ok {...} (its claim, +10ms..+12ms; its clock
// -300ms..-298ms)": a part of a commit names its window, and a clock that is not virtual time
// shows where it was.
std::string StepText(const Step& s) {
  const Op& o = *s.op;
  auto at = [](int64_t t) { return t == kNever ? std::string("") : absl::StrCat("+", t, "ms"); };
  std::string text = Describe(o);
  std::vector<std::string> notes;
  if (o.cursor) notes.push_back("a cursor");
  if (s.part != Step::kWhole)
    notes.push_back(absl::StrCat(s.part == Step::kClaim      ? "its claim, "
                                 : s.part == Step::kFinalize ? "its finalize, "
                                                             : "its restore, ",
                                 at(s.world.lo), "..", at(s.world.hi)));
  if (s.clock.lo != s.world.lo || (s.world.hi != kNever && s.clock.hi != s.world.hi))
    notes.push_back(absl::StrCat("its clock ", absl::StrReplaceAll(at(s.clock.lo), {{"+-", "-"}}),
                                 "..", absl::StrReplaceAll(at(s.clock.hi), {{"+-", "-"}})));
  if (!notes.empty()) absl::StrAppend(&text, " (", absl::StrJoin(notes, "; "), ")");
  return text;
}

Finding Explain(const History& core, const Stuck& stuck, const std::string& draft) {
  std::vector<Involved> involved;
  std::vector<const Step*> shown;
  std::string text;
  if (!stuck.op) {
    text = absl::StrCat("No order of these ", core.size(), " calls on ", draft,
                        " explains every answer (model/handles.h):\n");
    for (const auto& o : core) shown.push_back(o.op);
  } else {
    const size_t from = stuck.before.size() > 8 ? stuck.before.size() - 8 : 0;
    for (size_t k = from; k < stuck.before.size(); ++k) shown.push_back(stuck.before[k]->op);
    const Step& at = *stuck.op->op;
    for (const auto& o : core)
      if (o.op == &at || (o.op->world.lo <= at.world.hi && at.world.lo <= o.op->world.hi &&
                          std::find(shown.begin(), shown.end(), o.op) == shown.end()))
        shown.push_back(o.op);
    text = absl::StrCat("No order of the calls on ", draft,
                        " explains every answer (model/handles.h). The nearest order explains ",
                        stuck.explained, " of them (the last ", stuck.before.size() - from,
                        " shown), then stops at ", StepText(at), ":\n");
  }
  for (const Step* s : shown) {
    absl::StrAppend(&text, "  ", StepText(*s), "\n");
    involved.push_back(Involve(*s->op));
  }
  if (stuck.op)
    absl::StrAppend(&text, "after that order the model answers ", Show(stuck.model_answer));
  return {stuck.op ? ClassOfStuck(stuck) : "calls-unexplained", text, {}, involved};
}

constexpr const char* kTtlClass = "write-refused-by-caller-clock";

// The class of a rejected draft that the known weaknesses explain: the one that explains it
// alone (the clock's first: the data's bends show in almost every run), else the first the
// explanation cannot do without.
std::string KnownClass(const History& core) {
  auto bend = [&](unsigned weaknesses) {
    std::string first;
    NearestOrder<CallsModel>(CallsModel{weaknesses, &first}, core, kShrinkStates).Run();
    return first.empty() ? std::string(kStructureBent) : first;
  };
  // The rare first: the data's bends show in almost every run.
  const std::vector<std::pair<unsigned, std::string>> known = {
      {kClaimByCommitterClock, kClaimClass},
      {kOwnClaimBusy, "busy-on-its-own-claim"},
      {kUpdateReapplied, "update-reapplied-after-resend"},
      {kTtlByCallerClock, kTtlClass},
      {kBends, ""}};
  for (const auto& [w, cls] : known)
    if (!Rejected(CallsModel{w}, core, kShrinkStates)) return cls.empty() ? bend(w) : cls;
  // Several at once: the first the explanation cannot do without names it.
  for (const auto& [w, cls] : known)
    if (Rejected(CallsModel{kAllWeaknesses & ~w}, core, kShrinkStates))
      return cls.empty() ? bend(kAllWeaknesses) : cls;
  return bend(kAllWeaknesses);
}

void JudgeCallsLinearizable(const Recorder& rec, RunOutcome& out) {
  const std::vector<Step> steps = Steps(rec);
  std::deque<Step> twins;
  const History history = MakeHistory(steps, twins);
  std::map<std::string, History> parts;
  for (const auto& o : history) parts[o.partition].push_back(o);
  const CallsModel strict{0}, lenient{kAllWeaknesses};
  std::optional<Finding> known;  // reported only when no draft shows a new mechanism
  for (const auto& [draft, part] : parts) {
    NearestOrder<CallsModel> search(strict, part, kMaxStates);
    if (search.Run()) continue;
    if (search.gave_up()) {
      out.incomplete = true;
      continue;
    }
    // A new mechanism first: what the model cannot explain even when it takes on every known
    // weakness is named by the call it stops at, so a known weakness never hides it.
    NearestOrder<CallsModel> weak(lenient, part, kMaxStates);
    const bool explained = weak.Run();
    if (!explained && weak.gave_up()) {
      out.incomplete = true;
      continue;
    }
    const CallsModel& model = explained ? strict : lenient;
    const History core = Shrink(model, part, kShrinkStates);
    NearestOrder<CallsModel> nearest(model, core, kMaxStates);
    nearest.Run();
    Finding f = Explain(core, nearest.stuck(), draft);
    if (!explained) {
      out.findings.push_back(std::move(f));
      return;
    }
    f.cls = KnownClass(core);
    const auto bent = [](const std::string& c) {
      return c == kNumberBent || c == kEmptyArrayBecomesObject || c == kStringBent ||
             c == kStructureBent;
    };
    if (!known || (bent(known->cls) && !bent(f.cls))) known = std::move(f);
  }
  if (known) out.findings.push_back(std::move(*known));
}

std::vector<AnomalyClass> Classes() {
  const std::vector<std::pair<const char*, std::vector<const char*>>> answers = {
      {"create", {"ok"}},
      {"read", {"ok", "not-found", "expired"}},
      {"update", {"ok", "busy", "committed", "not-found", "expired"}},
      {"commit", {"ok", "replayed", "busy", "not-found", "expired", "work-failed"}},
      {"discard", {"ok", "busy"}}};
  std::vector<AnomalyClass> out;
  for (const auto& [op, kinds] : answers) {
    for (const char* a : kinds)
      for (const char* b : kinds)
        if (std::string(a) != b)
          out.push_back({absl::StrCat(op, "-answered-", a, "-not-", b),
                         absl::StrCat(op, " answered ", a,
                                      " where every order of the calls the "
                                      "model explains answers ",
                                      b)});
    out.push_back({absl::StrCat(op, "-deadline"),
                   absl::StrCat(op, " answered HANDLE_EXPIRED for a deadline no order explains")});
  }
  for (const char* op : {"read", "update"})
    out.push_back({absl::StrCat(op, "-data"),
                   absl::StrCat(op, " answered data that no order of the calls gives")});
  out.push_back({"read-status", "read answered a status that no order of the calls gives"});
  out.push_back({"commit-result", "commit replayed a result that no order of the calls gives"});
  for (const char* why : {"not-found", "expired", "committed"})
    out.push_back({absl::StrCat("commit-ran-work-when-", why),
                   absl::StrCat("a commit's work ran although, in every order the model "
                                "explains, its claim found the draft ",
                                why)});
  out.push_back({"commit-ran-work-under-another-claim",
                 "a commit's work ran while, in every order the model explains, another "
                 "commit's claim held the draft"});
  for (const char* why : {"not-found", "committed", "busy"})
    out.push_back({absl::StrCat("commit-result-when-", why),
                   absl::StrCat("a commit answered the result of its work although, in every "
                                "order the model explains, its finalize found the draft ",
                                why)});
  out.push_back({"commit-result-other-than-the-work",
                 "a commit answered a result other than the one its work returned"});
  out.push_back({kClaimClass,
                 "a draft vanished (HANDLE_NOT_FOUND) while a commit's claim held it: the key "
                 "expires at a stamp of the committer's clock (its renewals write now + lease), "
                 "and that clock was behind Redis's"});
  out.push_back({"busy-on-its-own-claim",
                 "a commit re-sent its claim after a reconnect: the first sending landed, the "
                 "re-sending failed on the version it moved, and the commit answered HANDLE_BUSY "
                 "about its own claim, which stays; every answer is explained once the model "
                 "takes that on"});
  out.push_back({"update-reapplied-after-resend",
                 "an update re-sent its CAS after a reconnect: the first sending landed, the "
                 "re-sending failed on the version it moved, and the update applied again; every "
                 "answer is explained once the model takes that on"});
  out.push_back({kTtlClass,
                 "a read, update or commit was refused (HANDLE_STORAGE_UNAVAILABLE) because its "
                 "caller's clock read earlier than the draft's creation stamp: the storage TTL "
                 "it computes from that clock exceeds the namespace's maxTtl; every answer is "
                 "explained once the model takes that on"});
  out.push_back({kNumberBent,
                 "the data came back with a number bent (lua-cjson keeps 14 significant digits); "
                 "every answer is explained once the model takes that on"});
  out.push_back({kEmptyArrayBecomesObject,
                 "the data came back with an empty array as an empty object (lua-cjson); every "
                 "answer is explained once the model takes that on"});
  out.push_back({kStringBent, "the data came back with a string bent"});
  out.push_back({kStructureBent, "the data came back with another structure"});
  out.push_back({"calls-unexplained",
                 "no order of the calls explains every answer, and none explains a longest "
                 "prefix the search could name"});
  return out;
}

}  // namespace

const HandlesProperty& CallsLinearizable() {
  static const HandlesProperty kProperty = {
      {"calls-linearizable",
       "what concurrent callers get from the drafts they share, under faults, is what the "
       "handle contract (model/handles.h) answers for the calls taken one at a time in an order "
       "that respects real time",
       Always, LosesWrites(), Classes()},
      [](const HandlesEnv& env) -> std::unique_ptr<PropertyRun> {
        // A quarter of the runs, by seed, have cursors beside the drafts (promise 7).
        const bool cursors = sim::Prng(env.spec.seed ^ 0x63757273ULL).chance({1, 4});
        return std::make_unique<HandlesRun>(env, Workload{DraftsClient, 0, cursors},
                                            &JudgeCallsLinearizable);
      }};
  return kProperty;
}

}  // namespace testbed::props::handles
