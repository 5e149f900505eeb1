// The provider state store's contract, whole: what the seeds' code and comments promise a
// caller of ProviderRuntimeState / ProviderStateNamespace, as a pure model. No I/O, no clock:
// every operation takes `now` (ms). The per-key register (state_register.h) is the same
// contract cut down for the linearizability checker; this model answers whole operations
// (get, set, compareAndSet, delete, list, increment, and an old pod's v1 write) so that a
// sequential run of an implementation can be compared with it call for call.
//
// The principle: the model states the strongest contract a caller can reasonably rely on, from
// the code's comments, the API's names and types, and what the memory backend promises. Where
// the implementation is weaker, that is a finding (a property that fails, accepted in a
// baseline with its reason), not a choice. A choice stays a choice only where the contract is
// silent, and then the properties accept every reasonable behaviour. Each rule below carries
// its verdict: [contract] with the property that judges it, or [choice] with why the contract
// is silent.
//   1. Expiry: an entry written with ttl T at server time s is alive while t <= s + T, by the
//      server's clock (Redis keeps a PXAT E key through E). list() and the quota follow the
//      same boundary as get(). The store's own expiresAt (the writer's Date.now() + T) is what
//      the envelope states; the key must live on the server exactly that long.
//      [contract, changed in issue 31] The promise is the writer's ttl measured on the server's
//      clock, the one clock every pod shares; before, the model took the client-computed PXAT
//      as the promise, so a pod whose clock is behind or ahead silently shortened or lengthened
//      every TTL and nothing said so. Judged by acknowledged-writes-visible
//      (expired-early-by-writer-clock: PXAT from a slow clock; list-misses-by-fast-clock: the
//      index trimmed and filtered by a fast caller's clock), keys-expire (nothing outlives
//      maxTtl by the server's clock, and the index holds every live entry as long as it lives)
//      and model-matches-implementation (server-expiry-differs-from-stated: the key's PTTL
//      against the expiresAt its envelope states). Which side of E the instant E is on stays a
//      [choice] (nothing says; the model takes Redis's): expiry-boundary-get-list and
//      quota-safety judge that get, list and the quota agree at one instant.
//   2. Scopes (beta.24+, `scoped`): forConnection(id) scopes a connection namespace by
//      SHA-256(id); a missing connection is its own scope; scope "provider" namespaces are
//      shared by every connection. Without `scoped` (beta.3, beta.23) every connection shares.
//      [contract] forConnection's name: connection-isolation. Names are opaque strings (the
//      API takes any string): two different (provider, scope, namespace, key) never share data,
//      and no name matches another, with ':', '*', '?', '[', '\\', '' or unicode in any of them:
//      names-are-opaque (every shipped version fails it: keys are joined with ':' unescaped).
//   3. Quota: a write of a key that is not live in its scope's namespace is refused when
//      maxEntries entries are live there. Overwrites of a live key are always admitted.
//      [contract] maxEntries counts live entries: quota-safety, quota-liveness,
//      reads-never-quota-error. Live by the server's clock, the one every pod shares: both
//      quota properties run under clock skew, and a probe across two pods' clocks judges
//      admissions by it (classes skew-overfill and skew-expired-slot-refused).
//   4. Versions: absent (never written, expired, deleted) is version 0; set writes current+1;
//      compareAndSet(expected) writes expected+1 iff current == expected.
//      [contract, weaker here] The model numbers as every shipped version does, so that
//      model-matches-implementation compares exact numbers; the contract is stronger: a version
//      names one write, also across a delete or an expiry, or compareAndSet(expectedVersion)
//      cannot mean "nobody wrote since I read". versions-never-repeat judges that, and every
//      shipped version fails it (a finding: a stale compareAndSet succeeds after a delete).
//      Concurrent writers never share a version: cas-versions-linearizable.
//   5. createdAt survives overwrites (set and compareAndSet) and restarts after delete or
//      expiry; updatedAt is the write's time; expiresAt is now + ttl (ttl defaults to
//      defaultTtl, must be <= maxTtl; values must be <= maxValueBytes as JSON).
//      [contract] the fields' names and the options' names: model-matches-implementation
//      compares every field get(), list(), set(), compareAndSet() and increment() return
//      (value, version, createdAt, updatedAt, expiresAt; updatedAt since issue 31).
//   6. Values read back exactly as written (JSON equality).
//      [contract] value-read-back, valid-calls-never-script-error (adversarial values).
//   7. Legacy (a v2 release deployed over v1 pods: `legacy`): every caller of a namespace
//      could read a v1 value before the upgrade (v1 keys have no scope), so every scope still
//      reads it after: each connection, the provider scope and the missing connection see, per
//      key, the latest of their own writes and deletes and the old pods' v1 writes (last write
//      wins, as it did when all shared the v1 key). Reads change nothing. A write or delete in
//      one scope changes that scope's view only. A v1 value visible to a scope does not count
//      against that scope's quota (it is the old pods' entry), and writing the key there is a
//      new entry for rule 3. list() shows what get() shows: visible v1 values included.
//      [contract, changed in issue 31] Before, the model took beta.24's claim as the contract:
//      the first concrete scope that touched a key adopted the v1 value and tombstoned it, so
//      every other scope lost it, and the missing connection never saw it. That is the
//      migration's defect, not a choice: a caller who could read its data before the upgrade
//      cannot after. The seed's comment gives the reason (s000:170-173: "a v1 key has no
//      connection discriminator, so it cannot safely be exposed to every v2 scope"): it trades
//      those callers' data for isolation, which is for a team to accept in the version's
//      baseline, with that reason. Judged by legacy-readable (v1-value-lost-to-another-scope,
//      unreadable-without-connection, v1-value-unreadable), rolling-deploy-writes-visible (an
//      old pod's later write) and model-matches-implementation. An old pod's write keeps rule
//      3 in its own namespace: refused when maxEntries v1 entries are live and the key is not.
//   8. list(prefix, limit) returns the live entries whose key starts with prefix, at most
//      limit (default maxEntries); the order is not part of the contract.
//      [choice] list() promises no order; the model compares rows sorted by key, so every
//      order passes. That list() sees what get() sees: expiry-boundary-get-list. The two
//      backends of one release are meant to be interchangeable, so memory-matches-redis does
//      compare their orders, and what list(limit) keeps (differs-on-list-order, -list-limit:
//      memory lists in insertion order, Redis by expiry).
//   9. A compareAndSet with both a stale expectedVersion and a bad ttl or value may report
//      either (beta.23 compares first, beta.24+ check the ttl first); the model reports the
//      policy error, and peek() lets a comparison accept the failure too. beta.3 has no maxTtl
//      check anywhere in its code (its options type is not in the seeds): Variant.max_ttl.
//      [choice] no precedence is documented; both errors are accepted. Between the memory
//      and the Redis backend of one release it differs (memory-matches-redis /
//      error-precedence: memory compares the version first).
//  10. increment(key, field, delta) adds atomically. [contract] the name and the memory
//      backend's single-threaded increment: increments-all-kept. The value it writes is the
//      SDK's `{ ...current, [field]: previous + delta }` (seed 001 507-511): an object keeps its
//      members, a string or an array spreads its elements under "0", "1", ..., anything else
//      starts from {}. [choice] JavaScript's spread is the only reading the code gives; the
//      seed's own runtime agrees (tests/port_fidelity_state_test.cc).
//  11. A key holding text this SDK did not write (an older writer's or an operator's: not JSON,
//      not an envelope, a version that is not a number) reads as absent, and absent is version
//      0 (rule 4), so compareAndSet(0) creates the key. [contract] the API's own reading of
//      the key: foreign-values-consistent (beta.23+ fail it: the CAS script refuses the value
//      as corrupt while get() calls it absent). The model itself never holds such a value.
//
// Variant::as_built_claim is NOT the contract. It is beta.24's migration as seed 000 builds it
// (the claim: the first concrete scope to read or write a v1 key copies it into its v2 scope,
// within its quota, and tombstones the v1 key; deletes leave tombstones in both; the missing
// connection never sees v1 values, and its compareAndSet fails while one is live). Rule 7
// judges that design and finds it wanting; model-matches-implementation keeps this second
// model beside the contract only to name a disagreement: one the claim explains is the known
// trade (class answers-as-the-v1-claim), one it does not is a new defect (disagrees-on-*), and
// the run goes on judging after the first explained one, so a break of the claim's own
// mechanics (its quota check, its ttl edges, its tombstones) is not hidden behind the trade.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace testbed::model {

