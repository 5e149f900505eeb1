// Property "result-replayed" of handles: once the work of a commit ran, every later commit
// returns exactly the result that work produced ("the promised replay", js 625, 635) and no
// read finds the draft uncommitted or missing while the result is live (resultTtlMs; this checks
// its first half). It is anchored on the work, not on what its caller was told: a commit whose
// caller got an error after the work ran still owes the replay ("otherwise a successful mutation
// would be lost and the retry would see NOT_FOUND instead of the promised replay", js 633-635;
// "persisting its result is the one step that must not give up", js 797).
#include <absl/strings/str_cat.h>

#include <algorithm>

#include "properties/handles/handles_workload.h"

namespace testbed::props::handles {

using checker::kNever;
namespace {

// The anomaly classes this file names, declared once: its table and its judge use them.
constexpr char kDifferentResult[] = "different-result";
constexpr char kResultLost[] = "result-lost";
constexpr char kResultExpiredByClock[] = "result-expired-by-clock";
constexpr char kResultLostByCommitterClock[] = "result-lost-by-committer-clock";
constexpr char kLeaseLapsedInPause[] = "lease-lapsed-in-pause";
constexpr char kFinalizeGaveUp[] = "finalize-gave-up";

// What befell the committer during its commit call, from the trace: its process paused (work
// and renewal loop alike), or its clock is off (a skew, or a jump before the commit returned),
// which moves every PXAT it writes. "" for neither.
std::string CommitterMishap(const sim::Trace& trace, const Op& c) {
  std::string clock;
  for (const auto& e : trace.events) {
    if (!e.fault || e.actor != c.actor) continue;
    if (*e.fault == sim::Fault::kPause && !e.planned && e.at_ms >= c.inv && e.at_ms <= c.ret)
      return absl::StrCat(e.text, " at +", e.at_ms, "ms");
    if ((*e.fault == sim::Fault::kSkew || *e.fault == sim::Fault::kClockJump) && e.at_ms <= c.ret &&
        clock.empty())
      clock = e.text;
  }
  return clock;
}

std::vector<Finding> JudgeResultReplayed(const Recorder& rec, const sim::Trace& trace) {
  std::vector<Finding> out;
  for (const auto& [draft, d] : rec.drafts) {
    if (d.effects.empty()) continue;
    const Effect& work = d.effects[0];
    // The commit that ran the work. One whose caller crashed, or that the horizon cut off,
    // never got to persist the result: nothing can be owed to a retry then.
    const Op* c = CommitThatRan(rec, draft, work);
    if (c == nullptr || c->ret == kNever) continue;
    // Its caller got the result: from the finalize, or as a replay of it (a finalize re-tried
    // after one that landed late).
    const bool told_ok = c->outcome == "ok" || c->outcome == "replayed";
    // While the result is live: the first half of resultTtlMs after the work ended (the record's
    // expires_at_ms is the committer's clock after the work plus resultTtlMs, js 770-778).
    const int64_t until = work.at + DraftKind().result_ttl_ms / 2;
    for (const Op& o : rec.ops) {
      if (o.draft != draft || o.inv <= c->ret || o.inv >= until || o.ret == kNever) continue;
      // Discarding a committed draft gives its result up (model rule 4: the seed guards only a
      // `committing` record against discard, js 849-851, and tombstones every other record).
      // A discard whose reply was lost, or whose caller crashed, may have landed too.
      const bool discarded = std::any_of(rec.ops.begin(), rec.ops.end(), [&](const Op& x) {
        return x.draft == draft && x.op == "discard" &&
               (x.outcome == "ok" || x.transport || x.ret == kNever) && x.inv <= o.ret &&
               x.ret >= c->inv;
      });
      if (discarded) continue;
      const bool gone = (o.op == "commit" || o.op == "read") &&
                        (o.outcome == "HANDLE_NOT_FOUND" || o.outcome == "HANDLE_EXPIRED");
      const bool uncommitted =
          o.op == "read" && o.outcome == "ok" && o.value.value("status", "") != "committed";
      const std::string mishap = CommitterMishap(trace, *c);
      const bool paused = mishap.rfind("fault pause", 0) == 0;
      std::string cls;
      if (o.op == "commit" && (o.outcome == "ok" || o.outcome == "replayed") &&
          o.value != work.result)
        cls = kDifferentResult;
      else if (gone && told_ok && o.outcome == "HANDLE_EXPIRED")
        cls = kResultExpiredByClock;
      else if ((gone || uncommitted) && !mishap.empty() && !paused)
        cls = kResultLostByCommitterClock;
      else if ((gone || uncommitted) && told_ok)
        cls = kResultLost;
      else if ((gone || uncommitted) && paused)
        cls = kLeaseLapsedInPause;
      else if (gone || uncommitted)
        cls = kFinalizeGaveUp;
      if (cls.empty()) continue;
      out.push_back(
          {cls,
           absl::StrCat("on ", draft, ": the work ran and returned ",
                        real::state::Stringify(work.result), " at +", work.at, "ms, in ",
                        Describe(*c), mishap.empty() ? "" : " (the committer: " + mishap + ")",
                        "; then ", Describe(o)),
           {},
           {Involve(*c), Involve(o)}});
      return out;  // the first one per run says it
    }
  }
  return out;
}

}  // namespace

const HandlesProperty& ResultReplayed() {
  static const HandlesProperty kProperty = {
      {"result-replayed",
       "once a commit's work ran, every later commit returns exactly its result and the draft "
       "reads as committed while the result is live, whatever that commit's caller was told",
       Always,
       LosesWrites(),  // they lose acknowledged writes by themselves
       {{kDifferentResult, "a later commit returned another result than the work produced"},
        {kResultLost, "after a successful commit the draft is missing or uncommitted"},
        {kResultExpiredByClock,
         "after a successful commit a caller was told HANDLE_EXPIRED while the result was live: "
         "expires_at_ms is the committer's clock plus resultTtlMs, and the reader compares it "
         "with its own"},
        {kResultLostByCommitterClock,
         "the result was lost because the committer's clock was off: its claim, renewals and "
         "committed record expire at PXATs taken from that clock, so a clock behind the server's "
         "lets them lapse early"},
        {kLeaseLapsedInPause,
         "the committer's process paused longer than the lease while its work ran (the renewal "
         "loop paused with it): the claim lapsed, the finalize found the draft gone, the caller "
         "was told HANDLE_STORAGE_UNAVAILABLE and the promised replay is lost"},
        {kFinalizeGaveUp,
         "the work ran, but the finalize gave up after its three attempts (150 ms of pauses) "
         "while Redis was unreachable, with most of the lease left: the caller was told "
         "HANDLE_STORAGE_UNAVAILABLE, the claim held the draft BUSY and then lapsed, and the "
         "promised replay is lost"}}},
      Run<JudgeResultReplayed>};
  return kProperty;
}

}  // namespace testbed::props::handles
