// model/state_store: each choice written at the top of its header, as an executable example.
#include <gtest/gtest.h>

#include "model/state_store.h"

namespace testbed::model {
namespace {

const std::optional<std::string> kA = std::string("conn-a");
const std::optional<std::string> kB = std::string("conn-b");
const std::optional<std::string> kMissing = std::nullopt;

StoreNamespaceOptions Options(int64_t max_entries = 2, bool provider = false) {
  return {provider, /*default_ttl_ms=*/100, /*max_ttl_ms=*/1000, max_entries,
          /*max_value_bytes=*/64};
}

Json V(int n) { return Json{{"n", n}}; }

TEST(ModelStateStore, AnEntryIsAliveThroughItsExpiryMillisecondAndGoneAfter) {  // rule 1
  StateStoreModel m({});
  ASSERT_TRUE(m.set(kA, "ns", Options(), "k", V(1), 50, 1000).error.empty());
  EXPECT_TRUE(m.get(kA, "ns", Options(), "k", 1050).entry.has_value());
  EXPECT_EQ(m.list(kA, "ns", Options(), std::nullopt, std::nullopt, 1050).rows.size(), 1u);
  EXPECT_FALSE(m.get(kA, "ns", Options(), "k", 1051).entry.has_value());
}

TEST(ModelStateStore,
     ConnectionsAreScopedUnlessTheNamespaceIsProviderScopedOrTheVariantIsV1) {  // rule 2
  StateStoreModel v2({});
  v2.set(kA, "ns", Options(), "k", V(1), std::nullopt, 0);
  EXPECT_FALSE(v2.get(kB, "ns", Options(), "k", 1).entry.has_value());
  EXPECT_FALSE(v2.get(kMissing, "ns", Options(), "k", 1).entry.has_value());
  v2.set(kA, "shared", Options(2, true), "k", V(2), std::nullopt, 0);
  EXPECT_TRUE(v2.get(kB, "shared", Options(2, true), "k", 1).entry.has_value());
  StateStoreModel v1({.scoped = false});
  v1.set(kA, "ns", Options(), "k", V(1), std::nullopt, 0);
  EXPECT_TRUE(v1.get(kB, "ns", Options(), "k", 1).entry.has_value());
}

TEST(ModelStateStore,
     TheQuotaRefusesANewKeyButNeverAnOverwriteAndCountsEntriesAtTheirExpiryInstant) {  // rules 1, 3
  StateStoreModel m({});
  m.set(kA, "ns", Options(2), "a", V(1), 10, 0);
  m.set(kA, "ns", Options(2), "b", V(2), std::nullopt, 0);
  EXPECT_EQ(m.set(kA, "ns", Options(2), "c", V(3), std::nullopt, 10).error,
            "quota");  // a lives at 10
  EXPECT_TRUE(m.set(kA, "ns", Options(2), "b", V(4), std::nullopt, 10).error.empty());
  EXPECT_TRUE(m.set(kA, "ns", Options(2), "c", V(5), std::nullopt, 11).error.empty());  // a is gone
}

TEST(ModelStateStore,
     VersionsCountFromZeroAfterDeleteOrExpiryAndCasSwapsOnlyOnTheCurrentVersion) {  // rule 4
  StateStoreModel m({});
  EXPECT_EQ(m.set(kA, "ns", Options(), "k", V(1), std::nullopt, 0).entry->version, 1);
  EXPECT_EQ(m.set(kA, "ns", Options(), "k", V(2), std::nullopt, 1).entry->version, 2);
  StoreResult stale = m.compare_and_set(kA, "ns", Options(), "k", 1, V(3), std::nullopt, 2);
  EXPECT_FALSE(stale.ok);
  EXPECT_EQ(stale.entry->version, 2);
  EXPECT_TRUE(m.compare_and_set(kA, "ns", Options(), "k", 2, V(3), std::nullopt, 3).ok);
  m.del(kA, "ns", Options(), "k", 4);
  EXPECT_TRUE(m.compare_and_set(kA, "ns", Options(), "k", 0, V(4), std::nullopt, 5).ok);
}

TEST(ModelStateStore, CreatedAtSurvivesOverwritesAndRestartsAfterDelete) {  // rule 5
  StateStoreModel m({});
  m.set(kA, "ns", Options(), "k", V(1), std::nullopt, 7);
  EXPECT_EQ(m.compare_and_set(kA, "ns", Options(), "k", 1, V(2), std::nullopt, 9).entry->created_at,
            7);
  EXPECT_EQ(m.set(kA, "ns", Options(), "k", V(3), std::nullopt, 11).entry->updated_at, 11);
  m.del(kA, "ns", Options(), "k", 12);
  EXPECT_EQ(m.set(kA, "ns", Options(), "k", V(4), std::nullopt, 13).entry->created_at, 13);
}

TEST(ModelStateStore, TtlAboveMaxTtlAndValuesAboveMaxValueBytesArePolicyErrors) {  // rule 5
  StateStoreModel m({});
  EXPECT_EQ(m.set(kA, "ns", Options(), "k", V(1), 1001, 0).error, "policy");
  EXPECT_EQ(
      m.set(kA, "ns", Options(), "k", Json{{"s", std::string(80, 'x')}}, std::nullopt, 0).error,
      "policy");
  StateStoreModel beta3({.scoped = false, .max_ttl = false});
  EXPECT_TRUE(beta3.set(kA, "ns", Options(), "k", V(1), 1001, 0).error.empty());
}

TEST(ModelStateStore,
     EveryScopeKeepsReadingAV1ValueUntilItWritesOrDeletesTheKeyItself) {  // rule 7
  StateStoreModel m({.scoped = true, .legacy = true});
  m.legacy_write("ns", Options(), "k", V(1), 1000, 0);
  EXPECT_EQ(m.get(kMissing, "ns", Options(), "k", 1).entry->value, V(1));
  EXPECT_EQ(m.get(kA, "ns", Options(), "k", 2).entry->value, V(1));
  EXPECT_EQ(m.get(kB, "ns", Options(), "k", 3).entry->value, V(1));  // not lost to kA's read
  // kA's own write and delete change kA's view only.
  EXPECT_EQ(m.set(kA, "ns", Options(), "k", V(2), std::nullopt, 4).entry->version, 2);
  EXPECT_EQ(m.get(kA, "ns", Options(), "k", 5).entry->value, V(2));
  EXPECT_EQ(m.get(kB, "ns", Options(), "k", 5).entry->value, V(1));
  m.del(kB, "ns", Options(), "k", 6);
  EXPECT_FALSE(m.get(kB, "ns", Options(), "k", 7).entry.has_value());
  EXPECT_EQ(m.get(kMissing, "ns", Options(), "k", 7).entry->value, V(1));
  // An old pod's later write is the latest for every scope (last write wins, as in v1).
  m.legacy_write("ns", Options(), "k", V(3), 1000, 8);
  for (const auto& c : {kA, kB, kMissing})
    EXPECT_EQ(m.get(c, "ns", Options(), "k", 9).entry->value, V(3));
  // list() shows what get() shows.
  EXPECT_EQ(m.list(kB, "ns", Options(), std::nullopt, std::nullopt, 9).rows.size(), 1u);
}

TEST(ModelStateStore,
     AV1ValueDoesNotCountAgainstAScopesQuotaAndWritingItThereIsANewEntry) {  // rules 3 and 7
  StateStoreModel m({.scoped = true, .legacy = true});
  m.legacy_write("ns", Options(1), "old", V(1), 1000, 0);
  EXPECT_TRUE(m.set(kA, "ns", Options(1), "new", V(2), std::nullopt, 1).error.empty());
  StoreResult r = m.get(kA, "ns", Options(1), "old", 2);
  EXPECT_TRUE(r.error.empty());
  EXPECT_EQ(r.entry->value, V(1));
  EXPECT_EQ(m.set(kA, "ns", Options(1), "old", V(3), std::nullopt, 3).error, "quota");
  EXPECT_EQ(m.get(kB, "ns", Options(1), "old", 3).entry->value, V(1));
}

// Not the contract: beta.24's claim as built, which model-matches-implementation keeps beside
// the contract to name what the claim explains (the header's last paragraph).
TEST(ModelStateStore, TheClaimAsBuiltAdoptsAV1ValueIntoTheFirstScopeAndTombstonesIt) {
  StateStoreModel m({.scoped = true, .legacy = true, .as_built_claim = true});
  m.legacy_write("ns", Options(), "k", V(1), 1000, 0);
  EXPECT_FALSE(m.get(kMissing, "ns", Options(), "k", 1).entry.has_value());  // never claims
  EXPECT_EQ(m.get(kA, "ns", Options(), "k", 2).entry->value, V(1));          // adopts
  EXPECT_FALSE(m.get(kB, "ns", Options(), "k", 3).entry.has_value());        // lost to kA
  EXPECT_EQ(m.list(kA, "ns", Options(), std::nullopt, std::nullopt, 3).rows.size(), 1u);
  // A delete's scoped tombstone hides an old pod's later write from that scope only.
  m.del(kA, "ns", Options(), "k", 4);
  m.legacy_write("ns", Options(), "k", V(2), 1000, 5);
  EXPECT_FALSE(m.get(kA, "ns", Options(), "k", 6).entry.has_value());
  EXPECT_EQ(m.get(kB, "ns", Options(), "k", 7).entry->value, V(2));
}

TEST(ModelStateStore, TheClaimAsBuiltRefusesAFullScopeAndTheMissingConnectionsCompareAndSet) {
  StateStoreModel m({.scoped = true, .legacy = true, .as_built_claim = true});
  m.legacy_write("ns", Options(1), "old", V(1), 1000, 0);
  const StoreResult cas =
      m.compare_and_set(kMissing, "ns", Options(1), "old", 0, V(9), std::nullopt, 1);
  EXPECT_FALSE(cas.ok);
  EXPECT_FALSE(cas.entry.has_value());
  ASSERT_TRUE(m.set(kA, "ns", Options(1), "new", V(2), std::nullopt, 2).error.empty());
  EXPECT_EQ(m.get(kA, "ns", Options(1), "old", 3).error, "quota");  // the claim's quota
  EXPECT_EQ(m.get(kB, "ns", Options(1), "old", 3).entry->version, 1);
}

TEST(ModelStateStore, AClaimAtTheV1KeysExpiryMillisecondOutlivesTheExpiryItStates) {
  StateStoreModel m({.scoped = true, .legacy = true, .as_built_claim = true});
  m.legacy_write("ns", Options(), "k", V(1), 50, 0);  // ends at 50
  const StoreResult at_end = m.get(kA, "ns", Options(), "k", 50);
  ASSERT_TRUE(at_end.entry.has_value());
  EXPECT_EQ(at_end.entry->expires_at, 50);  // PX 1: the copy lives through 51
  EXPECT_TRUE(m.get(kA, "ns", Options(), "k", 51).entry.has_value());
  EXPECT_FALSE(m.get(kA, "ns", Options(), "k", 52).entry.has_value());
}

TEST(ModelStateStore, TheIndexViewCountsAnEntryAsGoneAtItsExpiryMillisecond) {
  StateStoreModel m({});
  ASSERT_TRUE(m.set(kA, "ns", Options(1), "a", V(1), 50, 0).error.empty());
  EXPECT_EQ(m.set(kA, "ns", Options(1), "b", V(2), std::nullopt, 50).error, "quota");  // rule 3
  StateStoreModel index = m;
  index.count_by_index(true);
  EXPECT_TRUE(index.set(kA, "ns", Options(1), "b", V(2), std::nullopt, 50).error.empty());
  EXPECT_TRUE(index.list(kA, "ns", Options(1), std::string("a"), std::nullopt, 50).rows.empty());
}

TEST(ModelStateStore, AnOldPodsWriteKeepsItsOwnQuota) {  // rules 3 and 7
  StateStoreModel m({.scoped = true, .legacy = true});
  EXPECT_TRUE(m.legacy_write("ns", Options(1), "a", V(1), 1000, 0).error.empty());
  EXPECT_EQ(m.legacy_write("ns", Options(1), "b", V(2), 1000, 1).error, "quota");
  EXPECT_EQ(m.legacy_write("ns", Options(1), "a", V(3), 1000, 2).entry->version, 2);   // live
  EXPECT_TRUE(m.legacy_write("ns", Options(1), "b", V(4), 1000, 1003).error.empty());  // a expired
}

TEST(ModelStateStore, ListFiltersByPrefixAndLimitsButKeepsTheMatchingCount) {  // rule 8
  StateStoreModel m({});
  for (const char* k : {"a1", "a2", "b1"}) m.set(kA, "ns", Options(5), k, V(1), std::nullopt, 0);
  StoreResult r = m.list(kA, "ns", Options(5), std::string("a"), 1, 1);
  EXPECT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.matching, 2);
  EXPECT_EQ(m.list(kA, "ns", Options(5), std::nullopt, std::nullopt, 1).rows.size(), 3u);
}

TEST(ModelStateStore, IncrementAddsToANumericFieldAndStartsMissingOnesAtZero) {
  StateStoreModel m({});
  EXPECT_EQ(m.increment(kA, "ns", Options(), "k", "n", 2, std::nullopt, 0).entry->value,
            Json({{"n", 2.0}}));
  EXPECT_EQ(m.increment(kA, "ns", Options(), "k", "n", 3, std::nullopt, 1).entry->value,
            Json({{"n", 5.0}}));
}

}  // namespace
}  // namespace testbed::model
