// Property "calls-linearizable" of the a2 event store: what several concurrent callers got from
// their calls, under faults, is explained by the model of the store's contract (model/a2.h)
// taking the calls one at a time in some order that respects real time (each call takes effect
// between its invocation and its reply; a call that got no reply may have taken effect or not; a
// call re-sent after a reconnect may have taken effect twice).
//
// The calls are the calls workload's (properties/a2/a2_calls.h). Each goes to the model with the
// `now` its caller's clock gave the store, so the model judges the store's logic, not the
// callers' clocks (single-holder judges those).
//
// The check is the state store's: a linearizability search (checker/linearizability.h) whose
// model step is the model's answer to one call, partitioned by session and presence namespace,
// with a budget past which the run is "no verdict", never a pass. A rejected partition is named
// by mechanism. First the model takes on every known weakness of the shipped scripts
// (model/a2.h, Weakness): what it still cannot explain is new, and is cut to its shortest
// rejected prefix without the reads it does not need; the call the nearest order stops at names
// it, by the kind of answer the store gave where the model gives another
// ("claim-answered-claimed-not-busy") or the field that differs ("renew-renewed",
// "event-attemptCount", "claim-extra-rows"), or by a mechanism read off the calls around it
// (read-not-a-snapshot, presence expiry by another clock). A history a known weakness explains
// takes that weakness's class, so a known class never hides a new mechanism.
#include <absl/container/flat_hash_set.h>
#include <absl/strings/ascii.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>
#include <absl/strings/str_replace.h>

#include <algorithm>
#include <map>
#include <set>

#include "model/json_text.h"
#include "properties/a2/a2_calls.h"
#include "properties/a2/calls_linearizable_model.h"
#include "checker/jepsen_history.h"
#include "checker/linearizability.h"
#include "checker/nearest_order.h"

