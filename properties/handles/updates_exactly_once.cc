// Property "updates-exactly-once" of handles: an update the caller retries after a lost reply is
// applied once: each update appends its token to the draft's log (drafts workload).
#include <absl/strings/str_cat.h>
#include <absl/strings/str_split.h>

#include <map>

#include "properties/handles/handles_workload.h"

namespace testbed::props::handles {
namespace {

std::vector<Finding> Judge(const Recorder& rec, const sim::Trace&) {
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

}  // namespace

const HandlesProperty& UpdatesExactlyOnce() {
  static const HandlesProperty kProperty = {
      {"updates-exactly-once",
       "an update the caller retries after a lost reply is applied once",
       Always,
       {},
       {{"update-applied-twice", "one update's entry is in the draft's data twice"}}},
      Run<Judge>};
  return kProperty;
}

}  // namespace testbed::props::handles
