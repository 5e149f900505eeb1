// Property "updates-exactly-once" of handles: an update the caller retries after a lost reply is
// applied once: each update appends its token to the draft's log (drafts workload).
#include <absl/strings/str_cat.h>
#include <absl/strings/str_split.h>

#include <map>

#include "properties/handles/handles_workload.h"

namespace testbed::props::handles {
namespace {

// The anomaly classes this file names, declared once: its table and its judge use them.
constexpr char kUpdateAppliedTwice[] = "update-applied-twice";
constexpr char kUpdateRetriedAfterLostReply[] = "update-retried-after-lost-reply";
constexpr char kUpdateReappliedAfterResend[] = "update-reapplied-after-resend";

std::vector<Finding> JudgeUpdatesExactlyOnce(const Recorder& rec, const sim::Trace&) {
  std::vector<Finding> out;
  for (const Op& o : rec.ops) {
    // (value(): operator[] of a const json on a missing key is undefined behaviour.)
    if (o.outcome != "ok" || !o.value.is_object() || !o.value.value("log", Json()).is_string())
      continue;
    std::map<std::string, int> seen;
    for (const std::string& t :
         std::vector<std::string>(absl::StrSplit(o.value["log"].get<std::string>(), ',')))
      if (!t.empty() && ++seen[t] == 2) {
        // What applied it again: the client library re-sending a CAS that had landed (the
        // runtime then saw a conflict and ran the update once more), or the caller retrying
        // an update whose reply it never got.
        int sent = 0;
        bool resent = false;
        for (const Op& u : rec.ops)
          if (u.op == "update" && u.token == t) {
            ++sent;
            resent = resent || u.resent;
          }
        out.push_back({resent      ? kUpdateReappliedAfterResend
                       : sent >= 2 ? kUpdateRetriedAfterLostReply
                                   : kUpdateAppliedTwice,
                       absl::StrCat("on ", o.draft, ": the update ", t, " (sent ", sent,
                                    sent == 1 ? " time" : " times", resent ? ", re-sent" : "",
                                    ") is in the data twice: ", Describe(o)),
                       {},
                       {Involve(o)}});
        return out;
      }
  }
  return out;
}

}  // namespace

const HandlesProperty& UpdatesExactlyOnce() {
  static const HandlesProperty kProperty = {
      {"updates-exactly-once",
       "an update the caller retries after a lost reply is applied once",
       Always,
       {},
       {{kUpdateAppliedTwice, "one update's entry is in the draft's data twice"},
        {kUpdateRetriedAfterLostReply,
         "the caller retried an update whose reply was lost (as HANDLE_STORAGE_UNAVAILABLE "
         "invites), and the first had landed: update is a read-modify-write with no request id"},
        {kUpdateReappliedAfterResend,
         "the client library re-sent an update's CAS after a reconnect; the first sending had "
         "landed, the runtime took the re-send's conflict for a concurrent writer and applied "
         "the update again"}}},
      Run<JudgeUpdatesExactlyOnce>};
  return kProperty;
}

}  // namespace testbed::props::handles
