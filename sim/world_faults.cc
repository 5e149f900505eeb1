// A world's faults: planned from the run's own fault stream (plan_faults), applied when due
// (apply_event), and a key lost as Redis 7.0 loses one (lose_key). sim/runtime.h.
#include <absl/strings/match.h>
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <stdexcept>

#include "sim/runtime.h"
#include "sim/world_internal.h"

namespace testbed::sim {

namespace {

using enum FaultKind;

}  // namespace

void World::plan_faults() {
  const FaultOptions& f = options_.faults;
  const int64_t s = options_.start_ms, horizon = options_.horizon_ms;
  auto at = [&] { return s + fault_prng_.range(0, std::max<int64_t>(0, horizon - 1)); };
  std::vector<Event> ev = std::move(events_);
  for (ActorId a = 0; a < static_cast<ActorId>(actors_.size()); ++a) {
    Actor& actor = *actors_[a];
    if (f.clock_skew_ms_max > 0) {
      actor.skew = fault_prng_.range(-f.clock_skew_ms_max, f.clock_skew_ms_max);
      record_fault(
          -1, Fault::kSkew, a,
          absl::StrCat("plan ", InfoOf(Fault::kSkew).name, " ", actor.name, " ", actor.skew, "ms"),
          -1, /*planned=*/true);
    }
    if (f.actor_pause.numerator && fault_prng_.chance(f.actor_pause))
      ev.push_back({at(), kPause, a, f.pause_ms});
    if (f.actor_crash.numerator && fault_prng_.chance(f.actor_crash))
      ev.push_back({at(), kCrash, a, 0});
    if (f.clock_jump.numerator && fault_prng_.chance(f.clock_jump))
      ev.push_back(
          {at(), kClockJump, a, fault_prng_.range(-f.clock_jump_ms_max, f.clock_jump_ms_max)});
  }
  if (f.restart) {
    for (int64_t t = s + f.snapshot_every_ms; t < s + horizon; t += f.snapshot_every_ms)
      ev.push_back({t, kSnapshot, -1, 0});
    ev.push_back({at(), kRestart, -1, 0});
  }
  if (f.failover_lag_commands >= 0) ev.push_back({at(), kFailover, -1, f.failover_lag_commands});
  if (f.key_loss)
    ev.push_back({at(), kKeyLoss, -1, static_cast<int64_t>(fault_prng_.below(1u << 30))});
  if (f.outage_ms > 0) {
    const int64_t o = at();
    ev.push_back({o, kOutageStart, -1, 0});
    ev.push_back({o + f.outage_ms, kOutageEnd, -1, 0});
  }
  std::stable_sort(ev.begin(), ev.end(),
                   [](const Event& x, const Event& y) { return x.at < y.at; });
  for (const Event& e : ev) {
    if (e.kind == kSnapshot) continue;
    const Fault fault = FaultOf(e.kind);
    std::string name = InfoOf(fault).name;
    if (e.kind == kOutageStart) name += "-start";
    if (e.kind == kOutageEnd) name += "-end";
    record_fault(-1, fault, e.actor,
                 absl::StrCat("plan ", name, " at +", e.at - s, "ms",
                              e.actor >= 0 ? " " + actors_[e.actor]->name : "",
                              e.value ? absl::StrCat(" value ", e.value) : ""),
                 -1, /*planned=*/true);
  }
  events_ = std::move(ev);
}

void World::apply_event(const Event& e) {
  switch (e.kind) {
    case kSnapshot:
      snapshot_size_ = log_.size();
      return;
    case kRestart:
      record_fault(-1, Fault::kRestart, -1,
                   absl::StrCat("fault ", InfoOf(Fault::kRestart).name, ": keeps ", snapshot_size_,
                                " of ", log_.size(), " commands, loses the script cache"));
      log_.resize(snapshot_size_);
      backend_.rebuild(LoggedPrefix(), now_);
      return;
    case kFailover: {
      const size_t keep = log_.size() > static_cast<size_t>(e.value) ? log_.size() - e.value : 0;
      record_fault(-1, Fault::kFailover, -1,
                   absl::StrCat("fault ", InfoOf(Fault::kFailover).name, " to a replica ",
                                log_.size() - keep, " commands behind"));
      log_.resize(keep);
      snapshot_size_ = std::min(snapshot_size_, keep);
      backend_.rebuild(LoggedPrefix(), now_);
      return;
    }
    case kOutageStart:
      outage_ = true;
      record_fault(-1, Fault::kOutage, -1,
                   absl::StrCat("fault ", InfoOf(Fault::kOutage).name, " begins"));
      return;
    case kOutageEnd:
      outage_ = false;
      record_fault(-1, Fault::kOutage, -1,
                   absl::StrCat("fault ", InfoOf(Fault::kOutage).name, " ends"));
      return;
    case kClockJump:
      actors_[e.actor]->jumped += e.value;
      record_fault(-1, Fault::kClockJump, e.actor,
                   absl::StrCat("fault ", InfoOf(Fault::kClockJump).name, " ",
                                actors_[e.actor]->name, " ", e.value, "ms"));
      return;
    case kPause:
      actors_[e.actor]->paused_until = now_ + e.value;
      record_fault(-1, Fault::kPause, e.actor,
                   absl::StrCat("fault ", InfoOf(Fault::kPause).name, " ", actors_[e.actor]->name,
                                " for ", e.value, "ms"));
      return;
    case kKeyLoss:
      lose_key(static_cast<uint64_t>(e.value));
      return;
    case kCrash: {
      Actor& a = *actors_[e.actor];
      a.crashed = true;
      record_fault(-1, Fault::kCrash, e.actor,
                   absl::StrCat("fault ", InfoOf(Fault::kCrash).name, " ", a.name));
      for (auto& t : threads_)
        if (t->actor == e.actor && !t->finished) {
          t->cancelled = true;
          finish_thread(*t);
        }
      return;
    }
  }
}

// One key, or one element of it, disappears: the choice is `pick` over the sorted keys and
// their sorted elements, so both backends lose the same thing. The deletion is logged like a
// client's command, so a later restart or failover replays it.
void World::lose_key(uint64_t pick) {
  std::vector<std::string> keys;
  for (const Reply& k : backend_.execute({"KEYS", "*"}, now_).elements) keys.push_back(k.str);
  std::sort(keys.begin(), keys.end());
  if (keys.empty()) {
    record_fault(-1, Fault::kKeyLoss, -1,
                 absl::StrCat("fault ", InfoOf(Fault::kKeyLoss).name, ": the keyspace is empty"));
    return;
  }
  const std::string key = keys[pick % keys.size()];
  pick /= keys.size();
  const std::string type = backend_.execute({"TYPE", key}, now_).str;
  Argv del = {"DEL", key};
  if (pick % 3 != 0) {  // two times in three, one element of an aggregate
    pick /= 3;
    std::vector<std::string> elements;
    if (type == "hash") {
      const Reply all = backend_.execute({"HGETALL", key}, now_);
      for (size_t i = 0; i < all.elements.size(); i += 2) elements.push_back(all.elements[i].str);
      del = {"HDEL", key};
    } else if (type == "zset") {
      for (const Reply& m : backend_.execute({"ZRANGE", key, "0", "-1"}, now_).elements)
        elements.push_back(m.str);
      del = {"ZREM", key};
    } else if (type == "stream") {
      for (const Reply& entry : backend_.execute({"XRANGE", key, "-", "+"}, now_).elements)
        elements.push_back(entry.elements.at(0).str);
      del = {"XDEL", key};
    }
    std::sort(elements.begin(), elements.end());
    if (elements.empty())
      del = {"DEL", key};
    else
      del.push_back(elements[pick % elements.size()]);
  }
  backend_.execute(del, now_);
  const size_t ev =
      record_fault(-1, Fault::kKeyLoss, -1,
                   absl::StrCat("fault ", InfoOf(Fault::kKeyLoss).name, ": ", render_argv(del)));
  trace_.events[ev].argv = del;
  log_.push_back({ev, now_});
}

}  // namespace testbed::sim
