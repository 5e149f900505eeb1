// The handle lifecycle's contract (seed 002, handle.js), as a pure model: no I/O, no clock, no
// PRNG; every call takes `now` (ms) and the caller names the handle a create draws. It answers
// whole calls of one caller in sequence, so a sequential, fault-free run of the port
// (real/handles/) can be compared with it call for call (property
// "model-matches-implementation" of the handles system). Under concurrency and faults,
// "calls-linearizable" (properties/handles/calls_linearizable.cc) judges the same contract with
// the two refinements concurrency needs, both from the seed: commit is a claim, then a finalize
// (or, when the work failed, a restore) around the work, with BUSY while a claim holds; and each
// deadline is a stamp of its writer's clock, judged by each caller's own clock.
//
// The contract, from the seed's comments (where the code is weaker, that is a finding):
//   1. A draft is active from create until its idle deadline (now + idleTtlMs, slid by every
//      read and update, never past the hard deadline createdAt + maxTtlMs); "touch" and
//      "update" refresh it (js 446).
//   2. Past a deadline, a present record reports HANDLE_EXPIRED with that deadline ("idle",
//      "max", "result") for a grace window of min(lifetime, 1 h) after the record's storage
//      lifetime began to run out (EXPIRY_GRACE_MAX_MS: "how long an expired record is kept so
//      it can report HANDLE_EXPIRED"); after it, HANDLE_NOT_FOUND. The window includes its last
//      millisecond, as the state store keeps an entry through its expiry instant (the state
//      model's choice 1). Bound kinds only: public
//      kinds collapse every such error to HANDLE_INVALID.
//   3. commit runs the work once and records its result: the draft is committed with the
//      result, live for resultTtlMs from the commit's end; every later commit replays that
//      result; update reports HANDLE_COMMITTED. A work that fails leaves the draft active
//      (its idle deadline refreshed at the failure, js 735) and the error goes to the caller.
//      Once the work ran, the replay is owed whatever its own caller was told: the claim's
//      lease and the finalize's retries exist so that "a successful mutation" is not "lost and
//      the retry would see NOT_FOUND instead of the promised replay" (js 633-635, 795), and a
//      crashed committer holds the draft BUSY "for at most the lease" (js 636).
//   4. discard makes the handle not found at once (a tombstone); discarding an absent handle
//      succeeds. Discarding a committed draft gives its result up: the seed guards only a
//      `committing` record against discard ("the upstream work may succeed and needs to
//      persist its replayable result", js 849-851) and tombstones every other record. [choice:
//      the comments are silent on a committed record, so result-replayed accepts both a discard
//      that removes it and one that would refuse]
//   5. A bound draft belongs to its connection: from another connection it is not found. A
//      public kind (provider scope) is the same handle from every connection, and it answers
//      "not found" and "expired" alike, as HANDLE_INVALID (js 153, 171, 188).
//   7. A cursor is not a draft: it expires ttlMs after its create (deadline "ttl"), and reads
//      do not slide it. (Update and commit are draft operations: the model does not take them
//      for cursors.)
//   6. Data and results read back exactly as written (JSON equality).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace testbed::model {

struct HandleKindModel {
  int64_t idle_ttl_ms = 400, max_ttl_ms = 1500, result_ttl_ms = 1000;  // drafts
  bool cursor = false;         // a cursor lives ttl_ms from its create; reads do not slide it
  int64_t ttl_ms = 0;          // cursors
  bool public_access = false;  // public kinds answer every not-found or expired as INVALID
};

struct HandleAnswer {
  std::string code;           // "" (success) or a HANDLE_* error code
  std::string deadline = {};  // HANDLE_EXPIRED: idle | max | result | ttl
  std::string status = {};    // success: active | committed; commit: committed | replayed
  nlohmann::json data = nlohmann::json(), result = nlohmann::json();
  int64_t expires_at_ms = 0;
  bool work_runs = false;  // commit: the model lets the work run (its result is recorded)
};

class HandleModel {
 public:
  explicit HandleModel(HandleKindModel kind) : kind_(kind) {}
  HandleAnswer create(const std::string& connection, const std::string& handle,
                      const nlohmann::json& data, int64_t now);
  HandleAnswer read(const std::string& connection, const std::string& handle, int64_t now);
  HandleAnswer update(const std::string& connection, const std::string& handle,
                      const nlohmann::json& data, int64_t now);
  // A commit that starts at `start` and, if the work runs, whose work ends at `end` with
  // `result` (nullopt: the work failed).
  HandleAnswer commit(const std::string& connection, const std::string& handle, int64_t start,
                      int64_t end, const std::optional<nlohmann::json>& result);
  HandleAnswer discard(const std::string& connection, const std::string& handle, int64_t now);
  // The instants where a handle's answers change: its idle and hard deadlines, the last
  // millisecond of its grace and the one after (empty for an unknown handle).
  std::vector<int64_t> deadlines(const std::string& connection, const std::string& handle) const;

 private:
  struct Record {
    std::string status;  // active | committed | discarded
    nlohmann::json data, result;
    int64_t expires_at_ms = 0, max_expires_at_ms = 0;
    int64_t gone_at_ms = 0;  // the last millisecond of its storage lifetime
  };
  // load(): the record, or the error a caller gets for it.
  HandleAnswer load(const std::string& key, int64_t now, Record** out);
  int64_t grace(int64_t lifetime) const;
  HandleKindModel kind_;
  std::map<std::string, Record> records_;  // connection + "|" + handle
};

}  // namespace testbed::model
