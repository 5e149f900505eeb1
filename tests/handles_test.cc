// The handle runtime of seed 002 (real/handles/): normalization and its word list, the draft
// lifecycle on the memory backend as the seed's comments describe it, and the handles system's
// properties, each seen failing (on the shipped state store, a broken script or a version
// without connection scopes).
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <functional>
#include <iostream>
#include <set>
#include <string>

#include "properties/handles/broken_ports.h"
#include "properties/handles/handles_system.h"
#include "harness/system.h"
#include "harness/baseline.h"
#include "real/handles/handle.h"
#include "real/handles/wordlist.h"
#include "sim/clock.h"
#include "sim/runtime.h"
#include "sim/strategies.h"
#include "tests/cli_run.h"
#include "tests/test_catalogs.h"

namespace testbed::real::handles {
namespace {

HandleKind Draft() {
  HandleKind k;
  k.name = "draft";
  k.field_name = "draftHandle";
  k.idle_ttl_ms = 400;
  k.max_ttl_ms = 1500;
  k.result_ttl_ms = 1000;
  return k;
}

HandleKind PublicCursor() {
  HandleKind k;
  k.name = "page";
  k.type = "cursor";
  k.access = "public";
  k.field_name = "pageToken";
  k.ttl_ms = 1000;
  k.word_count = 4;
  return k;
}

std::string Code(const std::function<void()>& f) {
  try {
    f();
  } catch (const HandleError& e) {
    return e.code;
  }
  return "";
}

TEST(HandleWords, AreTheCountTheSeedImpliesAndPairwiseAtLeastThreeEditsApart) {
  const auto& words = IssuableHandleWords();
  ASSERT_EQ(words.size(), kHandleWordCount);
  for (size_t i = 0; i < words.size(); ++i) {
    EXPECT_LE(words[i].size(), 10u);
    for (size_t j = i + 1; j < words.size(); ++j)
      ASSERT_GE(EditDistance(words[i], words[j], 2), 3) << words[i] << " " << words[j];
  }
  const std::string w = words[7];
  EXPECT_EQ(FindHandleWordWithinDistance(w, 1), w);
  EXPECT_EQ(FindHandleWordWithinDistance(w.substr(1), 1), w) << "one deletion is repaired";
  EXPECT_EQ(FindHandleWordWithinDistance(w.substr(2), 1), std::nullopt);
}

TEST(HandleNormalization, RepairsWrappingCaseSeparatorsAndOneTypoAndNamesEachClass) {
  const auto& words = IssuableHandleWords();
  const std::string a = words[3], b = words[11];
  const Normalized n = NormalizeHandle(Draft(), "  `DRAFT: " + a + " _" + b.substr(1) + "`.");
  EXPECT_EQ(n.canonical, "draft_" + a + "-" + b);
  EXPECT_EQ(FormatNormalizationClasses(n.normalization),
            "case+punctuation+separator+typo+whitespace");
  EXPECT_EQ(
      FormatNormalizationClasses(NormalizeHandle(Draft(), "draft_" + a + "-" + b).normalization),
      "none");
  EXPECT_EQ(Code([&] { NormalizeHandle(Draft(), "page_" + a + "-" + b); }), "HANDLE_KIND_MISMATCH");
  EXPECT_EQ(Code([&] { NormalizeHandle(Draft(), "drafts_" + a + "-" + b); }),
            "HANDLE_KIND_MISMATCH");
  EXPECT_EQ(Code([&] { NormalizeHandle(Draft(), "draft_" + a); }), "HANDLE_INVALID");
  EXPECT_EQ(Code([&] { NormalizeHandle(Draft(), "draft_" + a + "-"); }), "HANDLE_INVALID");
  EXPECT_EQ(Code([&] { NormalizeHandle(Draft(), "draft_" + a + "-qqqqqqq"); }), "HANDLE_INVALID");
  EXPECT_EQ(Code([&] { NormalizeHandle(Draft(), std::string(300, 'x')); }), "HANDLE_INVALID");
  // Public cursors take 4 or 5 words.
  EXPECT_NO_THROW(NormalizeHandle(PublicCursor(), "page_" + a + "-" + b + "-" + a + "-" + b));
  EXPECT_NO_THROW(
      NormalizeHandle(PublicCursor(), "page_" + a + "-" + b + "-" + a + "-" + b + "-" + a));
}

// Runs `body` as the one actor of a world (the memory backend needs no Redis).
void InWorld(const std::function<sim::Task<void>(sim::Ctx&)>& body) {
  sim::EmulatorBackend backend;
  sim::RandomWalk walk;
  sim::WorldOptions o;
  o.horizon_ms = 600000;
  sim::World world(o, backend, walk);
  world.add_actor("test", body);
  const sim::RunResult r = world.run();
  ASSERT_EQ(r.error, "");
}

bool lifecycle_finished = false;

sim::Task<void> Lifecycle(sim::Ctx& ctx) {
  MemoryState memory(ctx.clock());
  sim::Prng rng(7);
  HandleOptions o;
  o.state = &memory;
  o.connection_id = "conn-a";
  o.commit_lease_ms = 200;
  std::vector<std::string> events;  // exactly one telemetry event per call
  o.on_telemetry = [&events](const Telemetry& t) {
    events.push_back(t.operation + ":" + t.outcome + ":" + t.normalization);
  };
  HandleContext h(o, ctx, rng);
  // Another connection on the same memory state, as createTestHandleContext's comment says.
  HandleContext other = CreateTestHandleContext(ctx, rng, memory, "conn-b", o.on_telemetry);
  const HandleKind kind = Draft();
  Json data = Json::object();
  data["n"] = 1;
  const std::string handle = co_await h.create(kind, data);
  EXPECT_EQ(handle.rfind("draft_", 0), 0u);
  HandleRecord r = co_await h.read(kind, handle);
  EXPECT_EQ(r.status, "active");
  EXPECT_EQ(r.data, data);
  // A bound handle is not found from another connection.
  std::string code;
  try {
    co_await other.read(kind, handle);
  } catch (const HandleError& e) {
    code = e.code;
  }
  EXPECT_EQ(code, "HANDLE_NOT_FOUND");
  const std::function<Json(Json)> bump = [](Json d) {
    d["n"] = d["n"].get<int>() + 1;
    return d;
  };
  r = co_await h.update(kind, handle, bump);
  EXPECT_EQ(r.data["n"], 2);
  // Commit: work runs once, under a renewed lease (it takes longer than the lease).
  int runs = 0;
  const Work work = [&ctx, &runs](Json d) -> sim::Task<Json> {
    co_await ctx.sleep(450);
    ++runs;
    Json result = Json::object();
    result["saw"] = d["n"];
    co_return result;
  };
  CommitOutcome c = co_await h.commit(kind, handle, work);
  EXPECT_EQ(c.status, "committed");
  EXPECT_EQ(c.result["saw"], 2);
  c = co_await h.commit(kind, handle, work);
  EXPECT_EQ(c.status, "replayed") << "a second commit replays the result";
  EXPECT_EQ(c.result["saw"], 2);
  EXPECT_EQ(runs, 1);
  code.clear();
  try {
    co_await h.update(kind, handle, bump);
  } catch (const HandleError& e) {
    code = e.code;
  }
  EXPECT_EQ(code, "HANDLE_COMMITTED");
  // After resultTtlMs the result reports HANDLE_EXPIRED with the "result" deadline.
  co_await ctx.sleep(1000);
  std::string deadline;
  try {
    co_await h.read(kind, handle);
  } catch (const HandleError& e) {
    code = e.code;
    deadline = e.details.value("deadline", "");
  }
  EXPECT_EQ(code, "HANDLE_EXPIRED");
  EXPECT_EQ(deadline, "result");
  // An idle draft expires with the "idle" deadline; a discarded one is not found.
  const std::string idle = co_await h.create(kind, data);
  co_await ctx.sleep(400);
  try {
    co_await h.read(kind, idle);
  } catch (const HandleError& e) {
    code = e.code;
    deadline = e.details.value("deadline", "");
  }
  EXPECT_EQ(code, "HANDLE_EXPIRED");
  EXPECT_EQ(deadline, "idle");
  const std::string gone = co_await h.create(kind, data);
  co_await h.discard(kind, gone);
  code.clear();
  try {
    co_await h.read(kind, gone);
  } catch (const HandleError& e) {
    code = e.code;
  }
  EXPECT_EQ(code, "HANDLE_NOT_FOUND");
  // No runtime state: a clear storage error.
  HandleOptions none;
  none.connection_id = "conn-a";
  HandleContext without(none, ctx, rng);
  code.clear();
  try {
    co_await without.create(kind, data);
  } catch (const HandleError& e) {
    code = e.code;
  }
  EXPECT_EQ(code, "HANDLE_STORAGE_UNAVAILABLE");
  // (HANDLE_COMMITTED has no outcome of its own in the seed: "error", js 335.)
  const std::vector<std::string> expected_events = {
      "create:success:none", "read:success:none",    "read:not_found:none", "update:success:none",
      "commit:success:none", "commit:replayed:none", "update:error:none",   "read:expired:none",
      "create:success:none", "read:expired:none",    "create:success:none", "discard:success:none",
      "read:not_found:none"};
  EXPECT_EQ(events, expected_events);
  lifecycle_finished = true;
}

TEST(HandleRuntime, ADraftLivesThroughCreateReadUpdateCommitReplayAndExpiresByItsDeadlines) {
  InWorld(Lifecycle);
  EXPECT_TRUE(lifecycle_finished) << "the actor did not run to its end";
}

using testing_cli::Cli;
using testing_cli::Result;

// A run of `property` on `version`.
props::RunSpec Spec(const std::string& property, uint64_t seed, int clients = 3, int ops = 8,
                    const std::string& version = "beta30") {
  props::RunSpec spec;
  spec.property = property;
  spec.version = version;
  spec.seed = seed;
  spec.clients = clients;
  spec.ops = ops;
  return spec;
}

// Runs of `property` (seeds 1-40, beta.30) on the shared-scope port that show `cls`.
int ShowsOnSharedScope(const std::string& property, int clients, int ops, const std::string& cls) {
  int shown = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    props::RunSpec spec = Spec(property, seed, clients, ops);
    spec.options["port-variant"] = "broken-5-shared-scope";  // drops forConnection
    const props::RunOutcome o =
        props::FindSystem("handles")->Run(spec, testing_catalogs::Shipped(), nullptr);
    shown += std::count(o.classes.begin(), o.classes.end(), cls) > 0;
  }
  return shown;
}

TEST(HandlesSystem, EachPropertyIsSeenFailing) {
  // A CAS script that ignores the expected version lets two committers claim one draft.
  Result r =
      Cli("check --system handles --seed 1 --runs 50 --quiet --properties "
          "work-at-most-once,result-replayed --scripts " TESTBED_SOURCE_DIR
          "/tests/broken_scripts/cas-without-version-check");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("violation of work-at-most-once, class work-ran-twice"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("violation of result-replayed, class different-result"), std::string::npos)
      << r.out;
  // bound-isolation on a port that drops forConnection (broken-5-shared-scope).
  EXPECT_GT(ShowsOnSharedScope("bound-isolation", 3, 8, "reads-other-connections-draft"), 0);
  // The shipped runtime on beta.30: spurious BUSY and bent data.
  r =
      Cli("check --system handles --seed 1 --runs 50 --quiet --properties "
          "busy-means-committing,data-read-back");
  EXPECT_NE(r.out.find("class busy-from-concurrent-read"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("class number-bent"), std::string::npos) << r.out;
  // With faults, each class by the one fault kind that shows its mechanism (300 runs of seed 1
  // each; fault-free, the same properties show none of them).
  const std::vector<std::pair<std::string, std::vector<std::string>>> by_fault = {
      {"resend",
       {"update-reapplied-after-resend", "busy-on-its-own-claim", "resent-create-orphans-draft"}},
      {"lost-reply", {"update-retried-after-lost-reply"}},
      {"pause", {"lease-lapsed-in-pause"}},
      {"outage", {"finalize-gave-up"}},
      {"clock-jump", {"result-expired-by-clock", "result-lost-by-committer-clock"}},
      {"failover", {"work-ran-twice-after-lost-claim"}},
  };
  for (const auto& [fault, classes] : by_fault) {
    r = Cli("check --system handles --seed 1 --runs 300 --quiet --faults " + fault +
            " --properties updates-exactly-once,busy-means-committing,result-replayed,"
            "quota-counts-live-handles,work-at-most-once");
    for (const std::string& cls : classes)
      EXPECT_NE(r.out.find("class " + cls + ":"), std::string::npos) << fault << ": " << r.out;
  }
  // A committer that crashes before its finalize leaves its claim for max(the draft's storage
  // ttl, lease) (js 647): rare on this workload, so 1,000 runs.
  r =
      Cli("check --system handles --seed 1 --runs 1000 --quiet --faults crash --properties "
          "busy-means-committing");
  EXPECT_NE(r.out.find("class busy-beyond-lease:"), std::string::npos) << r.out;
  // A full kind (maxEntries live drafts) admits a third draft when the CAS script's quota check
  // is off by one; the shipped scripts refuse it on the same seeds.
  const std::string limits =
      "check --system handles --seed 1 --runs 50 --quiet --properties quota-limits-live-handles";
  r = Cli(limits + " --scripts " TESTBED_SOURCE_DIR "/tests/broken_scripts/cas-quota-off-by-one");
  EXPECT_NE(r.out.find("class overfill:"), std::string::npos) << r.out;
  r = Cli(limits);
  EXPECT_EQ(r.code, 0) << r.out;
  // The memory backend ends a record's grace one millisecond before Redis does.
  r =
      Cli("check --system handles --seed 1 --runs 50 --quiet --properties "
          "memory-matches-redis,quota-counts-live-handles");
  EXPECT_NE(r.out.find("class differs-on-read"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("class expired-drafts-hold-quota"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the memory backend answers: HANDLE_NOT_FOUND"), std::string::npos);
}

// calls-linearizable: on the shipped runtime, fault-free, the data's bends are the only thing the
// model cannot explain (they show in every run); under faults, the clock mechanisms the model
// takes on as known weaknesses are named; and a CAS script that ignores the expected version
// shows new mechanisms although the bends already fail every run.
TEST(HandlesSystem, CallsLinearizableNamesKnownMechanismsAndSeesNewOnesPastThem) {
  const std::string check =
      "check --system handles --seed 1 --quiet --properties calls-linearizable ";
  Result r = Cli(check + "--runs 50");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("calls-linearizable                                 50        0       50"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  number-bent                                                        50"),
            std::string::npos)
      << r.out;
  r = Cli(check + "--runs 50 --baseline " TESTBED_SOURCE_DIR "/baselines/handles/beta30.json");
  EXPECT_EQ(r.code, 0) << r.out;
  r = Cli(check + "--runs 450 --faults all");  // (the committer's clock: seed 410)
  for (const char* cls : {"write-refused-by-caller-clock", "claim-lost-by-committer-clock"})
    EXPECT_NE(r.out.find(std::string("class ") + cls + ":"), std::string::npos) << cls << r.out;
  EXPECT_EQ(r.out.find("-answered-"), std::string::npos) << r.out;
  r = Cli(check + "--runs 50 --scripts " TESTBED_SOURCE_DIR
                  "/tests/broken_scripts/cas-without-version-check");
  EXPECT_NE(r.out.find("class commit-ran-work-under-another-claim:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("class number-bent:"), std::string::npos) << r.out;
}

// The calls-linearizable classes of seeds 1-`seeds` (beta.30, fault-free) on a port variant
// (properties/handles/broken_ports.h) that the baseline does not accept.
std::set<std::string> NewCallsClasses(const std::string& variant, uint64_t seeds = 40) {
  const harness::Baseline b =
      harness::LoadBaseline(TESTBED_SOURCE_DIR "/baselines/handles/beta30.json");
  std::set<std::string> out;
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    props::RunSpec spec = Spec("calls-linearizable", seed);
    spec.options["port-variant"] = variant;
    const props::RunOutcome o =
        props::FindSystem("handles")->Run(spec, testing_catalogs::Shipped(), nullptr);
    for (const std::string& c : o.classes)
      if (!b.find("calls-linearizable", c)) out.insert(c);
  }
  return out;
}

TEST(HandlesSystem, CallsLinearizableSeesEachPromiseOfTheModelBroken) {
  EXPECT_TRUE(NewCallsClasses("shipped").empty());  // the shipped storage: nothing new
  // Every promise of model/handles.h has a broken port (the registry's), and the property sees
  // each of them break.
  std::set<int> promises;
  for (const props::handles::PortVariant& v : props::handles::PortVariants()) {
    if (v.promise == 0) continue;  // the shipped port
    promises.insert(v.promise);
    const std::set<std::string> seen = NewCallsClasses(v.name, 400);
    EXPECT_FALSE(seen.empty()) << v.name;
    for (const std::string& c : seen) std::cout << v.name << ": " << c << "\n";
  }
  EXPECT_EQ(promises, (std::set<int>{1, 2, 3, 4, 5, 6, 7}));
}

props::RunOutcome Sequential(const std::string& version, uint64_t seed, int ops) {
  return props::FindSystem("handles")->Run(
      Spec("model-matches-implementation", seed, 1, ops, version), testing_catalogs::Shipped(),
      nullptr);
}

// The port, call for call against model/handles: create, read (the sliding touch), update,
// commit (work that succeeds or fails, replays), discard, and reads from another connection,
// across the idle, hard and result deadlines and the expiry grace.
RC_GTEST_PROP(HandlesModel, ASequentialRunAnswersEveryCallAsTheModelOfTheLifecycle, ()) {
  const std::string version = *rc::gen::element<std::string>("beta24", "beta30");
  const uint64_t seed = *rc::gen::inRange<uint64_t>(1, 1000000);
  const int ops = *rc::gen::inRange(1, 40);
  const props::RunOutcome o = Sequential(version, seed, ops);
  RC_LOG() << "replay: testbed check --system handles --version " << version
           << " --properties model-matches-implementation --clients 1 --ops " << ops << " --seed "
           << seed << " --runs 1\n"
           << o.description;
  // Only what the version's baseline accepts (the grace kept past its bound after a failed
  // commit, a finding): anything else is new.
  const harness::Baseline b =
      harness::LoadBaseline(TESTBED_SOURCE_DIR "/baselines/handles/" + version + ".json");
  for (const std::string& c : o.classes) RC_ASSERT(b.find("model-matches-implementation", c));
}

// The fault workloads reach the lease: renewals run (a thread of the committing actor), and
// renewals and finalizes meet faults (lost replies, outages, pauses, crashes).
TEST(HandlesSystem, TheWorkloadReachesTheRenewalLoopAndTheFinalizeUnderFaults) {
  int renewals = 0, faulted_renewals = 0, crashes = 0, pauses = 0;
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    props::RunSpec spec = Spec("work-at-most-once", seed);
    spec.faults = sim::FaultList::Parse("all");
    const props::RunOutcome o =
        props::FindSystem("handles")->Run(spec, testing_catalogs::Shipped(), nullptr);
    for (const auto& e : o.trace.events) {
      const bool renew = e.thread >= 0 && o.trace.thread_names[static_cast<size_t>(e.thread)].find(
                                              "/renew") != std::string::npos;
      if (renew && e.kind == sim::EventKind::kCall) ++renewals;
      if (renew && e.kind == sim::EventKind::kFault) ++faulted_renewals;
      if (e.kind == sim::EventKind::kFault && e.text.rfind("fault crash", 0) == 0) ++crashes;
      if (e.kind == sim::EventKind::kFault && e.text.rfind("fault pause", 0) == 0) ++pauses;
    }
  }
  // (With the 2 s lease only work longer than 1 s renews: about one commit in three.)
  EXPECT_GT(renewals, 30);
  EXPECT_GT(faulted_renewals, 5);
  EXPECT_GT(crashes, 20);
  EXPECT_GT(pauses, 20);
}

TEST(HandlesModel, ARuntimeWithoutConnectionScopesDisagreesWithIt) {
  EXPECT_GE(ShowsOnSharedScope("model-matches-implementation", 1, 30, "disagrees-on-read"), 4)
      << "a port that drops forConnection shares bound drafts across connections";
}

}  // namespace
}  // namespace testbed::real::handles