using Json = nlohmann::json;

struct StoreNamespaceOptions {
  bool provider_scope = false;
  int64_t default_ttl_ms = 60000;
  int64_t max_ttl_ms = 120000;
  int64_t max_entries = 100;
  int64_t max_value_bytes = 4096;
};

struct StoreEntry {
  std::string key;
  Json value;
  int64_t version = 0;
  int64_t expires_at = 0;
  int64_t created_at = 0;
  int64_t updated_at = 0;
  // When the key outlives the expiresAt it states (as_built_claim: a v1 key claimed at its
  // expiry millisecond gets PX 1); 0: it ends at expires_at. Not a field a caller sees.
  int64_t alive_until = 0;
  bool operator==(const StoreEntry&) const = default;
};

// What an operation returns; `error` is "quota", "policy" or "" (none).
struct StoreResult {
  std::string error;
  bool ok = true;                   // compareAndSet: swapped
  std::optional<StoreEntry> entry;  // get / set / cas (written or current) / increment
  std::vector<StoreEntry> rows;     // list, sorted by key
  int64_t matching = 0;             // list: how many live entries match (before the limit)
};

class StateStoreModel {
 public:
  struct Variant {
    bool scoped = true;   // beta.24+: forConnection scopes
    bool legacy = false;  // old v1 pods write the namespace's v1 keys (rule 7)
    bool max_ttl = true;  // false for beta.3, whose code never reads maxTtl (rule 9)
    // Not the contract: beta.24's claim as built (see the header). Implies `legacy`.
    bool as_built_claim = false;
    // Not the contract: the index's view of an instant. Every shipped index is trimmed up to
    // now, inclusive (ZREMRANGEBYSCORE -inf now), so list() and the quota count an entry as
    // gone at its expiry millisecond, while Redis keeps the key through it (rule 1). A model
    // with this on answers as that view does; model-matches-implementation asks it only to
    // name a disagreement at an expiry instant.
    bool index_view = false;
    // Not the contract: the same view for the quota alone. beta.30's compareAndSet script asks
    // only whether the index holds the key (its line 31), so at the key's expiry millisecond
    // an update of the live entry needs a new slot, while its version check still reads the
    // key. A model with this on counts, and asks whether the written key holds a slot, by the
    // index; it reads every entry by the key.
    bool index_quota = false;
  };
  explicit StateStoreModel(Variant v) : variant_(v) {}
  void count_by_index(bool on) { variant_.index_view = on; }
  void quota_by_index(bool on) { variant_.index_quota = on; }

