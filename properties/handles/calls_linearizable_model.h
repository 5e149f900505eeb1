// calls-linearizable's model of the handle contract (calls_linearizable.cc says what it takes
// on from the seed): a draft's state with its deadlines as spans, the steps a call makes (a
// commit's claim, finalize or restore), the weaknesses it may be told to take on, and the step
// function the search runs. Internal to calls_linearizable.cc.
#pragma once

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checker/nearest_order.h"
#include "properties/handles/handles_workload.h"
#include "properties/shared/json_bend.h"

namespace testbed::props::handles::calls_linearizable {

using checker::CallHistory;
using checker::kNever;
using checker::Operation;

// A closed span of instants (ms); kNever as `hi`: no end known.
struct Span {
  int64_t lo = 0, hi = 0;
};

int64_t Add(int64_t t, int64_t d) { return t == kNever ? kNever : t + d; }

// One step of the model: a whole call, or a part of a commit.
struct Step {
  enum Part { kWhole, kClaim, kFinalize, kRestore };
  const Op* op = nullptr;
  int index = 0;  // the call's index in the recorder: a claim's holder
  Part part = kWhole;
  Span world;  // virtual time (Redis's clock)
  Span clock;  // the values the caller's clock may have had
  // claim: how far behind virtual time the committer's clock was at its furthest in the run
  // (its renewals write stamps of that clock)
  int64_t behind = 0;
  unsigned needs = 0;  // a twin of a re-sent call: the Weakness under which it may land
  Json result;         // finalize: what the work returned
};

// A draft as the contract has it.
struct Draft {
  enum Status : uint8_t { kNone, kActive, kCommitting, kCommitted, kGone };
  Status status = kNone;
  Json data, result;
  Span expires, max_expires;  // stamps of the writers' clocks
  Span gone;                  // when the key may vanish, in virtual time
  int holder = -1;            // committing: the claim's call
  bool cursor = false;        // a cursor (promise 7): its one deadline is "ttl", never slid
};

const model::HandleKindModel& Kind() {
  static const model::HandleKindModel k{DraftKind().idle_ttl_ms, DraftKind().max_ttl_ms,
                                        DraftKind().result_ttl_ms};
  return k;
}
int64_t Grace(int64_t lifetime) { return std::min<int64_t>(lifetime, 60 * 60'000); }

model::HandleAnswer Code(const std::string& code, const std::string& deadline = "") {
  model::HandleAnswer a;
  a.code = code;
  a.deadline = deadline;
  return a;
}

// When the key vanishes after a write at `s` of a record whose stored deadline is `until`: the
// state store sets it to expire at the writer's `now` plus its storage TTL (SET ... PXAT, a
// stamp of the writer's clock), max(1, until - now) + grace (js 454), and Redis expires it by
// its own clock, which is virtual time here.
Span GoneAfter(const Step& s, Span until, int64_t grace) {
  return {std::max(s.clock.lo + 1, until.lo) + grace,
          s.clock.hi == kNever || until.hi == kNever ? kNever
                                                     : std::max(s.clock.hi + 1, until.hi) + grace};
}

// A draft's idle deadline slid by a read or an update at `s` (js 446).
void Slide(Draft& d, const Step& s) {
  d.expires = {std::min(s.clock.lo + Kind().idle_ttl_ms, d.max_expires.lo),
               std::min(Add(s.clock.hi, Kind().idle_ttl_ms), d.max_expires.hi)};
  d.gone = GoneAfter(s, d.max_expires, Grace(Kind().max_ttl_ms));
}

// Data as the store gives it back, where the model may take on the one known weakness of the
// store's encoding: lua-cjson writes numbers with 14 significant digits and empty arrays as
// empty objects (data-read-back names those).
bool SameData(const Json& want, const Json& got, bool bends) {
  if (want == got) return true;
  if (!bends) return false;
  if (want.is_array() && want.empty() && got.is_object() && got.empty()) return true;
  if (want.is_number() && got.is_number()) {
    const double a = want.get<double>(), b = got.get<double>();
    return std::abs(a - b) <= 1e-13 * std::max(std::abs(a), std::abs(b));
  }
  if (want.type() != got.type() || want.size() != got.size()) return false;
  if (want.is_array()) {
    for (size_t i = 0; i < want.size(); ++i)
      if (!SameData(want[i], got[i], bends)) return false;
    return true;
  }
  if (!want.is_object()) return false;
  for (const auto& [k, v] : want.items())
    if (!got.contains(k) || !SameData(v, got[k], bends)) return false;
  return true;
}

// The known weaknesses of the shipped code that the model may take on, only ever to name a
// finding: what the model cannot explain even with all of them is a new mechanism.
enum Weakness : unsigned {
  kBends = 1,  // the store's encoding bends the data (SameData)
  // A write by a caller whose clock reads earlier than the draft's creation stamp computes a
  // storage TTL past the namespace's maxTtl (max_expires_at - now + grace > max + grace - created,
  // js 454 and 371), and the state store refuses it: HANDLE_STORAGE_UNAVAILABLE, no effect.
  kTtlByCallerClock = 2,
  // The claim's key ends at a stamp of the committer's clock: its renewals write now + lease
  // (js 700), so a committer whose clock is behind Redis's ends it early, while it still holds
  // the claim or after its commit gave up.
  kClaimByCommitterClock = 4,
  // A re-sent CAS lands, the re-sending fails on the version it moved, and the call takes its
  // own write for a rival's: update applies again (up to its three attempts, js 590-613); commit
  // answers BUSY about its own claim, which stays (js 657).
  kUpdateReapplied = 8,
  kOwnClaimBusy = 16,
  kAllWeaknesses = 31,
};

struct CallsModel {
  using State = Draft;
  using Op = const Step*;
  using Answer = model::HandleAnswer;
  unsigned weaknesses = 0;
  std::string* bend = nullptr;  // gets the first bend of the data the model took on

  State init() const { return {}; }
  // A step that never changes the draft: a foreign read, and a call that answered an error
  // (not a re-sent call's twin).
  bool read_only(Op s) const {
    return s->part == Step::kWhole && !s->needs &&
           (s->op->op == "foreign-read" || s->op->op == "commit" ||
            (s->op->outcome != "ok" && !s->op->transport && s->op->ret != kNever));
  }
  void append_key(const State& d, std::string& out) const {
    absl::StrAppend(&out, d.status, "|", d.data.dump(), "|", d.result.dump(), "|", d.expires.lo,
                    ",", d.expires.hi, ",", d.max_expires.lo, ",", d.max_expires.hi, ",", d.gone.lo,
                    ",", d.gone.hi, ",", d.holder, d.cursor ? ",cursor" : "");
  }

  // What loading the draft at `s` may give (js 485): not found (never created, discarded, or
  // its key gone by Redis's clock), expired (by the caller's clock; a committing draft never
  // is), or the record. Each that is possible is added to `out` with the draft it leaves.
  struct Loaded {
    bool not_found = false, expired = false, there = false;
    bool present = false;                // the key may still hold the record (expired or not)
    std::vector<std::string> deadlines;  // the expired deadlines possible
    Draft gone;                          // the draft after a not-found by expiry
  };
  static Loaded Load(const Draft& d, const Step& s) {
    Loaded l;
    if (d.status == Draft::kNone || d.status == Draft::kGone) {
      l.not_found = true;
      l.gone = d;
      return l;
    }
    const bool may_be_gone = s.world.hi == kNever || s.world.hi > d.gone.lo;
    const bool may_be_there = d.gone.hi == kNever || s.world.lo <= d.gone.hi;
    if (may_be_gone) {
      l.not_found = true;
      l.gone = d;
      l.gone.status = Draft::kGone;
    }
    if (!may_be_there) return l;
    l.present = true;
    if (d.status == Draft::kCommitting) {
      l.there = true;
      return l;
    }
    const bool past_max = s.clock.hi >= d.max_expires.lo;
    const bool past_idle = s.clock.hi >= d.expires.lo;
    if (past_max || past_idle) {
      l.expired = true;
      if (d.status == Draft::kCommitted)
        l.deadlines = {"result"};
      else if (d.cursor)
        l.deadlines = {"ttl"};
      else {
        if (past_max) l.deadlines.push_back("max");
        if (past_idle && s.clock.lo < d.max_expires.hi) l.deadlines.push_back("idle");
      }
    }
    l.there = s.clock.lo < d.expires.hi && s.clock.lo < d.max_expires.hi;
    return l;
  }

  // The model's answer for a load that fails, as an answer to show.
  static Answer Failed(const Loaded& l) {
    if (!l.there && l.expired) return Code("HANDLE_EXPIRED", l.deadlines.front());
    return Code("HANDLE_NOT_FOUND");
  }
  // The record's answer as a read shows it.
  static Answer Record(const Draft& d) {
    Answer a;
    a.status = d.status == Draft::kActive       ? "active"
               : d.status == Draft::kCommitting ? "committing"
                                                : "committed";
    a.data = d.data;
    a.data["status"] = a.status;
    return a;
  }

  Answer explain(const State& d, Op s, bool ambiguous, std::vector<State>& next) const {
    const Op_& o = *s->op;
    const std::string& got = o.outcome;
    if (s->needs && !(weaknesses & s->needs)) return Answer();  // it cannot land
    if (o.op == "create") return Create(d, *s, next);
    if (o.op == "foreign-read") {  // a bound draft is not another connection's (contract 5)
      if (ambiguous || got == "HANDLE_NOT_FOUND") next.push_back(d);
      return Code("HANDLE_NOT_FOUND");
    }
    if (s->part == Step::kClaim) return Claim(d, *s, next);
    if (s->part == Step::kFinalize) return Finalize(d, *s, ambiguous, next);
    if (s->part == Step::kRestore) {
      if (d.status == Draft::kCommitting && d.holder == s->index) {
        Draft n = d;
        n.status = Draft::kActive;
        n.holder = -1;
        Slide(n, *s);
        next.push_back(n);
      }
      return Answer();
    }
    const Loaded l = Load(d, *s);
    // The load's failures: the same answer from every call.
    const bool failed_as_seen =
        !ambiguous && ((got == "HANDLE_NOT_FOUND" && l.not_found) ||
                       (got == "HANDLE_EXPIRED" && l.expired &&
                        std::count(l.deadlines.begin(), l.deadlines.end(), o.deadline) > 0));
    if (failed_as_seen) next.push_back(got == "HANDLE_NOT_FOUND" ? l.gone : d);
    const bool busy_ok = d.status == Draft::kCommitting || d.status == Draft::kActive;
    // A write of an active draft (a read's slide, an update, a claim) refused by the TTL its
    // caller's clock computes (kTtlByCallerClock).
    if ((weaknesses & kTtlByCallerClock) && !ambiguous && l.there && d.status == Draft::kActive &&
        got == "HANDLE_STORAGE_UNAVAILABLE" &&
        s->clock.lo < d.max_expires.hi - Grace(Kind().max_ttl_ms))
      next.push_back(d);
    if (o.op == "read") return Read(d, *s, l, ambiguous, next);
    if (o.op == "update") return Update(d, *s, l, ambiguous, busy_ok, next);
    if (o.op == "discard") return Discard(d, *s, l, ambiguous, next);
    // A commit that ran no work: a replay, BUSY, or a load that failed.
    if (!l.there) return Failed(l);
    if (!ambiguous && got == "HANDLE_BUSY" && busy_ok) next.push_back(d);
    if (d.status == Draft::kCommitted) {
      Answer a;
      a.status = "replayed";
      a.result = d.result;
      if (!ambiguous && got == "replayed" && o.value == d.result) next.push_back(d);
      return a;
    }
    return Code("HANDLE_BUSY");
  }

 private:
  using Op_ = ::testbed::props::handles::Op;

  // create: a new draft (or cursor, which lives ttlMs from its create: promise 7).
  Answer Create(const State& d, const Step& s, std::vector<State>& next) const {
    const Op_& o = *s.op;
    if (d.status != Draft::kNone) return Code("HANDLE_EXISTS");  // (a second create)
    Draft n;
    n.status = Draft::kActive;
    n.data = o.sent;
    if (o.cursor) {  // it lives ttlMs from its create (promise 7)
      const int64_t ttl = CursorKind().ttl_ms;
      n.cursor = true;
      n.expires = n.max_expires = {s.clock.lo + ttl, Add(s.clock.hi, ttl)};
      n.gone = GoneAfter(s, n.max_expires, Grace(ttl));
      next.push_back(n);
      Answer a;
      a.status = "active";
      return a;
    }
    n.max_expires = {s.clock.lo + Kind().max_ttl_ms, Add(s.clock.hi, Kind().max_ttl_ms)};
    n.expires = {s.clock.lo + std::min(Kind().idle_ttl_ms, Kind().max_ttl_ms),
                 Add(s.clock.hi, std::min(Kind().idle_ttl_ms, Kind().max_ttl_ms))};
    n.gone = GoneAfter(s, n.max_expires, Grace(Kind().max_ttl_ms));
    next.push_back(n);
    Answer a;
    a.status = "active";
    return a;
  }

  // read: the record, and the sliding touch that may move its idle deadline.
  Answer Read(const State& d, const Step& s, const Loaded& l, bool ambiguous,
              std::vector<State>& next) const {
    const Op_& o = *s.op;
    const std::string& got = o.outcome;
    if (!l.there) return Failed(l);
    const Answer a = Record(d);
    if (ambiguous || (got == "ok" && Same(a.data, o.value))) {
      // The sliding touch (js 577). Its CAS loses only to a write that loaded before it
      // landed: the same as the touch, then that write, as long as the touch moves the
      // deadline later (that write then refreshes it itself, or checked it against an earlier
      // one). A touch by a clock behind the writer's may move it earlier, and then the write
      // checked the deadline the touch never replaced: the read may not have slid. So may one
      // that failed in transport.
      const bool may_shorten =
          std::min(s.clock.lo + Kind().idle_ttl_ms, d.max_expires.lo) < d.expires.hi;
      // (A cursor's read writes nothing: promise 7.)
      if (ambiguous || d.status != Draft::kActive || may_shorten || d.cursor) next.push_back(d);
      if (d.status == Draft::kActive && !d.cursor) {
        Draft n = d;
        Slide(n, s);
        next.push_back(n);
      }
    }
    return a;
  }

  // update: the data with the call's note or token, unless committing or committed.
  Answer Update(const State& d, const Step& s, const Loaded& l, bool ambiguous, bool busy_ok,
                std::vector<State>& next) const {
    const Op_& o = *s.op;
    const std::string& got = o.outcome;
    if (!l.there) return Failed(l);
    if (d.status == Draft::kCommitted) {
      if (!ambiguous && got == "HANDLE_COMMITTED") next.push_back(d);
      return Code("HANDLE_COMMITTED");
    }
    if (!ambiguous && got == "HANDLE_BUSY" && busy_ok) next.push_back(d);
    if (d.status == Draft::kCommitting) return Code("HANDLE_BUSY");
    Draft n = d;
    if (o.token.empty())
      n.data["note"] = "caf\u00e9";
    else
      n.data["log"] = absl::StrCat(n.data.value("log", ""), ",", o.token);
    Slide(n, s);
    Answer a;
    a.status = "active";
    a.data = n.data;
    // (The creator's first update keeps no answer: its data is only read back.)
    if (ambiguous || (got == "ok" && (o.value.is_null() || Same(n.data, o.value))))
      next.push_back(std::move(n));
    return a;
  }

  // discard: no load; a GET, then a tombstone unless committing (js 837).
  Answer Discard(const State& d, const Step& s, const Loaded& l, bool ambiguous,
                 std::vector<State>& next) const {
    const std::string& got = s.op->outcome;
    if (l.not_found && (ambiguous || got == "ok")) next.push_back(l.gone);
    if (!l.present) return Answer();
    if (!ambiguous && got == "HANDLE_BUSY") next.push_back(d);  // committing, or a lost race
    if (d.status == Draft::kCommitting) return Code("HANDLE_BUSY");
    Draft n = d;
    n.status = Draft::kGone;
    if (ambiguous || got == "ok") next.push_back(n);
    return Answer();
  }

  bool Same(const Json& want, const Json& got) const {
    if (want == got) return true;
    if (!SameData(want, got, weaknesses & kBends)) return false;
    if (bend && bend->empty()) *bend = JsonBend(want, got);
    return true;
  }

  // The claim of a commit whose work ran (or may have): active -> committing (js 680).
  Answer Claim(const Draft& d, const Step& s, std::vector<State>& next) const {
    const Loaded l = Load(d, s);
    if (!l.there) return Failed(l);
    if (d.status == Draft::kCommitted) return Code("HANDLE_COMMITTED");
    if (d.status == Draft::kCommitting) return Code("HANDLE_BUSY");
    Draft n = d;
    n.status = Draft::kCommitting;
    n.holder = s.index;
    // The claim's TTL is the longer of the draft's and the lease (js 625); the holder's renewals
    // extend it for as long as they run.
    n.gone = GoneAfter(s, d.max_expires, Grace(Kind().max_ttl_ms));
    n.gone.lo = std::max(n.gone.lo, s.clock.lo + kLeaseMs);
    n.gone.hi = kNever;
    // A renewal writes now + lease by the committer's clock (js 700): one behind Redis's sets
    // the key's end earlier than the claim did (kClaimByCommitterClock).
    if ((weaknesses & kClaimByCommitterClock) && s.behind > 0)
      n.gone.lo = std::min(n.gone.lo, s.world.lo + kLeaseMs / 2 - s.behind + kLeaseMs);
    next.push_back(n);
    Answer a;
    a.status = "committing";
    return a;
  }

  // The finalize: committing (under this call's claim) -> committed with the work's result
  // (js 776-800). A commit whose finalize found the draft committed replays that result.
  static Answer Finalize(const Draft& d, const Step& s, bool ambiguous, std::vector<State>& next) {
    const Op_& o = *s.op;
    if (d.status == Draft::kCommitted && !ambiguous && o.outcome == "replayed" &&
        d.holder != s.index) {
      Answer a;
      a.status = "replayed";
      a.result = d.result;
      if (o.value == d.result) next.push_back(d);
      return a;
    }
    const bool there = d.gone.hi == kNever || s.world.lo <= d.gone.hi;
    if (d.status != Draft::kCommitting || d.holder != s.index || !there)
      return Code(d.status == Draft::kCommitted    ? "HANDLE_COMMITTED"
                  : d.status == Draft::kCommitting ? "HANDLE_BUSY"
                                                   : "HANDLE_NOT_FOUND");
    Draft n = d;
    n.status = Draft::kCommitted;
    n.holder = -1;
    n.result = s.result;
    n.expires =
        n.max_expires = {s.clock.lo + Kind().result_ttl_ms, Add(s.clock.hi, Kind().result_ttl_ms)};
    n.gone = GoneAfter(s, n.expires, Grace(Kind().result_ttl_ms));
    Answer a;
    a.status = "committed";
    a.result = s.result;
    // ("replayed" with its own result: an attempt whose reply was lost landed, js 800.)
    if (ambiguous || ((o.outcome == "ok" || o.outcome == "replayed") && o.value == s.result))
      next.push_back(std::move(n));
    return a;
  }
};

using History = CallHistory<CallsModel>;
using Stuck = checker::Stuck<CallsModel>;

// The span of a call's caller's clock over [from, to] (virtual time), given its readings at
// both ends: a jump between them may have taken it anywhere in between.
Step Window(const Op& o, int index, Step::Part part, int64_t from, int64_t clock_from, int64_t to,
            int64_t clock_to) {
  Step s;
  s.op = &o;
  s.index = index;
  s.part = part;
  s.world = {from, to};
  const int64_t a = clock_from - from;
  const int64_t b = to == kNever ? a : clock_to - to;
  s.clock = {from + std::min(a, b), Add(to, std::max(a, b))};
  return s;
}

}  // namespace testbed::props::handles::calls_linearizable
