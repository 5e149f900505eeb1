// Property "names-are-opaque" of the state store: one client, fault-free, runs each operation twice
// at one instant: under plain names, and under names with ':', '*', '?', '[', '\\', empty or
// unicode (provider, connections, namespaces, keys), under another provider; the answers must
// match.
#include <string>

#include "properties/state/state_workload.h"

namespace testbed::props::state {
namespace {

class Runner : public StateRun {
 public:
  using StateRun::StateRun;

 private:
  sim::Task<void> Client(sim::Ctx& ctx, int id) override {
    if (id == 0) co_await NamesLockstepClient(ctx, w, scripts, &rec);
  }
};

}  // namespace

const StateProperty& NamesAreOpaque() {
  static const StateProperty kProperty = {
      {"names-are-opaque",
       "provider ids, connection ids, namespaces and keys are opaque strings: the same calls "
       "answer the same under names with ':', '*', '?', '[', '\\', the empty string or unicode "
       "as under plain ones (no two names share data, no name matches another)",
       Always,
       sim::FaultSet::All(),
       {{"names-change-get", "get() answers differently under the odd names"},
        {"names-change-set", "set() answers differently under the odd names"},
        {"names-change-compareAndSet", "compareAndSet() answers differently under the odd names"},
        {"names-change-list", "list() answers differently under the odd names"},
        {"names-change-increment", "increment() answers differently under the odd names"},
        {"names-change-legacy-write",
         "an old pod's write (the version before the v2 layout) answers differently under the odd "
         "names"}}},
      MakeRun<Runner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
