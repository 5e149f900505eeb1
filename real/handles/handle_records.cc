// The handles of seed 002, their records half: normalization (js 42-136), typed errors
// (js 153-245), records and their TTLs (js 269-464), and the storage adapters. The runtime that
// uses them is handle.cc.
#include "real/handles/handle.h"
#include "real/handles/handle_internal.h"
#include "real/handles/js_handles.h"
#include "real/state/js_namespace.h"

#include "model/json_text.h"

#include <absl/strings/ascii.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include <algorithm>
#include <clocale>
#include <cmath>
#include <cwctype>
#include <locale.h>
#include <string_view>
#include <wctype.h>
#include <exception>
#include <set>

#include "real/handles/wordlist.h"

namespace testbed::real::handles {
namespace internal {

using state::CasResult;
using state::StateValue;

// ---- normalization (js 42-136) ----
//
// On code points, as JavaScript's string methods see the handle: trim() and the regular
// expressions' \s take Unicode white space (U+00A0, U+2003, ...), toLowerCase() lowers every
// letter, and `raw.length` counts UTF-16 code units. Found by the seed's own handle.js
// (tests/port_fidelity_handles_test.cc): a handle wrapped in U+00A0 was not trimmed here.

// \s and trim(): WhiteSpace and LineTerminator (ECMA-262 12.2, 12.3).
bool IsSpace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000 || c == 0xFEFF;
}
bool Leading(char32_t c) {  // LEADING_WRAPPING (js 44)
  return std::u32string_view(U"\"'`<([{").find(c) != std::u32string_view::npos || IsSpace(c);
}
bool Trailing(char32_t c) {  // TRAILING_WRAPPING (js 45)
  return std::u32string_view(U"\"'`>)]}.,;:!?").find(c) != std::u32string_view::npos || IsSpace(c);
}
bool Separator(char32_t c) { return c == '-' || c == '_' || IsSpace(c); }  // WORD_SEPARATOR

// String.prototype.toLowerCase: the C library's Unicode case map (glibc's C.UTF-8), and the one
// unconditional special casing, U+0130 to "i" + U+0307. (The final-sigma rule is left out: it
// turns one Greek letter into another, and no handle word or kind name is Greek.)
std::u32string ToLower(std::u32string_view s) {
  static const locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(0));
  std::u32string out;
  for (const char32_t c : s) {
    if (c < 0x80) {
      out += (c >= 'A' && c <= 'Z') ? c + 32 : c;
    } else if (c == 0x130) {
      out += U"i\u0307";
    } else {
      out += utf8 ? static_cast<char32_t>(towlower_l(static_cast<wint_t>(c), utf8)) : c;
    }
  }
  return out;
}
size_t Utf16Length(std::u32string_view s) {
  size_t n = 0;
  for (const char32_t c : s) n += c > 0xFFFF ? 2 : 1;
  return n;
}

// classifySeparator (js 50)
void ClassifySeparator(std::u32string_view actual, std::u32string_view expected,
                       std::set<std::string>& classes) {
  if (actual == expected) return;
  if (std::any_of(actual.begin(), actual.end(), IsSpace)) classes.insert("whitespace");
  std::u32string squeezed;
  for (const char32_t c : actual)
    if (!IsSpace(c)) squeezed += c;
  if (squeezed != expected) classes.insert("separator");
}

// acceptedWordCounts (js 58)
std::vector<int> AcceptedWordCounts(const HandleKind& kind) {
  if (kind.access == "public") return {kPublicHandleWordCount, kHighPublicHandleWordCount};
  return {kBoundHandleWordCount};
}