namespace testbed::props::a2 {

using checker::CallHistory;
using checker::Checker;
using checker::kNever;
using checker::NearestOrder;
using checker::Operation;
using checker::Verdict;
using namespace calls_linearizable;  // the model and the history (calls_linearizable_model.h)

namespace {

namespace m = model::a2;

constexpr int64_t kMaxStates = 5'000;
constexpr int64_t kShrinkStates = 2'000;

// What kind of answer: its error, its outcome, or "ok" ("null" for presence.set's nothing).
std::string Kind(const Json& a) {
  std::string k = "ok";
  if (a.is_null()) k = "null";
  if (a.is_object() && a.contains("error") && a["error"].is_string())
    k = a["error"].get<std::string>();
  else if (a.is_object() && a.contains("outcome") && a["outcome"].is_string())
    k = a["outcome"].get<std::string>();
  k = absl::AsciiStrToLower(absl::StrReplaceAll(k, {{"_", "-"}}));
  return k == "typeerror" ? "type-error" : k;
}

// The rows of an answer: stored events by index, presence rows by participant and field,
// snapshots by reducer.
std::map<std::string, Json> RowsOf(const Json& a) {
  std::map<std::string, Json> rows;
  const Json* list = RowList(a);
  if (!list) return rows;
  for (const Json& r : *list) {
    if (!r.is_object()) continue;
    std::string key = r.contains("index") ? r["index"].dump() : "";
    if (r.contains("participant")) key = r["participant"].dump() + r.value("field", Json()).dump();
    if (r.contains("reducerName")) key = r["reducerName"].dump();
    rows[key] = r;
  }
  return rows;
}

// How two answers of one kind differ: rows missing or extra ("missing-rows", "extra-rows",
// "other-rows"), else the first field that differs, named as the answer names it.
std::string Field(const Json& store, const Json& model) {
  const std::map<std::string, Json> s = RowsOf(store), m = RowsOf(model);
  const Json* list = RowList(store);
  if (list && list->size() > s.size()) return "duplicate-rows";
  bool missing = false, extra = false;
  for (const auto& [k, v] : m) missing = missing || !s.count(k);
  for (const auto& [k, v] : s) extra = extra || !m.count(k);
  if (missing || extra)
    return missing && extra ? "other-rows" : missing ? "missing-rows" : "extra-rows";
  for (const auto& [k, v] : m) {
    const Json patch = Json::diff(v, s.at(k));
    if (!patch.empty()) {
      const std::string path = patch[0]["path"].get<std::string>();
      const size_t end = path.find('/', 1);
      return path.substr(1, end == std::string::npos ? std::string::npos : end - 1);
    }
  }
  const Json patch = Json::diff(model, store);
  if (patch.empty()) return "rows";
  const std::string path = patch[0]["path"].get<std::string>();
  const size_t end = path.find('/', 1);
  const std::string top = path.substr(1, end == std::string::npos ? std::string::npos : end - 1);
  return top.empty() ? "answer" : top;
}

// Whether a field is one of a stored event's: a difference there is the event's state, which
// any call that shows the event reveals ("event-<field>", whatever the call).
bool EventField(const std::string& f) {
  static const std::set<std::string> kFields = {
      "payload",        "type",          "createdAt",          "cause",
      "lane",           "processedAt",   "processedByAttempt", "returnedEventIds",
      "firstClaimedAt", "lastClaimedAt", "attemptCount",       "claimHolder",
      "claimExpiresAt", "failureCount",  "lastFailedAt",       "lastFailedAttempt",
      "lastError",      "failedAt",      "sessionId"};
  return kFields.count(f) > 0;
}

// Whether an append's or a completion's answer holds rows it re-read (a replay: s003 973,
// 1162), which show an event past its creation (claimed, settled or failed): the answer's
// hasPending comes from the script, its rows from later round trips.
bool ReplayedRows(const Call& c) {
  if (c.plan.op != "append" && c.plan.op != "complete") return false;
  const Json* rows = RowList(c.answer);
  if (!rows) return false;
  for (const Json& r : *rows)
    if (r.is_object() &&
        (r.value("attemptCount", 0) > 0 || !r.value("processedAt", Json()).is_null() ||
         !r.value("failedAt", Json()).is_null()))
      return true;
  return false;
}

// Whether a write of the partition ran while `at`'s round trips did (read() is three of them:
// s003 readRange), so that `at` may show it in some of its rows and not in others.
bool OverlapsAWrite(const Call& at, const History& part) {
  for (const auto& o : part)
    if (o.op != &at && !ReadOnly(o.op->plan.op) &&
        ((o.op->inv_ms <= at.ret_ms && at.inv_ms <= o.op->ret_ms && at.ret_ms > at.inv_ms) ||
         // (round trips interleave within one millisecond too: fault-free, every call of a
         // run may start and end at the same virtual instant)
         (o.op->invoke < at.ret && at.invoke < o.op->ret)))
      return true;
  return false;
}

// part: the partition's whole history (the calls around the one the search stops at).
std::string ClassOfStuck(const Stuck& s, const History& part) {
  const Call& at = *s.op->op;
  const std::string& op = at.plan.op;
  const std::string store = Kind(at.answer), model = Kind(s.model_answer);
  const std::string field = store != model ? std::string() : Field(at.answer, s.model_answer);
  // Presence expires by the callers' clocks: a read prunes (HDEL) what its own now has passed,
  // and the whole key expires on Redis's clock. So a call with a later clock that ran first, or
  // a write whose clock ran ahead of Redis's, removes entries (and their stamps) that an
  // earlier clock still counts live; a stamp gone early lets an older write in, which a read
  // then shows.
  const bool presence_rows =
      op == "presenceRead" &&
      (field == "missing-rows" || field == "other-rows" || field == "extra-rows");
  // A set refused by an entry its own clock has expired: PRESENCE_SET_LUA compares stamps
  // without looking at the entry's expiry (`e`), and the entry stays until a read prunes it or
  // Redis expires the whole key.
  if (op == "presenceSet" && (store == "null" || field == "values"))
    for (const auto& o : part)
      if (o.op->invoke < s.op->ret && o.op->plan.op == "presenceSet" &&
          o.op->plan.participant == at.plan.participant && o.op->plan.at > at.plan.at)
        return "presence-expired-stamp-still-wins";
  const bool presence_applied = op == "presenceSet" && (store == "ok" || field == "values");
  // The call itself ran after its clock's now by Redis's clock (skewed behind, or slow).
  const bool late = at.ahead < 0 || (at.ret_ms != kNever && at.ret_ms > at.inv_ms);
  if ((presence_rows || presence_applied) && late) return "presence-expired-by-another-clock";
  if (presence_rows || presence_applied)
    for (const auto& o : part)
      if (o.op->invoke < s.op->ret &&
          (o.op->now > at.now || (o.op->plan.op == "presenceSet" && o.op->ahead > 0)))
        return "presence-expired-by-another-clock";
  if (store != model) return absl::StrCat(op, "-answered-", store, "-not-", model);
  // read() is three round trips (the counter, the stream, the meta hash: s003 readRange), and so
  // are the rows an append or a completion re-reads when it replays (s003 973, 1162) and each
  // session listSessions sums, so a write that runs between them shows in some of its rows and
  // not in others.
  if (((op == "read" && field != "answer") || op == "listSessions" ||
       ((op == "append" || op == "complete") && EventField(field))) &&
      OverlapsAWrite(at, part))
    return "read-not-a-snapshot";
  if (EventField(field) && op != "fail" && op != "presenceSet" && op != "presenceRead")
    return "event-" + field;
  return absl::StrCat(op, "-", field);
}

// The known weaknesses (model/a2.h) in the order they are tried, each with the class a history
// it explains gets: the rare ones first, so the lease expiry that most runs show does not take
// their name.
struct Known {
  m::Weakness weakness;
  const char* cls;
  const char* sentence;
};
const std::vector<Known>& KnownWeaknesses() {
  static const std::vector<Known> kKnown = {
      {m::kCausedAppendUnfenced, "caused-append-not-fenced",
       "an append caused by an attempt that no longer held a live claim was accepted"},
      {m::kDeadLetterStallsLane, "dead-letter-stalls-lane",
       "a dead letter kept its lane from moving on, or kept its session pending"},
      {m::kDeleteDropsStamp, "delete-drops-presence-stamp",
       "a presence delete dropped the field's stamp, so an older write was applied after it"},
      {m::kSnapshotPastFrontier, "snapshot-past-frontier",
       "putSnapshot stored a snapshot past the session's frontier (seen when an append it "
       "counted on was lost)"},
      {m::kEmptyLaneIsNone, "empty-lane-is-no-lane",
       "an event appended to the lane \"\" was in no lane: not ordered, and read back with lane "
       "null"},
      {m::kExpiredLeaseSettles, "settled-after-lease-expired",
       "a complete, fail or caused append was accepted from an attempt whose lease had expired "
       "(seen directly, or through what later calls show)"}};
  return kKnown;
}

// The counterexample: the calls of the nearest order before the one it stops at, that call and
// the calls concurrent with it, and how its answer differs from the model's.
Finding Explain(const std::string& cls, const std::string& preface, const History& core,
                const Stuck& stuck, const std::string& partition) {
  std::vector<Involved> involved;
  if (!stuck.op) {
    std::string text = absl::StrCat(preface, "No order of these ", core.size(), " calls on ",
                                    partition, " explains every answer (model/a2.h):\n");
    for (const auto& o : core) {
      absl::StrAppend(&text, CallText(*o.op), "\n");
      involved.push_back(Involve(o.op->actor, o.op->inv_ms, o.op->ret_ms, o.op->plan.op));
    }
    return {cls, text, {}, involved};
  }
  const Call& at = *stuck.op->op;
  std::vector<const Call*> shown;
  const size_t from = stuck.before.size() > 8 ? stuck.before.size() - 8 : 0;
  for (size_t k = from; k < stuck.before.size(); ++k) shown.push_back(stuck.before[k]->op);
  for (const auto& o : core)
    if (o.op == &at || (o.op->inv_ms <= at.ret_ms && at.inv_ms <= o.op->ret_ms &&
                        std::find(shown.begin(), shown.end(), o.op) == shown.end()))
      shown.push_back(o.op);
  std::string text =
      absl::StrCat(preface, "No order of the calls on ", partition,
                   " explains every answer (model/a2.h). ", "The nearest order explains ",
                   stuck.explained, " of them (the last ", stuck.before.size() - from,
                   " shown), then stops at ", Actor(at.actor), "'s ", at.line, ":\n");
  for (const Call* c : shown) {
    absl::StrAppend(&text, CallText(*c), "\n");
    involved.push_back(Involve(c->actor, c->inv_ms, c->ret_ms, c->plan.op));
  }
  absl::StrAppend(&text, "the store answered ", Short(at.answer), "; the model, after that order, ",
                  Short(stuck.model_answer),
                  "; where they differ: ", Short(Json::diff(stuck.model_answer, at.answer)));
  return {cls, text, {}, involved};
}

// SCAN may return a key more than once (the scan-duplicates fault), and listSnapshots keeps every
// key it returns. That is a finding of its own, judged here call by call; the search then sees
// each listing without its repeats, so a repeat never stands in for another mechanism.
std::vector<Call> WithoutRepeatedSnapshots(std::vector<Call> calls, RunOutcome& out) {
  bool reported = false;
  for (Call& c : calls) {
    if (c.ambiguous || c.plan.op != "listSnapshots" || !c.answer.is_array()) continue;
    Json unique = Json::array();
    std::set<Json> names;
    for (const Json& row : c.answer)
      if (names.insert(row.value("reducerName", Json())).second) unique.push_back(row);
    if (unique.size() == c.answer.size()) continue;
    if (!reported)
      out.findings.push_back({"snapshot-listed-twice",
                              absl::StrCat("listSnapshots listed a reducer twice:\n", CallText(c)),
                              {},
                              {Involve(c.actor, c.inv_ms, c.ret_ms, c.plan.op)}});
    reported = true;
    c.answer = std::move(unique);
  }
  return calls;
}

// The events a claim of the run was answered with: (session, index), each a lease's lock.
std::set<std::pair<std::string, int64_t>> ClaimedEvents(const std::vector<Call>& calls) {
  std::set<std::pair<std::string, int64_t>> events;
  for (const Call& c : calls)
    if (c.plan.op == "claim" && !c.ambiguous && c.answer.value("outcome", "") == "claimed")
      for (const Json& e : c.answer["events"]) events.emplace(c.plan.session, e.value("index", 0));
  return events;
}

}  // namespace

namespace {

void JudgeCallsLinearizable(const std::vector<Call>& recorded, RunOutcome& out) {
  // Kept for the run's Jepsen histories (a2's leases as mutexes), computed only if a report
  // writes them.
  const auto kept =
      std::make_shared<const std::vector<Call>>(WithoutRepeatedSnapshots(recorded, out));
  const std::vector<Call>& calls = *kept;
  for (const auto& [session, index] : ClaimedEvents(calls))
    out.histories.push_back(
        {absl::StrCat("lease-", session, "-", index), "mutex",
         [kept, session = session, index = index] { return LeaseAsMutex(*kept, session, index); }});
  const History history = MakeHistory(calls);
  const CallsModel model;
  const Verdict v = Checker<CallsModel>(model, kMaxStates).check(history);
  if (!v.complete) out.incomplete = true;
  if (v.ok) return;
  History part;
  for (const auto& o : history)
    if (o.partition == v.partition) part.push_back(o);
  // A new mechanism first: what the model cannot explain even when it takes on every known
  // weakness of the shipped scripts is named by the call it stops at, so a known class never
  // hides it.
  const CallsModel lenient_model{m::kAllWeaknesses}, strict{0};
  NearestOrder<CallsModel> lenient(lenient_model, part, kMaxStates);
  const bool explained = lenient.Run();
  // A read that a write ran through may show the write in some rows and not in others: no
  // order explains it, and the nearest order may stop at another call that needs the write to
  // come first (a claim's retryAt after the read, seed 8683728 under --faults all). The
  // partition without such reads, explained, is that known mechanism. So is an append or a
  // completion whose replayed rows a write ran through (its hasPending from before the write,
  // its rows from after): taken as a call whose answer is unknown, as it still wrote what it
  // wrote (seed 1008 under --faults all: a re-sent append's replay across a completion).
  if (!explained && !lenient.gave_up()) {
    History without;
    bool set_aside = false;
    for (auto o : part) {
      const std::string& op = o.op->plan.op;
      const bool torn = OverlapsAWrite(*o.op, part);
      if ((op == "read" || op == "listSessions") && torn) {
        set_aside = true;
        continue;
      }
      if (ReplayedRows(*o.op) && torn && !o.ambiguous) {
        o.ambiguous = true;
        o.ret = kNever;
        set_aside = true;
      }
      without.push_back(o);
    }
    if (set_aside) {
      NearestOrder<CallsModel> rest(lenient_model, without, kMaxStates);
      if (rest.Run()) {
        const History core = Shrink(lenient_model, part, kShrinkStates);
        NearestOrder<CallsModel> search(lenient_model, core, kMaxStates);
        search.Run();
        out.findings.push_back(Explain("read-not-a-snapshot",
                                       "Explained once the reads a write ran through are set "
                                       "aside, and the replays it ran through are taken as "
                                       "unknown (a read is three round trips). ",
                                       core, search.stuck(), v.partition));
        return;
      }
      if (rest.gave_up()) {  // past the budget: no verdict, never a pass
        out.incomplete = true;
        return;
      }
    }
  }
  if (!explained && !lenient.gave_up()) {
    const History core = Shrink(lenient_model, part, kShrinkStates);
    NearestOrder<CallsModel> search(lenient_model, core, kMaxStates);
    search.Run();
    out.findings.push_back(
        Explain(search.stuck().op ? ClassOfStuck(search.stuck(), part) : "calls-unexplained",
                "Even with the known weaknesses of the scripts taken on. ", core, search.stuck(),
                v.partition));
    return;
  }
  // Else the known weakness that explains the history alone names it.
  const History core = Shrink(strict, part, kShrinkStates);
  NearestOrder<CallsModel> search(strict, core, kMaxStates);
  search.Run();
  for (const Known& k : KnownWeaknesses())
    if (!Rejected(CallsModel{k.weakness}, core, kShrinkStates)) {
      out.findings.push_back(Explain(
          k.cls, absl::StrCat("Explained once the model takes on a known weakness (", k.cls, "). "),
          core, search.stuck(), v.partition));
      return;
    }
  // Several at once: the first the explanation cannot do without names it.
  for (const Known& k : KnownWeaknesses())
    if (Rejected(CallsModel{m::kAllWeaknesses & ~k.weakness}, core, kShrinkStates)) {
      out.findings.push_back(
          Explain(k.cls,
                  absl::StrCat("Explained once the model takes on known weaknesses, ", k.cls,
                               " among them. "),
                  core, search.stuck(), v.partition));
      return;
    }
  out.findings.push_back(
      Explain(search.stuck().op ? ClassOfStuck(search.stuck(), part) : "calls-unexplained", "",
              core, search.stuck(), v.partition));
}

// The classes: per call, each kind of answer the store may give where the model gives
// another, the rows it shows or withholds, and each field of an answer of the right kind; a
// stored event's field once, whichever call shows it.
std::vector<AnomalyClass> Classes() {
  struct Shape {
    const char* op;
    std::vector<const char*> kinds, fields;
  };
  auto with = [](std::vector<const char*> v, std::vector<const char*> more) {
    v.insert(v.end(), more.begin(), more.end());
    return v;
  };
  const std::vector<const char*> errors = {"partial-duplicate-batch", "superseded-attempt",
                                           "type-error", "store-unavailable"};
  const std::vector<const char*> rows = {"missing-rows", "extra-rows", "other-rows",
                                         "duplicate-rows"};
  const std::vector<Shape> shapes = {
      {"append", with({"ok"}, errors), with(rows, {"hasPending", "notified"})},
      {"claim", with({"claimed", "busy", "settled"}, errors), with(rows, {"retryAt"})},
      {"renew", with({"ok"}, errors), {"renewed", "superseded"}},
      {"complete", with({"completed", "superseded"}, errors), with(rows, {"notified"})},
      {"fail", with({"failed", "dead-lettered", "superseded"}, errors), {"failureCount"}},
      {"read", with({"ok"}, errors), rows},
      {"readEvents", with({"ok"}, errors), rows},
      {"readState", with({"ok"}, errors), with(rows, {"snapshot"})},
      {"putSnapshot", with({"ok"}, errors), {"answer"}},
      {"presenceSet", with({"ok", "null"}, errors), {"participant", "values", "seen", "at"}},
      {"presenceRead", with({"ok"}, errors), with(rows, {"value", "seen", "at", "expiresAt"})},
      {"listSnapshots", with({"ok"}, errors), with(rows, {"index", "updatedAt"})},
      // (An inspecting run's: listSessions' page and its cursor, markWatched's answer.)
      {"listSessions", with({"ok"}, errors), {"sessions", "cursor"}},
      {"markWatched", with({"ok"}, errors), {"answer"}}};
  std::vector<AnomalyClass> out;
  for (const Shape& s : shapes) {
    for (const char* a : s.kinds)
      for (const char* b : s.kinds)
        if (std::string(a) != b)
          out.push_back({absl::StrCat(s.op, "-answered-", a, "-not-", b),
                         absl::StrCat(s.op, " answered ", a,
                                      " where every order of the calls "
                                      "the model explains answers ",
                                      b)});
    for (const char* f : s.fields) {
      const std::string field = f;
      out.push_back(
          {absl::StrCat(s.op, "-", f),
           field == "missing-rows" ? absl::StrCat(s.op,
                                                  " left out events (or rows) the model "
                                                  "answers with, in every order it explains")
           : field == "extra-rows"
               ? absl::StrCat(s.op,
                              " answered with events (or rows) that no order the model "
                              "explains gives")
           : field == "duplicate-rows"
               ? absl::StrCat(s.op, " answered with the same event (or row) more than once")
           : field == "other-rows"
               ? absl::StrCat(s.op,
                              " answered with other events (or rows) than any order the "
                              "model explains")
               : absl::StrCat(s.op, " answered a ", f,
                              " that no order of the calls the model explains gives")});
    }
  }
  for (const char* f : {"payload", "type", "createdAt", "cause", "lane", "processedAt",
                        "processedByAttempt", "returnedEventIds", "firstClaimedAt", "lastClaimedAt",
                        "attemptCount", "claimHolder", "claimExpiresAt", "failureCount",
                        "lastFailedAt", "lastFailedAttempt", "lastError", "failedAt", "sessionId"})
    out.push_back({absl::StrCat("event-", f),
                   absl::StrCat("a stored event showed a ", f,
                                " that no order of the calls the model explains gives it")});
  for (const Known& k : KnownWeaknesses()) out.push_back({k.cls, k.sentence});
  out.push_back({"presence-expired-by-another-clock",
                 "a presence read left out entries its own clock still counts live: entries "
                 "expire by the callers' clocks (a read HDELs what its now has passed, and the "
                 "whole key expires on Redis's clock), so a call whose clock is ahead prunes them "
                 "for everyone"});
  out.push_back({"presence-expired-stamp-still-wins",
                 "presence.set refused a write because of an entry its own clock had expired: "
                 "the set compares stamps without looking at the entry's expiry, and the entry "
                 "stays until a read prunes it or Redis expires the whole key"});
  out.push_back({"snapshot-listed-twice",
                 "listSnapshots listed a reducer twice: SCAN may return a key more than once, "
                 "and the port keeps every key it returns"});
  out.push_back({"read-not-a-snapshot",
                 "read (or listSessions, or the replay of an append or a completion) answered "
                 "rows that no single instant explains, while a write ran concurrently: the port "
                 "reads the counter, the stream and the meta hash in separate round trips"});
  out.push_back({"calls-unexplained",
                 "no order of the calls explains every answer, and none explains a longest "
                 "prefix the search could name"});
  return out;
}

}  // namespace

void JudgeCalls(const std::vector<Call>& calls, RunOutcome& out) {
  JudgeCallsLinearizable(calls, out);
}

const A2Property& CallsLinearizable() {
  static const A2Property kProperty = {
      {"calls-linearizable",
       "what concurrent callers get, under faults, is what the model of the store's contract "
       "(model/a2.h) answers for the calls taken one at a time in an order that respects real "
       "time",
       Always, LosesWrites(), Classes()},
      Calls<JudgeCallsLinearizable, /*Inspect=*/true>};
  return kProperty;
}

}  // namespace testbed::props::a2
