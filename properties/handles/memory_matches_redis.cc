// Property "memory-matches-redis" of handles: the same sequential calls on
// Redis (client0) and on the memory backend (client1), in lockstep, must answer alike.
#include <absl/strings/str_cat.h>

#include <algorithm>

#include "properties/handles/handles_workload.h"

namespace testbed::props::handles {
namespace {

// The lockstep's two clients: client 0 on the Redis backend, client 1 on the memory backend.
sim::Task<void> LockstepClient(sim::Ctx& ctx, ClientArgs a) {
  co_await SequentialClient(ctx, a, /*against_memory=*/true);
}

std::vector<Finding> JudgeMemoryMatchesRedis(const Recorder& rec, const sim::Trace&) {
  for (size_t k = 0; k < std::min(rec.on_redis.size(), rec.on_memory.size()); ++k) {
    const auto& r = rec.on_redis[k];
    const auto& m = rec.on_memory[k];
    if (Same(r.answer, m.answer) && r.ran == m.ran) continue;
    std::string text =
        "the handle runtime on Redis and on the memory backend disagree; the last calls, on Redis:";
    for (size_t j = k > 7 ? k - 7 : 0; j <= k; ++j)
      text += absl::StrCat("\n    ", rec.on_redis[j].what, " -> ", Show(rec.on_redis[j].answer));
    text += "\n    the memory backend answers: " + Show(m.answer);
    std::string op = r.what.substr(r.what.find(' ') + 1);
    op = op.substr(0, op.find_first_of("( "));
    if (op == "foreign-read") op = "read";
    return {{"differs-on-" + op, text}};
  }
  return {};
}

}  // namespace

const HandlesProperty& MemoryMatchesRedis() {
  static const HandlesProperty kProperty = {
      {"memory-matches-redis",
       "the handle runtime on the memory backend (createTestHandleContext) answers a sequential "
       "caller as it does on Redis",
       [](const std::string& v, const std::string&) { return v == "beta30"; },
       sim::FaultSet::All(),
       {{"differs-on-create", "create answers differently on the two backends"},
        {"differs-on-read", "read answers differently on the two backends"},
        {"differs-on-update", "update answers differently on the two backends"},
        {"differs-on-commit", "commit answers differently on the two backends"},
        {"differs-on-discard", "discard answers differently on the two backends"}}},
      Run<JudgeMemoryMatchesRedis, LockstepClient, 2>};
  return kProperty;
}

}  // namespace testbed::props::handles
