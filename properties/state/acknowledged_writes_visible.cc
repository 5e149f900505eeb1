// Property "acknowledged-writes-visible" of the state store: set / get / list / delete on shared
// keys; a read that misses a write nothing else could have removed is a finding.
#include <absl/strings/escaping.h>
#include <absl/strings/match.h>
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "model/state_store.h"
#include "properties/state/state_workload.h"
#include "sim/clock.h"

namespace testbed::props::state {
namespace {

// The anomaly classes this file names, declared once: its table and its judge use them.
constexpr char kListMissesByFastClock[] = "list-misses-by-fast-clock";
constexpr char kExpiredEarlyByWriterClock[] = "expired-early-by-writer-clock";

// acknowledged-writes-visible: one random operation on a shared key, recorded.
sim::Task<void> AckStep(sim::Ctx& ctx, real::state::StateNamespace& ns, int id, int i,
                        sim::Prng& rng, int64_t default_ttl_ms, std::vector<AckOp>* ops,
                        Recorder* rec) {
  AckOp a;
  a.key = "a" + std::to_string(rng.below(2));
  a.actor = id;
  const uint64_t roll = rng.below(100);
  a.ttl = rng.chance({1, 2}) ? std::optional<int64_t>(rng.range(10, 300)) : std::nullopt;
  real::state::Json value = real::state::Json::object();
  value["client"] = id;
  value["n"] = i;
  a.kind = roll < 40   ? AckOp::Kind::kSet
           : roll < 65 ? AckOp::Kind::kGet
           : roll < 90 ? AckOp::Kind::kList
                       : AckOp::Kind::kDelete;
  a.inv_seq = rec->seq++;
  a.inv_ms = rec->world->now_ms();
  a.clock_ms = ctx.now_ms();
  a.exp_lo = a.inv_ms + a.ttl.value_or(default_ttl_ms);
  // Recorded as it starts, with an unknown outcome: a client that crashes during the call never
  // returns, and its write may still have landed.
  const size_t at = ops->size();
  {
    AckOp in_flight = a;
    in_flight.ambiguous = true;
    in_flight.ret_seq = std::numeric_limits<int64_t>::max();
    in_flight.ret_ms = std::numeric_limits<int64_t>::max() / 4;  // never, with room for sums
    ops->push_back(in_flight);
  }
  if (!rec->observing) {
    rec->observing = true;
    rec->world->observe_applied_calls([rec](sim::ThreadId t) {
      const auto writing = rec->writing.find(t);
      if (writing == rec->writing.end()) return;
      const int64_t now = rec->world->now_ms();
      const sim::Reply pttl = rec->world->backend().execute({"PTTL", writing->second}, now);
      if (pttl.integer >= 0) {
        rec->expiry_after_call[t] = now + pttl.integer;
      } else {
        rec->expiry_after_call.erase(t);
      }
    });
  }
  rec->expiry_after_call.erase(ctx.thread());
  if (a.kind == AckOp::Kind::kSet) rec->writing[ctx.thread()] = ns.redis_key(a.key);
  try {
    if (a.kind == AckOp::Kind::kSet) {
      co_await ns.set(a.key, value, a.ttl);
    } else if (a.kind == AckOp::Kind::kGet) {
      std::optional<real::state::StateValue> v = co_await ns.get(a.key);
      a.found = v.has_value();
    } else if (a.kind == AckOp::Kind::kList) {
      std::vector<real::state::StateValue> rows = co_await ns.list(std::nullopt, a.key);
      for (const auto& r : rows) a.found |= r.key == a.key;
    } else {
      co_await ns.del(a.key);
    }
  } catch (const real::state::StateError& e) {
    if (e.transport()) {
      a.ambiguous = true;
    } else {
      a.rejected = true;  // quota and policy errors write nothing
    }
  }
  a.ret_seq = rec->seq++;
  a.ret_ms = rec->world->now_ms();
  rec->writing.erase(ctx.thread());
  // What the store set: the key's PTTL on the server right after this set's last applied call
  // (read outside the trace, before any other client's write can replace it), since a changed
  // script may set another expiry than the port computed; else the expiry this port sent.
  a.stated_ms = ns.expiry_is_relative() ? a.exp_lo : ns.last_expires_at_ms();
  const auto stored = rec->expiry_after_call.find(ctx.thread());
  if (a.kind == AckOp::Kind::kSet && !a.ambiguous && !a.rejected &&
      stored != rec->expiry_after_call.end())
    a.stated_ms = stored->second;
  (*ops)[at] = a;
  co_await ctx.sleep(rng.range(0, 20));
}

// acknowledged-writes-visible: a read that found nothing although an acknowledged write
// returned before it began and is promised to outlive it (its ttl on the server's clock, model
// rule 1), and no other operation that could remove the entry (a delete, an ambiguous write, a
// write promised to expire sooner) overlaps the gap. The class says what removed it: the expiry
// the store set from a writer's own clock (PXAT from its Date.now(), before the promised
// instant: skew), or nothing the contract allows.
std::vector<Finding> JudgeAcknowledgedWritesVisible(const std::vector<AckOp>& ops) {
  using K = AckOp::Kind;
  const auto at = RunTime;
  auto set_of = [&](const AckOp& x) {
    std::string s = "client " + std::to_string(x.actor) + " set(\"" + x.key + "\", ttl " +
                    (x.ttl ? std::to_string(*x.ttl) : std::string("default")) +
                    ") acknowledged at " + at(x.ret_ms) + " (promised alive through " +
                    at(x.exp_lo);
    if (x.stated_ms != x.exp_lo) s += "; the store set its expiry to " + at(x.stated_ms);
    return s + ")";
  };
  for (const AckOp& r : ops) {
    if ((r.kind != K::kGet && r.kind != K::kList) || r.ambiguous || r.found) continue;
    for (const AckOp& w : ops) {
      if (w.kind != K::kSet || w.ambiguous || w.rejected || w.key != r.key ||
          w.ret_seq >= r.inv_seq)
        continue;
      if (w.exp_lo < r.ret_ms) continue;
      bool removable = false;
      for (const AckOp& o : ops) {
        if (&o == &w || o.rejected || o.key != r.key || (o.kind != K::kSet && o.kind != K::kDelete))
          continue;
        const bool overlaps = o.inv_seq < r.ret_seq && (o.ambiguous || o.ret_seq > w.inv_seq);
        if (overlaps && (o.kind == K::kDelete || o.ambiguous || o.exp_lo < r.ret_ms))
          removable = true;
      }
      if (removable) continue;
      // What removed it: the store's own expiry on the server, set from a writer's clock before
      // the promised instant; or, for list() (which sees an entry only through the index), a
      // client whose clock runs ahead: every call trims the index up to its caller's clock
      // (ZREMRANGEBYSCORE -inf now), and list() drops what its caller's clock calls expired.
      const AckOp* fast = nullptr;  // the call whose caller's clock passed a stated expiry
      auto fast_clock_reached = [&](int64_t stated) {
        if (r.kind != K::kList || fast) return;
        for (const AckOp& o : ops)
          if (o.inv_seq < r.ret_seq && o.clock_ms != o.inv_ms &&
              o.clock_ms + (o.ret_ms - o.inv_ms) >= stated) {
            fast = &o;
            return;
          }
      };
      std::string later;
      bool early = w.stated_ms < r.ret_ms;
      fast_clock_reached(w.stated_ms);
      for (const AckOp& o : ops)
        if (&o != &w && o.key == r.key && o.kind == K::kSet && o.ret_seq > w.inv_seq &&
            o.inv_seq < r.ret_seq) {
          later += ", then " + set_of(o);
          early |= o.stated_ms < r.ret_ms;
          fast_clock_reached(o.stated_ms);
        }
      const bool by_fast_clock = fast != nullptr;
      const std::string read = r.kind == K::kGet ? "get" : "list";
      const std::string cls = early           ? kExpiredEarlyByWriterClock
                              : by_fast_clock ? kListMissesByFastClock
                                              : read + "-misses-live-write";
      return {{cls, set_of(w) + later + "; then client " + std::to_string(r.actor) + "'s " + read +
                        " from " + at(r.inv_ms) + " to " + at(r.ret_ms) +
                        " found nothing, though no delete ran and every write is promised to "
                        "keep the key alive through " +
                        at(r.ret_ms) +
                        (early ? " by the server's clock: the store expired it at the instant the "
                                 "writer's own clock computed"
                         : by_fast_clock
                             ? " by the server's clock, while client " +
                                   std::to_string(fast ? fast->actor : 0) + "'s own clock read " +
                                   at(fast ? fast->clock_ms + (fast->ret_ms - fast->inv_ms) : 0) +
                                   ", past the expiry the store set: the index is trimmed, and "
                                   "list() filtered, by the caller's clock"
                             : "")}};
    }
  }
  return {};
}

class AcknowledgedWritesVisibleRunner : public StepRun {
 public:
  using StepRun::StepRun;
  void Check(sim::World&, RunOutcome& out) override {
    out.findings = JudgeAcknowledgedWritesVisible(ops_);
  }

