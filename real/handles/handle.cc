#include "real/handles/handle.h"

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
namespace {

using state::CasResult;
using state::StateValue;
using Record = nlohmann::ordered_json;  // a record as the JavaScript holds it: members in order

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

struct Outcome {
  bool ok = false;
  std::string reason, detail;  // kind_mismatch | invalid
  Normalized normalized;
};

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
                                    bool transport = false) {  // js 222
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

}  // namespace

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
  return std::make_unique<RedisHandleState>(version, ctx, scripts, std::move(provider_id));
}

std::unique_ptr<HandleStorage> MemoryState::ns(std::optional<std::string> connection,
                                               const std::string& name,
                                               state::NamespaceOptions options) {
  auto& space =
      spaces_[absl::StrCat(connection ? "connection:" + *connection : "provider", "|", name)];
  if (!space) space = std::make_unique<state::memory_beta30::Namespace>(clock_, options);
  return std::make_unique<MemoryStorage>(*space);
}

// ---- the runtime (js 313-884) ----

struct HandleContext::Loaded {  // load's result (js 485)
  std::string canonical;
  std::vector<std::string> normalization;
  std::vector<std::string> words;
  std::unique_ptr<HandleStorage> ns;
  StateValue stored;
  Record record;
};

namespace {

struct Report {  // instrumented's report (js 354)
  std::vector<std::string> normalization;
  int words = 0;
};

void Emit(const HandleContext& h, const HandleKind& kind, const std::string& op,
          const std::string& outcome, const Report& r) {  // js 317
  if (!h.options().on_telemetry) return;
  try {
    h.options().on_telemetry({h.options().provider_id, kind.name, kind.type, op, outcome,
                              FormatNormalizationClasses(r.normalization), r.words});
  } catch (...) {
    // Telemetry must never affect the operation outcome.
  }
}

// resolveNamespace (js 371)
std::unique_ptr<HandleStorage> ResolveNamespace(HandleContext& h, const HandleKind& kind,
                                                const std::string& op) {
  if (!h.options().state)
    throw StorageUnavailableError(kind, "no runtime state was provided to ctx.handle");
  const bool bound = kind.access == "bound";
  if (bound && !h.options().connection_id) throw ConnectionRequiredError(kind, op);
  const int64_t max_ttl_ms = IsDraftKind(kind)
                                 ? std::max({kind.max_ttl_ms + GraceMs(kind.max_ttl_ms),
                                             kind.result_ttl_ms + GraceMs(kind.result_ttl_ms),
                                             h.options().commit_lease_ms})
                                 : kind.ttl_ms + GraceMs(kind.ttl_ms);
  const int64_t default_ttl_ms = IsDraftKind(kind) ? kind.idle_ttl_ms : kind.ttl_ms;
  state::NamespaceOptions o;
  o.provider_scope = !bound;
  o.default_ttl_ms = MsDuration(static_cast<double>(default_ttl_ms));
  o.max_ttl_ms = MsDuration(static_cast<double>(max_ttl_ms));
  o.max_entries = kind.max_entries;
  o.max_value_bytes = kind.max_value_bytes;
  try {
    return h.options().state->ns(bound ? h.options().connection_id : std::nullopt,
                                 absl::StrCat(kNamespacePrefix, kind.name), o);
  } catch (const state::StateError& e) {
    throw TranslateStorageError(kind, e);
  }
}

// storage(kind, run) (js 408): the state API's errors, translated.
sim::Task<std::optional<StateValue>> StorageGet(const HandleKind& kind, HandleStorage& ns,
                                                std::string key) {
  try {
    co_return co_await ns.get(std::move(key));
  } catch (const state::StateError& e) {
    throw TranslateStorageError(kind, e);
  }
}
sim::Task<CasResult> StorageCas(const HandleKind& kind, HandleStorage& ns, std::string key,
                                int64_t expected, state::WriteValue value, int64_t ttl_ms) {
  try {
    co_return co_await ns.compare_and_set(std::move(key), expected, std::move(value), ttl_ms);
  } catch (const state::StateError& e) {
    throw TranslateStorageError(kind, e);
  }
}

template <typename T>
struct Result {
  T value;
  std::string outcome;
};

// instrumented (js 354): runs an operation and emits exactly one telemetry event for it.
template <typename T>
sim::Task<T> Instrumented(const HandleContext& h, HandleKind kind, std::string op, Report* report,
                          sim::Task<Result<T>> body) {
  std::exception_ptr error;
  std::optional<Result<T>> r;
  try {
    r = co_await std::move(body);
  } catch (...) {
    error = std::current_exception();
  }
  if (error) {
    Emit(h, kind, op, OutcomeForError(error), *report);
    std::rethrow_exception(error);
  }
  Emit(h, kind, op, r->outcome, *report);
  co_return std::move(r->value);
}

// randomUUID: a version-4 UUID from the world's PRNG.
std::string RandomUuid(sim::Prng& rng) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 32; ++i) {
    uint64_t d = rng.below(16);
    if (i == 12) d = 4;
    if (i == 16) d = 8 + (d & 3);
    if (i == 8 || i == 12 || i == 16 || i == 20) out += '-';
    out += hex[d];
  }
  return out;
}

