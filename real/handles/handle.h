// A port of seed 002 (@apifuse/provider-sdk 2.2.0-beta.61, package/dist/runtime/handle.js):
// LLM-friendly handles, drafts committed once under a renewed lease and cursors, on the provider
// runtime state of any ported state version (real/state/) or its memory backend. Line numbers
// ("js N") are handle.js's; the seed file shows it at N + 5.
//
// The imports the seed does not show are filled with documented choices:
//   ../handle.js        HandleError (code, message, details), isDraftKind (type == "draft"),
//                       handleRecoverySentence ("Call `<issuedBy>` again.", else "Request a new
//                       one.", the wording of js 153);
//   ./handle-wordlist.js  real/handles/wordlist.h;
//   ./state.js          createMemoryProviderRuntimeState: state/memory_beta30 per scope;
//   a kind's schema     every value passes (safeParse never fails); validateData then refuses
//                       what JSON cannot hold, which in a Json is a number that is not finite.
// node:crypto's randomInt and randomUUID draw from the world's PRNG; setTimeout, nowMs and
// the renewal loop run on the actor's virtual clock (sim::Ctx), the loop as its own thread.
// Records are nlohmann::ordered_json: written in the object literal's order and read back in the
// stored order, as JSON.stringify and the spread operator keep them. Normalization works on
// code points as JavaScript's trim(), \s and toLowerCase() do. A cursor kind has no idleTtlMs,
// so updating a cursor (and restoring one after failed work) computes a NaN expiry and a
// "NaNms" ttl, which the state runtime refuses: the call fails and writes nothing, as the
// seed's does (see NanTtlError in handle.cc). The seed's own handle.js judges
// this port (tests/port_fidelity_handles_test.cc, docs/port-fidelity.md).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "real/state/memory_beta30.h"
#include "real/state/namespace.h"
#include "real/state/state_api.h"
#include "sim/prng.h"
#include "sim/runtime.h"
#include "sim/task.h"

namespace testbed::real::handles {

using Json = state::Json;

inline constexpr int64_t kRecordVersion = 1;                // js 15
inline constexpr int kCreateAttempts = 5;                   // js 16
inline constexpr int64_t kCommitLeaseMs = 5 * 60'000;       // js 18
inline constexpr int kUpdateAttempts = 3;                   // js 19
inline constexpr int kDiscardAttempts = 3;                  // js 20
inline constexpr int64_t kExpiryGraceMaxMs = 60 * 60'000;   // js 22
inline constexpr int64_t kCommitFinalizeRetryDelayMs = 50;  // js 23
inline constexpr int kCommitFinalizeAttempts = 3;           // js 24
inline constexpr const char* kNamespacePrefix = "handle.";  // js 25

// A handle kind (the SDK's defineHandleKind output, as the runtime reads it).
struct HandleKind {
  std::string name;              // "draft": handles read "draft_word-word"
  std::string type = "draft";    // "draft" | "cursor"
  std::string access = "bound";  // "bound" (connection scope) | "public" (provider scope)
  std::string field_name;        // the request field that carries it, for messages
  std::string issued_by;         // the operation that issues it ("": none)
  int64_t idle_ttl_ms = 0;       // drafts: sliding idle deadline
  int64_t max_ttl_ms = 0;        // drafts: hard deadline
  int64_t result_ttl_ms = 0;     // drafts: how long a committed result replays
  int64_t ttl_ms = 0;            // cursors
  int64_t max_entries = 100;
  int64_t max_value_bytes = 4096;
  int word_count = 2;
};
bool IsDraftKind(const HandleKind& kind);

// HandleError: code is HANDLE_NOT_FOUND, HANDLE_EXPIRED, HANDLE_INVALID, HANDLE_KIND_MISMATCH,
// HANDLE_BUSY, HANDLE_COMMITTED, HANDLE_CONNECTION_REQUIRED, HANDLE_STORAGE_UNAVAILABLE,
// HANDLE_TOO_LARGE or HANDLE_INVALID_DATA.
struct HandleError : std::runtime_error {
  HandleError(std::string code, const std::string& message, Json details = Json::object(),
              bool transport = false)
      : std::runtime_error(message),
        code(std::move(code)),
        details(std::move(details)),
        transport(transport) {}
  std::string code;
  Json details;
  bool transport;  // a storage error whose cause failed in transport (outcome unknown)
};

struct Normalized {
  std::string canonical;
  std::vector<std::string> words;
  std::vector<std::string> normalization;  // sorted classes: case, punctuation, separator, ...
};
// normalizeHandle (js 137): throws HANDLE_KIND_MISMATCH or HANDLE_INVALID.
Normalized NormalizeHandle(const HandleKind& kind, const std::string& raw);
std::string FormatNormalizationClasses(const std::vector<std::string>& classes);  // js 147

struct HandleRecord {  // toHandleRecord (js 469)
  std::string handle, kind, status;
  Json data;
  std::optional<Json> result;
  std::string created_at, expires_at;
};

struct CommitOutcome {
  std::string status;  // "committed" | "replayed"
  std::string handle;
  Json result;
};

struct Telemetry {
  std::string provider_id, kind, type, operation, outcome, normalization;
  int words = 0;
};

// The work a commit runs upstream: gets the draft's data, returns the result or throws.
using Work = std::function<sim::Task<Json>(Json data)>;

// A handle runtime other than this port, behind the same calls: the seed's own handle.js
// (real/handles/js_handles.h, --client js). HandleContext runs it in place of the port when the
// state it is given makes one.
class HandleRuntime {
 public:
  virtual ~HandleRuntime() = default;
  virtual sim::Task<std::string> create(const HandleKind& kind, Json data) = 0;
  virtual sim::Task<HandleRecord> read(const HandleKind& kind, std::string handle) = 0;
  virtual sim::Task<HandleRecord> update(const HandleKind& kind, std::string handle,
                                         std::function<Json(Json)> updater) = 0;
  virtual sim::Task<CommitOutcome> commit(const HandleKind& kind, std::string handle,
                                          Work work) = 0;
  virtual sim::Task<void> discard(const HandleKind& kind, std::string handle) = 0;
};
struct HandleOptions;

// The provider runtime state as the handle runtime uses it: namespace(name, options) of the
// provider scope, or of forConnection(connection).
class HandleStorage {
 public:
  virtual ~HandleStorage() = default;
  virtual sim::Task<std::optional<state::StateValue>> get(std::string key) = 0;
  // The record as JavaScript writes it: an object literal's members in its order.
  virtual sim::Task<state::CasResult> compare_and_set(std::string key, int64_t expected,
                                                      state::WriteValue value, int64_t ttl_ms) = 0;
  // Later calls run as `ctx` (the renewal loop's thread, then the commit's again).
  virtual void bind(sim::Ctx&) {}
};
class HandleState {
 public:
  virtual ~HandleState() = default;
  // connection: forConnection(connection) first (nullopt: the provider-scoped state).
  virtual std::unique_ptr<HandleStorage> ns(std::optional<std::string> connection,
                                            const std::string& name,
                                            state::NamespaceOptions options) = 0;
  // The runtime a context on this state runs (nullptr: the port).
  virtual std::unique_ptr<HandleRuntime> runtime(const HandleOptions&, sim::Ctx&, sim::Prng&) {
    return nullptr;
  }
};
// RedisProviderRuntimeState of a ported state version, for one actor. With the JavaScript client
// (scripts.client()) and a version whose JavaScript the seeds show, the seeds' own state runtime
// with the seed's own handle.js on it (real/handles/js_handles.h).
std::unique_ptr<HandleState> RedisState(const std::string& version, sim::Ctx& ctx,
                                        const state::VersionScripts& scripts,
                                        std::string provider_id);
// createMemoryProviderRuntimeState: one memory_beta30 namespace per scope and name; share one
// between contexts to share storage (as the seed's createTestHandleContext comment says).
class MemoryState : public HandleState {
 public:
  explicit MemoryState(const sim::Clock& clock) : clock_(clock) {}
  std::unique_ptr<HandleStorage> ns(std::optional<std::string> connection, const std::string& name,
                                    state::NamespaceOptions options) override;

