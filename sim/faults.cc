#include "sim/faults.h"

#include <absl/strings/str_join.h>
#include <absl/strings/str_split.h>

#include <algorithm>
#include <stdexcept>

namespace testbed::sim {

const std::vector<FaultKindInfo>& FaultKinds() {
  using O = FaultOptions;
  static const std::vector<FaultKindInfo> kTable = {
      {Fault::kLostRequest, "lost-request", "1 in 20 calls is not applied; the client times out",
       [](O& o) {
         o.lost_request = {1, 20};
       },
       [](O& o) {
         o.lost_request = {0, 1};
       }},
      {Fault::kLostReply, "lost-reply",
       "1 in 20 calls is applied but its reply is lost (ambiguous)",
       [](O& o) {
         o.lost_reply = {1, 20};
       },
       [](O& o) {
         o.lost_reply = {0, 1};
       }},
      {Fault::kLatency, "latency", "every reply arrives 1 to 20 ms late",
       [](O& o) { o.latency_ms_min = 1, o.latency_ms_max = 20; },
       [](O& o) { o.latency_ms_min = o.latency_ms_max = 0; }},
      {Fault::kDelay, "delay",
       "1 in 10 calls waits up to 50 ms in the network: other connections' calls overtake it, its "
       "own connection's wait behind it",
       [](O& o) {
         o.delayed_request = {1, 10}, o.delay_ms_max = 50;
       },
       [](O& o) {
         o.delayed_request = {0, 1}, o.delay_ms_max = 0;
       }},
      {Fault::kPause, "pause",
       "half the actors pause once for 3 s (a GC pause longer than a lease)",
       [](O& o) {
         o.actor_pause = {1, 2}, o.pause_ms = 3000;
       },
       [](O& o) {
         o.actor_pause = {0, 1}, o.pause_ms = 0;
       }},
      {Fault::kCrash, "crash", "a third of the actors crash once; their threads and timers stop",
       [](O& o) {
         o.actor_crash = {1, 3};
       },
       [](O& o) {
         o.actor_crash = {0, 1};
       }},
      {Fault::kSkew, "skew", "each actor's clock is off by a constant in [-500, 500] ms",
       [](O& o) { o.clock_skew_ms_max = 500; }, [](O& o) { o.clock_skew_ms_max = 0; }},
      {Fault::kClockJump, "clock-jump", "half the actors' clocks jump once by up to 5 s either way",
       [](O& o) {
         o.clock_jump = {1, 2}, o.clock_jump_ms_max = 5000;
       },
       [](O& o) {
         o.clock_jump = {0, 1}, o.clock_jump_ms_max = 0;
       }},
      {Fault::kRestart, "restart", "Redis restarts once, losing writes since the last 1 s snapshot",
       [](O& o) { o.restart = true; }, [](O& o) { o.restart = false; }},
      {Fault::kFailover, "failover", "one failover to a replica 3 commands behind",
       [](O& o) { o.failover_lag_commands = 3; }, [](O& o) { o.failover_lag_commands = -1; }},
      {Fault::kOutage, "outage", "one 500 ms window in which every call fails",
       [](O& o) { o.outage_ms = 500; }, [](O& o) { o.outage_ms = 0; }},
      {Fault::kReorder, "reorder",
       "1 in 20 calls is held back past the client's timeout and applied up to 500 ms later: "
       "other connections' calls overtake it, its own connection's wait behind it (FIFO)",
       [](O& o) {
         o.reordered_request = {1, 20}, o.reorder_ms_max = 500;
       },
       [](O& o) {
         o.reordered_request = {0, 1}, o.reorder_ms_max = 0;
       }},
      {Fault::kKeyLoss, "key-loss",
       "once, a key (eviction under maxmemory-policy allkeys-random) or one hash field, sorted-set "
       "member or stream entry (a field TTL, an XTRIM) disappears",
       [](O& o) { o.key_loss = true; }, [](O& o) { o.key_loss = false; }},
      {Fault::kScanDuplicate, "scan-duplicates",
       "half the SCAN replies return one of their keys twice, as SCAN may across pages",
       [](O& o) {
         o.scan_duplicate = {1, 2};
       },
       [](O& o) {
         o.scan_duplicate = {0, 1};
       }},
      {Fault::kResend, "resend",
       "1 in 20 calls is applied, the connection drops before its reply, and the client library "
       "re-sends it after reconnecting (ioredis autoResendUnfulfilledCommands): applied twice, "
       "the caller gets the second reply",
       [](O& o) {
         o.resent_request = {1, 20}, o.resend_ms_max = 100;
       },
       [](O& o) {
         o.resent_request = {0, 1}, o.resend_ms_max = 0;
       }},
  };
  return kTable;
}

const FaultKindInfo& InfoOf(Fault f) { return FaultKinds().at(static_cast<size_t>(f)); }

FaultSet FaultSet::All() {
  FaultSet s;
  for (const auto& k : FaultKinds()) s.insert(k.kind);
  return s;
}

std::string FaultSet::Describe() const {
  if (*this == All()) return "all";
  std::vector<std::string> names;
  for (const auto& k : FaultKinds())
    if (contains(k.kind)) names.push_back(k.name);
  return absl::StrJoin(names, ", ");
}

void FaultSet::DisableIn(FaultOptions& options) const {
  for (const auto& k : FaultKinds())
    if (contains(k.kind)) k.disable(options);
}

FaultList FaultList::Parse(const std::string& list, bool strict) {
  FaultList out;
  if (strict && list.empty())
    throw std::invalid_argument("--faults is empty (all, none, or a comma list of kinds)");
  auto add = [&](Fault f) {
    for (Fault g : out.kinds)
      if (g == f) return;
    out.kinds.push_back(f);
  };
  std::vector<std::string> seen;
  for (const std::string& name : std::vector<std::string>(absl::StrSplit(list, ','))) {
    if (strict && name.empty())
      throw std::invalid_argument("--faults '" + list + "' has an empty item");
    if (strict && std::find(seen.begin(), seen.end(), name) != seen.end())
      throw std::invalid_argument("--faults names " + name + " twice");
    seen.push_back(name);
    // "all" and "none" stand alone: beside each other or a kind they contradict or repeat.
    if (strict && (name == "all" || name == "none") && list != name)
      throw std::invalid_argument("--faults '" + list + "': " + name +
                                  " stands alone (all, none, or a comma list of kinds)");
    if (name.empty() || name == "none") continue;
    if (name == "all") {
      for (const auto& k : FaultKinds()) add(k.kind);
      continue;
    }
    bool known = false;
    for (const auto& k : FaultKinds())
      if (k.name == name) add(k.kind), known = true;
    if (!known) {
      std::vector<std::string> names = {"all", "none"};
      for (const auto& k : FaultKinds()) names.push_back(k.name);
      throw std::invalid_argument("unknown fault '" + name +
                                  "' (known: " + absl::StrJoin(names, ", ") + ")");
    }
  }
  return out;
}

std::string FaultList::ToString() const {
  if (kinds.empty()) return "none";
  std::vector<Fault> all;
  for (const auto& k : FaultKinds()) all.push_back(k.kind);
  if (kinds == all) return "all";
  std::vector<std::string> names;
  for (Fault f : kinds) names.push_back(InfoOf(f).name);
  return absl::StrJoin(names, ",");
}

FaultOptions FaultList::Options() const {
  FaultOptions o;
  for (Fault f : kinds) InfoOf(f).enable(o);
  return o;
}

FaultOptions FaultOptions::Parse(const std::string& list) {
  return FaultList::Parse(list).Options();
}

std::vector<std::string> FaultOptions::Kinds() {
  std::vector<std::string> out;
  for (const auto& k : FaultKinds()) out.emplace_back(k.name);
  return out;
}

}  // namespace testbed::sim
