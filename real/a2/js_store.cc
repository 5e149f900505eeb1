#include "real/a2/js_store.h"

#include <filesystem>
#include <stdexcept>

#include "model/json_text.h"

namespace testbed::real::a2 {

namespace {

using J = nlohmann::json;

std::optional<int64_t> OptInt(const J& o, const char* k) {
  if (!o.contains(k) || !o[k].is_number()) return std::nullopt;
  return o[k].get<int64_t>();
}
std::optional<std::string> OptStr(const J& o, const char* k) {
  if (!o.contains(k) || !o[k].is_string()) return std::nullopt;
  return o[k].get<std::string>();
}
int64_t Int(const J& o, const char* k) { return OptInt(o, k).value_or(0); }
// A JSON value of the answer (payloads, states, presence values) as the port holds it.
Json Value(const J& o, const char* k) { return o.contains(k) ? Json(o[k]) : Json(); }

Event EventOf(const J& o) {
  Event e;
  e.id = o.value("id", "");
  e.type = o.value("type", "");
  e.payload = Value(o, "payload");
  e.index = Int(o, "index");
  e.session_id = o.value("sessionId", "");
  e.created_at = Int(o, "createdAt");
  return e;
}

StoredEvent StoredOf(const J& o) {
  StoredEvent e;
  if (!o.is_object()) return e;  // a row the JavaScript left undefined: the port's empty row
  static_cast<Event&>(e) = EventOf(o);
  if (o.contains("cause") && o["cause"].is_object()) {
    const J& c = o["cause"];
    e.cause = Cause{Int(c, "index"), Int(c, "attempt"), OptInt(c, "batchSize")};
  }
  e.lane = OptStr(o, "lane");
  e.processed_at = OptInt(o, "processedAt");
  e.processed_by_attempt = OptInt(o, "processedByAttempt");
  if (o.contains("returnedEventIds") && o["returnedEventIds"].is_array())
    e.returned_event_ids = o["returnedEventIds"].get<std::vector<std::string>>();
  e.first_claimed_at = OptInt(o, "firstClaimedAt");
  e.last_claimed_at = OptInt(o, "lastClaimedAt");
  e.attempt_count = Int(o, "attemptCount");
  e.claim_holder = OptStr(o, "claimHolder");
  e.claim_expires_at = OptInt(o, "claimExpiresAt");
  e.failure_count = Int(o, "failureCount");
  e.last_failed_at = OptInt(o, "lastFailedAt");
  e.last_failed_attempt = OptInt(o, "lastFailedAttempt");
  e.last_error = OptStr(o, "lastError");
  e.failed_at = OptInt(o, "failedAt");
  return e;
}

std::vector<StoredEvent> Rows(const J& list) {
  std::vector<StoredEvent> out;
  for (const J& r : list) out.push_back(StoredOf(r));
  return out;
}

J EventIn(const std::optional<std::string>& id, const std::string& type, const Json& payload,
          const std::optional<Cause>& cause, const std::optional<std::string>& lane, bool settled) {
  J x = J::object();
  if (id) x["id"] = *id;
  x["type"] = type;
  x["payload"] = payload;
  if (cause) {
    x["cause"] = J{{"index", cause->index}, {"attempt", cause->attempt}};
    if (cause->batch_size) x["cause"]["batchSize"] = *cause->batch_size;
  }
  if (lane) x["lane"] = *lane;
  x["settled"] = settled;
  return x;
}

J Opt(const std::optional<int64_t>& v) { return v ? J(*v) : J(nullptr); }

}  // namespace

JsStore::JsStore(sim::Ctx& ctx, const ClientCode& code, const std::string& version,
                 const std::string& prefix, Store::IdSource ids, Store::Notify notify)
    : ctx_(ctx),
      host_(js::Host::ForThisThread()),
      id_(host_.NewId()),
      scripts_(code.SwapFor(version)),
      ids_(std::move(ids)),
      notify_(std::move(notify)) {
  host_.Exchange(
      J{{"k", "a2"},
        {"id", id_},
        {"dir", code.dir.empty() ? J(nullptr) : J(std::filesystem::absolute(code.dir).string())},
        {"prefix", prefix}});
}

JsStore::~JsStore() {
  try {
    host_.Close(id_);
  } catch (const std::exception&) {
    // The driver stopped: the next operation says so.
  }
}

sim::Task<J> JsStore::Run(std::string method, J args) {
  js::OpHooks hooks;
  hooks.scripts = scripts_;
  hooks.ask = [this](const J& q) -> J {
    if (q.value("k", "") != "id" || !ids_)
      throw std::runtime_error("the a2 store asked " + q.value("k", "") + ", unanswered here");
    return ids_();
  };
  hooks.event = [this](const J& e) {
    if (e.value("k", "") == "notify" && notify_)
      notify_(e.value("s", ""), e.value("n", int64_t{0}));
  };
  js::OpResult r = co_await js::RunOp(ctx_, host_, id_, method, std::move(args), hooks);
  if (!r.failed) co_return std::move(r.value);
  const std::string name = r.error.value("name", ""), message = r.error.value("message", "");
  if (name == "A2Error") {
    // A cause that is not an error reply failed in transport (ioredis's timeout or closed
    // connection): the outcome is unknown.
    const bool transport =
        r.error.contains("cause") && r.error.value("causeName", "") != "ReplyError";
    throw A2Error(r.error.value("code", ""), message, transport);
  }
  if (name == "TypeError") throw TypeError(message);
  throw std::runtime_error("the JavaScript a2 store's " + method + " threw " + name + ": " +
                           message);
}

Json ToJs(const std::string& s) { return s; }
Json ToJs(int64_t n) { return n; }
Json ToJs(const std::optional<int64_t>& n) { return Opt(n); }
Json ToJs(const std::optional<std::string>& s) { return s ? J(*s) : J(nullptr); }
Json ToJs(const Json& v) { return v; }
Json ToJs(const std::vector<NewEvent>& events) {
  J list = J::array();
  for (const NewEvent& e : events)
    list.push_back(EventIn(e.id, e.type, e.payload, e.cause, e.lane, e.settled));
  return list;
}
Json ToJs(const std::vector<ChildEvent>& events) {
  J list = J::array();
  for (const ChildEvent& e : events)
    list.push_back(EventIn(e.id, e.type, e.payload, std::nullopt, e.lane, e.settled));
  return list;
}
Json ToJs(const std::vector<ClaimRef>& refs) {
  J list = J::array();
  for (const ClaimRef& c : refs) list.push_back({{"index", c.index}, {"attempt", c.attempt}});
  return list;
}
Json ToJs(const ClaimOptions& o) {
  return {{"sessionId", o.session_id},
          {"holder", o.holder},
          {"ttlMs", o.ttl_ms},
          {"expiresAtMs", Opt(o.expires_at_ms)},
          {"excludeIndexes", o.exclude_indexes}};
}
Json ToJs(const PresenceMeta& m) { return {{"seen", m.seen}, {"at", m.at}, {"ttlMs", m.ttl_ms}}; }
Json ToJs(const std::vector<std::pair<std::string, Json>>& values) {
  J pairs = J::array();
  for (const auto& [field, value] : values) pairs.push_back(J::array({field, J(value)}));
  return pairs;
}

template <>
AppendResult FromJs(const J& v) {
  return AppendResult{Rows(v["events"]), v.value("hasPending", false)};
}
template <>
std::vector<StoredEvent> FromJs(const J& v) {
  return Rows(v);
}
template <>
ClaimResult FromJs(const J& v) {
  ClaimResult r;
  r.outcome = v.value("outcome", "");
  r.events = Rows(v["events"]);
  r.retry_at = Int(v, "retryAt");
  return r;
}
template <>
RenewResult FromJs(const J& v) {
  return RenewResult{v["renewed"].get<std::vector<int64_t>>(),
                     v["superseded"].get<std::vector<int64_t>>()};
}
template <>
CompleteResult FromJs(const J& v) {
  return CompleteResult{v.value("outcome", ""), Rows(v["events"])};
}
template <>
FailResult FromJs(const J& v) {
  return FailResult{v.value("outcome", ""), Int(v, "failureCount")};
}
template <>
StateRead FromJs(const J& v) {
  StateRead r;
  if (v["snapshot"].is_object())
    r.snapshot = Snapshot{Int(v["snapshot"], "index"), Value(v["snapshot"], "state")};
  for (const J& e : v["events"]) r.events.push_back(EventOf(e));
  return r;
}
template <>
std::optional<PresencePatch> FromJs(const J& v) {
  if (v.is_null()) return std::nullopt;
  return PresencePatch{v.value("participant", ""), Value(v, "values"), Int(v, "seen"),
                       Int(v, "at")};
}
template <>
std::vector<PresenceRow> FromJs(const J& v) {
  std::vector<PresenceRow> out;
  for (const J& r : v)
    out.push_back({r.value("participant", ""), r.value("field", ""), Value(r, "value"),
                   Int(r, "seen"), Int(r, "at"), Int(r, "expiresAt")});
  return out;
}
template <>
SessionPage FromJs(const J& v) {
  SessionPage page;
  for (const J& s : v["sessions"])
    page.sessions.push_back({s.value("sessionId", ""), Int(s, "eventCount"), Int(s, "pendingCount"),
                             Int(s, "failedCount"), Int(s, "attemptCount"), Int(s, "failureCount"),
                             Int(s, "firstEventAt"), Int(s, "updatedAt")});
  page.cursor = OptStr(v, "cursor");
  return page;
}
template <>
std::vector<SnapshotInfo> FromJs(const J& v) {
  std::vector<SnapshotInfo> out;
  for (const J& s : v) {
    SnapshotInfo i;
    i.reducer_name = s.value("reducerName", "");
    i.index = OptInt(s, "index");
    i.updated_at = Int(s, "updatedAt");
    out.push_back(std::move(i));
  }
  return out;
}
template <>
std::vector<Event> FromJs(const J& v) {
  std::vector<Event> out;
  for (const J& e : v) out.push_back(EventOf(e));
  return out;
}

}  // namespace testbed::real::a2
