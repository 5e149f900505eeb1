// A port of seed 003 (experimental-a2 0.5.0, package/src/store-redis-core.ts): the a2 event
// store over one RedisCall seam (sim::Ctx: the emulator or a spawned redis-server). Line
// numbers ("ts N") are store-redis-core.ts's; the seed file shows line N at N + 5. The nine
// Lua scripts run verbatim from real/scripts/a2/0.5.0/.
//
// The imports the seed does not show are filled with documented choices:
//   errors.ts            A2Error(code, message): codes STORE_UNAVAILABLE,
//                        PARTIAL_DUPLICATE_BATCH, SUPERSEDED_ATTEMPT; a JavaScript TypeError is
//                        TypeError here. wrap() (ts 675) turns everything else, a transport
//                        failure or a Redis error reply, into STORE_UNAVAILABLE.
//   idempotent-replay.ts idempotentReplay(events, existing): the rows already stored, as
//                        `existing` orders them: by index (ts 962's comment, "ordered by
//                        index like every adapter"), which for a true retry is its order.
//   store-codec.ts       decodeReturnedEventIds(raw): JSON.parse of an array of strings; an
//                        empty Lua table comes back as "{}" and decodes to no ids.
//   internal.ts          nullProtoRecord: an ordered JSON object.
//   store.ts, contract.ts  the types below (Event, StoredEvent, results, PresenceRow).
// JSON.stringify is model::JsonStringify (lone surrogates written as \udxxx escapes, as
// JavaScript does); JSON.parse is model::JsonParse, which reads such an escape back into the
// same string, as JavaScript does.
// clock.now() is the actor's clock (sim::Ctx::now_ms, skew and jumps included); the id source
// is the caller's (a per-actor PRNG stream in the properties). Dates are epoch milliseconds.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "real/script_catalog.h"
#include "real/state/state_api.h"
#include "sim/runtime.h"
#include "sim/task.h"

namespace testbed::real::a2 {

using Json = state::Json;

inline constexpr int kReadPageSize = 256;  // ts 96

struct A2Error : std::runtime_error {
  A2Error(std::string code, const std::string& message, bool transport = false)
      : std::runtime_error(message), code(std::move(code)), transport(transport) {}
  std::string code;
  bool transport;  // STORE_UNAVAILABLE whose cause failed in transport (outcome unknown)
};
struct TypeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Cause {
  int64_t index = 0, attempt = 0;
  std::optional<int64_t> batch_size;
  bool operator==(const Cause&) const = default;
};

// An event to append (store.ts's append input).
struct NewEvent {
  std::optional<std::string> id;
  std::string type;
  Json payload;
  std::optional<Cause> cause;
  std::optional<std::string> lane;
  bool settled = false;
};

// A child event of completeAttempt (ids are the caller's).
struct ChildEvent {
  std::string id;
  std::string type;
  Json payload;
  std::optional<std::string> lane;
  bool settled = false;
};

struct Event {
  std::string id, type;
  Json payload;
  int64_t index = 0;
  std::string session_id;
  int64_t created_at = 0;
};

struct StoredEvent : Event {
  std::optional<Cause> cause;
  std::optional<std::string> lane;
  std::optional<int64_t> processed_at, processed_by_attempt;
  std::optional<std::vector<std::string>> returned_event_ids;
  std::optional<int64_t> first_claimed_at, last_claimed_at;
  int64_t attempt_count = 0;
  std::optional<std::string> claim_holder;
  std::optional<int64_t> claim_expires_at;
  int64_t failure_count = 0;
  std::optional<int64_t> last_failed_at, last_failed_attempt;
  std::optional<std::string> last_error;
  std::optional<int64_t> failed_at;
};

struct AppendResult {
  std::vector<StoredEvent> events;
  bool has_pending = false;
};

struct ClaimOptions {
  std::string session_id, holder;
  int64_t ttl_ms = 0;
  std::optional<int64_t> expires_at_ms;
  std::vector<int64_t> exclude_indexes;
};
struct ClaimResult {
  std::string outcome;  // "claimed", "busy", "settled"
  std::vector<StoredEvent> events;
  int64_t retry_at = 0;  // busy
};

struct ClaimRef {
  int64_t index = 0, attempt = 0;
};
struct RenewResult {
  std::vector<int64_t> renewed, superseded;
};

struct CompleteResult {
  std::string outcome;  // "completed", "superseded"
  std::vector<StoredEvent> events;
};

struct FailResult {
  std::string outcome;  // "failed", "dead_lettered", "superseded"
  int64_t failure_count = 0;
};

struct Snapshot {
  int64_t index = 0;
  Json state;
};
struct StateRead {
  std::optional<Snapshot> snapshot;
  std::vector<Event> events;
};

struct PresenceMeta {
  int64_t seen = 0, at = 0, ttl_ms = 0;
};
struct PresencePatch {
  std::string participant;
  Json values;  // field -> value, the applied ones
  int64_t seen = 0, at = 0;
};
struct PresenceRow {
  std::string participant, field;
  Json value;
  int64_t seen = 0, at = 0, expires_at = 0;
};

struct SessionSummary {
  std::string session_id;
  int64_t event_count = 0, pending_count = 0, failed_count = 0, attempt_count = 0,
          failure_count = 0, first_event_at = 0, updated_at = 0;
};
struct SessionPage {
  std::vector<SessionSummary> sessions;
  std::optional<std::string> cursor;
};
struct SnapshotInfo {
  std::string reducer_name;
  // parsed.index: undefined (nullopt) when the key holds JSON that is not an object with a
  // numeric index (another session's key under the same prefix, say).
  std::optional<int64_t> index;
  int64_t updated_at = 0;
};

// The script bodies of one version: a2/<version>/<CONSTANT>.
class Scripts {
 public:
  Scripts(const real::ScriptCatalog& catalog, std::string version)
      : catalog_(catalog), version_(std::move(version)), dir_("a2/" + version_ + "/") {}
  const std::string& body(const std::string& constant) const {
    return catalog_.get(dir_ + constant).body;
  }
  const ClientCode& client() const { return catalog_.client(); }
  const std::string& version() const { return version_; }

