// Property "calls-linearizable" of handles: what concurrent app servers get from their calls on
// the drafts they share, under faults, is explained by the handle contract (model/handles.h)
// taking the calls one at a time in an order that respects real time. A call that got no reply
// (or failed in transport) may have taken effect or not; an update re-sent after a reconnect
// may have taken effect twice.
//
// The model's step is model/handles.h's, one call at a time, with two refinements the
// concurrency needs, both from the seed:
//   - commit is three steps: the claim (active -> committing, between the call and the start of
//     its work), then the finalize (committing -> committed with the work's result, between the
//     end of the work and the reply) or, when the work failed, the restore (committing ->
//     active, best effort: it may not land, js 735). While a draft is committing, update,
//     discard and commit answer HANDLE_BUSY and read shows status "committing" (js 518, 600,
//     680, 809). BUSY is also an answer to a lost CAS race (js 613, 657, 826), so it is
//     accepted, without effect, from any draft that is there.
//   - time: each deadline is a stamp of the clock of the caller that wrote it, and each call
//     judges it by its own clock (js 518), so the model keeps a deadline as the span of values
//     its writer's clock may have given it and judges it by the span the caller's clock read
//     during the call. The key itself lives on Redis's clock (its storage TTL, js 454): the model
//     keeps when it may vanish in virtual time. A slid deadline, a slide whose call failed in
//     transport and an expiry inside a call's window are branches of the search, so the model
//     never cries wolf at an instant it cannot place.
//     A read's touch (js 577) is taken as landed unless it may move the deadline earlier: its
//     CAS loses only to a write that loaded before it landed, and a touch that moves the
//     deadline later followed by that write is the same state.
// A quarter of the runs (by seed) hold cursors beside the drafts (promise 7): a cursor's one
// deadline is its creator's clock plus ttlMs, reads never slide it, and past it a read answers
// HANDLE_EXPIRED ("ttl") through the grace, then HANDLE_NOT_FOUND.
// Faults that lose writes (restart, failover, key loss) are set aside: work-at-most-once and
// updates-exactly-once show what those do.
//
// The search is partitioned by draft, with a budget past which the run is "no verdict", never a
// pass. A rejected draft is cut to its shortest rejected prefix without the reads it does not
// need (checker/nearest_order.h), and the call the nearest order stops at names the class:
// the answer the caller got where the model gives another ("update-answered-ok-not-busy"), the
// part of an answer that differs ("read-data"), or, for a commit whose work ran, the state the
// claim or the finalize found ("commit-claimed-committing": the work ran under another claim).
#include <absl/strings/ascii.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>
#include <absl/strings/str_replace.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <optional>

#include "properties/handles/handles_workload.h"
#include "properties/shared/json_bend.h"
#include "checker/nearest_order.h"
#include "sim/prng.h"

