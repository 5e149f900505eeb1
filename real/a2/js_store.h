// The seed's own a2 store core (store-redis-core.ts, seed 003 verbatim, types stripped, with the
// stand-ins tests/js/a2/ gives for the files it imports but does not show) behind the port's
// calls, so that a property drives it as it drives the port (--client js): each Store call runs
// as one operation of the JavaScript (real/js_host.h) when its catalog says so. Its Redis calls
// are calls of the actor's threads, each branch of a Promise.all a thread "all#k" as the
// port's, clock.now() the actor's clock, ids() the caller's id source (asked), notify() the
// caller's.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "real/a2/store.h"
#include "real/client_code.h"
#include "real/js_host.h"

namespace testbed::real::a2 {

class JsStore {
 public:
  // version: whose changed scripts run (ClientCode::scripts).
  JsStore(sim::Ctx& ctx, const ClientCode& code, const std::string& version,
          const std::string& prefix, Store::IdSource ids, Store::Notify notify);
  ~JsStore();
  JsStore(const JsStore&) = delete;
  JsStore& operator=(const JsStore&) = delete;

  // Runs `method` of the store core (real/js/driver.mjs names them) with `args`: its answer in
  // model/a2.h's shapes, or what it threw (an A2Error or TypeError as the port's).
  sim::Task<nlohmann::json> Run(std::string method, nlohmann::json args);

 private:
  sim::Ctx& ctx_;
  js::Host& host_;
  int64_t id_;
  std::shared_ptr<const ScriptSwap> scripts_;  // the catalog's changed scripts
  Store::IdSource ids_;
  Store::Notify notify_;
};

// A call's arguments as the driver reads them.
nlohmann::json ToJs(const std::string& s);
nlohmann::json ToJs(int64_t n);
nlohmann::json ToJs(const std::optional<int64_t>& n);
nlohmann::json ToJs(const std::optional<std::string>& s);
nlohmann::json ToJs(const Json& v);
nlohmann::json ToJs(const std::vector<NewEvent>& events);
nlohmann::json ToJs(const std::vector<ChildEvent>& events);
nlohmann::json ToJs(const std::vector<ClaimRef>& refs);
nlohmann::json ToJs(const ClaimOptions& o);
nlohmann::json ToJs(const PresenceMeta& m);
nlohmann::json ToJs(const std::vector<std::pair<std::string, Json>>& values);
template <typename... A>
nlohmann::json JsArgs(const A&... args) {
  nlohmann::json list = nlohmann::json::array();
  (list.push_back(ToJs(args)), ...);
  return list;
}

// An answer as the port's type (T: AppendResult, std::vector<StoredEvent>, ClaimResult, ...).
template <typename T>
T FromJs(const nlohmann::json& answer);
// Each is specialized in js_store.cc; declared here, before any use, as the language asks.
template <>
AppendResult FromJs(const nlohmann::json& answer);
template <>
std::vector<StoredEvent> FromJs(const nlohmann::json& answer);
template <>
ClaimResult FromJs(const nlohmann::json& answer);
template <>
RenewResult FromJs(const nlohmann::json& answer);
template <>
CompleteResult FromJs(const nlohmann::json& answer);
template <>
FailResult FromJs(const nlohmann::json& answer);
template <>
StateRead FromJs(const nlohmann::json& answer);
template <>
std::optional<PresencePatch> FromJs(const nlohmann::json& answer);
template <>
std::vector<PresenceRow> FromJs(const nlohmann::json& answer);
template <>
SessionPage FromJs(const nlohmann::json& answer);
template <>
std::vector<SnapshotInfo> FromJs(const nlohmann::json& answer);
template <>
std::vector<Event> FromJs(const nlohmann::json& answer);

}  // namespace testbed::real::a2
