// The handles of seed 002, their runtime (js 313-884): create, read, update, commit with its
// lease and renewal loop, discard. The records half is handle_records.cc.
#include "real/handles/handle.h"
#include "real/handles/handle_internal.h"

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

using namespace internal;
using state::CasResult;
using state::StateValue;

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

// commit's restore of committing -> active after the work failed, so the caller can retry;
// best effort (js 735): on any error the record stays `committing` until its ttl lapses.
sim::Task<void> RestoreActive(HandleContext& h, const HandleKind& kind, HandleStorage& ns,
                              const std::string& canonical, int64_t version, const Record& record) {
  try {
    const int64_t restore_now = h.now_ms();
    Record restored = record;
    restored["status"] = "active";
    const std::optional<int64_t> expires = DraftExpiresAtMs(kind, record, restore_now);
    restored["expires_at_ms"] = ExpiresAt(expires);
    if (!expires) throw NanTtlError(kind);  // a cursor: the restore's ttl is NaN
    const int64_t ttl_ms = StorageTtlMs(kind, restored, restore_now);
    co_await ns.compare_and_set(canonical, version, restored, MsDuration(ttl_ms));
  } catch (...) {
    // The record stays `committing` until its ttl lapses; the work error wins.
  }
}

// commit's finalize (js 788): committing -> committed at the renewal's version, retried on a
// transient storage error and past a renewal that moved the version under our claim.
sim::Task<Result<CommitOutcome>> PersistResult(HandleContext& h, const HandleKind& kind,
                                               HandleStorage& ns, const std::string& canonical,
                                               int64_t version, const Record& committed,
                                               const std::string& claim_id, const Json& result,
                                               int64_t now) {
  std::exception_ptr last_storage_error;
  for (int attempt = 0; attempt < kCommitFinalizeAttempts; ++attempt) {
    CasResult finalize;
    bool failed = false;
    try {
      finalize = co_await StorageCas(kind, ns, canonical, version, committed,
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
    co_await RestoreActive(h, kind, *loaded->ns, canonical, ren->version, loaded->record);
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
  co_return co_await PersistResult(h, kind, *loaded->ns, canonical, ren->version, committed,
                                   claim_id, result, now);
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

nlohmann::ordered_json KindJs(const HandleKind& k) {
  nlohmann::ordered_json o = {{"name", k.name},
                              {"type", k.type},
                              {"access", k.access},
                              {"fieldName", k.field_name},
                              {"maxEntries", k.max_entries},
                              {"maxValueBytes", k.max_value_bytes},
                              {"wordCount", k.word_count}};
  if (k.type == "draft")
    o.update({{"idleTtlMs", k.idle_ttl_ms},
              {"maxTtlMs", k.max_ttl_ms},
              {"resultTtlMs", k.result_ttl_ms}});
  else
    o["ttlMs"] = k.ttl_ms;
  if (!k.issued_by.empty()) o["issuedBy"] = k.issued_by;
  return o;
}

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
  if (options_.state != nullptr) runtime_ = options_.state->runtime(options_, ctx_, rng_);
}

int64_t HandleContext::now_ms() const { return ctx_.now_ms(); }

sim::Task<std::string> HandleContext::create(const HandleKind& kind, Json data) {
  if (runtime_) co_return co_await runtime_->create(kind, std::move(data));
  // Each body is a named local: g++ 12 destroys some temporaries of a co_await expression twice.
  Report report;
  sim::Task<Result<std::string>> body = CreateBody(*this, kind, std::move(data), &report);
  co_return co_await Instrumented<std::string>(*this, kind, "create", &report, std::move(body));
}

sim::Task<HandleRecord> HandleContext::read(const HandleKind& kind, std::string handle) {
  if (runtime_) co_return co_await runtime_->read(kind, std::move(handle));
  Report report;
  sim::Task<Result<HandleRecord>> body = ReadBody(*this, kind, std::move(handle), &report);
  co_return co_await Instrumented<HandleRecord>(*this, kind, "read", &report, std::move(body));
}

sim::Task<HandleRecord> HandleContext::update(const HandleKind& kind, std::string handle,
                                              std::function<Json(Json)> updater) {
  if (runtime_) co_return co_await runtime_->update(kind, std::move(handle), std::move(updater));
  Report report;
  sim::Task<Result<HandleRecord>> body =
      UpdateBody(*this, kind, std::move(handle), std::move(updater), &report);
  co_return co_await Instrumented<HandleRecord>(*this, kind, "update", &report, std::move(body));
}

sim::Task<CommitOutcome> HandleContext::commit(const HandleKind& kind, std::string handle,
                                               Work work) {
  if (runtime_) co_return co_await runtime_->commit(kind, std::move(handle), std::move(work));
  Report report;
  sim::Task<Result<CommitOutcome>> body =
      CommitBody(*this, kind, std::move(handle), std::move(work), &report);
  co_return co_await Instrumented<CommitOutcome>(*this, kind, "commit", &report, std::move(body));
}

sim::Task<void> HandleContext::discard(const HandleKind& kind, std::string handle) {
  if (runtime_) {
    co_await runtime_->discard(kind, std::move(handle));
    co_return;
  }
  Report report;
  sim::Task<Result<int>> body = DiscardBody(*this, kind, std::move(handle), &report);
  co_await Instrumented<int>(*this, kind, "discard", &report, std::move(body));
}

}  // namespace testbed::real::handles
