// Property "presence-lww" of the a2 event store: presence is per-field last-writer-wins by the
// sender's `at` stamp (PRESENCE_SET_LUA's comment), whatever the delivery order: after every write,
// a read shows for each field the write with the newest stamp (a delete included). Its clients are
// presence writers, stamping with their own clocks and delivering out of order.
#include <absl/strings/str_cat.h>

#include "model/json_text.h"
#include "properties/a2/a2_workload.h"

namespace testbed::props::a2 {
namespace {

// The anomaly classes this file names, declared once: its table and its judge use them.
constexpr char kOlderWriteWon[] = "older-write-won";
constexpr char kDeletedFieldResurrected[] = "deleted-field-resurrected";
constexpr char kNewerWriteLost[] = "newer-write-lost";

std::vector<Finding> JudgePresenceLww(const Recorder& r) {
  std::vector<Finding> out;
  if (!r.presence_read) return out;
  for (const std::string field : {"cursor", "status"}) {
    // The newest write of the field acknowledged before the read began; a write still in
    // flight during the read, or of unknown outcome, may have won too, but only with a stamp as
    // new (ties go to the write applied last, PRESENCE_SET_LUA's comment).
    const PresenceWrite* newest = nullptr;
    for (const PresenceWrite& w : r.presence)
      if (w.field == field && w.acked && w.ret < r.presence_read_inv &&
          (!newest || w.at > newest->at))
        newest = &w;
    if (!newest) continue;
    bool may_be_deleted = false;
    for (const PresenceWrite& w : r.presence)
      if (w.field == field && w.value.is_null() && w.at >= newest->at) may_be_deleted = true;
    const real::a2::PresenceRow* row = nullptr;
    for (const real::a2::PresenceRow& p : *r.presence_read)
      if (p.field == field) row = &p;
    const std::string want = absl::StrCat(
        "the newest acknowledged write of ", field, " was ", Actor(newest->actor), "'s ",
        newest->value.is_null() ? "delete" : model::JsonStringify(newest->value), " stamped ",
        newest->at, " (sent ", Ms(newest->inv), ")");
    std::vector<Involved> inv = {Involve(newest->actor, newest->inv, newest->ret)};
    if (row && row->at < newest->at) {
      const bool resurrected = newest->value.is_null();
      out.push_back({resurrected ? kDeletedFieldResurrected : kOlderWriteWon,
                     absl::StrCat(want, "; the read at ", Ms(r.presence_read_inv), " shows ",
                                  model::JsonStringify(row->value), " stamped ", row->at),
                     {},
                     inv});
    } else if (!row && !may_be_deleted) {
      out.push_back(
          {kNewerWriteLost,
           absl::StrCat(want, "; the read at ", Ms(r.presence_read_inv), " shows no value"),
           {},
           inv});
    }
  }
  return out;
}

}  // namespace

const A2Property& PresenceLww() {
  static const A2Property kProperty = {
      {"presence-lww",
       "presence is per-field last-writer-wins by the sender's stamp, whatever the delivery "
       "order: a read after every write shows each field's newest write (a delete included)",
       Always,
       LosesWrites(),
       {{kOlderWriteWon, "a read shows an older write than the newest acknowledged one"},
        {kDeletedFieldResurrected,
         "a field deleted by the newest write reads back with an older value"},
        {kNewerWriteLost, "a field whose newest write set a value reads back missing"}}},
      Concurrent<JudgePresenceLww, Workload::kPresence>};
  return kProperty;
}

}  // namespace testbed::props::a2
