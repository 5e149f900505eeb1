// RapidCheck properties over generated state workloads: RapidCheck draws the workload's shape
// (clients, operations, keys, fault kinds, seed) and shrinks a failure to the smallest shape
// that still fails; CTest pins RapidCheck's own seed (RC_PARAMS) so CI runs are repeatable,
// and a failure prints RapidCheck's reproduce line next to our replay command.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <filesystem>

#include "checker/history_gen.h"
#include "harness/prng_draws.h"
#include "properties/state/state_props.h"
#include "tests/state_spec.h"
#include "tests/test_catalogs.h"

namespace testbed::props::state {
namespace {

using testing_catalogs::Shipped;

struct Generated {
  RunSpec spec = testing_state::Spec("cas-versions-linearizable");
  std::string faults;  // as --faults takes it
};

// with_faults: any subset of the fault kinds but `excluded`.
Generated GenWorkload(bool with_faults, const std::string& excluded = "") {
  Generated g;
  g.spec.seed = *rc::gen::inRange<uint64_t>(1, 1000000);
  g.spec.clients = *rc::gen::inRange(1, 5);
  g.spec.ops = *rc::gen::inRange(1, 16);
  g.spec.options["keys"] = std::to_string(*rc::gen::inRange(1, 4));
  // Which operations run: RapidCheck shrinks each toward false, that is, drops single
  // operations (RunSpec::skip) as well as whole clients and trailing operations.
  const auto keep = *rc::gen::container<std::vector<bool>>(
      static_cast<size_t>(g.spec.clients * g.spec.ops),
      rc::gen::weightedElement<bool>({{1, false}, {9, true}}));
  for (int c = 0; c < g.spec.clients; ++c)
    for (int i = 0; i < g.spec.ops; ++i)
      if (!keep[static_cast<size_t>(c * g.spec.ops + i)]) g.spec.skip.insert({c, i});
  if (with_faults) {
    const auto kinds = sim::FaultOptions::Kinds();
    const auto picked = *rc::gen::container<std::vector<bool>>(
        kinds.size(), rc::gen::weightedElement<bool>({{4, false}, {1, true}}));
    for (size_t i = 0; i < kinds.size(); ++i)
      if (picked[i] && kinds[i] != excluded) g.faults += (g.faults.empty() ? "" : ",") + kinds[i];
    g.spec.faults = sim::FaultList::Parse(g.faults);
  }
  RC_TAG(g.faults.empty() ? "no faults" : "faults");
  return g;
}

int Kept(const RunSpec& w) { return w.clients * w.ops - static_cast<int>(w.skip.size()); }

// Printed by RapidCheck with a failing case: the same workload on the CLI.
void LogReplay(const Generated& g, const std::string& extra = "",
               const std::string& property = "cas-versions-linearizable") {
  RC_LOG() << "replay: ./build/testbed check --system state --version " << g.spec.version
           << " --properties " << property << " --seed " << g.spec.seed << " --runs 1 --clients "
           << g.spec.clients << " --ops " << g.spec.ops
           << (g.faults.empty() ? "" : " --faults " + g.faults)
           << (g.spec.options.count("ops-mix") ? " --ops-mix cas" : "")
           << (g.spec.skip.empty() ? "" : " --skip " + FormatSkip(g.spec.skip)) << extra << "\n";
}

// Any faults but resend: a re-sent compareAndSet applied twice is told it failed although its
// write landed (state_test.cc: AResentCompareAndSetIsToldItFailedThoughItsWriteLanded).
RC_GTEST_PROP(StateRapidCheck, TheCompareAndSetPathIsLinearizableForAnyWorkloadAndFaultsButResend,
              ()) {
  Generated g = GenWorkload(true, "resend");
  g.spec.options["ops-mix"] = "cas";
  LogReplay(g);
  const RunOutcome r = testing_state::Run(g.spec, Shipped());
  RC_ASSERT(!r.incomplete);
  RC_ASSERT(!r.violated);
}

// The properties that hold on the v2 releases, for any shape, schedule and faults: no
// connection reads another's data (with old pods writing during the deploy); and between the
// v1 releases every caller keeps reading live v1 values (model rule 7).
RC_GTEST_PROP(StateRapidCheck, V2ScopesStayIsolatedAndV1ValuesStayReadableBetweenV1Releases, ()) {
  Generated g = GenWorkload(true);
  g.spec.version = *rc::gen::element<std::string>("beta23", "beta24", "beta30");
  g.spec.old_version = RollingFrom(g.spec.version);
  const std::string property = g.spec.version == "beta23" ? std::string("legacy-readable")
                                                          : std::string("connection-isolation");
  LogReplay(g, "", property);
  g.spec.property = property;
  const RunOutcome r = testing_state::Run(g.spec, Shipped());
  RC_ASSERT(!r.violated);
}

// beta.3 answers every sequential call as model/state_store does (beta.3 has no index, so
// none of the expiry-instant findings of the later releases).
RC_GTEST_PROP(StateRapidCheck, Beta3AnswersLikeTheModelOfTheWholeContract, ()) {
  Generated g = GenWorkload(false);
  g.spec.version = "beta3";
  LogReplay(g, "", "model-matches-implementation");
  g.spec.property = "model-matches-implementation";
  const RunOutcome r = testing_state::Run(g.spec, Shipped());
  RC_ASSERT(!r.violated);
}

RC_GTEST_PROP(StateRapidCheck, GeneratedLinearizableHistoriesAreAccepted, ()) {
  checker::HistoryShape shape;
  shape.operations = *rc::gen::inRange(1, 200);
  shape.keys = *rc::gen::inRange(1, 5);
  shape.actors = *rc::gen::inRange(1, 6);
  shape.max_duration_ms = *rc::gen::inRange(0, 30);
  shape.ambiguous = {*rc::gen::inRange<uint64_t>(0, 3), 20};
  const auto h =
      checker::GenerateLinearizable(harness::PrngDraws(*rc::gen::arbitrary<uint32_t>()), shape);
  model::StateRegisterModel m;
  const checker::Verdict v = checker::Checker<model::StateRegisterModel>(m).check(h);
  RC_ASSERT(v.ok);
}

TEST(StateRapidCheck, ShrinksTheConcurrentSetRaceToAFewOperationsOfTwoOrMoreClients) {
  // The full mix on beta.30 must fail, and RapidCheck must shrink the failure: the smallest
  // failing shape has two clients (one client cannot race itself).
  std::optional<RunSpec> smallest;
  const bool held = rc::check("full mix is linearizable (it is not: concurrent set)", [&] {
    Generated g = GenWorkload(false);
    LogReplay(g);
    const RunSpec& w = g.spec;
    const RunOutcome r = testing_state::Run(w, Shipped());
    const bool ok = !r.violated && !r.incomplete;
    if (!ok && (!smallest || Kept(w) < Kept(*smallest))) smallest = w;
    RC_ASSERT(ok);
  });
  EXPECT_FALSE(held);
  ASSERT_TRUE(smallest.has_value());
  // A handful of operations by at least two clients: one client cannot race itself.
  std::set<int> racing;
  for (int c = 0; c < smallest->clients; ++c)
    for (int i = 0; i < smallest->ops; ++i)
      if (!smallest->skip.count({c, i})) racing.insert(c);
  EXPECT_GE(racing.size(), 2u) << FormatSkip(smallest->skip);
  EXPECT_LE(Kept(*smallest), 3) << FormatSkip(smallest->skip);
}

TEST(StateRapidCheck, ABrokenCompareAndSetScriptFailsTheProperty) {
  const real::ScriptCatalog broken = testing_catalogs::WithBroken(
      "rc-broken-catalog", "state/beta30/COMPARE_AND_SET_WITH_QUOTA_SCRIPT.lua",
      "cas-without-version-check/COMPARE_AND_SET_WITH_QUOTA_SCRIPT.lua");
  const bool held = rc::check("CAS path is linearizable with the broken script", [&] {
    Generated g = GenWorkload(false);
    g.spec.options["ops-mix"] = "cas";
    LogReplay(g, " --scripts tests/broken_scripts/cas-without-version-check");
    const RunOutcome r = testing_state::Run(g.spec, broken);
    RC_ASSERT(!r.violated && !r.incomplete);
  });
  EXPECT_FALSE(held) << "the broken script passed the property";
}

}  // namespace
}  // namespace testbed::props::state
