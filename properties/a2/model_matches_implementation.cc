// Property "model-matches-implementation" of the a2 event store: one sequential, fault-free
// caller, every call of the port compared with the model of the store's contract (model/a2.h)
// at the same instant; every call, with stale claims and pauses past the lease.
#include <algorithm>

#include "properties/a2/a2_sequential.h"

namespace testbed::props::a2 {
namespace {

// The anomaly classes this file names, declared once: its table and its judge use them.
constexpr char kCausedAppendNotFenced[] = "caused-append-not-fenced";
constexpr char kPresenceOlderWriteApplied[] = "presence-older-write-applied";
constexpr char kPresenceExpiredStampStillWins[] = "presence-expired-stamp-still-wins";
constexpr char kPresenceStampSurvivesRead[] = "presence-stamp-survives-read";
constexpr char kPresenceStampOutlivesKey[] = "presence-stamp-outlives-key";

const Mix kModelMatchesImplementationMix = {{18, 14, 5, 10, 6, 5, 3, 5, 5, 7, 4, 3, 3, 2},
                                            {"s1", "s2"},
                                            {"sum", "count"},
                                            {"room-1"},
                                            /*late=*/true,
                                            /*adversarial=*/false,
                                            /*past_frontier=*/false,
                                            /*expired_own=*/false,
                                            /*boundaries=*/false,
                                            /*expiry_edges=*/true};

// presence.set refused `field` where the model applied it, after the row that held the
// field's stamp had expired (model/a2.h rule 10: an expired entry's stamp is gone). Named by
// why the stamp was still there, from the calls before: PRESENCE_SET_LUA compares stamps
// without looking at an entry's expiry, so an expired row's stamp wins until a read prunes it
// (PRESENCE_READ_LUA HDELs every row its now has passed) or the namespace's key expires (the
// last applied write's PEXPIRE). A stamp that outlives a pruning read, or the key, is another
// mechanism than the one the shipped scripts show. "" when no applied write explains the
// refusal that way.
std::string StampStillThere(const std::vector<SequentialStep>& steps, size_t k,
                            const std::string& field) {
  const SequentialStep& s = steps[k];
  auto applied = [](const SequentialStep& w) {
    return w.op == "presenceSet" && w.store.is_object() && w.store.contains("values");
  };
  // The write whose stamp refused it: the last applied write of the field.
  size_t w = k;
  for (size_t j = 0; j < k; ++j)
    if (applied(steps[j]) && steps[j].plan.ns == s.plan.ns &&
        steps[j].plan.participant == s.plan.participant && steps[j].store["values"].contains(field))
      w = j;
  if (w == k || steps[w].store["values"][field].is_null()) return "";  // (a delete keeps none)
  const int64_t expires_at = steps[w].now + steps[w].plan.ttl;
  if (s.now < expires_at || steps[w].plan.at <= s.plan.at) return "";
  // The key's end: each applied write's PEXPIRE ran before the next call began.
  int64_t key_end = 0;
  for (size_t j = 0; j < k; ++j)
    if (applied(steps[j]) && steps[j].plan.ns == s.plan.ns)
      key_end = std::max(key_end, steps[j + 1].now + steps[j].plan.ttl);
  if (s.now > key_end) return kPresenceStampOutlivesKey;
  for (size_t j = w + 1; j < k; ++j)
    if (steps[j].op == "presenceRead" && steps[j].plan.ns == s.plan.ns &&
        steps[j].now >= expires_at)
      return kPresenceStampSurvivesRead;
  return kPresenceExpiredStampStillWins;
}

std::string JudgeModelMatchesImplementation(const std::vector<SequentialStep>& steps, size_t k) {
  const SequentialStep& s = steps[k];
  std::string cls;
  if (s.store != s.model) cls = "disagrees-on-" + s.op;
  if (s.op == "presenceSet" && s.model.is_object() && s.model.contains("values"))
    for (const auto& [field, v] : s.model["values"].items())
      if (!s.store.is_object() || !s.store.contains("values") || !s.store["values"].contains(field))
        if (const std::string why = StampStillThere(steps, k, field); !why.empty()) cls = why;
  if (s.op == "append" && s.model.value("error", "") == "SUPERSEDED_ATTEMPT" &&
      !s.store.contains("error"))
    cls = kCausedAppendNotFenced;
  if (s.op == "presenceSet" && s.store.is_object() && s.store.contains("values")) {
    for (const auto& [field, v] : s.store["values"].items())
      if (!s.model.is_object() || !s.model.contains("values") || !s.model["values"].contains(field))
        cls = kPresenceOlderWriteApplied;
  }
  return cls;
}

}  // namespace

const A2Property& ModelMatchesImplementation() {
  static const A2Property kProperty = {
      {"model-matches-implementation",
       "a sequential, fault-free caller gets from every call what the model of the store's "
       "contract (model/a2.h) answers at that instant",
       Always, sim::FaultSet::All(),
       Disagreements("disagrees-on-", "answers other than the model",
                     {{kCausedAppendNotFenced,
                       "an append caused by an attempt that no longer holds a live claim (it "
                       "completed, failed or expired) was accepted"},
                      {kPresenceOlderWriteApplied,
                       "presence.set applied a field although a newer stamp (a delete's "
                       "included) had been written"},
                      {kPresenceExpiredStampStillWins,
                       "presence.set refused a write because of an entry that had expired: the "
                       "set compares stamps without looking at the entry's expiry, and the "
                       "entry stays until a read prunes it or Redis expires the whole key"},
                      {kPresenceStampSurvivesRead,
                       "presence.set refused a write because of an expired entry that a read "
                       "since its expiry should have pruned"},
                      {kPresenceStampOutlivesKey,
                       "presence.set refused a write because of an entry's stamp after the "
                       "namespace's key should have expired (the last applied write's ttl had "
                       "passed)"}})},
      Sequential<kModelMatchesImplementationMix, JudgeModelMatchesImplementation>};
  return kProperty;
}

}  // namespace testbed::props::a2
