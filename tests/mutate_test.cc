// Mutation analysis: the one-line mutants of a script (real/lua_mutants.h) and `testbed mutate`,
// which runs them against a system's properties and says which the suite kills.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <fstream>
#include <nlohmann/json.hpp>

#include "real/lua_mutants.h"
#include "real/script_catalog.h"
#include "tests/cli_run.h"
#include "tests/temp_dir.h"

namespace testbed {
namespace {

using testing_cli::Result;
using testing_dirs::TempDir;

const std::string kMutateSource = TESTBED_SOURCE_DIR;

using testing_cli::Cli;

bool HasMutant(const std::vector<real::LuaMutant>& ms, int line, const std::string& after) {
  return std::any_of(ms.begin(), ms.end(),
                     [&](const real::LuaMutant& m) { return m.line == line && m.after == after; });
}

TEST(LuaMutants, EachOperatorChangesOneTokenOfCodeAndNeverAStringOrAComment) {
  const std::string body =
      "local n = tonumber(ARGV[1])\n"          // 1: int (the index)
      "if n >= 2 and not done then\n"          // 2: rel, int, logic, not
      "\treturn {-1, \"a >= b\"} -- x == y\n"  // 3: no unary minus, no string, no comment
      "end\n"                                  // 4: nothing
      "redis.call(\"SET\", KEYS[1], n + 1)\n"  // 5: int, arith, int, drop
      "local ok = true\n";                     // 6: bool, drop
  const std::vector<real::LuaMutant> ms = real::MutantsOf(body);
  EXPECT_TRUE(HasMutant(ms, 1, "local n = tonumber(ARGV[2])"));
  EXPECT_TRUE(HasMutant(ms, 1, "local n = tonumber(ARGV[0])"));
  EXPECT_TRUE(HasMutant(ms, 2, "if n > 2 and not done then"));
  EXPECT_TRUE(HasMutant(ms, 2, "if n >= 2 or not done then"));
  EXPECT_TRUE(HasMutant(ms, 2, "if n >= 2 and done then"));
  EXPECT_TRUE(HasMutant(ms, 2, "if n >= 3 and not done then"));
  EXPECT_TRUE(HasMutant(ms, 5, "redis.call(\"SET\", KEYS[1], n - 1)"));
  EXPECT_TRUE(HasMutant(ms, 5, ""));  // the statement dropped
  EXPECT_TRUE(HasMutant(ms, 6, "local ok = false"));
  auto lines = [](const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
  };
  const std::vector<std::string> shipped = lines(body);
  for (const real::LuaMutant& m : ms) {
    EXPECT_NE(m.line, 4) << m.after;
    if (m.line == 3 && m.op != "drop") {  // "-1" stays unary, strings and comments stay
      EXPECT_NE(m.after.find("\"a >= b\"} -- x == y"), std::string::npos) << m.after;
      EXPECT_EQ(m.op, "int") << m.after;
    }
    // Only the mutant's own line changes (a dropped line stays, empty).
    const std::vector<std::string> mutated = lines(m.body);
    ASSERT_EQ(mutated.size(), shipped.size()) << m.id;
    for (size_t k = 0; k < shipped.size(); ++k) {
      if (static_cast<int>(k) + 1 == m.line) continue;
      EXPECT_EQ(mutated[k], shipped[k]) << m.id;
    }
    if (m.op == "drop") {
      EXPECT_EQ(lines(m.body)[m.line - 1], "") << m.id;
    } else {
      EXPECT_EQ(lines(m.body)[m.line - 1], m.after) << m.id;
    }
  }
  // Ids are "<line>.<k>", unique, and the same for the same body.
  std::vector<std::string> ids;
  for (const auto& m : ms) ids.push_back(m.id);
  std::vector<std::string> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
  std::vector<std::string> again;
  for (const auto& m : real::MutantsOf(body)) again.push_back(m.id);
  EXPECT_EQ(ids, again);
}

// The quota check of beta.30's set script, off by one: quota-safety must kill it.
const char kOffByOne[] = "state/beta30/SET_WITH_QUOTA_SCRIPT.lua:10.5";
// delete's reply, which the client never reads: no property can kill it.
const char kDeleteReply[] = "state/beta30/DELETE_WITH_INDEX_SCRIPT.lua:4.1";

TEST(Mutate, AMutantThatBreaksAPromiseIsKilledByTheClassItShows) {
  const Result r = Cli(std::string("mutate --system state --version beta30 --seed 1 --runs 20 "
                                   "--only ") +
                       kOffByOne);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find(std::string("killed ") + kOffByOne +
                       " [rel] `if not indexed and "
                       "redis.call(\"ZCARD\", KEYS[2]) >= max_entries then` -> `if not indexed and "
                       "redis.call(\"ZCARD\", KEYS[2]) > max_entries then`"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("    by quota-safety / overfill"), std::string::npos) << r.out;
}

TEST(Mutate, ASurvivorFailsTheRunUntilItIsArguedEquivalentOnItsOwnLine) {
  const Result survives =
      Cli(std::string("mutate --system state --version beta30 --seed 1 --runs 5 --only ") +
          kDeleteReply);
  EXPECT_EQ(survives.code, 1) << survives.out;
  EXPECT_NE(survives.out.find(std::string("survived ") + kDeleteReply), std::string::npos)
      << survives.out;
  EXPECT_NE(survives.out.find("result: 1 mutants survive"), std::string::npos) << survives.out;
  // Its replay line, run, shows the same survivor.
  const std::string replay = testing_cli::LineStarting(
      survives.out.substr(survives.out.find("\n    replay: ") + 5), "replay: testbed ");
  ASSERT_FALSE(replay.empty()) << survives.out;
  const Result again = Cli(replay.substr(std::string("replay: testbed ").size()));
  EXPECT_EQ(again.code, 1) << replay << "\n" << again.out;
  EXPECT_NE(again.out.find(std::string("survived ") + kDeleteReply), std::string::npos)
      << again.out;

  TempDir dir("mutate");
  const std::string file = dir.path() + "/equivalent.json";
  std::ofstream(file) << R"({"mutants": [{"id": ")" << kDeleteReply
                      << R"(", "after": "return 2", "why": "the client never reads it"}]})";
  const Result argued =
      Cli(std::string("mutate --system state --version beta30 --seed 1 --runs 5 --equivalent ") +
          file + " --only " + kDeleteReply);
  EXPECT_EQ(argued.code, 0) << argued.out;
  EXPECT_NE(argued.out.find(std::string("equivalent ") + kDeleteReply), std::string::npos)
      << argued.out;
  EXPECT_NE(argued.out.find("the client never reads it"), std::string::npos) << argued.out;
  // --trust-equivalent (CI's gates): the listed mutant is not run, and still counts as argued;
  // an unlisted survivor still fails the run.
  const Result trusted =
      Cli(std::string("mutate --system state --version beta30 --seed 1 --runs 5 --equivalent ") +
          file + " --trust-equivalent --only " + kDeleteReply);
  EXPECT_EQ(trusted.code, 0) << trusted.out;
  EXPECT_NE(trusted.out.find("(not run: --trust-equivalent)"), std::string::npos) << trusted.out;

  // A reason written for another line does not carry over.
  std::ofstream(file) << R"({"mutants": [{"id": ")" << kDeleteReply
                      << R"(", "after": "return 3", "why": "stale"}]})";
  EXPECT_EQ(Cli(std::string("mutate --system state --version beta30 --seed 1 --runs 5 "
                            "--equivalent ") +
                file + " --only " + kDeleteReply)
                .code,
            1);
  EXPECT_EQ(Cli(std::string("mutate --system state --version beta30 --seed 1 --runs 5 "
                            "--trust-equivalent --equivalent ") +
                file + " --only " + kDeleteReply)
                .code,
            1);
}

