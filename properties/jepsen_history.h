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
  std::string text;  // what was found: the verdict, and for a rejected history its core
};

// Throws std::invalid_argument, naming the entry (by its position) and what is wrong with it.
HistoryVerdict CheckCasRegisterHistory(const nlohmann::json& history,
                                       int64_t max_states = 10'000'000);

}  // namespace testbed::props
