// Property "old-pod-writes-listed" of the state store, in a rolling deploy: the database holds
// more keys than one backfill call scans (other applications' keys: 2,100, past eight SCAN
// pages of 256), an old pod writes a key, and where the new version reads what old pods write
// (its get() returns the old pod's value), its list() must list the key once the backfill has
// had the calls a full pass takes. The backfill's promise (s000, old side: "at most 8 SCAN
// pages per call, from a cursor kept in Redis") is progress: each call goes on where the last
// one stopped, so three list() calls cover 6,144 keys. (That the first call may still miss it
// is the paging the seed describes; judging that instant is not done here.)
#include <absl/strings/str_cat.h>
#include <absl/strings/str_format.h>

#include <string>
#include <vector>

#include "properties/state/state_workload.h"

namespace testbed::props::state {
namespace {

// The anomaly classes this file names, declared once: its table and its judge use them.
constexpr char kOldPodWriteNeverListed[] = "old-pod-write-never-listed";

constexpr int kOtherKeys = 2100;  // more than 8 pages of 256 (one backfill call), under 3 calls
constexpr int kLists = 3;

class OldPodWritesListedRunner : public StateRun {
 public:
  using StateRun::StateRun;

 private:
  sim::Task<void> Client(sim::Ctx& ctx, int id) override {
    if (id != 0 || w.skip.count({0, 0})) co_return;
    // Another application's keys (they sort before the store's in the emulator's key order;
    // redis-server pages them in hash order).
    for (int k = 0; k < kOtherKeys; ++k) {
      const sim::CallResult done =
          co_await ctx.cmd("SET", absl::StrFormat("aaa:other-app:%04d", k), "x");
      if (!std::holds_alternative<sim::Reply>(done) || std::get<sim::Reply>(done).is_error())
        co_return;  // the database does not hold them: nothing to judge
    }
    auto ns =
        real::state::MakeNamespace(w.version, ctx, scripts, std::string("provider-under-test"),
                                   "listed", w.ns, std::string("conn"));
    auto old = OldPod(ctx, w, scripts, "listed", w.ns, "conn");
    if (!old) co_return;
    real::state::Json value = real::state::Json::object();
    value["by"] = "old";
    const std::string shown = real::state::Stringify(value);
    try {
      co_await old->set("k", value, std::nullopt);
      const int64_t acked = rec.world->now_ms();
      const std::optional<real::state::StateValue> got = co_await ns->get("k");
      if (!got || real::state::Stringify(got->value) != shown) co_return;  // not read across
      std::string seen;
      bool last = false;
      for (int n = 0; n < kLists; ++n) {
        const std::vector<real::state::StateValue> rows = co_await ns->list(std::nullopt, "k");
        last = false;
        for (const auto& row : rows) last |= row.key == "k";
        seen += (n ? ", " : "") + std::string(last ? "listed" : "left out");
      }
      const int64_t end = rec.world->now_ms();
      if (!last && end < acked + w.ns.default_ttl_ms - 50)
        rec.findings.push_back(
            {kOldPodWriteNeverListed,
             absl::StrCat("with ", kOtherKeys, " other keys in the database, the old pod (",
                          w.old_version, ") set k in namespace listed to ", shown,
                          "; the new pod (", w.version, ") get(k) returned it, and its ", kLists,
                          " list() calls after it: ", seen,
                          ": the backfill did not go on where its last call stopped")});
    } catch (const real::state::StateError&) {
      // an error: nothing to judge
    }
  }
};

}  // namespace

const StateProperty& OldPodWritesListed() {
  static const StateProperty kProperty = {
      {"old-pod-writes-listed",
       "in a rolling deploy, with more keys in the database than one backfill call scans, a "
       "value an old pod wrote that the new version reads is listed once the backfill has had "
       "the calls a full pass takes",
       [](const std::string&, const std::string& old) { return !old.empty(); },
       sim::FaultSet::All(),
       {{kOldPodWriteNeverListed,
         "after as many list() calls as a full backfill pass takes, list() still leaves out a "
         "live value an old pod wrote, which get() returns"}}},
      MakeRun<OldPodWritesListedRunner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
