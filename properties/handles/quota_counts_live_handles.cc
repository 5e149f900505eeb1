// Property "quota-counts-live-handles" of handles: maxEntries limits the live handles
// of a kind: each probe makes two drafts of a maxEntries-2 kind, lets both go (idle expiry,
// discard, or a commit whose result expires), then creates a third, which must be accepted.
#include <absl/strings/str_cat.h>

#include <string>

#include "properties/handles/handles_workload.h"
#include "real/handles/handle.h"
#include "sim/prng.h"

namespace testbed::props::handles {

namespace {

// The anomaly classes this file names, declared once: its table and its judge use them.
constexpr char kExpiredDraftsHoldQuota[] = "expired-drafts-hold-quota";
constexpr char kDiscardedDraftsHoldQuota[] = "discarded-drafts-hold-quota";
constexpr char kExpiredResultsHoldQuota[] = "expired-results-hold-quota";
constexpr char kResentCreateOrphansDraft[] = "resent-create-orphans-draft";

// quota-counts-live-handles: a kind with maxEntries 2 (idle 100 ms, hard 300 ms) in a
// connection of the client's own; two drafts, then both go (idle expiry, discard, or a commit
// whose result then expires); a third create must be accepted, as no handle is live. After
// discards, both handles are read first and the first one's words are created again, and then
// one more create must be accepted (one live handle of two).
sim::Task<void> QuotaProbe(sim::Ctx& ctx, ClientArgs a, int i, sim::Prng& op) {
  real::handles::HandleKind kind = DraftKind();
  kind.name = "quota";
  kind.idle_ttl_ms = 100;
  kind.max_ttl_ms = 300;
  kind.result_ttl_ms = 100;
  kind.max_entries = 2;
  Probe probe(ctx, a, absl::StrCat("quota-", a.id, "-", i), sim::OpSeed(a.seed, a.id, i) + 1);
  real::handles::HandleContext& h = probe.h;
  const uint64_t how = op.below(3);
  std::string gone, x, y;
  const int64_t resent_before = ctx.resent_calls();
  try {
    x = co_await h.create(kind, Json::object());
    y = co_await h.create(kind, Json::object());
    if (how == 0) {
      co_await ctx.sleep(kind.idle_ttl_ms);  // both idle-expire: HANDLE_EXPIRED from here on
      gone = "both drafts expired (idle, 100 ms)";
    } else if (how == 1) {
      co_await h.discard(kind, x);
      co_await h.discard(kind, y);
      co_await ctx.sleep(2);  // the 1 ms tombstones lapse
      gone = "both drafts were discarded";
    } else {
      const real::handles::Work work = [](Json) -> sim::Task<Json> { co_return Json::object(); };
      co_await h.commit(kind, x, work);
      co_await h.commit(kind, y, work);
      co_await ctx.sleep(kind.result_ttl_ms);  // both results expire
      gone = "both drafts were committed and their results expired (100 ms)";
    }
  } catch (const HandleError&) {
    co_return;  // the setup did not go through: nothing to judge
  }
  // A create refused for quota with fewer than maxEntries live handles.
  auto refused = [&](const HandleError& e, int64_t t, const std::string& live) {
    // A create's CAS-if-absent that the client library re-sent fails against its own first
    // sending; the runtime takes that for a collision and allocates other words (js 557-562),
    // so the first draft lives on with a handle no caller was given. (A re-sent discard or
    // commit lands once: its version no longer matches.) Named so only after discards: after
    // idle expiry or expired results, the grace a record is kept for fails the create anyway.
    const bool create_resent = how == 1 && ctx.resent_calls() > resent_before;
    if (e.code == "HANDLE_STORAGE_UNAVAILABLE" && !e.transport)
      a.rec->findings.push_back(
          {create_resent ? kResentCreateOrphansDraft
           : how == 0    ? kExpiredDraftsHoldQuota
           : how == 1    ? kDiscardedDraftsHoldQuota
                         : kExpiredResultsHoldQuota,
           absl::StrCat("a kind with maxEntries 2: two drafts",
                        create_resent ? " (a call was re-sent after a reconnect)" : "", "; ", gone,
                        "; at +", t, "ms, with ", live, ", create failed: ", e.what()),
           {},
           {Since(ctx, sim::kDefaultEpochMs + t)}});
  };
  std::string live = "no live handle";
  if (how == 1) {
    // The discarded handles' words stay in use for a while: a caller that still holds them
    // reads them (HANDLE_NOT_FOUND), and a create draws the first one's words again (the
    // context's PRNG from the same seed: a wordlist collision, made certain). Each key then has
    // no record, and on beta.24 the legacy tombstone its last write left for the index ttl.
    const std::vector<std::string> held = {x, y};
    for (const std::string& handle : held) {
      try {
        co_await h.read(kind, handle);
      } catch (const HandleError&) {
      }
    }
    Probe again(ctx, a, absl::StrCat("quota-", a.id, "-", i), sim::OpSeed(a.seed, a.id, i) + 1);
    const int64_t t = a.rec->now();
    try {
      co_await again.h.create(kind, Json::object());
    } catch (const HandleError& e) {
      refused(e, t, "no live handle, after reading both");
      co_return;
    }
    live = "one live handle (the first one's words, drawn again)";
  }
  const int64_t t = a.rec->now();
  try {
    co_await h.create(kind, Json::object());
  } catch (const HandleError& e) {
    refused(e, t, live);
  }
}

// Each client makes its operations as probes, one after another.
sim::Task<void> QuotaClient(sim::Ctx& ctx, ClientArgs a) {
  return EachOperation(ctx, a, &QuotaProbe);
}

}  // namespace

const HandlesProperty& QuotaCountsLiveHandles() {
  static const HandlesProperty kProperty = {
      {"quota-counts-live-handles",
       "maxEntries limits the live handles of a kind: once the drafts are expired, discarded, or "
       "committed with expired results, a create is accepted",
       Always,
       {sim::Fault::kRestart, sim::Fault::kFailover, sim::Fault::kKeyLoss, sim::Fault::kLatency,
        sim::Fault::kDelay, sim::Fault::kReorder, sim::Fault::kPause, sim::Fault::kSkew,
        sim::Fault::kClockJump},
       {{kExpiredDraftsHoldQuota, "drafts past their deadline still count against maxEntries"},
        {kDiscardedDraftsHoldQuota, "discarded drafts still count against maxEntries"},
        {kExpiredResultsHoldQuota,
         "committed drafts whose results expired still count against maxEntries"},
        {kResentCreateOrphansDraft,
         "a create re-sent by the client library after a reconnect made two drafts: the first, "
         "whose handle no caller got, holds a slot until it expires"}}},
      Run<WorkloadFindings, QuotaClient>};
  return kProperty;
}

}  // namespace testbed::props::handles
