#include "tests/toy/toy_system.h"

#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>

#include "harness/property.h"
#include "sim/runtime.h"
#include "sim/strategies.h"

namespace testbed::toy {
namespace {

struct Tally {
  int64_t acknowledged = 0;  // increments whose write returned
  int64_t ambiguous = 0;     // increments whose outcome is unknown
};

int64_t Number(const sim::CallResult& r) {
  const sim::Reply* reply = std::get_if<sim::Reply>(&r);
  int64_t n = 0;
  if (reply && reply->type == sim::Reply::Type::kInteger) return reply->integer;
  if (reply && reply->type == sim::Reply::Type::kBulk) absl::SimpleAtoi(reply->str, &n);
  return n;
}

// A child thread renews the client's lease while it works, as a lease holder would: the
// runtime's child threads, timers and cancellation meet every fault kind through this toy.
sim::Task<void> Renew(sim::Ctx& ctx, std::string lease) {
  while (true) {
    co_await ctx.cmd("SET", lease, absl::StrCat(ctx.now_ms()), "PX", "100");
    co_await ctx.sleep(40);
  }
}

sim::Task<void> Client(sim::Ctx& ctx, int id, bool atomic, props::RunSpec spec, int64_t step,
                       Tally* t) {
  const sim::ThreadId renewer = ctx.spawn(
      "renew", [lease = absl::StrCat("lease:client", id)](sim::Ctx& c) { return Renew(c, lease); });
  for (int i = 0; i < spec.ops; ++i) {
    if (spec.skip.count({id, i})) continue;
    sim::CallResult done = sim::Reply::Nil();
    if (atomic) {
      const std::string by = absl::StrCat(step);
      done = co_await ctx.cmd("HINCRBY", "counter", "n", by);
    } else {
      const sim::CallResult read = co_await ctx.cmd("HGET", "counter", "n");
      if (!std::holds_alternative<sim::Reply>(read)) continue;  // nothing written
      const std::string next = absl::StrCat(Number(read) + step);
      done = co_await ctx.cmd("HSET", "counter", "n", next);
    }
    if (std::holds_alternative<sim::Reply>(done)) {
      t->acknowledged += step;
    } else {
      t->ambiguous += step;
    }
    co_await ctx.sleep(i % 3);
  }
  ctx.cancel(renewer);
}

// Both properties run one workload: each client increments, and the counter's final value must
// reach every acknowledged increment; the mixed one puts the old version on every other client.
struct Env {
  props::RunSpec spec;
  int64_t step = 1;
};

struct CounterRun : props::PropertyRun {
  CounterRun(const Env& env, bool mixed) : spec(env.spec), step(env.step), mixed(mixed) {}
  const props::RunSpec& spec;
  int64_t step;
  bool mixed;
  Tally tally;
  void Start(sim::World& world) override {
    for (int c = 0; c < spec.clients; ++c) {
      const std::string& version = mixed && c % 2 ? spec.old_version : spec.version;
      world.add_actor(absl::StrCat("client", c),
                      [this, c, atomic = version == "v2"](sim::Ctx& ctx) {
                        return Client(ctx, c, atomic, spec, step, &tally);
                      });
    }
  }
  void Check(sim::World& world, props::RunOutcome& out) override {
    const int64_t final_value =
        Number(world.backend().execute({"HGET", "counter", "n"}, world.now_ms()));
    if (final_value < tally.acknowledged)
      out.findings.push_back(
          {"lost-increment", absl::StrCat("the counter ends at ", final_value, " though ",
                                          tally.acknowledged, " was acknowledged")});
  }
};

const props::Property<Env> kNoLostIncrement = {
    {"no-lost-increment",
     "the counter ends at least at the sum of acknowledged increments",
     [](const std::string&, const std::string&) { return true; },
     {},
     {{"lost-increment", "the counter ends below the acknowledged sum"}}},
    [](const Env& env) -> std::unique_ptr<props::PropertyRun> {
      return std::make_unique<CounterRun>(env, /*mixed=*/false);
    }};

const props::Property<Env> kMixedPodsNoLostIncrement = {
    {"mixed-pods-no-lost-increment",
     "with old pods incrementing too, the counter ends at least at the acknowledged sum",
     [](const std::string&, const std::string& old) { return !old.empty(); },
     {sim::Fault::kRestart, sim::Fault::kFailover},
     {{"lost-increment", "the counter ends below the acknowledged sum"}}},
    [](const Env& env) -> std::unique_ptr<props::PropertyRun> {
      return std::make_unique<CounterRun>(env, /*mixed=*/true);
    }};

const props::PropertyTable<Env>& Table() {
  static const props::PropertyTable<Env> kTable({&kNoLostIncrement, &kMixedPodsNoLostIncrement});
  return kTable;
}

class CounterSystem : public props::System {
 public:
  const props::SystemInfo& info() const override {
    static const props::SystemInfo kInfo = {
        .name = "counter",
        .what = "a toy shared counter (tests/toy/)",
        .versions = {{"v1", "", "HGET then HSET"}, {"v2", "v1", "HINCRBY"}},
        .default_version = "v2",
        .options = {{"step", "step", "1", {"1", "2"}, "how much each increment adds"}},
        .default_clients = 2,
        .default_ops = 3};
    return kInfo;
  }
  const std::vector<props::PropertyInfo>& properties() const override { return Table().infos(); }

 protected:
  std::unique_ptr<props::PropertyRun> Prepare(const props::RunSpec& spec, const sim::FaultOptions&,
                                              const real::ScriptCatalog&) const override {
    auto env = std::make_unique<Env>();
    env->spec = spec;
    absl::SimpleAtoi(option(spec, "step"), &env->step);
    return props::Bind(std::move(env), Table().find(spec.property));
  }
};

}  // namespace

std::unique_ptr<props::System> MakeCounterSystem() { return std::make_unique<CounterSystem>(); }

}  // namespace testbed::toy
