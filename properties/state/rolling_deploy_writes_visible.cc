// Property "rolling-deploy-writes-visible" of the state store: each client runs both versions (and,
// with
// --rolling-from A,B, pods of several old versions) in sequence on a key of its own: every
// read must return the last acknowledged write.
#include <string>

#include "properties/state/state_workload.h"

namespace testbed::props::state {
namespace {

class RollingDeployWritesVisibleRunner : public StateRun {
 public:
  using StateRun::StateRun;

 private:
  sim::Task<void> Client(sim::Ctx& ctx, int id) override {
    co_await LegacyClient(ctx, id, w, scripts, Legacy::kRolling, &log_, &rec);
  }
  LegacyLog log_;
};

}  // namespace

const StateProperty& RollingDeployWritesVisible() {
  static const StateProperty kProperty = {
      {"rolling-deploy-writes-visible",
       "with old and new pods on one key, in sequence, every read returns the last acknowledged "
       "write",
       [](const std::string&, const std::string& old) { return !old.empty(); },
       // Reorder too: the probe judges one client's calls in sequence, and a request held past
       // its timeout lands after the client's later writes (no fault of the store). Resend:
       // see AndResend.
       AndResend({sim::Fault::kRestart, sim::Fault::kFailover, sim::Fault::kKeyLoss,
                  sim::Fault::kReorder}),
       {{kLosesWrite, "a pod reads null after its own version's acknowledged write"},
        {kListMissesOldPodRewrite,
         "after the new pod's entry for a key expired and an old pod wrote the key again, the "
         "new pod's get() returns the old pod's value and its list() leaves the key out"},
        {"loses-write-across-versions",
         "a pod reads null after an older version's acknowledged write"},
        {kReadsStale, "a pod reads an older value after its own version's write"},
        {"reads-stale-across-versions",
         "a pod reads an older value after an older version's write"},
        {kResurrectsDeleted, "a pod reads a value after its own version's delete"},
        {"resurrects-deleted-across-versions",
         "a pod reads a value after an older version's delete"},
        {"old-pod-loses-write", "an old pod reads null after the new version's acknowledged write"},
        {"old-pod-reads-stale", "an old pod reads an older value after the new version's write"},
        {"old-pod-resurrects-deleted", "an old pod reads a value after the new version's delete"},
        {"expired-early-by-writer-clock",
         "a pod reads null because the store expired an acknowledged write before its ttl had "
         "passed by the server's clock, at the expiresAt the writer computed from its own clock at "
         "its call (a clock behind the server's, or a pause or a delay before the write landed)"},
        {"list-misses-by-fast-clock",
         "list() leaves out a live key because the reading pod's clock runs ahead of the "
         "server's (the index is trimmed and filtered by the caller's clock)"}}},
      MakeRun<RollingDeployWritesVisibleRunner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
