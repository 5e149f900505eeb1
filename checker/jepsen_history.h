// Histories in Jepsen's JSON form (the form elle-cli reads, as in the Knossos histories it ships):
// a JSON array of operation maps with "process", "type" (invoke, ok, fail, info; a leading ':'
// is allowed), "f" and "value", and optional "time" and "index". Checked here as Knossos's
// cas-register: one register that starts as null; "read" has value null on invoke and the value
// read on ok; "write" has the value written; "cas" has [old, new]. An operation is its invoke and
// the next completion of the same process: ok happened, fail did not (it is dropped), info (or no
// completion at all) may or may not have happened, at any point after its invoke. Entries of a
// process that is not an integer (Jepsen's nemesis) are not operations on the register and are
// skipped.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "checker/draws.h"
#include "checker/register_history.h"

namespace testbed::checker {

struct HistoryVerdict {
  bool decided = true;       // false: the search ran out of its budget (never a pass)
  bool linearizable = true;  // when decided
  int64_t operations = 0, ambiguous = 0, failed = 0, states = 0;
  std::string decided_by;  // "inference", "witness" or "search" ("" without a verdict)
  std::string text;        // what was found: the verdict, and for a rejected history its core
};

// How a history is checked (issue 33: inference first, search second). The polynomial
// shortcuts go first:
//   - inference: a read (or a successful cas) that found value b, and a completed operation F
//     that left another value a and returned before it was invoked, where every write of b (and
//     the initial null, for b = null) either returned before F was invoked or was invoked after
//     the reader returned: no write of b can lie between them, so no order explains both. With
//     no F at all, a value that nobody wrote before the reader returned (Elle's garbage read,
//     and the read from the future). Sound for repeated values too; quadratic at worst
//     (n log n with the sweep used here), and it decides only rejections;
//   - witness: the greedy order of checker/greedy_order.h, which decides only acceptances;
//   - search: Wing & Gong with Lowe's memo (checker/linearizability.h), what neither
//     decides, within max_states. This part stays exponential in the operations pending at
//     once: a linearizable history the greedy walk gets wrong, or a rejected one whose conflict
//     needs more than one reader and one other operation to show (a cas chain, a lost write
//     that only some orders need), can still end without a verdict.
struct HistoryCheckOptions {
  int64_t max_states = 10'000'000;
  bool search_only = false;       // the search alone: the cross-check of the shortcuts
  bool broken_inference = false;  // deliberately wrong (a writer's real time ignored): tests
};

// Throws std::invalid_argument, naming the entry (by its position) and what is wrong with it.
HistoryVerdict CheckCasRegisterHistory(const nlohmann::json& history,
                                       const HistoryCheckOptions& options = {});

// The same for Knossos's mutex: "acquire" and "release" (values ignored) on one lock that
// starts free; an acquire of a held lock or a release of a free one cannot be ordered.
HistoryVerdict CheckMutexHistory(const nlohmann::json& history,
                                 const HistoryCheckOptions& options = {});

// jepsen.independent's histories: each operation's value is a [key, value] tuple. One history per
// key, in the keys' JSON order, each the whole history with that key's values unwrapped and every
// other key's entries made nemesis entries (skipped, so an entry keeps its position in the
// file). Throws std::invalid_argument naming the first entry whose value is not such a tuple.
std::vector<std::pair<nlohmann::json, nlohmann::json>> SplitIndependentKeys(
    const nlohmann::json& history);

// The models testbed check-history knows, one entry each (a new model is a row here).
struct HistoryModel {
  std::string name;  // as elle-cli names it
  std::string what;
  HistoryVerdict (*check)(const nlohmann::json& history, const HistoryCheckOptions& options);
};
const std::vector<HistoryModel>& HistoryModels();
const HistoryModel* FindHistoryModel(const std::string& name);  // nullptr: none

// A cas-register history in Jepsen's JSON form, linearizable by construction, for the checker's
// tests and benchmarks (bench/porcupine compares the same histories with Porcupine): `processes`
// clients, each running `operations / processes` reads, writes and cas operations one after
// another with random durations; each takes effect at a random point inside its interval. A
// cas whose old value differs fails. `values` distinct values are written (0: every write a new
// one). An operation ends as info (its reply lost: taken effect or not, at random) with the
// given chance in 1,000, and its process is then replaced by a new one (process + processes), as
// in Jepsen. corrupt: one completed read returns another written value instead (the history may
// then still be linearizable, by chance). "time" is in nanoseconds, "index" the entry's position.
struct CasRegisterShape {
  int processes = 8;
  int operations = 100;
  int values = 5;
  int info_per_mille = 0;
  bool corrupt = false;
};
nlohmann::json GenerateCasRegisterHistory(Draws& rng, const CasRegisterShape& shape);
inline nlohmann::json GenerateCasRegisterHistory(Draws&& rng, const CasRegisterShape& shape) {
  return GenerateCasRegisterHistory(rng, shape);
}

// A state key's history as Jepsen's cas-register (issue 29): its value is the stored value (a
// string, null when absent). get is a read (null: nothing found); set a write; delete a write of
// null; compareAndSet(expected version v, value) a cas [the value acknowledged as version v
// (null for v = 0), value], which succeeds or fails (:fail: it did not happen). A call without a
// reply is :info (it may have happened), after which its process is retired and the actor goes
// on as process actor + k * actors, as Jepsen numbers them; "time" is virtual time in
// nanoseconds, "index" the entry's position. What of the state contract does not fit the
// register goes into `unfit`, one reason each, and the history is then not written (`fits`
// false):
//   - a compareAndSet whose expected version no single acknowledged write of the key produced
//     (a write whose reply was lost, or two writes acknowledged as one version): the register
//     has no value to compare with;
//   - a write whose TTL ran out before the history's last call: expiry removes a value without
//     an operation, which the register cannot do.
// What never fits, and is why the projection is weaker than the testbed's own check: versions.
// The register sees values only, so two writes acknowledged as one version, or a version
// counted from the value before a delete, are linearizable there; a rejected projection is
// always a rejected history here, not the other way round.
struct JepsenProjection {
  bool fits = true;
  nlohmann::json history = nlohmann::json::array();
  std::vector<std::string> unfit;
};
// `ops`: one key's history (checker/register_history.h), resends as they were recorded.
JepsenProjection ProjectCasRegister(const RegisterHistory& ops);

// One call as a Jepsen operation: its actor, its place in real time (invoke, ret: the run's
// order of events; ms: virtual time), f, the value on invoke, and its completion (ok, fail or
// info, with `done` as the completion's value).
struct JepsenOp {
  int actor = 0;
  int64_t invoke = 0, ret = kNever;
  int64_t invoke_ms = 0, ret_ms = kNever;
  std::string f = "", type = "ok";
  nlohmann::json value = nullptr, done = nullptr;
};
// The calls as Jepsen's history: invokes and completions in real-time order, each actor's
// process retired after an :info (it goes on as actor + k * actors), "time" in nanoseconds
// since the first invoke, "index" each entry's position.
nlohmann::json JepsenHistoryOf(const std::vector<JepsenOp>& ops);
// The same history as Jepsen's EDN: one operation map per line ({:type :invoke, :f :read, ...}).
std::string JepsenEdn(const nlohmann::json& history);

}  // namespace testbed::checker
