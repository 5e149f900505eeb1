// Property "increments-all-kept" of the state store: every client increments one shared counter;
// the last client to finish reads it and compares it with the increments that were acknowledged.
#include <string>

#include "properties/state/state_workload.h"

namespace testbed::props::state {
namespace {

// The anomaly classes this file names, declared once: its table and its judge use them.
constexpr char kLostIncrement[] = "lost-increment";
constexpr char kExtraIncrement[] = "extra-increment";

class IncrementsAllKeptRunner : public StepRun {
 public:
  using StepRun::StepRun;

 private:
  sim::Task<void> Step(sim::Ctx& ctx, real::state::StateNamespace& ns, int id, int i,
                       sim::Prng& rng) override {
    try {
      co_await ns.increment("counter", "n", 1, std::nullopt);
      ++acked_;
    } catch (const real::state::StateError& e) {
      if (e.transport()) ++unknown_;  // it may have landed
    }
    co_await ctx.sleep(rng.range(0, 5));
  }
  sim::Task<void> Finish(sim::Ctx& ctx, real::state::StateNamespace& ns, int id) override {
    // The last client to finish: every other increment has returned (or never will).
    if (++clients_done_ != w.clients) co_return;
    const int64_t since = rec.world->now_ms();
    try {
      std::optional<real::state::StateValue> got = co_await ns.get("counter");
      const double n =
          got && got->value.is_object() && got->value.value("n", real::state::Json()).is_number()
              ? got->value["n"].get<double>()
              : 0;
      const int64_t acked = acked_, unknown = unknown_;
      const std::string what =
          std::to_string(w.clients) + " clients had " + std::to_string(acked) +
          " increment(\"counter\", \"n\", 1) calls acknowledged (" + std::to_string(unknown) +
          " more of unknown outcome); then get(\"counter\") read n = " + real::state::Stringify(n);
      const double lost = static_cast<double>(acked) - n;
      if (lost > 0)
        rec.findings.push_back({kLostIncrement,
                                what + ": " + real::state::Stringify(lost) +
                                    (lost == 1 ? " acknowledged increment is lost"
                                               : " acknowledged increments are lost"),
                                {},
                                {Since(ctx, since)}});
      else if (n > static_cast<double>(acked + unknown))
        rec.findings.push_back(
            {kExtraIncrement, what + ": more than every increment", {}, {Since(ctx, since)}});
    } catch (const real::state::StateError&) {
    }
  }
  // Increments acknowledged, of unknown outcome, and clients done.
  int64_t acked_ = 0, unknown_ = 0;
  int clients_done_ = 0;
};

}  // namespace

const StateProperty& IncrementsAllKept() {
  static const StateProperty kProperty = {
      {"increments-all-kept",
       "concurrent increment() calls on one key keep every acknowledged increment: the total "
       "is their sum (an atomic counter, as the operation's name and the memory backend's "
       "single-threaded increment promise)",
       Always,
       LosesWrites(),
       {{kLostIncrement, "an acknowledged increment is missing from the counter's total"},
        {kExtraIncrement, "the counter holds more than every increment that was made"}}},
      MakeRun<IncrementsAllKeptRunner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
