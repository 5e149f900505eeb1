// Internal to real/handles/: what the handle runtime (handle.cc, js 313-884) uses of the
// records half (handle_records.cc: normalization js 42-136, typed errors js 153-245, records and
// their TTLs js 269-464, and the storage adapters). Each function cites the seed lines it ports.
#pragma once

#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "real/handles/handle.h"

namespace testbed::real::handles::internal {

using Record = nlohmann::ordered_json;  // a record as the JavaScript holds it: members in order

struct Outcome {
  bool ok = false;
  std::string reason, detail;  // kind_mismatch | invalid
  Normalized normalized;
};

void AssertSize(const HandleKind& kind, const Record& record);  // js 464

HandleError BusyError(const HandleKind& kind);  // js 213

HandleError CommittedError(const HandleKind& kind);  // js 216

HandleError ConnectionRequiredError(const HandleKind& kind, const std::string& op);  // js 219

// draftExpiresAtMs (js 446): min(now + kind.idleTtlMs, max_expires_at_ms). Only a draft kind
// has an idle lifetime; a cursor's kind.idleTtlMs is undefined, so the JavaScript computes NaN
// (nullopt here), writes it as null, and its storage ttl, msDuration(NaN), is "NaNms".
std::optional<int64_t> DraftExpiresAtMs(const HandleKind& kind, const Record& record, int64_t now);

std::string ExpiredDeadline(const HandleKind& kind, const Record& record, int64_t now);  // js 181

HandleError ExpiredError(const HandleKind& kind, const std::string& deadline);  // js 188

Record ExpiresAt(std::optional<int64_t> ms);

int64_t GraceMs(int64_t lifetime_ms);  // js 442

// invalidDataError (js 228) for a value findNonJsonSafePath refused: the cause's message is
// "<path> is not JSON-safe (...)", and it has no `issues`.
HandleError InvalidDataError(const HandleKind& kind, const std::string& operation,
                             const std::string& path);

bool IsOurClaim(const std::optional<state::StateValue>& current, const std::string& claim_id);

// isStoredHandleRecord (js 253)
bool IsStoredHandleRecord(const Record& v);

int64_t MsDuration(double ms);

// A write whose ttl is msDuration(NaN) = "NaNms": the state runtime's parseStateDurationMs
// (hidden by the seeds' diffs) refuses it before any Redis call, and the handle runtime
// translates that as a storage error. (The stand-in in tests/js/state/ throws "ttl is invalid";
// a Number()-based parser would fail too, in new Date(NaN).toISOString(), with a RangeError.
// Either way the call fails and nothing is written.)
HandleError NanTtlError(const HandleKind& kind);

// findNonJsonSafePath (js 276) over what a Json can hold: only a number that is not finite
// (NaN, Infinity) is not JSON-safe. Members in the Json's order (a JSON caller's are sorted).
std::optional<std::string> NonJsonSafePath(const Json& v, const std::string& path);

HandleError NormalizationError(const HandleKind& kind, const Outcome& failure);  // js 159

// normalizeHandleInternal (js 72).
Outcome NormalizeInternal(const HandleKind& kind, const std::string& raw_text);

HandleError NotFoundError(const HandleKind& kind);  // js 171

std::string OutcomeForError(const std::exception_ptr& e);  // js 335

int64_t StorageTtlMs(const HandleKind& kind, const Record& record, int64_t now);  // js 454

HandleError StorageUnavailableError(const HandleKind& kind, const std::string& reason,
                                    bool transport = false);  // js 222

HandleRecord ToHandleRecord(const HandleKind& kind, const std::string& canonical,
                            const Record& record);  // js 469

// translateStorageError (js 399): the state API's errors (PROVIDER_STATE_UNSUPPORTED, which
// the ports also raise for "Redis is unavailable") become HANDLE_STORAGE_UNAVAILABLE.
HandleError TranslateStorageError(const HandleKind& kind, const state::StateError& e);

// validateData (js 411): the kind's schema accepts every value (see the header); data that JSON
// cannot hold is refused.
const Json& ValidateData(const HandleKind& kind, const std::string& operation, const Json& data);

}  // namespace testbed::real::handles::internal