// load (js 485)
sim::Task<std::unique_ptr<HandleContext::Loaded>> Load(HandleContext& h, HandleKind kind,
                                                       std::string op, std::string raw,
                                                       Report* report) {
  Outcome outcome = NormalizeInternal(kind, raw);
  if (!outcome.ok) throw NormalizationError(kind, outcome);
  report->normalization = outcome.normalized.normalization;
  report->words = static_cast<int>(outcome.normalized.words.size());
  auto loaded = std::make_unique<HandleContext::Loaded>();
  loaded->canonical = outcome.normalized.canonical;
  loaded->normalization = outcome.normalized.normalization;
  loaded->words = outcome.normalized.words;
  loaded->ns = ResolveNamespace(h, kind, op);
  std::optional<StateValue> stored = co_await StorageGet(kind, *loaded->ns, loaded->canonical);
  if (!stored) throw NotFoundError(kind);
  const Record value = stored->ordered_value();
  if (!IsStoredHandleRecord(value) || value["kind"] != kind.name || value["type"] != kind.type ||
      value["status"] == "discarded") {
    // Corrupt or foreign record under our key (or a discard tombstone that has not been
    // reclaimed yet): unusable, never disclose contents.
    if (IsStoredHandleRecord(value) && value["status"] == "discarded") throw NotFoundError(kind);
    if (kind.access == "public") throw NotFoundError(kind);
    throw NormalizationError(kind, {false, "invalid", "record unreadable"});
  }
  // A live `committing` claim is still doing work under its lease even if the draft's hard
  // expiry passed meanwhile; callers must see BUSY, not EXPIRED (js 518).
  if (value["status"] != "committing") {
    const int64_t now = h.now_ms();
    if (now >= value["expires_at_ms"].get<int64_t>() ||
        now >= value["max_expires_at_ms"].get<int64_t>())
      throw ExpiredError(kind, ExpiredDeadline(kind, value, now));
  }
  loaded->record = value;
  loaded->stored = std::move(*stored);
  co_return loaded;
}