// normalizeHandleInternal (js 72).
Outcome NormalizeInternal(const HandleKind& kind, const std::string& raw_text) {
  std::set<std::string> classes;
  const std::u32string raw = model::CodePoints(raw_text);
  if (Utf16Length(raw) > 256)
    return {false, "invalid", "input too long"};  // MAX_HANDLE_INPUT_LENGTH
  size_t b = 0, e = raw.size();
  while (b < e && IsSpace(raw[b])) ++b;
  while (e > b && IsSpace(raw[e - 1])) --e;
  const std::u32string trimmed = raw.substr(b, e - b);
  if (trimmed != raw) classes.insert("whitespace");
  b = 0;
  e = trimmed.size();
  while (b < e && Leading(trimmed[b])) ++b;
  while (e > b && Trailing(trimmed[e - 1])) --e;
  const std::u32string unwrapped = trimmed.substr(b, e - b);
  if (unwrapped != trimmed) classes.insert("punctuation");
  const std::u32string lowered = ToLower(unwrapped);
  if (lowered != unwrapped) classes.insert("case");
  const std::u32string name = model::CodePoints(kind.name);
  if (lowered.rfind(name, 0) != 0) return {false, "kind_mismatch"};
  const std::u32string after_kind = lowered.substr(name.size());
  size_t sep = 0;
  while (sep < after_kind.size() && (Separator(after_kind[sep]) || after_kind[sep] == ':')) ++sep;
  if (sep == 0) {
    if (after_kind.empty()) return {false, "invalid", "missing words"};
    return {false, "kind_mismatch"};
  }
  ClassifySeparator(std::u32string_view(after_kind).substr(0, sep), U"_", classes);
  const std::u32string body = after_kind.substr(sep);
  if (body.empty()) return {false, "invalid", "missing words"};
  std::vector<std::u32string> segments(1), separators;
  for (size_t i = 0; i < body.size();) {
    if (!Separator(body[i])) {
      segments.back() += body[i++];
      continue;
    }
    std::u32string run;
    while (i < body.size() && Separator(body[i])) run += body[i++];
    separators.push_back(run);
    segments.emplace_back();
  }
  for (const auto& s : segments)
    if (s.empty()) return {false, "invalid", "trailing separator"};
  for (const auto& s : separators) ClassifySeparator(s, U"-", classes);
  Outcome out;
  for (const auto& segment_cps : segments) {
    const std::string segment = model::Utf8(segment_cps);
    const std::optional<std::string> word = FindHandleWordWithinDistance(segment, 1);
    if (!word) return {false, "invalid", "unknown word"};
    if (*word != segment) classes.insert("typo");
    out.normalized.words.push_back(*word);
  }
  const std::vector<int> counts = AcceptedWordCounts(kind);
  if (std::find(counts.begin(), counts.end(), static_cast<int>(out.normalized.words.size())) ==
      counts.end())
    return {false, "invalid", absl::StrCat("expected ", kind.word_count, " words")};
  out.ok = true;
  out.normalized.canonical = absl::StrCat(kind.name, "_", absl::StrJoin(out.normalized.words, "-"));
  out.normalized.normalization.assign(classes.begin(), classes.end());
  return out;
}

// ---- errors (js 153-245) ----

std::string RecoverySentence(const HandleKind& kind) {  // ../handle.js, not in the seed
  return kind.issued_by.empty() ? "Request a new one."
                                : absl::StrCat("Call `", kind.issued_by, "` again.");
}
Json FieldDetails(const HandleKind& kind) { return Json{{"field", kind.field_name}}; }

std::string PublicCollapsedMessage(const HandleKind& kind) {  // js 153
  const std::string again =
      kind.issued_by.empty() ? "Request a new one."
                             : absl::StrCat("Call `", kind.issued_by, "` again to get a new one.");
  return absl::StrCat("`", kind.field_name, "` is not valid or has expired. ", again);
}