 private:
  const sim::Clock& clock_;
  std::map<std::string, std::unique_ptr<state::memory_beta30::Namespace>> spaces_;
};

struct HandleOptions {
  std::string provider_id = "provider-under-test";
  HandleState* state = nullptr;  // nullptr: "no runtime state was provided"
  std::optional<std::string> connection_id;
  int64_t commit_lease_ms = kCommitLeaseMs;
  std::function<void(const Telemetry&)> on_telemetry;
};

// createHandleContext (js 313). ctx: the actor whose clock, timers and threads it uses; rng:
// randomInt and randomUUID.
class HandleContext {
 public:
  HandleContext(HandleOptions options, sim::Ctx& ctx, sim::Prng& rng);
  sim::Task<std::string> create(const HandleKind& kind, Json data);
  sim::Task<HandleRecord> read(const HandleKind& kind, std::string handle);
  sim::Task<HandleRecord> update(const HandleKind& kind, std::string handle,
                                 std::function<Json(Json)> updater);
  sim::Task<CommitOutcome> commit(const HandleKind& kind, std::string handle, Work work);
  sim::Task<void> discard(const HandleKind& kind, std::string handle);

  // Internal to the port (public for the coroutine helpers in handle.cc).
  struct Loaded;
  int64_t now_ms() const;
  const HandleOptions& options() const { return options_; }
  sim::Ctx& ctx() { return ctx_; }
  sim::Prng& rng() { return rng_; }

 private:
  HandleOptions options_;
  sim::Ctx& ctx_;
  sim::Prng& rng_;
  std::unique_ptr<HandleRuntime> runtime_;  // not the port's (the state's runtime())
};

// A kind as the SDK's defineHandleKind gives it: a draft has idle, max and result lifetimes, a
// cursor one ttl (the other fields absent, so undefined in the JavaScript).
nlohmann::ordered_json KindJs(const HandleKind& kind);
// randomUUID: a version-4 UUID from the PRNG, as the port draws it.
std::string RandomUuid(sim::Prng& rng);

// createMemoryProviderRuntimeState for the handle runtime of `version`: the port's MemoryState,
// or with the JavaScript client the SDK's own memory backend under the seed's own handle.js.
std::unique_ptr<HandleState> MemoryStateFor(const std::string& version, sim::Ctx& ctx,
                                            const state::VersionScripts& scripts);

// createTestHandleContext (js 886): the memory state (share one `state` between two contexts
// with different connections to exercise bound isolation), the connection "test-connection"
// unless given, the provider "test-provider"; the clock is the actor's.
HandleContext CreateTestHandleContext(sim::Ctx& ctx, sim::Prng& rng, MemoryState& state,
                                      std::string connection = "test-connection",
                                      std::function<void(const Telemetry&)> on_telemetry = {});

}  // namespace testbed::real::handles