// create (js 529)
sim::Task<Result<std::string>> CreateBody(HandleContext& h, HandleKind kind, Json data,
                                          Report* report) {
  const Json& validated = ValidateData(kind, "create", data);
  std::unique_ptr<HandleStorage> ns = ResolveNamespace(h, kind, "create");
  const int64_t now = h.now_ms();
  const int64_t lifetime_ms = IsDraftKind(kind) ? kind.max_ttl_ms : kind.ttl_ms;
  Record record = Record::object();  // the literal's order (js 535-543)
  record["v"] = kRecordVersion;
  record["kind"] = kind.name;
  record["type"] = kind.type;
  record["status"] = "active";
  record["data"] = Record(validated);
  record["created_at_ms"] = now;
  record["expires_at_ms"] =
      now + (IsDraftKind(kind) ? std::min(kind.idle_ttl_ms, kind.max_ttl_ms) : lifetime_ms);
  record["max_expires_at_ms"] = now + lifetime_ms;
  const int64_t write_ttl_ms = StorageTtlMs(kind, record, now);
  AssertSize(kind, record);
  report->normalization = {};
  report->words = kind.word_count;
  // CAS-if-absent (expected version 0); a collision retries with fresh words (js 548).
  for (int attempt = 0; attempt < kCreateAttempts; ++attempt) {
    std::vector<std::string> words;
    for (int i = 0; i < kind.word_count; ++i)
      words.push_back(IssuableHandleWords()[h.rng().below(IssuableHandleWords().size())]);
    const std::string canonical = absl::StrCat(kind.name, "_", absl::StrJoin(words, "-"));
    const CasResult result =
        co_await StorageCas(kind, *ns, canonical, 0, record, MsDuration(write_ttl_ms));
    if (result.ok) co_return Result<std::string>{canonical, "success"};
  }
  throw StorageUnavailableError(kind, absl::StrCat("could not allocate a unique handle after ",
                                                   kCreateAttempts, " attempts"));
}

// read (js 560)
sim::Task<Result<HandleRecord>> ReadBody(HandleContext& h, HandleKind kind, std::string handle,
                                         Report* report) {
  auto loaded = co_await Load(h, kind, "read", handle, report);
  const int64_t now = h.now_ms();
  if (IsDraftKind(kind) && loaded->record["status"] == "active") {
    // Sliding TTL: rewrite the record with a fresh logical expiry. Losing the CAS means a
    // concurrent update/commit already refreshed it (touchDraft, js 577).
    Record touched = loaded->record;
    touched["expires_at_ms"] = *DraftExpiresAtMs(kind, loaded->record, now);  // a draft
    const int64_t ttl = MsDuration(static_cast<double>(StorageTtlMs(kind, touched, now)));
    co_await StorageCas(kind, *loaded->ns, loaded->canonical, loaded->stored.version, touched, ttl);
    co_return Result<HandleRecord>{ToHandleRecord(kind, loaded->canonical, touched), "success"};
  }
  co_return Result<HandleRecord>{ToHandleRecord(kind, loaded->canonical, loaded->record),
                                 "success"};
}

// update (js 582)
sim::Task<Result<HandleRecord>> UpdateBody(HandleContext& h, HandleKind kind, std::string handle,
                                           std::function<Json(Json)> updater, Report* report) {
  for (int attempt = 0; attempt < kUpdateAttempts; ++attempt) {
    auto loaded = co_await Load(h, kind, "update", handle, report);
    if (loaded->record["status"] == "committed") throw CommittedError(kind);
    if (loaded->record["status"] == "committing") throw BusyError(kind);
    const Json next_data = ValidateData(kind, "update", updater(Json(loaded->record["data"])));
    const int64_t now = h.now_ms();
    Record next = loaded->record;
    next["data"] = Record(next_data);
    const std::optional<int64_t> expires = DraftExpiresAtMs(kind, loaded->record, now);
    next["expires_at_ms"] = ExpiresAt(expires);
    AssertSize(kind, next);
    if (!expires) throw NanTtlError(kind);  // a cursor: its storage ttl is NaN
    const int64_t ttl_ms = StorageTtlMs(kind, next, now);
    const CasResult result = co_await StorageCas(kind, *loaded->ns, loaded->canonical,
                                                 loaded->stored.version, next, MsDuration(ttl_ms));
    if (result.ok)
      co_return Result<HandleRecord>{ToHandleRecord(kind, loaded->canonical, next), "success"};
  }
  throw BusyError(kind);
}

// The renewal loop (js 670-726), as a thread of the committing actor.
struct Renewal {
  bool renewing = true;
  bool sleeping = false;
  int64_t version = 0;
  sim::ThreadId thread = -1;
};