  // `connection`: forConnection's argument (nullopt: the missing connection).
  // What get() would return, without adopting anything (const).
  std::optional<StoreEntry> peek(const std::optional<std::string>& connection,
                                 const std::string& ns, const StoreNamespaceOptions& o,
                                 const std::string& key, int64_t now) const;
  StoreResult get(const std::optional<std::string>& connection, const std::string& ns,
                  const StoreNamespaceOptions& o, const std::string& key, int64_t now);
  StoreResult set(const std::optional<std::string>& connection, const std::string& ns,
                  const StoreNamespaceOptions& o, const std::string& key, const Json& value,
                  std::optional<int64_t> ttl, int64_t now);
  StoreResult compare_and_set(const std::optional<std::string>& connection, const std::string& ns,
                              const StoreNamespaceOptions& o, const std::string& key,
                              int64_t expected, const Json& value, std::optional<int64_t> ttl,
                              int64_t now);
  StoreResult del(const std::optional<std::string>& connection, const std::string& ns,
                  const StoreNamespaceOptions& o, const std::string& key, int64_t now);
  StoreResult list(const std::optional<std::string>& connection, const std::string& ns,
                   const StoreNamespaceOptions& o, const std::optional<std::string>& prefix,
                   std::optional<int64_t> limit, int64_t now);
  StoreResult increment(const std::optional<std::string>& connection, const std::string& ns,
                        const StoreNamespaceOptions& o, const std::string& key,
                        const std::string& field, double delta, std::optional<int64_t> ttl,
                        int64_t now);
  // An old pod (v1 SDK) writes key in namespace ns: version = live v1 version + 1; refused
  // ("quota") when the key is not live and maxEntries v1 entries are (the old pod's quota).
  StoreResult legacy_write(const std::string& ns, const StoreNamespaceOptions& o,
                           const std::string& key, const Json& value, int64_t ttl, int64_t now);