HandleError NormalizationError(const HandleKind& kind, const Outcome& failure) {  // js 159
  if (failure.reason == "kind_mismatch")
    return HandleError(
        "HANDLE_KIND_MISMATCH",
        absl::StrCat("`", kind.field_name, "` must be a `", kind.name,
                     "_...` handle as returned by ",
                     kind.issued_by.empty() ? "the issuing operation" : "`" + kind.issued_by + "`",
                     ". ", RecoverySentence(kind)),
        FieldDetails(kind));
  if (kind.access == "public")
    return HandleError("HANDLE_INVALID", PublicCollapsedMessage(kind), FieldDetails(kind));
  return HandleError("HANDLE_INVALID",
                     absl::StrCat("`", kind.field_name, "` is not a well-formed `", kind.name,
                                  "` handle (", failure.detail, "). ", RecoverySentence(kind)),
                     FieldDetails(kind));
}

HandleError NotFoundError(const HandleKind& kind) {  // js 171
  if (kind.access == "public")
    return HandleError("HANDLE_INVALID", PublicCollapsedMessage(kind), FieldDetails(kind));
  return HandleError("HANDLE_NOT_FOUND",
                     absl::StrCat("`", kind.field_name,
                                  "` was not found; it may have expired or belong to another "
                                  "session. ",
                                  RecoverySentence(kind)),
                     FieldDetails(kind));
}

std::string ExpiredDeadline(const HandleKind& kind, const Record& record, int64_t now) {  // js 181
  if (record["status"] == "committed") return "result";
  if (!IsDraftKind(kind)) return "ttl";
  return now >= record["max_expires_at_ms"].get<int64_t>() ? "max" : "idle";
}