// The loop shares the commit's namespace object, as the JavaScript does; its calls run as the
// loop's own thread (bind), and the namespace goes back to the commit's thread when each call
// returns. (No RAII guard: a frame destroyed without resuming, after a crash, must not touch
// the namespace, which the commit's frame owns.)
sim::Task<void> Renew(sim::Ctx& ctx, sim::Ctx* owner, std::shared_ptr<Renewal> ren,
                      HandleStorage* ns, std::string canonical, Record committing,
                      std::string claim_id, int64_t lease_ms) {
  while (ren->renewing) {
    ren->sleeping = true;
    co_await ctx.sleep(std::max<int64_t>(1, lease_ms / 2));
    ren->sleeping = false;
    if (!ren->renewing) co_return;
    std::optional<CasResult> renewed;
    ns->bind(ctx);
    try {
      renewed =
          co_await ns->compare_and_set(canonical, ren->version, committing, MsDuration(lease_ms));
    } catch (...) {
    }
    ns->bind(*owner);
    if (renewed && renewed->ok) {
      ren->version = renewed->value->version;
      continue;
    }
    if (renewed) {
      // Lost the CAS. Only a `committing` record can still be ours; adopt its version and keep
      // renewing, otherwise the record moved on and finalize classifies it.
      if (IsOurClaim(renewed->current, claim_id)) {
        ren->version = renewed->current->version;
        continue;
      }
      co_return;
    }
    // Ambiguous write: re-read and adopt the live version so the next renewal does not fail
    // its CAS and let the lease lapse.
    std::optional<StateValue> current;
    bool read = false;
    ns->bind(ctx);
    try {
      current = co_await ns->get(canonical);
      read = true;
    } catch (...) {
      // Still unreachable; try again after the next interval.
    }
    ns->bind(*owner);
    if (read && IsOurClaim(current, claim_id)) ren->version = current->version;
  }
}