// Every argument in the committed file names a mutant that exists, on the line it argues about.
TEST(Mutate, EachMutantArguedEquivalentExistsAsItsLineSays) {
  for (const char* system : {"state", "a2"}) {
    std::ifstream in(kMutateSource + "/baselines/" + system + "/mutants/equivalent.json");
    const nlohmann::json j = nlohmann::json::parse(in);
    const real::ScriptCatalog shipped =
        real::ScriptCatalog::Load(real::ScriptCatalog::ShippedDir());
    auto trim = [](const std::string& t) {
      const size_t a = t.find_first_not_of(" \t");
      return a == std::string::npos ? std::string() : t.substr(a);
    };
    ASSERT_GT(j["mutants"].size(), 0u);
    for (const auto& e : j["mutants"]) {
      const std::string id = e["id"];
      const std::string file = id.substr(0, id.rfind(':'));
      bool found = false;
      for (const real::ScriptFile& f : shipped.all())
        if (f.file == file)
          for (const real::LuaMutant& m : real::MutantsOf(f.body))
            if (f.file + ":" + m.id == id) {
              found = true;
              EXPECT_EQ(trim(m.after), e["after"].get<std::string>()) << id;
            }
      EXPECT_TRUE(found) << id;
      EXPECT_FALSE(e["why"].get<std::string>().empty()) << id;
    }
  }
}

