// Property "busy-means-committing" of handles: HANDLE_BUSY ("being committed by another
// request") is reported only while some commit of the draft is in flight, or within one lease
// after a committer died or gave up ("A crashed committer leaves the record BUSY for at most
// the lease"). A crash's time comes from the trace.
#include <absl/strings/str_cat.h>

#include <map>

#include "properties/handles/handles_workload.h"

namespace testbed::props::handles {

using checker::kNever;
namespace {

// The anomaly classes this file names, declared once: its table and its judge use them.
constexpr char kBusyBeyondLease[] = "busy-beyond-lease";
constexpr char kBusyWithNoCommitter[] = "busy-with-no-committer";
constexpr char kBusyOnItsOwnClaim[] = "busy-on-its-own-claim";

std::vector<Finding> JudgeBusyMeansCommitting(const Recorder& rec, const sim::Trace& trace) {
  std::map<int, int64_t> crashed_at;  // actor -> virtual ms
  for (const auto& e : trace.events)
    if (e.fault == sim::Fault::kCrash && !e.planned) crashed_at[e.actor] = e.at_ms;
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
    // A commit told BUSY about its own claim: the client library re-sent the claim's CAS,
    // the first sending had landed, and the runtime takes any lost claim CAS for a rival's
    // (js 665-677 does not compare the claim id, as its transport-error path does).
    std::string cls = b.op == "commit" && b.resent ? kBusyOnItsOwnClaim : kBusyWithNoCommitter;
    std::string with;
    std::vector<Deadline> deadlines;
    for (const Op& c : rec.ops)
      if (cls != kBusyOnItsOwnClaim && c.draft == b.draft && c.op == "commit" && c.inv < b.inv &&
          (c.ret == kNever || (c.outcome != "ok" && c.outcome != "replayed"))) {
        cls = kBusyBeyondLease;
        with = absl::StrCat("; the last committer (", Describe(c),
                            c.ret == kNever && crashed_at.count(c.actor)
                                ? absl::StrCat(", crashed at +", crashed_at[c.actor], "ms")
                                : std::string(),
                            ") ended more than one lease (", kLeaseMs, " ms) before");
        const int64_t ended =
            c.ret == kNever ? crashed_at.count(c.actor) ? crashed_at[c.actor] : -1 : c.ret;
        deadlines.clear();
        if (ended >= 0)
          deadlines.push_back({"", ended + kLeaseMs,
                               absl::StrCat("one lease after client", c.actor, "'s commit ended")});
      }
    for (const Op& o : rec.ops)
      // (A call that failed in transport may land later: a request held past the client's
      // timeout is applied late.)
      if (cls == kBusyWithNoCommitter && &o != &b && o.draft == b.draft && o.inv <= b.ret &&
          (o.ret >= b.inv || o.transport) &&
          (o.op == "read" || o.op == "foreign-read" || o.op == "update" || o.op == "discard")) {
        cls = "busy-from-concurrent-" + (o.op == "foreign-read" ? std::string("read") : o.op);
        with = "; concurrently " + Describe(o);
        break;
      }
    out.push_back({cls,
                   absl::StrCat("on ", b.draft, ": ", Describe(b), with,
                                b.resent ? "; one of its calls was re-sent after a reconnect" : "",
                                "; no other commit of it was in flight"),
                   {},
                   {Involve(b)},
                   deadlines});
  }
  return out;
}

}  // namespace

const HandlesProperty& BusyMeansCommitting() {
  static const HandlesProperty kProperty = {
      {"busy-means-committing",
       "HANDLE_BUSY is reported only while a commit of the draft is in flight, or within one "
       "lease after its committer died or gave up",
       Always,
       LosesWrites(),
       {{kBusyBeyondLease, "BUSY more than one lease after the last committer died or gave up"},
        {"busy-from-concurrent-read",
         "a concurrent read (its sliding-TTL touch) made an operation report BUSY"},
        {"busy-from-concurrent-update", "a concurrent update made an operation report BUSY"},
        {"busy-from-concurrent-discard",
         "a concurrent discard made a commit report BUSY instead of not found"},
        {kBusyWithNoCommitter, "BUSY with no commit in flight and none died within a lease"},
        {kBusyOnItsOwnClaim,
         "a commit whose claim CAS the client library re-sent was told BUSY about its own "
         "claim, which then holds the draft with no committer"}}},
      Run<JudgeBusyMeansCommitting>};
  return kProperty;
}

}  // namespace testbed::props::handles
