// Reading a history as Jepsen and Knossos write it in EDN (history.edn: one operation map per
// line; Knossos's test data: one vector or list of them), into the JSON form the checkers read
// (checker/jepsen_history.h).
//
// The forms map to JSON as elle-cli reads them: a map is an object whose keyword keys lose their
// colon (`:process` -> "process"); a keyword value keeps it (`:invoke` -> ":invoke", which the
// checkers read as "invoke"); vectors, lists and sets are arrays; nil, true and false are null,
// true and false; integers (with N for a big one) and decimals (with M) are numbers; strings and
// characters are strings; a symbol is its name; a tagged literal (`#jepsen.history.Op{...}`,
// `#inst "..."`) is its form. Comments (`;`), commas and `#_` discards are skipped.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

namespace testbed::checker {

// The history in `text`: the one top-level vector or list, or every top-level form in order (a
// history.edn of one map per line). Throws std::invalid_argument naming the line and what is
// wrong there. Nesting past 1,000 levels is refused as lua-cjson and the JSON readers here do.
nlohmann::json ReadEdnHistory(std::string_view text);

}  // namespace testbed::checker