 private:
  const real::ScriptCatalog& catalog_;
  std::string version_;
  std::string dir_;
};

class JsStore;

// createRedisStoreCore (ts 682). With the JavaScript client (the scripts' catalog says so),
// every call runs the seed's own store core instead (real/a2/js_store.h).
class Store {
 public:
  using IdSource = std::function<std::string()>;
  using Notify = std::function<void(const std::string& session_id, int64_t count)>;
  Store(sim::Ctx& ctx, const Scripts& scripts, std::string key_prefix, IdSource ids,
        Notify notify = nullptr);
  ~Store();

  sim::Task<AppendResult> append(std::string session_id, std::vector<NewEvent> events);
  sim::Task<std::vector<StoredEvent>> read(std::string session_id, int64_t after_index = 0,
                                           std::optional<int64_t> through_index = std::nullopt);
  sim::Task<ClaimResult> claim_available(ClaimOptions options);
  sim::Task<RenewResult> renew_claims(std::string session_id, std::string holder,
                                      std::vector<ClaimRef> claims, int64_t ttl_ms,
                                      std::optional<int64_t> expires_at_ms = std::nullopt);
  sim::Task<CompleteResult> complete_attempt(std::string session_id, int64_t index, int64_t attempt,
                                             std::vector<ChildEvent> events);
  sim::Task<FailResult> fail_attempt(std::string session_id, int64_t index, int64_t attempt,
                                     std::string error, int64_t max_failures);
  sim::Task<StateRead> read_state(std::string session_id, std::string reducer_name);
  sim::Task<void> put_snapshot(std::string session_id, std::string reducer_name, int64_t index,
                               Json state);
  sim::Task<std::optional<PresencePatch>> presence_set(
      std::string ns, std::string participant, std::vector<std::pair<std::string, Json>> values,
      PresenceMeta meta);
  sim::Task<std::vector<PresenceRow>> presence_read(std::string ns);
  sim::Task<SessionPage> list_sessions(std::string prefix, int64_t limit,
                                       std::optional<std::string> cursor = std::nullopt);
  sim::Task<std::vector<SnapshotInfo>> list_snapshots(std::string session_id);
  sim::Task<std::vector<Event>> read_events(std::string session_id, int64_t after_index);
  sim::Task<void> mark_watched(std::string session_id, int64_t ttl_ms);

  // Keys (ts 693-702), for properties that look at the keyspace.
  std::string store_key(const std::string& s) const { return prefix_ + ":" + s + ":log"; }
  std::string count_key(const std::string& s) const { return prefix_ + ":" + s + ":count"; }
  std::string meta_key(const std::string& s) const { return prefix_ + ":" + s + ":meta"; }
  std::string pending_key(const std::string& s) const { return prefix_ + ":" + s + ":pending"; }
  std::string ready_key(const std::string& s) const { return prefix_ + ":" + s + ":ready"; }
  std::string snap_key(const std::string& s, const std::string& r) const {
    return prefix_ + ":" + s + ":snap:" + r;
  }
  std::string watched_key(const std::string& s) const { return prefix_ + ":" + s + ":watched"; }
  std::string presence_key(const std::string& s) const { return prefix_ + ":" + s + ":presence"; }

 private:
  sim::Task<sim::Reply> call(sim::Argv argv);
  sim::Task<sim::Reply> eval(const std::string& constant, std::vector<std::string> keys,
                             std::vector<std::string> args);
  std::vector<std::string> write_keys(const std::string& session_id) const;
  sim::Task<int64_t> read_frontier(const std::string& session_id);
  sim::Task<std::vector<StoredEvent>> read_range_page(const std::string& session_id,
                                                      int64_t after_index, int64_t through_index,
                                                      int64_t limit);
  sim::Task<std::vector<Event>> read_event_range(const std::string& session_id, int64_t after_index,
                                                 int64_t through_index);
  sim::Task<std::vector<StoredEvent>> read_range(const std::string& session_id, int64_t after_index,
                                                 std::optional<int64_t> through_index);
  // Promise.all over n branches (store_reads.cc): each a thread; it rejects at the first
  // failure, and the other branches go on. A branch holds what it reads and writes (shared).
  sim::Task<void> all(size_t n, std::function<sim::Task<void>(Store&, size_t)> branch);
  sim::Task<void> read_session(std::string session_id, std::vector<StoredEvent>* rows);
  sim::Task<void> read_snapshot(std::string key, std::string start,
                                std::optional<SnapshotInfo>* out);

  sim::Ctx& ctx_;
  const Scripts& scripts_;
  std::string prefix_;
  IdSource ids_;
  Notify notify_;
  std::string ids_key_, sessions_key_;
  std::shared_ptr<JsStore> js_;  // the JavaScript client's store core (nullptr: the port)
};

}  // namespace testbed::real::a2
