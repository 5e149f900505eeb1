// Property "appends-readable" of the a2 event store: an acknowledged append stays readable at the
// index it was given, as the event it was ("the event an index names never changes"), judged by the
// producer's final read.
#include <absl/strings/str_cat.h>
#include <map>

#include "model/json_text.h"
#include "properties/a2/a2_workload.h"

namespace testbed::props::a2 {
namespace {

// The anomaly classes this file names, declared once: its table and its judge use them.
constexpr char kAcknowledgedAppendMissing[] = "acknowledged-append-missing";
constexpr char kIndexNamesAnotherEvent[] = "index-names-another-event";
constexpr char kEventChanged[] = "event-changed";

std::vector<Finding> JudgeAppendsReadable(const Recorder& r) {
  std::vector<Finding> out;
  if (!r.final_read) return out;
  std::map<int64_t, const real::a2::StoredEvent*> by_index;
  for (const real::a2::StoredEvent& e : *r.final_read) by_index[e.index] = &e;
  for (const AppendRec& a : r.appends) {
    const std::string what =
        absl::StrCat("append of ", a.id, " acknowledged at index ", a.index, " (", Ms(a.inv),
                     " to ", Ms(a.ret), "); the read at ", Ms(r.final_read_inv), " ");
    auto it = by_index.find(a.index);
    std::vector<Involved> inv = {Involve(a.actor, a.inv, a.ret),
                                 Involve(r.final_reader, r.final_read_inv, r.final_read_inv)};
    if (it == by_index.end())
      out.push_back({kAcknowledgedAppendMissing, what + "has no event there", {}, inv});
    else if (it->second->id != a.id)
      out.push_back(
          {kIndexNamesAnotherEvent, what + "finds " + it->second->id + " there", {}, inv});
    else if (it->second->type != a.type || it->second->payload != a.payload)
      out.push_back({kEventChanged,
                     what + "finds it as " + it->second->type + " " +
                         model::JsonStringify(it->second->payload),
                     {},
                     inv});
  }
  return out;
}

}  // namespace

const A2Property& AppendsReadable() {
  static const A2Property kProperty = {
      {"appends-readable",
       "an acknowledged append stays readable at its index, as the event it was",
       Always,
       LosesWrites(),
       {{kAcknowledgedAppendMissing, "no event at an acknowledged index"},
        {kIndexNamesAnotherEvent, "an acknowledged index names another event"},
        {kEventChanged, "the event at an acknowledged index reads back changed"}}},
      Concurrent<JudgeAppendsReadable>};
  return kProperty;
}

}  // namespace testbed::props::a2
