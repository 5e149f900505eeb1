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

namespace testbed::props {

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
//   - witness: the greedy order of properties/greedy_order.h, which decides only acceptances;
//   - search: Wing & Gong with Lowe's memo (properties/linearizability.h), what neither
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
nlohmann::json GenerateCasRegisterHistory(uint64_t seed, const CasRegisterShape& shape);

}  // namespace testbed::props