// commit (js 612)
sim::Task<Result<CommitOutcome>> CommitBody(HandleContext& h, HandleKind kind, std::string handle,
                                            Work work, Report* report) {
  auto loaded = co_await Load(h, kind, "commit", handle, report);
  if (loaded->record["status"] == "committed")
    co_return Result<CommitOutcome>{
        {"replayed", loaded->canonical, Json(loaded->record.value("result", Record()))},
        "replayed"};
  if (loaded->record["status"] == "committing") throw BusyError(kind);
  // active -> committing. The claim holds a lease independent of the draft's remaining idle
  // ttl. A crashed committer leaves the record BUSY for at most the lease (js 625).
  const std::string claim_id = RandomUuid(h.rng());
  Record committing = loaded->record;
  committing["status"] = "committing";
  committing["claim_id"] = claim_id;
  const int64_t remaining_ms = StorageTtlMs(kind, committing, h.now_ms());
  const int64_t lease_ms = h.options().commit_lease_ms;
  CasResult claim;
  std::exception_ptr claim_error;
  try {
    claim = co_await StorageCas(kind, *loaded->ns, loaded->canonical, loaded->stored.version,
                                committing, MsDuration(std::max(remaining_ms, lease_ms)));
  } catch (...) {
    claim_error = std::current_exception();
  }
  if (claim_error) {
    // Ambiguous write: the claim may have landed although the response was lost. Re-read and
    // recognise our own claim id; otherwise the storage error stands (js 643).
    std::optional<StateValue> current = co_await StorageGet(kind, *loaded->ns, loaded->canonical);
    if (!IsOurClaim(current, claim_id)) std::rethrow_exception(claim_error);
    claim.ok = true;
    claim.value = std::move(current);
  }
  if (!claim.ok) {
    // Lost the race: another caller moved the record. Classify by what they did (js 657).
    const Record current = claim.current ? claim.current->ordered_value() : Record();
    if (IsStoredHandleRecord(current) && current["status"] == "committed")
      co_return Result<CommitOutcome>{
          {"replayed", loaded->canonical, Json(current.value("result", Record()))}, "replayed"};
    throw BusyError(kind);
  }
  auto ren = std::make_shared<Renewal>();
  ren->version = claim.value->version;
  HandleStorage* ns = loaded->ns.get();
  const std::string canonical = loaded->canonical;
  sim::Ctx* owner = &h.ctx();
  ren->thread = h.ctx().spawn(
      "renew",
      [owner, ren, ns, canonical, committing, claim_id, lease_ms](sim::Ctx& c) -> sim::Task<void> {
        return Renew(c, owner, ren, ns, canonical, committing, claim_id, lease_ms);
      });
  // stopRenewal + `await renewal`: a sleeping loop is woken and ends; one in a CAS finishes it.
  auto stop_renewal = [&] {
    ren->renewing = false;
    if (ren->sleeping) h.ctx().cancel(ren->thread);
  };
  Json result;
  std::exception_ptr work_error;
  try {
    result = co_await work(Json(loaded->record["data"]));
  } catch (...) {
    work_error = std::current_exception();
  }
  if (work_error) {
    stop_renewal();
    co_await h.ctx().join(ren->thread);
    // Restore committing -> active so the caller can retry; best effort (js 735).
    try {
      const int64_t restore_now = h.now_ms();
      Record restored = loaded->record;
      restored["status"] = "active";
      const std::optional<int64_t> expires = DraftExpiresAtMs(kind, loaded->record, restore_now);
      restored["expires_at_ms"] = ExpiresAt(expires);
      if (!expires) throw NanTtlError(kind);  // a cursor: the restore's ttl is NaN
      const int64_t ttl_ms = StorageTtlMs(kind, restored, restore_now);
      co_await loaded->ns->compare_and_set(canonical, ren->version, restored, MsDuration(ttl_ms));
    } catch (...) {
      // The record stays `committing` until its ttl lapses; the work error wins.
    }
    std::rethrow_exception(work_error);
  }
  stop_renewal();
  co_await h.ctx().join(ren->thread);
  const int64_t now = h.now_ms();
  // Results are persisted as JSON too (js 770): the record stays `committing`.
  if (auto path = NonJsonSafePath(result, "result")) throw InvalidDataError(kind, "commit", *path);
  Record committed = loaded->record;
  committed["status"] = "committed";
  committed.erase("claim_id");  // claim_id: undefined, dropped by JSON.stringify
  committed["result"] = Record(result);
  committed["committed_at_ms"] = now;
  committed["expires_at_ms"] = now + kind.result_ttl_ms;
  committed["max_expires_at_ms"] = now + kind.result_ttl_ms;
  // If the result does not fit the record stays `committing` (BUSY until ttl) (js 784).
  AssertSize(kind, committed);
  // Persisting the result must not give up on a transient storage error (js 788).
  int64_t version = ren->version;
  std::exception_ptr last_storage_error;
  for (int attempt = 0; attempt < kCommitFinalizeAttempts; ++attempt) {
    CasResult finalize;
    bool failed = false;
    try {
      finalize = co_await StorageCas(kind, *loaded->ns, canonical, version, committed,
                                     MsDuration(StorageTtlMs(kind, committed, now)));
    } catch (...) {
      last_storage_error = std::current_exception();
      failed = true;
    }
    if (failed) {
      co_await h.ctx().sleep(kCommitFinalizeRetryDelayMs * (attempt + 1));
      continue;
    }
    if (finalize.ok) co_return Result<CommitOutcome>{{"committed", canonical, result}, "success"};
    if (!finalize.current) break;
    const Record current = finalize.current->ordered_value();
    if (!IsStoredHandleRecord(current)) break;
    if (current["status"] == "committed")
      co_return Result<CommitOutcome>{
          {"replayed", canonical, Json(current.value("result", Record()))}, "replayed"};
    if (current["status"] != "committing" || !current.contains("claim_id") ||
        current["claim_id"] != claim_id)
      break;
    version = finalize.current->version;
  }
  if (last_storage_error) std::rethrow_exception(last_storage_error);
  throw StorageUnavailableError(kind,
                                "could not persist the commit result after the work completed");
}

