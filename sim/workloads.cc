#include "sim/workloads.h"

namespace testbed::sim {
namespace {

Task<void> Renew(Ctx& c, std::string lease) {
  while (true) {
    const std::string stamp = std::to_string(c.now_ms());
    co_await c.cmd("SET", lease, stamp, "PX", "100");
    co_await c.sleep(40);
  }
}

Task<void> Worker(Ctx& ctx, std::string name, int increments, CounterStats* stats) {
  const ThreadId renewer =
      ctx.spawn("renew", [lease = "lease:" + name](Ctx& c) { return Renew(c, lease); });
  for (int i = 0; i < increments; ++i) {
    CallResult r = co_await ctx.cmd("GET", "counter");
    int64_t v = 0;
    if (auto* reply = std::get_if<Reply>(&r); reply && reply->type == Reply::Type::kBulk)
      v = std::stoll(reply->str);
    co_await ctx.sleep(5);
    const std::string next = std::to_string(v + 1);
    CallResult w = co_await ctx.cmd("SET", "counter", next);
    if (auto* reply = std::get_if<Reply>(&w)) {
      if (reply->type == Reply::Type::kStatus) stats->acknowledged++;
    } else {
      stats->ambiguous++;
    }
    co_await ctx.sleep(20);
  }
  ctx.cancel(renewer);
}

}  // namespace

void AddCounterWorkload(World& world, int actors, int increments, CounterStats* stats) {
  for (int a = 0; a < actors; ++a) {
    const std::string name = "worker" + std::to_string(a);
    world.add_actor(name, [=](Ctx& ctx) { return Worker(ctx, name, increments, stats); });
  }
}

std::optional<std::string> CheckCounter(Backend& backend, int64_t now_ms,
                                        const CounterStats& stats) {
  const Reply r = backend.execute({"GET", "counter"}, now_ms);
  const int64_t value = r.type == Reply::Type::kBulk ? std::stoll(r.str) : 0;
  if (value >= stats.acknowledged) return std::nullopt;
  return "lost update: " + std::to_string(stats.acknowledged) +
         " increments acknowledged, counter is " + std::to_string(value) +
         (stats.ambiguous ? " (" + std::to_string(stats.ambiguous) + " ambiguous)" : "");
}

}  // namespace testbed::sim
