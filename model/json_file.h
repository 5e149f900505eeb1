// The testbed's own JSON files read back (histories, scenarios, recorded traces, baselines,
// equivalence lists, reports): whole, and nested no deeper than kMaxJsonDepth, so that nothing
// recursive (a copy, a comparison, a walk) meets unbounded input. The deepest value the
// testbed writes itself is nested 1,001 deep (the state store's adversarial values).
#pragma once

#include <cstddef>
#include <istream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace testbed::model {

inline constexpr size_t kMaxJsonDepth = 10000;

// The deepest nesting of arrays and objects in JSON text, strings skipped: one pass, no
// recursion (unbalanced text counts what it opens).
size_t JsonDepth(std::string_view text);

// The JSON text of `in` (read to its end), parsed: a discarded value when it is not JSON.
// Throws std::invalid_argument "<what>: arrays and objects nested N deep (at most 10000)" when
// it is deeper, before parsing.
nlohmann::json ReadJson(std::istream& in, const std::string& what);
nlohmann::ordered_json ParseOrderedJson(const std::string& text, const std::string& what);

}  // namespace testbed::model
