// Property "quota-limits-live-handles" of handles: maxEntries limits the live handles of a kind
// (the other half of quota-counts-live-handles): with maxEntries live drafts a create is
// refused, and a draft already there can still be updated and committed (its write is an
// overwrite, which the quota does not count). Fault-free: lost and re-sent calls make drafts
// nobody can name (quota-counts-live-handles reports those).
#include <absl/strings/str_cat.h>

#include <string>

#include "properties/handles/handles_workload.h"
#include "real/handles/handle.h"
#include "sim/prng.h"

namespace testbed::props::handles {

namespace {

// The anomaly classes this file names, declared once: its table and its judge use them.
constexpr char kOverfill[] = "overfill";
constexpr char kFullKindRefusesUpdate[] = "full-kind-refuses-update";
constexpr char kFullKindRefusesCommit[] = "full-kind-refuses-commit";

// quota-limits-live-handles: a kind with maxEntries 2 and deadlines far off, in a connection of
// the client's own: two drafts, then a third create must be refused (the namespace is full of
// live handles), and an update or a commit of a draft already there must still be accepted.
sim::Task<void> QuotaLimitProbe(sim::Ctx& ctx, ClientArgs a, int i, sim::Prng& op) {
  real::handles::HandleKind kind = DraftKind();
  kind.name = "full";
  kind.idle_ttl_ms = 2000;
  kind.max_ttl_ms = 4000;
  kind.max_entries = 2;
  Probe probe(ctx, a, absl::StrCat("full-", a.id, "-", i), sim::OpSeed(a.seed, a.id, i) + 2);
  real::handles::HandleContext& h = probe.h;
  std::string x;
  try {
    x = co_await h.create(kind, Json::object());
    co_await h.create(kind, Json::object());
  } catch (const HandleError&) {
    co_return;  // the setup did not go through: nothing to judge
  }
  const int64_t t = a.rec->now();
  std::string third;
  try {
    third = co_await h.create(kind, Json::object());
  } catch (const HandleError&) {
  }
  if (!third.empty())
    a.rec->findings.push_back({kOverfill,
                               absl::StrCat("a kind with maxEntries 2 holds two live drafts; at +",
                                            t, "ms a third create was accepted (", third, ")"),
                               {},
                               {Since(ctx, sim::kDefaultEpochMs + t)}});
  // What a full namespace must still accept: a draft that is there changing.
  const bool commit = op.chance({1, 2});
  const int64_t u = a.rec->now();
  std::string refused;
  try {
    if (commit) {
      const real::handles::Work work = [](Json) -> sim::Task<Json> { co_return Json::object(); };
      co_await h.commit(kind, x, work);
    } else {
      const std::function<Json(Json)> touch = [](Json d) {
        d["n"] = 1;
        return d;
      };
      co_await h.update(kind, x, touch);
    }
  } catch (const HandleError& e) {
    if (e.code == "HANDLE_STORAGE_UNAVAILABLE" && !e.transport) refused = e.what();
  }
  if (!refused.empty())
    a.rec->findings.push_back(
        {commit ? kFullKindRefusesCommit : kFullKindRefusesUpdate,
         absl::StrCat("a kind with maxEntries 2 holds two live drafts; at +", u, "ms ",
                      commit ? "commit" : "update", " of one of them failed: ", refused),
         {},
         {Since(ctx, sim::kDefaultEpochMs + u)}});
}

// Each client makes its operations as probes, one after another.
sim::Task<void> QuotaLimitClient(sim::Ctx& ctx, ClientArgs a) {
  return EachOperation(ctx, a, &QuotaLimitProbe);
}

}  // namespace

const HandlesProperty& QuotaLimitsLiveHandles() {
  static const HandlesProperty kProperty = {
      {"quota-limits-live-handles",
       "maxEntries limits the live handles of a kind: with maxEntries live drafts a create is "
       "refused, and a draft already there can still be updated and committed",
       Always,
       sim::FaultSet::All(),
       {{kOverfill, "a create was accepted though maxEntries live drafts were there"},
        {kFullKindRefusesUpdate,
         "an update of a live draft failed because the kind was full: an overwrite was counted "
         "as a new entry"},
        {kFullKindRefusesCommit,
         "a commit of a live draft failed because the kind was full: an overwrite was counted "
         "as a new entry"}}},
      Run<WorkloadFindings, QuotaLimitClient>};
  return kProperty;
}

}  // namespace testbed::props::handles