 private:
  sim::Task<void> Step(sim::Ctx& ctx, real::state::StateNamespace& ns, int id, int i,
                       sim::Prng& rng) override {
    co_await AckStep(ctx, ns, id, i, rng, w.ns.default_ttl_ms, &ops_, &rec);
  }
  std::vector<AckOp> ops_;
};

}  // namespace

const StateProperty& AcknowledgedWritesVisible() {
  static const StateProperty kProperty = {
      {"acknowledged-writes-visible",
       "after a write is acknowledged, get() and list() find the key until it is overwritten, "
       "deleted or its ttl has passed by the server's clock",
       Always,
       AndResend(LosesWrites()),
       {{"get-misses-live-write", "get() finds nothing while an acknowledged write is alive"},
        {"list-misses-live-write", "list() leaves out a key while an acknowledged write is alive"},
        {kListMissesByFastClock,
         "list() leaves out a live key because a client's clock runs ahead of the server's (the "
         "index is trimmed and filtered by the caller's clock)"},
        {kExpiredEarlyByWriterClock,
         "a key expired before its ttl had passed by the server's clock, at the expiresAt the "
         "writer computed from its own clock at its call (a clock behind the server's, or a "
         "pause or a delay before the write landed)"}}},
      MakeRun<AcknowledgedWritesVisibleRunner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