// Each class added to kill a survivor is seen failing on the mutant it was made for.
TEST(Mutate, EachNewOracleKillsTheMutantItWasMadeFor) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"state/beta23/COMPARE_AND_SET_WITH_QUOTA_SCRIPT.lua:12.2",
       "cas-versions-linearizable / quota-error-below-max-entries"},
      {"state/beta23/SET_WITH_QUOTA_SCRIPT.lua:10.3",
       "quota-liveness / deleted-key-recreate-refused"},
      {"state/beta23/COMPARE_AND_SET_WITH_QUOTA_SCRIPT.lua:24.1",
       "quota-safety / refusal-reported-as-written"},
      // quota-liveness re-creates the deleted key by compareAndSet too; keys-expire writes a
      // namespace exactly once; model-matches-implementation's edge-dense runs (the expiry
      // millisecond, and calls whose span straddles an entry's expiry).
      {"state/beta23/COMPARE_AND_SET_WITH_QUOTA_SCRIPT.lua:22.3",
       "quota-liveness / deleted-key-recreate-refused"},
      {"state/beta23/SET_WITH_QUOTA_SCRIPT.lua:17.3", "keys-expire / index-never-expires"},
      // old-pod-writes-listed: the backfill's cursor, past eight SCAN pages.
      {"state/beta23/BACKFILL_LEGACY_INDEX_SCRIPT.lua:18.3",
       "old-pod-writes-listed / old-pod-write-never-listed"},
      {"state/beta23/BACKFILL_LEGACY_INDEX_SCRIPT.lua:4.2",
       "old-pod-writes-listed / old-pod-write-never-listed"},
      // rolling-deploy's rewrite after expiry: the backfill's trim before its ZADD NX.
      {"state/beta23/BACKFILL_LEGACY_INDEX_SCRIPT.lua:6.3",
       "rolling-deploy-writes-visible / list-misses-old-pod-rewrite"},
      {"state/beta23/COMPARE_AND_SET_WITH_QUOTA_SCRIPT.lua:21.3",
       "model-matches-implementation / update-refused-at-expiry-instant"},
      {"state/beta23/COMPARE_AND_SET_WITH_QUOTA_SCRIPT.lua:12.5",
       "model-matches-implementation / stale-cas-succeeds-after-expiry"},
      {"state/beta24/SET_WITH_QUOTA_SCRIPT.lua:10.3", "quota-liveness / overwrite-refused"},
      {"state/beta24/CLAIM_LEGACY_SCRIPT.lua:33.6", "keys-expire / entry-missing-from-index"},
      {"state/beta30/SET_WITH_QUOTA_SCRIPT.lua:16.3", "keys-expire / index-never-expires"},
      // model-matches-implementation judges on past what beta.24's claim explains, in its
      // legacy-dense runs (3000 runs, --runs-of): a missing connection's compareAndSet on a
      // live v1 value answered as a quota error, the claim's tombstone dropped.
      {"state/beta24/COMPARE_AND_SET_WITH_QUOTA_SCRIPT.lua:28.2",
       "model-matches-implementation / disagrees-on-compareAndSet"},
      {"state/beta24/CLAIM_LEGACY_SCRIPT.lua:35.5",
       "model-matches-implementation / disagrees-on-set"},
      // compareAndSet's own claim, at the v1 key's expiry millisecond (legacy-readable).
      {"state/beta24/COMPARE_AND_SET_WITH_QUOTA_SCRIPT.lua:48.1",
       "legacy-readable / cas-misses-v1-value-at-expiry-instant"},
      // quota-safety's full scope that writes what an old pod wrote: the claim's quota check.
      {"state/beta24/CLAIM_LEGACY_SCRIPT.lua:28.5", "quota-safety / adopted-key-overfill"},
      {"state/beta24/COMPARE_AND_SET_WITH_QUOTA_SCRIPT.lua:41.5",
       "quota-safety / adopted-key-overfill"},
      // ... a claim refused but answered as if it found nothing, in get() and compareAndSet().
      {"state/beta24/CLAIM_LEGACY_SCRIPT.lua:29.1",
       "reads-never-quota-error / get-misses-v1-value-in-full-scope"},
      {"state/beta24/COMPARE_AND_SET_WITH_QUOTA_SCRIPT.lua:42.1",
       "quota-safety / refusal-misreported"},
      // legacy-readable claims at a v1 key's expiry millisecond.
      {"state/beta24/COMPARE_AND_SET_WITH_QUOTA_SCRIPT.lua:35.2",
       "legacy-readable / cas-misses-v1-value-at-expiry-instant"},
      {"state/beta24/CLAIM_LEGACY_SCRIPT.lua:19.1",
       "legacy-readable / v1-value-outlives-its-expiry"},
      // keys-expire's late connection claims through a compareAndSet that fails.
      {"state/beta24/COMPARE_AND_SET_WITH_QUOTA_SCRIPT.lua:46.3",
       "keys-expire / index-never-expires"},
      // a2's calls-linearizable and its reach (issue 28): renew from the wrong holder, the
      // dead-letter limit.
      {"a2/0.5.0/RENEW_CLAIMS_LUA.lua:18.7", "calls-linearizable / renew-renewed"},
      {"a2/0.5.0/FAIL_ATTEMPT_LUA.lua:52.1",
       "calls-linearizable / fail-answered-failed-not-dead-lettered"},
      // Its deep runs (Memory::deep): a renew of several claims, a fail and a cause that name
      // no event, a child whose id the store already holds.
      {"a2/0.5.0/RENEW_CLAIMS_LUA.lua:6.9", "calls-linearizable / renew-renewed"},
      {"a2/0.5.0/FAIL_ATTEMPT_LUA.lua:27.1",
       "calls-linearizable / fail-answered-superseded-not-type-error"},
      {"a2/0.5.0/APPEND_LUA.lua:47.1",
       "calls-linearizable / append-answered-superseded-attempt-not-type-error"},
      {"a2/0.5.0/COMPLETE_ATTEMPT_LUA.lua:88.4",
       "calls-linearizable / complete-answered-completed-not-partial-duplicate-batch"},
      // The sequential caller's renews at a lease's edges (Mix::lease_edges): ttl 0, and a renew
      // at the expiry millisecond.
      {"a2/0.5.0/RENEW_CLAIMS_LUA.lua:15.3", "model-matches-implementation / disagrees-on-renew"},
      {"a2/0.5.0/RENEW_CLAIMS_LUA.lua:19.1", "model-matches-implementation / disagrees-on-renew"},
      // Its presence writes older than a stored stamp, at and after the row's expiry and the
      // key's end, and after a read that pruned the row: a stamp that outlives the pruning read
      // or the key is a class of its own, not the known expired-stamp-still-wins.
      {"a2/0.5.0/PRESENCE_READ_LUA.lua:7.3",
       "model-matches-implementation / presence-stamp-survives-read"},
      {"a2/0.5.0/PRESENCE_SET_LUA.lua:17.1",
       "model-matches-implementation / presence-stamp-outlives-key"},
      // Its page of one session right after a write of the sessions index.
      {"a2/0.5.0/COMPLETE_ATTEMPT_LUA.lua:120.3",
       "model-matches-implementation / disagrees-on-listSessions"}};
  for (const auto& [id, by] : cases) {
    // The oracle alone, with the runs the campaigns give it (docs/mutation.md).
    const std::string system = id.substr(0, id.find('/'));
    const std::string property = by.substr(0, by.find(" / "));
    const std::string runs = property == "model-matches-implementation" ? "3000"
                             : system == "a2"                           ? "400"
                                                                        : "30";
    const Result r = Cli("mutate --system " + system + " --seed 1 --runs " + runs +
                         " --properties " + property + " --only " + id);
    EXPECT_EQ(r.code, 0) << id << "\n" << r.out;
    EXPECT_NE(r.out.find("killed " + id), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("    by " + by + " ("), std::string::npos) << by << "\n" << r.out;
  }
}

