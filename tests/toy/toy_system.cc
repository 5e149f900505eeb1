#include "tests/toy/toy_system.h"

#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>

#include "real/real_backend.h"
#include "sim/runtime.h"
#include "sim/strategies.h"

namespace testbed::toy {
namespace {

struct Tally {
  int64_t acknowledged = 0;  // increments whose write returned
  int64_t ambiguous = 0;     // increments whose outcome is unknown
};

int64_t Number(const CallResult& r) {
  const Reply* reply = std::get_if<Reply>(&r);
  int64_t n = 0;
  if (reply && reply->type == Reply::Type::kInteger) return reply->integer;
  if (reply && reply->type == Reply::Type::kBulk) absl::SimpleAtoi(reply->str, &n);
  return n;
}

Task<void> Client(sim::Ctx& ctx, int id, bool atomic, props::RunSpec spec, int64_t step, Tally* t) {
  for (int i = 0; i < spec.ops; ++i) {
    if (spec.skip.count({id, i})) continue;
    CallResult done = Reply::Nil();
    if (atomic) {
      const std::string by = absl::StrCat(step);
      done = co_await ctx.cmd("HINCRBY", "counter", "n", by);
    } else {
      const CallResult read = co_await ctx.cmd("HGET", "counter", "n");
      if (!std::holds_alternative<Reply>(read)) continue;  // nothing written
      const std::string next = absl::StrCat(Number(read) + step);
      done = co_await ctx.cmd("HSET", "counter", "n", next);
    }
    if (std::holds_alternative<Reply>(done)) {
      t->acknowledged += step;
    } else {
      t->ambiguous += step;
    }
    co_await ctx.sleep(i % 3);
  }
}

class CounterSystem : public props::System {
 public:
  std::string name() const override { return "counter"; }
  std::string what() const override { return "a toy shared counter (tests/toy/)"; }
  const std::vector<props::VersionInfo>& versions() const override {
    static const std::vector<props::VersionInfo> kVersions = {{"v1", "", "HGET then HSET"},
                                                              {"v2", "v1", "HINCRBY"}};
    return kVersions;
  }
  std::string default_version() const override { return "v2"; }
  const std::vector<props::PropertyInfo>& properties() const override {
    static const std::vector<props::PropertyInfo> kProperties = {
        {"no-lost-increment",
         "the counter ends at least at the sum of acknowledged increments",
         [](const std::string&, const std::string&) { return true; },
         {},
         {{"lost-increment", "the counter ends below the acknowledged sum"}}},
        {"mixed-pods-no-lost-increment",
         "with old pods incrementing too, the counter ends at least at the acknowledged sum",
         [](const std::string&, const std::string& old) { return !old.empty(); },
         {sim::Fault::kRestart, sim::Fault::kFailover},
         {{"lost-increment", "the counter ends below the acknowledged sum"}}},
    };
    return kProperties;
  }
  const std::vector<props::SystemOption>& options() const override {
    static const std::vector<props::SystemOption> kOptions = {
        {"step", "step", "1", {"1", "2"}, "how much each increment adds"}};
    return kOptions;
  }
  int default_clients() const override { return 2; }
  int default_ops() const override { return 3; }

 protected:
  props::RunOutcome DoRun(const props::RunSpec& spec, const sim::FaultOptions& faults,
                          const ScriptCatalog&, RedisServer* server,
                          sim::Strategy& strategy) const override {
    std::unique_ptr<sim::Backend> backend = MakeBackend(server);
    sim::WorldOptions o;
    o.seed = spec.seed;
    o.faults = faults;
    sim::World world(o, *backend, strategy);
    Tally tally;
    int64_t step = 1;
    absl::SimpleAtoi(option(spec, "step"), &step);
    const bool mixed = spec.property == "mixed-pods-no-lost-increment";
    for (int c = 0; c < spec.clients; ++c) {
      const std::string& version = mixed && c % 2 ? spec.old_version : spec.version;
      world.add_actor(absl::StrCat("client", c), [&, c, atomic = version == "v2"](sim::Ctx& ctx) {
        return Client(ctx, c, atomic, spec, step, &tally);
      });
    }
    const sim::RunResult run = world.run();
    const int64_t final_value = Number(backend->execute({"HGET", "counter", "n"}, world.now_ms()));
    props::RunOutcome out;
    if (final_value < tally.acknowledged)
      out.findings.push_back(
          {"lost-increment", absl::StrCat("the counter ends at ", final_value, " though ",
                                          tally.acknowledged, " was acknowledged")});
    out.trace = world.take_trace();
    out.run = run;
    return out;
  }
};

}  // namespace

std::unique_ptr<props::System> MakeCounterSystem() { return std::make_unique<CounterSystem>(); }

}  // namespace testbed::toy
