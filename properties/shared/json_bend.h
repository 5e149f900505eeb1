// How a JSON value read back differs from what was written, as an anomaly class name (the
// value-read-back classes of every system that stores JSON: state, handles).
#pragma once

#include <absl/strings/str_format.h>

#include <nlohmann/json.hpp>
#include <string>

namespace testbed::props {

// The value-read-back classes JsonBend names (state's value-read-back, handles' data-read-back
// and calls-linearizable declare them in their tables from here).
inline constexpr char kEmptyArrayBecomesObject[] = "empty-array-becomes-object";
inline constexpr char kNumberBent[] = "number-bent";
inline constexpr char kStringBent[] = "string-bent";
inline constexpr char kStructureBent[] = "structure-bent";

// The class: how `got` differs from `want`, at the first place it does.
inline std::string JsonBend(const nlohmann::json& want, const nlohmann::json& got) {
  if (want.is_array() && want.empty() && got.is_object() && got.empty())
    return kEmptyArrayBecomesObject;
  if (want.is_number() && got.is_number()) return kNumberBent;
  if (want.is_string() && got.is_string()) return kStringBent;
  if (want.type() == got.type() && want.size() == got.size()) {
    if (want.is_array())
      for (size_t i = 0; i < want.size(); ++i)
        if (want[i] != got[i]) return JsonBend(want[i], got[i]);
    if (want.is_object())
      for (const auto& [k, v] : want.items())
        if (got.contains(k) && v != got[k]) return JsonBend(v, got[k]);
  }
  return kStructureBent;
}

// Whether `got` differs from `want` only as cjson re-encodes a value (numbers printed with
// %.14g, an empty array written as an empty object): how the compareAndSet scripts bend one.
inline bool BentOnlyAsCjsonDoes(const nlohmann::json& want, const nlohmann::json& got) {
  if (want.is_number() && got.is_number())
    return absl::StrFormat("%.14g", want.get<double>()) ==
           absl::StrFormat("%.14g", got.get<double>());
  const auto empty = [](const nlohmann::json& x) {
    return (x.is_array() || x.is_object()) && x.empty();
  };
  if (empty(want) && empty(got)) return true;
  if (want.type() != got.type() || want.size() != got.size()) return false;
  if (want.is_array()) {
    for (size_t i = 0; i < want.size(); ++i)
      if (!BentOnlyAsCjsonDoes(want[i], got[i])) return false;
    return true;
  }
  if (want.is_object()) {
    for (const auto& [k, v] : want.items())
      if (!got.contains(k) || !BentOnlyAsCjsonDoes(v, got[k])) return false;
    return true;
  }
  return want == got;
}

}  // namespace testbed::props