// discard (js 837)
sim::Task<Result<int>> DiscardBody(HandleContext& h, HandleKind kind, std::string handle,
                                   Report* report) {
  Outcome outcome = NormalizeInternal(kind, handle);
  if (!outcome.ok) throw NormalizationError(kind, outcome);
  report->normalization = outcome.normalized.normalization;
  report->words = static_cast<int>(outcome.normalized.words.size());
  std::unique_ptr<HandleStorage> ns = ResolveNamespace(h, kind, "discard");
  const std::string& canonical = outcome.normalized.canonical;
  for (int attempt = 0; attempt < kDiscardAttempts; ++attempt) {
    const std::optional<StateValue> stored = co_await StorageGet(kind, *ns, canonical);
    if (!stored) co_return Result<int>{0, "success"};
    const Record record = stored->ordered_value();
    if (IsStoredHandleRecord(record) && record["status"] == "committing") throw BusyError(kind);
    Record tombstone = record;
    if (IsStoredHandleRecord(record)) tombstone["status"] = "discarded";
    const CasResult result =
        co_await StorageCas(kind, *ns, canonical, stored->version, tombstone, 1);
    if (result.ok) co_return Result<int>{0, "success"};
    const Record current = result.current ? result.current->ordered_value() : Record();
    if (IsStoredHandleRecord(current) && current["status"] == "committing") throw BusyError(kind);
    if (!result.current) co_return Result<int>{0, "success"};
  }
  throw BusyError(kind);
}

}  // namespace

HandleContext CreateTestHandleContext(sim::Ctx& ctx, sim::Prng& rng, MemoryState& state,
                                      std::string connection,
                                      std::function<void(const Telemetry&)> on_telemetry) {
  HandleOptions o;
  o.provider_id = "test-provider";
  o.state = &state;
  o.connection_id = std::move(connection);
  o.on_telemetry = std::move(on_telemetry);
  return HandleContext(std::move(o), ctx, rng);
}

HandleContext::HandleContext(HandleOptions options, sim::Ctx& ctx, sim::Prng& rng)
    : options_(std::move(options)), ctx_(ctx), rng_(rng) {
  options_.commit_lease_ms = std::max<int64_t>(1, options_.commit_lease_ms);
}

int64_t HandleContext::now_ms() const { return ctx_.now_ms(); }

sim::Task<std::string> HandleContext::create(const HandleKind& kind, Json data) {
  // Each body is a named local: g++ 12 destroys some temporaries of a co_await expression twice.
  Report report;
  sim::Task<Result<std::string>> body = CreateBody(*this, kind, std::move(data), &report);
  co_return co_await Instrumented<std::string>(*this, kind, "create", &report, std::move(body));
}

sim::Task<HandleRecord> HandleContext::read(const HandleKind& kind, std::string handle) {
  Report report;
  sim::Task<Result<HandleRecord>> body = ReadBody(*this, kind, std::move(handle), &report);
  co_return co_await Instrumented<HandleRecord>(*this, kind, "read", &report, std::move(body));
}

sim::Task<HandleRecord> HandleContext::update(const HandleKind& kind, std::string handle,
                                              std::function<Json(Json)> updater) {
  Report report;
  sim::Task<Result<HandleRecord>> body =
      UpdateBody(*this, kind, std::move(handle), std::move(updater), &report);
  co_return co_await Instrumented<HandleRecord>(*this, kind, "update", &report, std::move(body));
}

sim::Task<CommitOutcome> HandleContext::commit(const HandleKind& kind, std::string handle,
                                               Work work) {
  Report report;
  sim::Task<Result<CommitOutcome>> body =
      CommitBody(*this, kind, std::move(handle), std::move(work), &report);
  co_return co_await Instrumented<CommitOutcome>(*this, kind, "commit", &report, std::move(body));
}

sim::Task<void> HandleContext::discard(const HandleKind& kind, std::string handle) {
  Report report;
  sim::Task<Result<int>> body = DiscardBody(*this, kind, std::move(handle), &report);
  co_await Instrumented<int>(*this, kind, "discard", &report, std::move(body));
}

}  // namespace testbed::real::handles
