// Recorded traces of handles (issue 29, item 3): what a capture's calls show of each draft's
// commit claims, judged as work-at-most-once judges a run. A handle's record is the value of a
// state entry (seed 002 on the state store of seed 000), and every write of it is
// COMPARE_AND_SET_WITH_QUOTA_SCRIPT (the handle runtime's storage CAS) whose envelope, ARGV[6],
// holds the record; the reply's first element says whether it landed. Per draft (the entry's
// key), in the capture's order, a landed write of
//   status "committing" with a claim_id no live claim has   is a claim (active -> committing,
//                                                            js 625): the claimant's work runs
//   status "committing" with the live claim's claim_id      a heartbeat renewal (js 670-726)
//   status "committed"                                      the finalize: the claim is released
//   status "active" from the claimant's own client          the restore after failed work
//                                                            (js 735): released
// A claim that lands while another is live (neither finalized nor restored) is a second holder;
// when both claimants then send a finalize (landed or not: the port sends it only after its work
// returned a result, js 770), work() ran twice: work-ran-twice. work-at-most-once counts work
// that returned (its upstream side effect); a failed work is restored and may run again, by
// design (js 735). A claimant that sent no finalize may have crashed, or its work failed, so
// such a pair is not a finding. A capture holds no upstream side
// effects, and a replay whose Redis lost a claim differs from the emulator's and is not judged,
// so work-ran-twice-after-lost-claim is not a class of a trace.
//
// What cannot be judged: the other properties need the callers' answers and clocks (rebuilt
// handle operations, not yet: a read's expiry is judged by a clock the capture does not hold),
// the upstream work's effects and results, a second backend, or the model beside each call.
// explore needs the handle operations made again through the port: not yet.
#include <absl/strings/match.h>
#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "properties/handles/handles_system.h"
#include "real/state/redis_common.h"

namespace testbed::props::handles {
namespace {

struct Claim {
  int client = -1;
  std::string claim_id;
  int64_t line = 0;
  bool worked = false;  // its client sent a finalize after it (the work ran and returned)
};

// The record a CAS of a handle sent (nullopt: not such a call); *landed: its reply says it
// landed.
std::optional<Json> Written(const RecordedCall& c, std::string* key, bool* landed) {
  if (!absl::EndsWith(c.script, "/COMPARE_AND_SET_WITH_QUOTA_SCRIPT")) return std::nullopt;
  int64_t keys = 0;
  if (c.argv.size() < 4 || !absl::SimpleAtoi(c.argv[2], &keys) || keys < 1 ||
      c.argv.size() < static_cast<size_t>(3 + keys + 6))
    return std::nullopt;
  *key = c.argv[3];
  const std::optional<real::state::StateValue> v = real::state::EnvelopeFromJson(
      *key, std::optional<std::string>(c.argv[static_cast<size_t>(3 + keys + 5)]));
  if (!v || !v->value.is_object() || !v->value.contains("status")) return std::nullopt;
  *landed = c.has_reply && c.reply.type == sim::Reply::Type::kArray && !c.reply.elements.empty() &&
            c.reply.elements[0].integer == 1;
  return v->value;
}

void Judge(const std::string&, const RecordedCalls& calls, int64_t, RunOutcome& out) {
  std::map<std::string, std::vector<Claim>> claims;  // per draft: every claim, in order
  std::map<std::string, std::vector<size_t>> live;   // per draft: the claims not released
  std::vector<std::tuple<std::string, size_t, size_t>> holders;  // a claim landed over another
  for (const RecordedCall& c : calls) {
    std::string key;
    bool landed = false;
    const std::optional<Json> record = Written(c, &key, &landed);
    if (!record) continue;
    std::vector<Claim>& mine = claims[key];
    std::vector<size_t>& held = live[key];
    const std::string status = record->value("status", "");
    const std::string claim_id = record->value("claim_id", "");
    // A claimant's finalize, landed or not, shows that its work ran and returned a result: the
    // port sends it only then (a client makes one call at a time, so it is its latest claim's).
    if (status == "committed")
      for (Claim& k : mine)
        if (k.client == c.client) k.worked = true;
    if (!landed) continue;
    if (status == "committing") {
      const bool renewal = std::any_of(
          mine.begin(), mine.end(), [&claim_id](const Claim& k) { return k.claim_id == claim_id; });
      if (renewal) continue;
      mine.push_back({c.client, claim_id, c.line});
      for (const size_t other : held) holders.emplace_back(key, other, mine.size() - 1);
      held.push_back(mine.size() - 1);
    } else if (status == "committed" || status == "active") {
      // The finalize, or the restore after failed work, releases its client's claim; a
      // committed record ends every claim.
      std::erase_if(held,
                    [&](size_t k) { return status == "committed" || mine[k].client == c.client; });
    }
  }
  for (const auto& [key, first, second] : holders) {
    const Claim& a = claims[key][first];
    const Claim& b = claims[key][second];
    if (!a.worked || !b.worked) continue;
    const std::string draft = key.substr(key.rfind(':') + 1);
    out.findings.push_back(
        {"work-ran-twice",
         absl::StrCat("work() ran twice for ", draft, ": client ", a.client, "'s claim (line ",
                      a.line,
                      " of the capture) was still live, neither finalized nor restored, when "
                      "client ",
                      b.client, "'s claim landed (line ", b.line,
                      "); both then sent a finalize, which the port sends only once its work "
                      "returned")});
  }
}

std::vector<int> OpsPerClient(const RecordedCalls& calls) {
  std::map<int, std::set<std::pair<std::string, std::string>>> n;  // claims: what the judge reads
  for (const RecordedCall& c : calls) {
    std::string key;
    bool landed = false;
    if (const std::optional<Json> r = Written(c, &key, &landed);
        r && landed && r->value("status", "") == "committing")
      n[c.client].insert({key, r->value("claim_id", "")});
  }
  std::vector<int> out;
  for (const auto& [client, k] : n) out.push_back(static_cast<int>(k.size()));
  return out;
}

}  // namespace

const TraceSupport* HandlesTraceSupport(const std::string& version) {
  static const TraceSupport kSupport = {
      {"work-at-most-once"},
      "they judge what a capture does not hold: the callers' answers and clocks (a read's expiry "
      "is judged by the caller's clock), the upstream work's effects and results, the memory "
      "backend, or the model beside each call; and a capture's handle operations are not yet "
      "made again through the port, so testbed explore does not run on them",
      OpsPerClient,
      Judge,
      nullptr};
  return version == "beta24" || version == "beta30" ? &kSupport : nullptr;
}

}  // namespace testbed::props::handles
