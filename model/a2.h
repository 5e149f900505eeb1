// The a2 event store's contract (seed 003, experimental-a2 0.5.0), as a pure model: no I/O, no
// clock, no PRNG; every call takes `now` (ms) and the caller resolves event ids. It answers whole
// calls of one caller in sequence, so a sequential, fault-free run of the port (real/a2/) can be
// compared with it call for call (a2's property "model-matches-implementation"). Answers are
// JSON in the shape of store.ts's results (see the rows below); an error is {"error": code}.
//
// The seed's conformance suite (test/conformance) is not in the seeds; this model stands in for
// it. The contract, from the seed's doc comments and the API's names (where the code is weaker,
// that is a finding, never a choice):
//   1. Dense index: a session's events are numbered 1, 2, ... in append order; the event an index
//      names never changes ("each event is a stream entry whose ID is its dense a2 index").
//   2. Idempotent appends by id: a retried batch whose ids all exist in the session returns the
//      stored rows, in index order ("return the original rows, ordered by index like every
//      adapter", ts 962; a true retry's rows were appended together, so that is also the
//      batch's order, and only a batch of ids stored by different appends tells the two
//      apart), and appends nothing; a batch that mixes stored and
//      fresh ids, or repeats an id, is PARTIAL_DUPLICATE_BATCH; an id stored in another session
//      is PARTIAL_DUPLICATE_BATCH (an id's session never changes).
//   3. Claims: claimAvailable grants every claimable event (index order) to the holder, each
//      with attempt = previous attempts + 1 and a lease until expiresAt (now + ttlMs). An event
//      is claimable when it is pending (neither processed nor dead-lettered), it is the first
//      pending event of its lane, and no live lease holds it (a lease is live while now <
//      expiry). No claimable event but a live lease: "busy" with retryAt = the earliest expiry;
//      nothing pending: "settled".
//   4. Fencing: complete, fail, renew and caused appends are accepted only from the current
//      attempt of a live claim (the holder's lease not expired, the event not settled, no newer
//      attempt granted). The code checks the attempt and the holder field, never the lease's
//      expiry (:ce) on complete, fail and caused appends: a finding.
//   5. Completion settles the event (processed by that attempt, with the ids of its child
//      events, which are appended with cause {index, attempt}); a retry of that completion
//      with the same child ids replays it (outcome completed, the stored children); other
//      children are PARTIAL_DUPLICATE_BATCH; a completion by another attempt is superseded.
//   6. Failure: each accepted fail counts one failure and ends the claim; the event is claimable
//      again, until maxFailures failures dead-letter it. A retry of the last fail of the same
//      attempt replays "failed"; a fail of a dead-lettered event replays "dead_lettered".
//   7. Lanes: events of one lane are claimed in index order, one at a time. Every string names a
//      lane, "" included (the API takes a string; the store's "" is no lane: a finding,
//      calls-linearizable / empty-lane-is-no-lane). Choice (the seed
//      is ambiguous): a dead letter settles its lane slot, and the lane moves on. FAIL_ATTEMPT_LUA
//      carries a settle() that advances the lane head and skips dead letters when it re-queues,
//      but never calls it; listSessions counts dead letters as not pending. So a lane that stops
//      for good behind a dead letter is a finding.
//   8. Drain: hasPending (append's result) is true exactly when some event is pending
//      (dead letters are not: listSessions' pendingCount excludes them); a claim answers
//      "settled" exactly when nothing is pending. Choice: excludeIndexes names events the
//      caller already holds, so the claim treats them, and the lane events queued behind
//      them, as not claimable; "settled" then means nothing else is pending.
//   9. Snapshots: putSnapshot never moves a reducer's snapshot backward (PUT_SNAPSHOT_LUA's
//      guard: a put at an index not above the current one is ignored) and never past the
//      session's frontier ("the index never passes the frontier"): the model ignores such a
//      put. readState returns the snapshot and exactly the events after its index, through the
//      frontier, so folding them gives the state at the frontier.
//  10. Presence: per (participant, field) last-writer-wins by the sender's `at`; ties go to the
//      incoming write (PRESENCE_SET_LUA's comment). A delete is a write: it keeps its stamp, so
//      an older write that arrives later loses to it. Entries (and delete stamps) live until the
//      storage clock's now + ttlMs at the applied write; a read shows live entries. Choice: the
//      model takes one ttlMs per namespace, as the script's comment says core sends. Choice:
//      the order of a read's rows is unspecified (the model sorts them).
//  11. Inspection: listSessions lists sessions with events whose id starts with the prefix, in
//      id order (choice: byte order; the code sorts a page with localeCompare, so the model
//      compares a page's sessions as a set), pages of `limit`, the cursor being the page's last
//      id when more follow. listSnapshots lists exactly the session's reducers (isolation: a
//      session's or reducer's name never makes another's data visible). Choice: sorted by name.
//  12. markWatched(ttlMs) makes writes that append events to the session notify (session, new
//      event count) until the marker expires (storage time, through its expiry instant, as Redis
//      keeps a key through its PX deadline); notify is otherwise silent.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace testbed::model::a2 {