HandleError ExpiredError(const HandleKind& kind, const std::string& deadline) {  // js 188
  if (kind.access == "public")
    return HandleError("HANDLE_INVALID", PublicCollapsedMessage(kind), FieldDetails(kind));
  const int64_t lifetime_ms = IsDraftKind(kind) ? (deadline == "idle"     ? kind.idle_ttl_ms
                                                   : deadline == "result" ? kind.result_ttl_ms
                                                                          : kind.max_ttl_ms)
                                                : kind.ttl_ms;
  const int64_t minutes =
      std::max<int64_t>(1, std::llround(static_cast<double>(lifetime_ms) / 60'000));
  const std::string reason =
      deadline == "idle"     ? absl::StrCat("expired after ", minutes, " minutes of inactivity")
      : deadline == "result" ? absl::StrCat("was completed more than ", minutes,
                                            " minutes ago and its result is no longer available")
                             : absl::StrCat("expired after ", minutes, " minutes");
  return HandleError(
      "HANDLE_EXPIRED",
      absl::StrCat("`", kind.field_name, "` ", reason, ". ", RecoverySentence(kind)),
      Json{{"field", kind.field_name}, {"deadline", deadline}, {"lifetimeMinutes", minutes}});
}

HandleError BusyError(const HandleKind& kind) {  // js 213
  return HandleError("HANDLE_BUSY",
                     absl::StrCat("`", kind.field_name,
                                  "` is being committed by another request. Retry shortly with "
                                  "the same `",
                                  kind.field_name, "`."),
                     FieldDetails(kind));
}
HandleError CommittedError(const HandleKind& kind) {  // js 216
  return HandleError("HANDLE_COMMITTED",
                     absl::StrCat("`", kind.field_name,
                                  "` has already been committed and can no longer be changed. ",
                                  RecoverySentence(kind)),
                     FieldDetails(kind));
}
HandleError ConnectionRequiredError(const HandleKind& kind, const std::string& op) {  // js 219
  return HandleError("HANDLE_CONNECTION_REQUIRED",
                     absl::StrCat("Handle kind \"", kind.name,
                                  "\" is bound to a connection, but request.connectionId is "
                                  "missing for ",
                                  op,
                                  ". Bound handles require a connection-scoped request; use "
                                  "access: \"public\" for connection-less cursors."));
}
HandleError StorageUnavailableError(const HandleKind& kind, const std::string& reason,
                                    bool transport) {  // js 222
  return HandleError(
      "HANDLE_STORAGE_UNAVAILABLE",
      absl::StrCat("Handle storage for kind \"", kind.name, "\" is not available: ", reason, "."),
      Json{{"reason", reason}}, transport);
}
// invalidDataError (js 228) for a value findNonJsonSafePath refused: the cause's message is
// "<path> is not JSON-safe (...)", and it has no `issues`.
HandleError InvalidDataError(const HandleKind& kind, const std::string& operation,
                             const std::string& path) {
  const std::string summary = absl::StrCat(
      path,
      " is not JSON-safe (Date, Map, Set, class instances, NaN, bigint and functions cannot be "
      "stored)");
  return HandleError("HANDLE_INVALID_DATA",
                     absl::StrCat("Handle kind \"", kind.name, "\" ", operation,
                                  " received data that does not satisfy its schema (", summary,
                                  "). This is a provider bug: validate or shape the data before "
                                  "storing it."),
                     Json{{"operation", operation}});
}

// findNonJsonSafePath (js 276) over what a Json can hold: only a number that is not finite
// (NaN, Infinity) is not JSON-safe. Members in the Json's order (a JSON caller's are sorted).
std::optional<std::string> NonJsonSafePath(const Json& v, const std::string& path) {
  if (v.is_number_float() && !std::isfinite(v.get<double>())) return path;
  if (v.is_array())
    for (size_t i = 0; i < v.size(); ++i)
      if (auto p = NonJsonSafePath(v[i], absl::StrCat(path, "[", i, "]"))) return p;
  if (v.is_object())
    for (auto it = v.begin(); it != v.end(); ++it)
      if (auto p = NonJsonSafePath(it.value(), absl::StrCat(path, ".", it.key()))) return p;
  return std::nullopt;
}

// validateData (js 411): the kind's schema accepts every value (see the header); data that JSON
// cannot hold is refused.
const Json& ValidateData(const HandleKind& kind, const std::string& operation, const Json& data) {
  if (auto path = NonJsonSafePath(data, "data")) throw InvalidDataError(kind, operation, *path);
  return data;
}

HandleError TooLargeError(const HandleKind& kind, int64_t bytes) {  // js 225
  return HandleError("HANDLE_TOO_LARGE",
                     absl::StrCat("Handle record for kind \"", kind.name, "\" is ", bytes,
                                  " bytes, above maxValueBytes ", kind.max_value_bytes,
                                  ". Store less in the handle or raise maxValueBytes on the kind."),
                     Json{{"bytes", bytes}, {"maxValueBytes", kind.max_value_bytes}});
}

// translateStorageError (js 399): the state API's errors (PROVIDER_STATE_UNSUPPORTED, which
// the ports also raise for "Redis is unavailable") become HANDLE_STORAGE_UNAVAILABLE.
HandleError TranslateStorageError(const HandleKind& kind, const state::StateError& e) {
  const std::string message = e.what();
  const std::string reason =
      absl::AsciiStrToLower(message).find("quota exceeded") != std::string::npos
          ? "live-entry quota exceeded (maxEntries)"
          : message;
  return StorageUnavailableError(kind, reason, e.transport());
}

int64_t MsDuration(double ms) { return std::max<int64_t>(1, static_cast<int64_t>(std::floor(ms))); }

// isStoredHandleRecord (js 253)
bool IsStoredHandleRecord(const Record& v) {
  if (!v.is_object()) return false;
  auto num = [&](const char* k) { return v.contains(k) && v[k].is_number(); };
  // `record.status === "active" || ...`: a status that is not a string is none of them (and
  // `type` the same), where nlohmann's value() would throw a type_error.
  auto text = [&](const char* k) {
    return v.contains(k) && v[k].is_string() ? v[k].template get<std::string>() : std::string();
  };
  const std::string status = text("status");
  return v.contains("v") && v["v"] == Record(kRecordVersion) && v.contains("kind") &&
         v["kind"].is_string() && (text("type") == "cursor" || text("type") == "draft") &&
         (status == "active" || status == "committing" || status == "committed" ||
          status == "discarded") &&
         v.contains("data") && num("created_at_ms") && num("expires_at_ms") &&
         num("max_expires_at_ms");
}

int64_t RecordBytes(const Record& record) {  // js 269: Buffer.byteLength(JSON.stringify(record))
  return static_cast<int64_t>(model::JsonStringify(record).size());
}

int64_t GraceMs(int64_t lifetime_ms) { return std::min(lifetime_ms, kExpiryGraceMaxMs); }  // js 442

// draftExpiresAtMs (js 446): min(now + kind.idleTtlMs, max_expires_at_ms). Only a draft kind
// has an idle lifetime; a cursor's kind.idleTtlMs is undefined, so the JavaScript computes NaN
// (nullopt here), writes it as null, and its storage ttl, msDuration(NaN), is "NaNms".
std::optional<int64_t> DraftExpiresAtMs(const HandleKind& kind, const Record& record, int64_t now) {
  if (!IsDraftKind(kind)) return std::nullopt;
  return std::min(now + kind.idle_ttl_ms, record["max_expires_at_ms"].get<int64_t>());
}
Record ExpiresAt(std::optional<int64_t> ms) { return ms ? Record(*ms) : Record(nullptr); }

// A write whose ttl is msDuration(NaN) = "NaNms": the state runtime's parseStateDurationMs
// (hidden by the seeds' diffs) refuses it before any Redis call, and the handle runtime
// translates that as a storage error. (The stand-in in tests/js/state/ throws "ttl is invalid";
// a Number()-based parser would fail too, in new Date(NaN).toISOString(), with a RangeError.
// Either way the call fails and nothing is written.)
HandleError NanTtlError(const HandleKind& kind) {
  return TranslateStorageError(kind,
                               state::StateError("Provider runtime state ttl is invalid (NaNms)"));
}

int64_t StorageTtlMs(const HandleKind& kind, const Record& record, int64_t now) {  // js 454
  if (record["status"] == "committed") {
    const int64_t lifetime = IsDraftKind(kind) ? kind.result_ttl_ms : kind.ttl_ms;
    return std::max<int64_t>(1, record["expires_at_ms"].get<int64_t>() - now) + GraceMs(lifetime);
  }
  if (IsDraftKind(kind))
    return std::max<int64_t>(1, record["max_expires_at_ms"].get<int64_t>() - now) +
           GraceMs(kind.max_ttl_ms);
  return std::max<int64_t>(1, record["expires_at_ms"].get<int64_t>() - now) + GraceMs(kind.ttl_ms);
}

void AssertSize(const HandleKind& kind, const Record& record) {  // js 464
  const int64_t bytes = RecordBytes(record);
  if (bytes > kind.max_value_bytes) throw TooLargeError(kind, bytes);
}

HandleRecord ToHandleRecord(const HandleKind& kind, const std::string& canonical,
                            const Record& record) {  // js 469
  HandleRecord r;
  r.handle = canonical;
  r.kind = kind.name;
  r.status = record["status"].get<std::string>();
  r.data = Json(record["data"]);
  if (r.status == "committed") r.result = Json(record.value("result", Record()));
  r.created_at = state::IsoTime(record["created_at_ms"].get<int64_t>());
  r.expires_at = state::IsoTime(record["expires_at_ms"].get<int64_t>());
  return r;
}

std::string OutcomeForError(const std::exception_ptr& e) {  // js 335
  try {
    std::rethrow_exception(e);
  } catch (const HandleError& h) {
    if (h.code == "HANDLE_NOT_FOUND") return "not_found";
    if (h.code == "HANDLE_EXPIRED") return "expired";
    if (h.code == "HANDLE_INVALID") return "invalid";
    if (h.code == "HANDLE_KIND_MISMATCH") return "kind_mismatch";
    if (h.code == "HANDLE_BUSY") return "busy";
  } catch (...) {
  }
  return "error";
}

bool IsOurClaim(const std::optional<StateValue>& current, const std::string& claim_id) {
  if (!current) return false;
  const Record value = current->ordered_value();
  return IsStoredHandleRecord(value) && value["status"] == "committing" &&
         value.contains("claim_id") && value["claim_id"] == claim_id;
}

// ---- storage ----

class RedisStorage : public HandleStorage {
 public:
  explicit RedisStorage(std::unique_ptr<state::StateNamespace> ns) : ns_(std::move(ns)) {}
  sim::Task<std::optional<StateValue>> get(std::string key) override {
    return ns_->get(std::move(key));
  }
  sim::Task<CasResult> compare_and_set(std::string key, int64_t expected, state::WriteValue value,
                                       int64_t ttl_ms) override {
    return ns_->compare_and_set(std::move(key), expected, std::move(value), ttl_ms);
  }
  void bind(sim::Ctx& ctx) override { ns_->rebind(ctx); }

 private:
  std::unique_ptr<state::StateNamespace> ns_;
};

class RedisHandleState : public HandleState {
 public:
  RedisHandleState(std::string version, sim::Ctx& ctx, const state::VersionScripts& scripts,
                   std::string provider)
      : version_(std::move(version)),
        ctx_(ctx),
        scripts_(scripts),
        provider_(std::move(provider)) {}
  std::unique_ptr<HandleStorage> ns(std::optional<std::string> connection, const std::string& name,
                                    state::NamespaceOptions options) override {
    return std::make_unique<RedisStorage>(
        state::MakeNamespace(version_, ctx_, scripts_, provider_, name, options, connection));
  }

 private:
  std::string version_;
  sim::Ctx& ctx_;
  const state::VersionScripts& scripts_;
  std::string provider_;
};

class MemoryStorage : public HandleStorage {
 public:
  explicit MemoryStorage(state::memory_beta30::Namespace& ns) : ns_(ns) {}
  sim::Task<std::optional<StateValue>> get(std::string key) override { co_return ns_.get(key); }
  sim::Task<CasResult> compare_and_set(std::string key, int64_t expected, state::WriteValue value,
                                       int64_t ttl_ms) override {
    co_return ns_.compare_and_set(key, expected, value.json, ttl_ms);
  }

 private:
  state::memory_beta30::Namespace& ns_;
};

}  // namespace internal

using namespace internal;

bool IsDraftKind(const HandleKind& kind) { return kind.type == "draft"; }

Normalized NormalizeHandle(const HandleKind& kind, const std::string& raw) {
  Outcome o = NormalizeInternal(kind, raw);
  if (!o.ok) throw NormalizationError(kind, o);
  return o.normalized;
}

std::string FormatNormalizationClasses(const std::vector<std::string>& classes) {
  std::vector<std::string> sorted = classes;
  std::sort(sorted.begin(), sorted.end());
  return sorted.empty() ? "none" : absl::StrJoin(sorted, "+");
}

std::unique_ptr<HandleState> RedisState(const std::string& version, sim::Ctx& ctx,
                                        const state::VersionScripts& scripts,
                                        std::string provider_id) {
  auto port = std::make_unique<RedisHandleState>(version, ctx, scripts, provider_id);
  if (!scripts.client().js || !state::HasJavaScript(version)) return port;
  return JsRedisState(version, scripts.client(), std::move(provider_id), std::move(port));
}

std::unique_ptr<HandleState> MemoryStateFor(const std::string& version, sim::Ctx& ctx,
                                            const state::VersionScripts& scripts) {
  auto port = std::make_unique<MemoryState>(ctx.clock());
  if (!scripts.client().js || !state::HasJavaScript(version)) return port;
  return JsMemoryState(version, scripts.client(), std::move(port));
}

std::unique_ptr<HandleStorage> MemoryState::ns(std::optional<std::string> connection,
                                               const std::string& name,
                                               state::NamespaceOptions options) {
  auto& space =
      spaces_[absl::StrCat(connection ? "connection:" + *connection : "provider", "|", name)];
  if (!space) space = std::make_unique<state::memory_beta30::Namespace>(clock_, options);
  return std::make_unique<MemoryStorage>(*space);
}

}  // namespace testbed::real::handles
