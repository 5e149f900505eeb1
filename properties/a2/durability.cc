// Property "durability" of the a2 event store: what an acknowledged call wrote stays written. It
// is the one a2 property that keeps restart, failover and key loss, the faults the others set
// aside because they lose acknowledged writes by themselves (Redis persists and replicates
// asynchronously, and evicts under memory pressure): no script can prevent that, but a user
// needs to know what a lost suffix of writes does to the store's promises, so each consequence
// is its own class, for a baseline to accept knowingly:
//   index-reused             two events were shown at one index of a session (rule 1)
//   attempt-reused           two claims granted the same attempt of an event (rule 3)
//   completed-event-claimed  an event claimed after its completion was acknowledged (rule 5)
//   completion-lost          an event shown unprocessed after its completion was acknowledged
//   append-lost              a read that began after an append was acknowledged, over the
//                            append's index, shows another event there or none (rule 1, 2)
// The calls are those of the calls workload (properties/a2/a2_calls.h); only what callers saw
// is judged, each claim from a reply they got.
#include <absl/strings/str_cat.h>

#include <map>
#include <set>

#include "properties/a2/a2_calls.h"

namespace testbed::props::a2 {
namespace {

// The anomaly classes this file names, declared once: its table and its judge use them.
constexpr char kIndexReused[] = "index-reused";
constexpr char kAttemptReused[] = "attempt-reused";
constexpr char kCompletedEventClaimed[] = "completed-event-claimed";
constexpr char kCompletionLost[] = "completion-lost";
constexpr char kAppendLost[] = "append-lost";

// Every stored row a definite answer showed, with the call that showed it.
struct Seen {
  const Call* call;
  Json row;
};

std::vector<Seen> RowsShown(const std::vector<Call>& calls) {
  std::vector<Seen> out;
  for (const Call& c : calls) {
    if (c.ambiguous || c.plan.op == "presenceSet" || c.plan.op == "presenceRead") continue;
    const Json* rows = RowList(c.answer);
    if (!rows) continue;
    for (const Json& r : *rows)
      if (r.is_object() && r.contains("index") && r.contains("id")) out.push_back({&c, r});
  }
  return out;
}

Finding Of(const std::string& cls, const std::string& text, const Call& a, const Call& b) {
  return {cls,
          absl::StrCat(text, ":\n", CallText(a), "\n", CallText(b)),
          {},
          {Involve(a.actor, a.inv_ms, a.ret_ms, a.plan.op),
           Involve(b.actor, b.inv_ms, b.ret_ms, b.plan.op)}};
}

void JudgeDurability(const std::vector<Call>& calls, RunOutcome& out) {
  const std::vector<Seen> rows = RowsShown(calls);
  std::set<std::string> reported;  // one finding per class
  auto report = [&](Finding f) {
    if (reported.insert(f.cls).second) out.findings.push_back(std::move(f));
  };
  // index-reused: one index, two ids.
  std::map<int64_t, const Seen*> at_index;
  for (const Seen& s : rows) {
    const int64_t index = s.row["index"].get<int64_t>();
    auto [it, fresh] = at_index.emplace(index, &s);
    if (!fresh && it->second->row["id"] != s.row["id"])
      report(Of(kIndexReused,
                absl::StrCat("index ", index, " held ", it->second->row["id"].dump(), " and then ",
                             s.row["id"].dump()),
                *it->second->call, *s.call));
  }
  // attempt-reused: two claims granted one attempt of one event.
  std::map<std::pair<std::string, int64_t>, const Call*> granted;
  for (const Seen& s : rows) {
    if (s.call->plan.op != "claim") continue;
    const std::pair<std::string, int64_t> key = {s.row["id"].get<std::string>(),
                                                 s.row["attemptCount"].get<int64_t>()};
    auto [it, fresh] = granted.emplace(key, s.call);
    if (!fresh && it->second != s.call)
      report(
          Of(kAttemptReused,
             absl::StrCat("two claims were granted attempt ", key.second, " of event ", key.first),
             *it->second, *s.call));
  }
  // completed-event-claimed and completion-lost: after an acknowledged completion.
  for (const Call& c : calls) {
    if (c.ambiguous || c.plan.op != "complete" || c.answer.value("outcome", "") != "completed")
      continue;
    for (const Seen& s : rows) {
      if (s.call->invoke < c.ret || s.row["index"].get<int64_t>() != c.plan.index) continue;
      if (s.call->plan.op == "claim")
        report(Of(kCompletedEventClaimed,
                  absl::StrCat("event ", c.plan.index, " was claimed after its completion"), c,
                  *s.call));
      else if (s.row.contains("processedAt") && s.row["processedAt"].is_null())
        report(Of(kCompletionLost,
                  absl::StrCat("event ", c.plan.index,
                               " shows no completion after its completion was acknowledged"),
                  c, *s.call));
    }
  }
  // append-lost: a later read over the appended index shows another event there, or none.
  for (const Call& a : calls) {
    if (a.ambiguous || a.plan.op != "append" || !a.answer.contains("events")) continue;
    for (const Json& e : a.answer["events"]) {
      const int64_t index = e["index"].get<int64_t>();
      for (const Call& r : calls) {
        if (r.ambiguous || r.plan.op != "read" || r.invoke < a.ret || !r.answer.is_array())
          continue;
        if (index <= r.plan.after || (r.plan.through && index > *r.plan.through)) continue;
        bool there = false;
        for (const Json& row : r.answer) there = there || row["id"] == e["id"];
        if (!there)
          report(Of(kAppendLost,
                    absl::StrCat("event ", e["id"].dump(), " was acknowledged at index ", index,
                                 ", and a later read over that index does not show it"),
                    a, r));
      }
    }
  }
}

}  // namespace

const A2Property& Durability() {
  static const A2Property kProperty = {
      {"durability",
       "what an acknowledged call wrote stays written, under restart, failover and key loss "
       "too (each consequence of lost writes is a class of its own, to accept knowingly)",
       Always,
       {},
       {{kIndexReused, "two events were shown at one index of a session"},
        {kAttemptReused, "two claims were granted the same attempt of an event"},
        {kCompletedEventClaimed, "an event was claimed after its completion was acknowledged"},
        {kCompletionLost, "an event was shown unprocessed after its completion was acknowledged"},
        {kAppendLost,
         "a read that began after an append was acknowledged does not show the appended event "
         "at its index"}}},
      Calls<JudgeDurability>};
  return kProperty;
}

}  // namespace testbed::props::a2
