// The seed's own a2 store core (store-redis-core.ts, seed 003 verbatim, types stripped, with the
// stand-ins tests/js/a2/ gives for the files it imports but does not show) behind the port's
// calls, so that a property drives it as it drives the port (--client js). Each call is one
// operation of the JavaScript (real/js_host.h): its Redis calls are calls of the actor's
// threads, each branch of a Promise.all a thread "all#k" as the port's, clock.now() the actor's
// clock, ids() the caller's id source (asked), notify() the caller's.
#pragma once

#include <memory>
#include <string>

#include "real/a2/store.h"
#include "real/client_code.h"
#include "real/js_host.h"

namespace testbed::real::a2 {

class JsStore {
 public:
  JsStore(sim::Ctx& ctx, const ClientCode& code, const std::string& prefix, Store::IdSource ids,
          Store::Notify notify);
  ~JsStore();
  JsStore(const JsStore&) = delete;
  JsStore& operator=(const JsStore&) = delete;

  sim::Task<AppendResult> append(std::string session_id, std::vector<NewEvent> events);
  sim::Task<std::vector<StoredEvent>> read(std::string session_id, int64_t after_index,
                                           std::optional<int64_t> through_index);
  sim::Task<ClaimResult> claim_available(ClaimOptions options);
  sim::Task<RenewResult> renew_claims(std::string session_id, std::string holder,
                                      std::vector<ClaimRef> claims, int64_t ttl_ms,
                                      std::optional<int64_t> expires_at_ms);
  sim::Task<CompleteResult> complete_attempt(std::string session_id, int64_t index, int64_t attempt,
                                             std::vector<ChildEvent> events);
  sim::Task<FailResult> fail_attempt(std::string session_id, int64_t index, int64_t attempt,
                                     std::string error, int64_t max_failures);
  sim::Task<StateRead> read_state(std::string session_id, std::string reducer_name);
  sim::Task<void> put_snapshot(std::string session_id, std::string reducer_name, int64_t index,
                               Json state);
  sim::Task<std::optional<PresencePatch>> presence_set(
      std::string ns, std::string participant, std::vector<std::pair<std::string, Json>> values,
      PresenceMeta meta);
  sim::Task<std::vector<PresenceRow>> presence_read(std::string ns);
  sim::Task<SessionPage> list_sessions(std::string prefix, int64_t limit,
                                       std::optional<std::string> cursor);
  sim::Task<std::vector<SnapshotInfo>> list_snapshots(std::string session_id);
  sim::Task<std::vector<Event>> read_events(std::string session_id, int64_t after_index);
  sim::Task<void> mark_watched(std::string session_id, int64_t ttl_ms);

 private:
  // Runs `method`: its answer, or what it threw (an A2Error or TypeError as the port's).
  sim::Task<nlohmann::json> Run(std::string method, nlohmann::json args);
  // Runs `method` and converts its answer with `as`.
  template <typename T, typename As>
  sim::Task<T> Then(std::string method, nlohmann::json args, As as) {
    nlohmann::json v = co_await Run(std::move(method), std::move(args));
    co_return as(v);
  }
  template <typename T>
  sim::Task<void> Then(std::string method, nlohmann::json args) {
    co_await Run(std::move(method), std::move(args));
  }
  sim::Ctx& ctx_;
  js::Host& host_;
  int64_t id_;
  Store::IdSource ids_;
  Store::Notify notify_;
};

}  // namespace testbed::real::a2
