// Property "snapshots" of the a2 event store: a reducer's snapshot never moves backward or past
// the session's frontier, and readState folds exactly the events after it. One sequential
// caller appends, puts snapshots (sometimes past the frontier) and reads them back, compared
// with the model (model/a2.h); duplicated SCAN pages are the one fault it keeps.
#include <set>

#include "properties/a2/a2_sequential.h"

namespace testbed::props::a2 {
namespace {

// The anomaly classes this file names, declared once: its table and its judge use them.
constexpr char kSnapshotPastFrontier[] = "snapshot-past-frontier";
constexpr char kSnapshotDiffers[] = "snapshot-differs";
constexpr char kFoldDiffers[] = "fold-differs";
constexpr char kListedSnapshotDiffers[] = "listed-snapshot-differs";
constexpr char kSnapshotListedTwice[] = "snapshot-listed-twice";

const Mix kSnapshotsMix = {{20, 0, 0, 0, 0, 0, 0, 30, 30, 0, 0, 0, 20, 0},
                           {"s1", "s2"},
                           {"sum", "count"},
                           {},
                           true,
                           false,
                           true};

std::string JudgeSnapshots(const std::vector<SequentialStep>& steps, size_t k) {
  const SequentialStep& s = steps[k];
  if (s.op == "readState" && s.store != s.model) {
    const Json snap = s.store.value("snapshot", Json());
    const Json want = s.model.value("snapshot", Json());
    const int64_t frontier = (want.is_null() ? 0 : want["index"].get<int64_t>()) +
                             static_cast<int64_t>(s.model.value("events", Json::array()).size());
    if (!snap.is_null() && snap["index"].get<int64_t>() > frontier) return kSnapshotPastFrontier;
    if (snap != want) return kSnapshotDiffers;
    return kFoldDiffers;
  }
  if (s.op == "listSnapshots" && s.store != s.model) {
    std::set<std::string> names;
    bool twice = false;
    if (s.store.is_array())
      for (const Json& row : s.store)
        twice = !names.insert(row.value("reducerName", "")).second || twice;
    return twice ? kSnapshotListedTwice : kListedSnapshotDiffers;
  }
  if (s.store != s.model) return kDiverged;
  return "";
}

}  // namespace

const A2Property& Snapshots() {
  static const A2Property kProperty = {
      {"snapshots",
       "a reducer's snapshot never moves backward or past the session's frontier, and "
       "readState returns exactly the events after the snapshot",
       Always,
       sim::FaultSet::AllBut({sim::Fault::kScanDuplicate}),
       {{kSnapshotPastFrontier, "readState returned a snapshot past the session's frontier"},
        {kSnapshotDiffers, "readState returned another snapshot than the last accepted one"},
        {kFoldDiffers, "readState returned other events than those after its snapshot"},
        {kListedSnapshotDiffers, "listSnapshots listed other snapshots than were accepted"},
        {kSnapshotListedTwice, "listSnapshots listed one reducer twice"}}},
      Sequential<kSnapshotsMix, JudgeSnapshots>};
  return kProperty;
}

}  // namespace testbed::props::a2