using Json = nlohmann::json;

struct CauseIn {
  int64_t index = 0, attempt = 0;
  std::optional<int64_t> batch_size;
};

// An event to append, its id resolved by the caller (generated ids included).
struct AppendIn {
  std::string id, type;
  Json payload;
  std::optional<CauseIn> cause;
  std::optional<std::string> lane;
  bool settled = false;
};

struct ChildIn {
  std::string id, type;
  Json payload;
  std::optional<std::string> lane;
  bool settled = false;
};

// The shipped scripts' known departures from this contract (the findings the baseline accepts,
// baselines/a2/), which a model can be told to take on. They name what a rejected concurrent
// history shows (properties/a2/calls_linearizable.cc): a history the model explains once it
// takes on one of them broke that promise, and one that no model taking on all of them
// explains shows a new mechanism. They never judge anything.
enum Weakness : unsigned {
  // complete, fail and caused appends accepted from the current attempt while the holder field
  // is set, whatever the lease's expiry (rule 4; fencing's *-after-lease-expired).
  kExpiredLeaseSettles = 1,
  // a caused append checks only that the cause is the current attempt and no dead letter
  // (rule 4; model-matches-implementation's caused-append-not-fenced).
  kCausedAppendUnfenced = 2,
  // a dead letter keeps its lane's head, so the lane stops, and stays pending for hasPending
  // (rule 7 and 8; drain's classes).
  kDeadLetterStallsLane = 4,
  // a presence delete drops the field's stamp (rule 10; presence-lww's classes).
  kDeleteDropsStamp = 8,
  // the lane "" is no lane: the event is in no lane, and reads show its lane as null (the
  // append's own answer echoes ""). A finding of calls-linearizable (rule 7).
  kEmptyLaneIsNone = 16,
  // putSnapshot stores a snapshot past the session's frontier (rule 9; snapshots'
  // snapshot-past-frontier).
  kSnapshotPastFrontier = 32,
};
inline constexpr unsigned kAllWeaknesses = 63;

// Rows:
//   stored event: {id, type, payload, index, sessionId, createdAt, cause, lane, processedAt,
//     processedByAttempt, returnedEventIds, firstClaimedAt, lastClaimedAt, attemptCount,
//     claimHolder, claimExpiresAt, failureCount, lastFailedAt, lastFailedAttempt, lastError,
//     failedAt} (absent values are null; times are epoch ms)
//   event: {id, type, payload, index, sessionId, createdAt}
// Answers:
//   append: {events: [stored], hasPending, notified: count|null}
//   read: [stored]        readEvents: [event]
//   claim: {outcome: "claimed", events: [stored]} | {outcome: "busy", retryAt} |
//          {outcome: "settled"}
//   renew: {renewed: [index], superseded: [index]} (sorted)
//   complete: {outcome: "completed", events: [stored], notified} | {outcome: "superseded"}
//   fail: {outcome, failureCount}
//   readState: {snapshot: {index, state}|null, events: [event]}
//   putSnapshot: {}
//   presenceSet: {participant, values: {field: value}, seen, at} | null
//   presenceRead: [{participant, field, value, seen, at, expiresAt}] (sorted)
//   listSessions: {sessions: [{sessionId, eventCount, pendingCount, failedCount, attemptCount,
//     failureCount, firstEventAt, updatedAt}] (sorted), cursor: id|null}
//   listSnapshots: [{reducerName, index, updatedAt}] (sorted)
//   errors: {error: "PARTIAL_DUPLICATE_BATCH" | "SUPERSEDED_ATTEMPT" | "TypeError"}
class Model {
 public:
  Model() = default;
  explicit Model(unsigned weaknesses) : weak_(weaknesses) {}
  Json append(const std::string& session, const std::vector<AppendIn>& events, int64_t now);
  Json read(const std::string& session, int64_t after, std::optional<int64_t> through) const;
  Json read_events(const std::string& session, int64_t after) const;
  Json claim(const std::string& session, const std::string& holder, int64_t now, int64_t expires_at,
             const std::vector<int64_t>& exclude);
  Json renew(const std::string& session, const std::string& holder,
             const std::vector<std::pair<int64_t, int64_t>>& claims, int64_t now,
             int64_t expires_at);
  Json complete(const std::string& session, int64_t index, int64_t attempt,
                const std::vector<ChildIn>& children, int64_t now);
  Json fail(const std::string& session, int64_t index, int64_t attempt, const std::string& error,
            int64_t max_failures, int64_t now);
  Json read_state(const std::string& session, const std::string& reducer) const;
  Json put_snapshot(const std::string& session, const std::string& reducer, int64_t index,
                    const Json& state, int64_t now);
  // values: field -> value (null: delete), in the caller's order.
  Json presence_set(const std::string& ns, const std::string& participant,
                    const std::vector<std::pair<std::string, Json>>& values, int64_t seen,
                    int64_t at, int64_t ttl_ms, int64_t now);
  Json presence_read(const std::string& ns, int64_t now) const;
  Json list_sessions(const std::string& prefix, int64_t limit,
                     const std::optional<std::string>& cursor) const;
  Json list_snapshots(const std::string& session) const;
  void mark_watched(const std::string& session, int64_t ttl_ms, int64_t now);
  // Concurrent callers (calls-linearizable): the marker, set on the storage clock at an instant
  // the caller cannot name, ends between `until_lo` and `until_hi` (storage time).
  void mark_watched_between(const std::string& session, int64_t until_lo, int64_t until_hi);
  // Whether a write the storage ran at an instant in [at_lo, at_hi] found the session watched
  // (rule 12: through the marker's expiry instant): 1 yes, 0 either, -1 no.
  int watched_between(const std::string& session, int64_t at_lo, int64_t at_hi) const;