// handles on beta.24: every mutant is killed or argued equivalent but the three that skip the
// envelope's re-encoding, as on beta.30 (docs/mutation.md).
// (--trust-equivalent: the 245 mutants argued equivalent are not run, which took 290 of this
// test's 300 s; Mutate.HandlesKillsEveryMutant... runs beta.30's equivalents to the end, and
// docs/mutation.md's command re-checks these.)
TEST(Mutate, HandlesOnBeta24KillsEveryMutantButTheThreeThatStopTheBends) {
  const Result r =
      Cli("mutate --system handles --version beta24 --seed 1 --runs 20 --equivalent " +
          kMutateSource + "/baselines/handles/mutants/equivalent.json --trust-equivalent");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("state/beta24                  348         0     100        245         3"),
            std::string::npos)
      << r.out;
  for (const char* id : {"61.1", "74.2", "77.1"})
    EXPECT_NE(
        r.out.find(std::string("survived state/beta24/COMPARE_AND_SET_WITH_QUOTA_SCRIPT.lua:") +
                   id + " "),
        std::string::npos)
        << id << "\n"
        << r.out;
}

// handles on beta.24: a mutant that takes the legacy tombstone for a value is killed by a
// discarded handle's words used again (a read of it, a create that draws them): the claimed
// tombstone holds a quota slot (docs/mutation.md). One of CLAIM_LEGACY_SCRIPT's and one of the
// CAS script's.
TEST(Mutate, HandlesKillsBeta24sTombstoneMutantsThroughADiscardedHandlesWords) {
  for (const char* id : {"state/beta24/CLAIM_LEGACY_SCRIPT.lua:12.2",
                         "state/beta24/COMPARE_AND_SET_WITH_QUOTA_SCRIPT.lua:23.2"}) {
    const Result r =
        Cli(std::string("mutate --system handles --version beta24 --seed 1 --runs 20 ") +
            "--properties quota-counts-live-handles --only " + id);
    EXPECT_EQ(r.code, 0) << id << "\n" << r.out;
    EXPECT_NE(r.out.find(std::string("killed ") + id), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("    by quota-counts-live-handles / discarded-drafts-hold-quota ("),
              std::string::npos)
        << r.out;
  }
}

