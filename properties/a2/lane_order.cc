// Property "lane-order" of the a2 event store: the events of one lane are claimed in index order,
// one at a time: an event is not claimed before every earlier event of its lane is settled.
#include <absl/strings/str_cat.h>
#include <algorithm>

#include "properties/a2/a2_workload.h"

namespace testbed::props::a2 {

using checker::kNever;
namespace {

// The anomaly classes this file names, declared once: its table and its judge use them.
constexpr char kLaneOvertaken[] = "lane-overtaken";

std::vector<Finding> JudgeLaneOrder(const Recorder& r) {
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
              {kLaneOvertaken,
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

}  // namespace

const A2Property& LaneOrder() {
  static const A2Property kProperty = {
      {"lane-order",
       "the events of a lane are claimed in index order, one at a time: an event is not "
       "claimed before every earlier event of its lane is settled",
       Always,
       LosesWrites(),
       {{kLaneOvertaken, "an event was claimed before an earlier event of its lane settled"}}},
      Concurrent<JudgeLaneOrder>};
  return kProperty;
}

}  // namespace testbed::props::a2