  // What the drain contract promises: some event of the session is pending.
  bool has_pending(const std::string& session) const;
  int64_t frontier(const std::string& session) const;
  // Whether `attempt` is the current attempt of a live claim on the event.
  bool live(const std::string& session, int64_t index, int64_t attempt, int64_t now) const;
  // Whether `attempt` is the current attempt of a pending event whose lease has run out.
  bool expired(const std::string& session, int64_t index, int64_t attempt, int64_t now) const;
  // Events a claim at `now` would grant (index order).
  std::vector<int64_t> claimable(const std::string& session, int64_t now,
                                 const std::vector<int64_t>& exclude = {}) const;
  // Appends a canonical form of the whole state to `out`: equal states append equal bytes (the
  // memoization key of a linearizability search over calls, properties/a2/calls_linearizable.cc).
  void append_key(std::string& out) const;

 private:
  struct Ev {
    std::string id, type;
    Json payload;
    std::optional<CauseIn> cause;
    std::optional<std::string> lane;
    int64_t created_at = 0;
    std::optional<int64_t> processed_at, processed_by_attempt;
    std::optional<std::vector<std::string>> returned_ids;
    std::optional<int64_t> first_claimed_at, last_claimed_at;
    int64_t attempts = 0, failures = 0;
    std::optional<std::string> holder;
    std::optional<int64_t> expires_at;
    std::optional<int64_t> last_failed_at, last_failed_attempt;
    std::optional<std::string> last_error;
    std::optional<int64_t> failed_at;
    bool pending() const { return !processed_at && !failed_at; }
    bool live(int64_t now) const { return pending() && holder && expires_at && now < *expires_at; }
  };
  struct Session {
    std::vector<Ev> events;  // index i + 1
    int64_t watched_until = 0;
    int64_t watched_until_hi = 0;  // mark_watched_between: the latest the marker may end
  };
  struct Snap {
    int64_t index = 0;
    Json state;
    int64_t updated_at = 0;
  };
  struct Presence {
    std::optional<Json> value;  // nullopt: a delete's stamp
    int64_t seen = 0, at = 0, expires_at = 0;
  };

  Json stored_row(const std::string& session, int64_t index) const;
  Json event_row(const std::string& session, int64_t index) const;
  void add_event(const std::string& session, Ev e);
  Json notified(const std::string& session, int64_t now) const;
  const Session* find(const std::string& session) const;

  bool weak(Weakness w) const { return (weak_ & w) != 0; }

  unsigned weak_ = 0;
  std::map<std::string, Session> sessions_;
  std::map<std::string, std::pair<std::string, int64_t>> ids_;  // id -> (session, index)
  std::map<std::pair<std::string, std::string>, Snap> snaps_;
  std::map<std::string, std::map<std::pair<std::string, std::string>, Presence>> presence_;
};

}  // namespace testbed::model::a2