namespace testbed::props::handles {

using checker::CallHistory;
using checker::kNever;
using checker::NearestOrder;
using checker::Operation;
namespace {

constexpr int64_t kMaxStates = 20'000;
constexpr int64_t kShrinkStates = 5'000;

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

bool Definite(const Step& s);

// The steps of the calls on the drafts every client shares. A step without a definite answer
// may land after its call returned (a request held back in the network, fault "reorder"), so
// its virtual-time window has no end; its values were computed before the call returned, so its
// clock's window has.
std::vector<Step> Steps(const Recorder& rec) {
  std::vector<Step> steps;
  for (size_t i = 0; i < rec.ops.size(); ++i) {
    const Op& o = rec.ops[i];
    if (o.draft.empty()) continue;  // a create that drew no handle
    const int index = static_cast<int>(i);
    const bool answered = o.ret != kNever && !o.transport;
    if (o.op != "commit" || o.work_start == kNever) {
      // (A commit whose claim may have landed without its work starting is a claim.)
      const bool claim = o.op == "commit" && !answered;
      steps.push_back(Window(o, index, claim ? Step::kClaim : Step::kWhole, o.inv, o.clock_inv,
                             o.ret, o.clock_ret));
      continue;
    }
    Step claim =
        Window(o, index, Step::kClaim, o.inv, o.clock_inv, o.work_start, o.clock_work_start);
    claim.behind = rec.behind.count(o.actor) ? rec.behind.at(o.actor) : 0;
    steps.push_back(claim);
    if (o.work_end == kNever) continue;  // the horizon cut the work off
    // The work's result, as its side effect recorded it; a work without one failed, and its
    // commit restores the draft (whether or not the caller lived to hear of it).
    Step end = Window(o, index, Step::kFinalize, o.work_end, o.clock_work_end, o.ret, o.clock_ret);
    if (auto d = rec.drafts.find(o.draft); d != rec.drafts.end())
      for (const Effect& e : d->second.effects)
        if (e.actor == o.actor && e.at == o.work_end) end.result = e.result;
    if (end.result.is_null()) end.part = Step::kRestore;
    steps.push_back(end);
  }
  for (Step& s : steps)
    if (!Definite(s)) s.world.hi = kNever;
  return steps;
}

// A step's definite answer: a whole call that was answered, a claim whose work ran, a finalize
// whose caller was told the result.
bool Definite(const Step& s) {
  const Op& o = *s.op;
  const bool answered = o.ret != kNever && !o.transport;
  switch (s.part) {
    case Step::kWhole:
      return answered;
    case Step::kClaim:
      return o.work_start != kNever;
    case Step::kFinalize:
      return answered && (o.outcome == "ok" || o.outcome == "replayed");
    case Step::kRestore:
      return false;  // best effort (js 735)
  }
  return false;
}

// `twins` keeps the steps the history adds for re-sent calls.
History MakeHistory(const std::vector<Step>& steps, std::deque<Step>& twins) {
  History h;
  for (const Step& s : steps) {
    Operation<const Step*> o;
    o.partition = s.op->draft;
    o.actor = s.op->actor;
    o.ambiguous = !Definite(s);
    o.invoke = s.world.lo;
    o.ret = o.ambiguous ? kNever : s.world.hi;
    o.op = &s;
    h.push_back(o);
    // A re-sent call: a discard may land once more (harmlessly); an update again, and a claim
    // although its caller was told BUSY, only as the known weaknesses (kUpdateReapplied,
    // kOwnClaimBusy).
    if (!s.op->resent || s.part != Step::kWhole) continue;
    o.ambiguous = true;
    o.ret = kNever;
    Step twin = s;
    twin.world.hi = kNever;
    if (s.op->op == "commit") {
      twin.part = Step::kClaim;
      twin.needs = kOwnClaimBusy;
    } else if (s.op->op == "update") {
      twin.needs = kUpdateReapplied;
    } else if (s.op->op != "discard") {
      continue;
    }
    // An update's every attempt (three, js 590) may have landed: one that answered BUSY may
    // have applied three times.
    for (int k = 0; k < (s.op->op == "update" ? 3 : 1); ++k) {
      o.op = &twins.emplace_back(twin);
      h.push_back(o);
    }
  }
  std::stable_sort(h.begin(), h.end(),
                   [](const auto& a, const auto& b) { return a.invoke < b.invoke; });
  return h;
}

std::string KindOf(const std::string& code) {
  if (code.empty()) return "ok";
  std::string k = absl::AsciiStrToLower(absl::StrReplaceAll(code, {{"HANDLE_", ""}, {"_", "-"}}));
  return k;
}

// What the caller got, as a kind of answer.
std::string Got(const Op& o) {
  if (o.outcome == "ok") return "ok";
  if (o.outcome == "replayed") return "replayed";
  return KindOf(o.outcome);
}

constexpr const char* kClaimClass = "claim-lost-by-committer-clock";

// The call's clock was behind virtual time (Redis's clock) at its start or its end.
bool ClockBehind(const Op& o) {
  return o.clock_inv < o.inv || (o.ret != kNever && o.clock_ret < o.ret);
}

std::string ClassOfStuck(const Stuck& s) {
  const Step& at = *s.op->op;
  const Op& o = *at.op;
  const model::HandleAnswer& want = s.model_answer;
  if (at.part == Step::kClaim) {
    const std::string why = want.code.empty() ? "there" : KindOf(want.code);
    return "commit-ran-work-" +
           (why == "busy" ? std::string("under-another-claim") : "when-" + why);
  }
  if (at.part == Step::kFinalize && o.outcome != "replayed") {
    const std::string why = want.code.empty() ? "there" : KindOf(want.code);
    return "commit-result-" + (why == "there" ? std::string("other-than-the-work") : "when-" + why);
  }
  const std::string op = o.op == "foreign-read" ? "read" : o.op;
  const std::string got = Got(o);
  const std::string model =
      want.code.empty() ? (want.status == "replayed" ? "replayed" : "ok") : KindOf(want.code);
  // The draft vanished under a live claim: the claim's key expires at a stamp of the
  // committer's clock (SET ... PXAT: its renewals write now + lease, js 700), so a committer
  // whose clock is behind Redis's sets that instant in Redis's past.
  if (got == "not-found" && model == "busy")
    for (const auto* b : s.before)
      if (b->op->part == Step::kClaim && ClockBehind(*b->op->op)) return kClaimClass;
  if (got != model) return absl::StrCat(op, "-answered-", got, "-not-", model);
  if (got == "expired") return op + "-deadline";
  if (o.op == "commit") return "commit-result";
  if (o.op == "read" && o.value.value("status", "") != want.status) return "read-status";
  return op + "-data";
}

// "client 0 commit from +10ms to +230ms -> ok {...} (its claim, +10ms..+12ms; its clock
// -300ms..-298ms)": a part of a commit names its window, and a clock that is not virtual time
// shows where it was.
std::string StepText(const Step& s) {
  const Op& o = *s.op;
  auto at = [](int64_t t) { return t == kNever ? std::string("") : absl::StrCat("+", t, "ms"); };
  std::string text = Describe(o);
  std::vector<std::string> notes;
  if (o.cursor) notes.push_back("a cursor");
  if (s.part != Step::kWhole)
    notes.push_back(absl::StrCat(s.part == Step::kClaim      ? "its claim, "
                                 : s.part == Step::kFinalize ? "its finalize, "
                                                             : "its restore, ",
                                 at(s.world.lo), "..", at(s.world.hi)));
  if (s.clock.lo != s.world.lo || (s.world.hi != kNever && s.clock.hi != s.world.hi))
    notes.push_back(absl::StrCat("its clock ", absl::StrReplaceAll(at(s.clock.lo), {{"+-", "-"}}),
                                 "..", absl::StrReplaceAll(at(s.clock.hi), {{"+-", "-"}})));
  if (!notes.empty()) absl::StrAppend(&text, " (", absl::StrJoin(notes, "; "), ")");
  return text;
}

Finding Explain(const History& core, const Stuck& stuck, const std::string& draft) {
  std::vector<Involved> involved;
  std::vector<const Step*> shown;
  std::string text;
  if (!stuck.op) {
    text = absl::StrCat("No order of these ", core.size(), " calls on ", draft,
                        " explains every answer (model/handles.h):\n");
    for (const auto& o : core) shown.push_back(o.op);
  } else {
    const size_t from = stuck.before.size() > 8 ? stuck.before.size() - 8 : 0;
    for (size_t k = from; k < stuck.before.size(); ++k) shown.push_back(stuck.before[k]->op);
    const Step& at = *stuck.op->op;
    for (const auto& o : core)
      if (o.op == &at || (o.op->world.lo <= at.world.hi && at.world.lo <= o.op->world.hi &&
                          std::find(shown.begin(), shown.end(), o.op) == shown.end()))
        shown.push_back(o.op);
    text = absl::StrCat("No order of the calls on ", draft,
                        " explains every answer (model/handles.h). The nearest order explains ",
                        stuck.explained, " of them (the last ", stuck.before.size() - from,
                        " shown), then stops at ", StepText(at), ":\n");
  }
  for (const Step* s : shown) {
    absl::StrAppend(&text, "  ", StepText(*s), "\n");
    involved.push_back(Involve(*s->op));
  }
  if (stuck.op)
    absl::StrAppend(&text, "after that order the model answers ", Show(stuck.model_answer));
  return {stuck.op ? ClassOfStuck(stuck) : "calls-unexplained", text, {}, involved};
}

constexpr const char* kTtlClass = "write-refused-by-caller-clock";

// The class of a rejected draft that the known weaknesses explain: the one that explains it
// alone (the clock's first: the data's bends show in almost every run), else the first the
// explanation cannot do without.
std::string KnownClass(const History& core) {
  auto bend = [&](unsigned weaknesses) {
    std::string first;
    NearestOrder<CallsModel>(CallsModel{weaknesses, &first}, core, kShrinkStates).Run();
    return first.empty() ? std::string(kStructureBent) : first;
  };
  // The rare first: the data's bends show in almost every run.
  const std::vector<std::pair<unsigned, std::string>> known = {
      {kClaimByCommitterClock, kClaimClass},
      {kOwnClaimBusy, "busy-on-its-own-claim"},
      {kUpdateReapplied, "update-reapplied-after-resend"},
      {kTtlByCallerClock, kTtlClass},
      {kBends, ""}};
  for (const auto& [w, cls] : known)
    if (!Rejected(CallsModel{w}, core, kShrinkStates)) return cls.empty() ? bend(w) : cls;
  // Several at once: the first the explanation cannot do without names it.
  for (const auto& [w, cls] : known)
    if (Rejected(CallsModel{kAllWeaknesses & ~w}, core, kShrinkStates))
      return cls.empty() ? bend(kAllWeaknesses) : cls;
  return bend(kAllWeaknesses);
}

void Judge(const Recorder& rec, RunOutcome& out) {
  const std::vector<Step> steps = Steps(rec);
  std::deque<Step> twins;
  const History history = MakeHistory(steps, twins);
  std::map<std::string, History> parts;
  for (const auto& o : history) parts[o.partition].push_back(o);
  const CallsModel strict{0}, lenient{kAllWeaknesses};
  std::optional<Finding> known;  // reported only when no draft shows a new mechanism
  for (const auto& [draft, part] : parts) {
    NearestOrder<CallsModel> search(strict, part, kMaxStates);
    if (search.Run()) continue;
    if (search.gave_up()) {
      out.incomplete = true;
      continue;
    }
    // A new mechanism first: what the model cannot explain even when it takes on every known
    // weakness is named by the call it stops at, so a known weakness never hides it.
    NearestOrder<CallsModel> weak(lenient, part, kMaxStates);
    const bool explained = weak.Run();
    if (!explained && weak.gave_up()) {
      out.incomplete = true;
      continue;
    }
    const CallsModel& model = explained ? strict : lenient;
    const History core = Shrink(model, part, kShrinkStates);
    NearestOrder<CallsModel> nearest(model, core, kMaxStates);
    nearest.Run();
    Finding f = Explain(core, nearest.stuck(), draft);
    if (!explained) {
      out.findings.push_back(std::move(f));
      return;
    }
    f.cls = KnownClass(core);
    const auto bent = [](const std::string& c) {
      return c == kNumberBent || c == kEmptyArrayBecomesObject || c == kStringBent ||
             c == kStructureBent;
    };
    if (!known || (bent(known->cls) && !bent(f.cls))) known = std::move(f);
  }
  if (known) out.findings.push_back(std::move(*known));
}

std::vector<AnomalyClass> Classes() {
  const std::vector<std::pair<const char*, std::vector<const char*>>> answers = {
      {"create", {"ok"}},
      {"read", {"ok", "not-found", "expired"}},
      {"update", {"ok", "busy", "committed", "not-found", "expired"}},
      {"commit", {"ok", "replayed", "busy", "not-found", "expired", "work-failed"}},
      {"discard", {"ok", "busy"}}};
  std::vector<AnomalyClass> out;
  for (const auto& [op, kinds] : answers) {
    for (const char* a : kinds)
      for (const char* b : kinds)
        if (std::string(a) != b)
          out.push_back({absl::StrCat(op, "-answered-", a, "-not-", b),
                         absl::StrCat(op, " answered ", a,
                                      " where every order of the calls the "
                                      "model explains answers ",
                                      b)});
    out.push_back({absl::StrCat(op, "-deadline"),
                   absl::StrCat(op, " answered HANDLE_EXPIRED for a deadline no order explains")});
  }
  for (const char* op : {"read", "update"})
    out.push_back({absl::StrCat(op, "-data"),
                   absl::StrCat(op, " answered data that no order of the calls gives")});
  out.push_back({"read-status", "read answered a status that no order of the calls gives"});
  out.push_back({"commit-result", "commit replayed a result that no order of the calls gives"});
  for (const char* why : {"not-found", "expired", "committed"})
    out.push_back({absl::StrCat("commit-ran-work-when-", why),
                   absl::StrCat("a commit's work ran although, in every order the model "
                                "explains, its claim found the draft ",
                                why)});
  out.push_back({"commit-ran-work-under-another-claim",
                 "a commit's work ran while, in every order the model explains, another "
                 "commit's claim held the draft"});
  for (const char* why : {"not-found", "committed", "busy"})
    out.push_back({absl::StrCat("commit-result-when-", why),
                   absl::StrCat("a commit answered the result of its work although, in every "
                                "order the model explains, its finalize found the draft ",
                                why)});
  out.push_back({"commit-result-other-than-the-work",
                 "a commit answered a result other than the one its work returned"});
  out.push_back({kClaimClass,
                 "a draft vanished (HANDLE_NOT_FOUND) while a commit's claim held it: the key "
                 "expires at a stamp of the committer's clock (its renewals write now + lease), "
                 "and that clock was behind Redis's"});
  out.push_back({"busy-on-its-own-claim",
                 "a commit re-sent its claim after a reconnect: the first sending landed, the "
                 "re-sending failed on the version it moved, and the commit answered HANDLE_BUSY "
                 "about its own claim, which stays; every answer is explained once the model "
                 "takes that on"});
  out.push_back({"update-reapplied-after-resend",
                 "an update re-sent its CAS after a reconnect: the first sending landed, the "
                 "re-sending failed on the version it moved, and the update applied again; every "
                 "answer is explained once the model takes that on"});
  out.push_back({kTtlClass,
                 "a read, update or commit was refused (HANDLE_STORAGE_UNAVAILABLE) because its "
                 "caller's clock read earlier than the draft's creation stamp: the storage TTL "
                 "it computes from that clock exceeds the namespace's maxTtl; every answer is "
                 "explained once the model takes that on"});
  out.push_back({kNumberBent,
                 "the data came back with a number bent (lua-cjson keeps 14 significant digits); "
                 "every answer is explained once the model takes that on"});
  out.push_back({kEmptyArrayBecomesObject,
                 "the data came back with an empty array as an empty object (lua-cjson); every "
                 "answer is explained once the model takes that on"});
  out.push_back({kStringBent, "the data came back with a string bent"});
  out.push_back({kStructureBent, "the data came back with another structure"});
  out.push_back({"calls-unexplained",
                 "no order of the calls explains every answer, and none explains a longest "
                 "prefix the search could name"});
  return out;
}

}  // namespace

const HandlesProperty& CallsLinearizable() {
  static const HandlesProperty kProperty = {
      {"calls-linearizable",
       "what concurrent callers get from the drafts they share, under faults, is what the "
       "handle contract (model/handles.h) answers for the calls taken one at a time in an order "
       "that respects real time",
       Always, LosesWrites(), Classes()},
      [](const HandlesEnv& env) -> std::unique_ptr<PropertyRun> {
        // A quarter of the runs, by seed, have cursors beside the drafts (promise 7).
        const bool cursors = sim::Prng(env.spec.seed ^ 0x63757273ULL).chance({1, 4});
        return std::make_unique<HandlesRun>(env, Workload{DraftsClient, 0, cursors}, &Judge);
      }};
  return kProperty;
}

}  // namespace testbed::props::handles
