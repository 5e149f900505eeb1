// The provider state API as the seeds' TypeScript declares it, in C++ terms, shared by every
// ported version (real/state/*) and by the model.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>

namespace testbed::real::state {

using Json = nlohmann::json;

// StateNamespaceOptions. Durations are milliseconds here (the seeds' parseStateDurationMs body
// is hidden by the diff; it ends in Math.max(1, amount * multiplier), which we keep).
struct NamespaceOptions {
  bool provider_scope = false;  // scope: "provider" (else connection scope)
  int64_t default_ttl_ms = 60000;
  int64_t max_ttl_ms = 120000;
  int64_t max_entries = 100;
  int64_t max_value_bytes = 4096;
};

// A value to write. A JavaScript caller's object keeps its members' order, and JSON.stringify
// writes them so (array indices first): from an nlohmann::ordered_json the text keeps that
// order; from a Json (whose members nlohmann sorts) the text is JsonStringify's, members sorted,
// as a caller that writes its keys in sorted order would send them.
struct WriteValue {
  WriteValue(Json v) : json(std::move(v)) {}    // NOLINT: implicit, as every caller passes a Json
  WriteValue(const nlohmann::ordered_json& v);  // NOLINT
  Json json;
  std::string text;  // JSON.stringify(value); "" when it is JsonStringify(json)
  // JSON.stringify(value), computed when `text` is empty.
  std::string stringify() const;
};

// StateValue<T>.
struct StateValue {
  std::string key;
  Json value;
  int64_t version = 0;
  std::string expires_at;  // ISO-8601, as new Date(ms).toISOString()
  std::string created_at;
  std::string updated_at;
  // The envelope this value was read from, as Redis holds it ("" from the memory backend, or
  // for set()'s own answer): the value's members in their stored order, for a caller that
  // writes the value back as JavaScript would ({ ...current, [field]: n } keeps that order).
  std::string envelope;
  // The value with its members in their stored order (from `envelope` while it holds `value`;
  // else `value`, members sorted).
  nlohmann::ordered_json ordered_value() const;
};

struct CasResult {
  bool ok = false;
  std::optional<StateValue> value;    // ok: what was written
  std::optional<StateValue> current;  // not ok: what is there
};

// UnsupportedProviderStateError (code PROVIDER_STATE_UNSUPPORTED).
struct StateError : std::runtime_error {
  using std::runtime_error::runtime_error;
  // "timed out" / "unavailable": a Redis call failed in transport, the outcome is unknown.
  bool transport() const;
  bool quota() const;
};

// new Date(ms).toISOString()
std::string IsoTime(int64_t ms);
// Date.parse of toISOString() output ("2026-01-01T00:00:00.000Z"); nullopt otherwise.
std::optional<int64_t> ParseIsoTime(const std::string& iso);
// JSON.stringify of a value (nlohmann's dump; see the deviation notes in state_api.cc).
std::string Stringify(const Json& v);

}  // namespace testbed::real::state