 private:
  using Space = std::map<std::string, StoreEntry>;  // key -> entry
  std::string scope_of(const std::optional<std::string>& connection,
                       const StoreNamespaceOptions& o) const;
  Space& space(const std::optional<std::string>& connection, const std::string& ns,
               const StoreNamespaceOptions& o);
  const StoreEntry* live(const Space& s, const std::string& key, int64_t now) const;
  int64_t live_count(const Space& s, int64_t now) const;
  bool alive(const StoreEntry& e, int64_t now) const;
  // The current value as the scope sees it: its own, or a newer v1 value (rule 7).
  std::optional<StoreEntry> current(const std::optional<std::string>& connection,
                                    const std::string& ns, const StoreNamespaceOptions& o,
                                    const std::string& key, int64_t now) const;
  std::string space_id(const std::optional<std::string>& connection, const std::string& ns,
                       const StoreNamespaceOptions& o) const;
  // The order of the last write or delete of `key` in a space (0: none).
  int64_t last_change(const std::string& space_id, const std::string& key) const;
  std::string policy_error(const StoreNamespaceOptions& o, const Json& value,
                           std::optional<int64_t> ttl) const;
  std::string value_error(const StoreNamespaceOptions& o, const Json& value) const;
  std::string ttl_error(const StoreNamespaceOptions& o, std::optional<int64_t> ttl) const;
  StoreResult write(const std::optional<std::string>& connection, const std::string& ns,
                    const StoreNamespaceOptions& o, const std::string& key, const Json& value,
                    int64_t version, std::optional<int64_t> ttl, int64_t now);
  // as_built_claim: what readRaw returns in a scope (its own v2 key, else the v1 value it
  // claims: CLAIM_LEGACY_SCRIPT), adopting it unless `adopt` is false; "quota" when the
  // claim is refused.
  StoreResult claim(const std::optional<std::string>& connection, const std::string& ns,
                    const StoreNamespaceOptions& o, const std::string& key, int64_t now,
                    bool adopt);
  bool concrete(const std::optional<std::string>& connection,
                const StoreNamespaceOptions& o) const {
    return o.provider_scope || connection.has_value();
  }
  // as_built_claim: the tombstone {"deleted":true} a delete (v2 and v1 key) or a concrete
  // write (v1 key) leaves, PX maxTtl.
  void tombstone(const std::string& space_id, const std::string& key, int64_t until) {
    tombs_[space_id][key] = until;
  }
  bool tombstoned(const std::string& space_id, const std::string& key, int64_t now) const;

  Variant variant_;
  std::map<std::string, Space> spaces_;  // scope + "\0" + namespace -> entries
  std::map<std::string, Space> legacy_;  // namespace -> v1 entries
  // space id (scope + "\0" + namespace, or "\1v1\0" + namespace for the v1 keys) -> key ->
  // the order of its last write or delete there (rule 7: last write wins).
  std::map<std::string, std::map<std::string, int64_t>> changed_;
  int64_t order_ = 0;
  // as_built_claim: space id (as changed_) -> key -> the tombstone's end.
  std::map<std::string, std::map<std::string, int64_t>> tombs_;
};

}  // namespace testbed::model