// The gate: every mutant of beta.30's scripts is killed or argued equivalent (docs/mutation.md).
// A property that stops judging what it judges today lets a mutant survive and fails this.
TEST(Mutate, EveryMutantOfBeta30IsKilledOrArguedEquivalent) {
  const Result r = Cli("mutate --system state --version beta30 --seed 1 --runs 30 --equivalent " +
                       kMutateSource + "/baselines/state/mutants/equivalent.json");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("result: every mutant that compiles is killed or argued equivalent"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("\nsurvived "), std::string::npos) << r.out;
}

// handles on beta.30: every mutant is killed or argued equivalent but the three that skip the
// envelope's re-encoding (the data is then no longer bent, which no handle promise forbids).
TEST(Mutate, HandlesKillsEveryMutantButTheThreeThatStopTheBends) {
  const Result r = Cli("mutate --system handles --version beta30 --seed 1 --runs 20 --equivalent " +
                       kMutateSource + "/baselines/handles/mutants/equivalent.json");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("state/beta30                  144         0      65         76         3"),
            std::string::npos)
      << r.out;
  for (const char* id : {"24.1", "36.2", "39.1"})
    EXPECT_NE(
        r.out.find(std::string("survived state/beta30/COMPARE_AND_SET_WITH_QUOTA_SCRIPT.lua:") +
                   id + " "),
        std::string::npos)
        << id << "\n"
        << r.out;
  // The shipped runs' line coverage: the two scripts the handle runtime never calls (argued
  // equivalent by hand in equivalent.json) never run; the survivors' lines all ran, so none of
  // them is a gap in reach.
  for (const char* line :
       {"  state/beta30/SET_WITH_QUOTA_SCRIPT                0 of  13 (  0%)",
        "  state/beta30/DELETE_WITH_INDEX_SCRIPT             0 of   3 (  0%)",
        "  state/beta30/COMPARE_AND_SET_WITH_QUOTA_SCRIPT   30 of  32 ( 93%)  never run: 6, 21"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  EXPECT_EQ(r.out.find("never ran in the shipped scripts' runs"), std::string::npos) << r.out;
}

// A survivor on a line no shipped run executed says so: no oracle could have killed it.
TEST(Mutate, ASurvivorOnALineNoRunReachesSaysSo) {
  const Result r =
      Cli("mutate --system handles --version beta30 --seed 1 --runs 2 --only "
          "state/beta30/SET_WITH_QUOTA_SCRIPT.lua:9.1");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("survived state/beta30/SET_WITH_QUOTA_SCRIPT.lua:9.1"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("    line 9 never ran in the shipped scripts' runs: no workload reaches it"),
            std::string::npos)
      << r.out;
}

TEST(Mutate, BadInputIsOneLineAndExit2BeforeAnyRun) {
  for (const std::string& args :
       {std::string("mutate --system state --version beta30 --only nope.lua:1.1"),
        std::string("mutate --system state --equivalent /nonexistent/eq.json"),
        std::string("mutate --system nosuch"), std::string("mutate --system state --runs 0"),
        std::string("mutate --system state --trust-equivalent")}) {
    const Result r = Cli(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_EQ(r.out.find("killed"), std::string::npos) << args << "\n" << r.out;
  }
}

}  // namespace
}  // namespace testbed
