// The a2 store core of seed 003 (store-redis-core.ts), its writes: append, claims and their
// renewal, completion and failure, snapshots, presence; the reads are store_reads.cc, the
// decoding of replies store_decode.cc.
#include "real/a2/store.h"

#include "real/a2/js_store.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "model/json_text.h"
#include "real/a2/store_internal.h"

namespace testbed::real::a2 {

using namespace internal;

Store::Store(sim::Ctx& ctx, const Scripts& scripts, std::string key_prefix, IdSource ids,
             Notify notify)
    : ctx_(ctx),
      scripts_(scripts),
      prefix_(std::move(key_prefix)),
      ids_(std::move(ids)),
      notify_(std::move(notify)),
      ids_key_(prefix_ + ":ids"),
      sessions_key_(prefix_ + ":sessions") {
  if (scripts.client().js)
    js_ =
        std::make_shared<JsStore>(ctx, scripts.client(), scripts.version(), prefix_, ids_, notify_);
}

Store::~Store() = default;

// The RedisCall seam inside wrap() (ts 675-684): ioredis rejects on an error reply, and a
// transport failure rejects too; both become STORE_UNAVAILABLE.
sim::Task<sim::Reply> Store::call(sim::Argv argv) {
  sim::CallResult r = co_await ctx_.call(std::move(argv));
  if (std::get_if<sim::TransportError>(&r))
    throw A2Error("STORE_UNAVAILABLE", "redis store operation failed", true);
  sim::Reply reply = std::move(std::get<sim::Reply>(r));
  if (reply.is_error()) throw Unavailable("redis store operation failed");
  co_return reply;
}

// evalScript (ts 704-708).
sim::Task<sim::Reply> Store::eval(const std::string& constant, std::vector<std::string> keys,
                                  std::vector<std::string> args) {
  sim::Argv argv;
  argv.reserve(3 + keys.size() + args.size());
  argv.push_back("EVAL");
  argv.push_back(scripts_.body(constant));
  argv.push_back(std::to_string(keys.size()));
  for (std::string& k : keys) argv.push_back(std::move(k));
  for (std::string& a : args) argv.push_back(std::move(a));
  co_return co_await call(std::move(argv));
}

// The KEYS of APPEND_LUA and COMPLETE_ATTEMPT_LUA (ts 936-945, 1088-1097).
std::vector<std::string> Store::write_keys(const std::string& s) const {
  return V(store_key(s), count_key(s), ids_key_, sessions_key_, meta_key(s), pending_key(s),
           ready_key(s), watched_key(s));
}

// append (ts 889-1005).
sim::Task<AppendResult> Store::append(std::string session_id, std::vector<NewEvent> events) {
  if (js_) co_return FromJs<AppendResult>(co_await js_->Run("append", JsArgs(session_id, events)));
  std::set<std::string> supplied;
  size_t supplied_count = 0;
  for (const NewEvent& e : events)
    if (e.id) {
      supplied.insert(*e.id);
      ++supplied_count;
    }
  if (supplied.size() != supplied_count)
    throw A2Error("PARTIAL_DUPLICATE_BATCH", "batch contains the same event id more than once");
  const int64_t now = ctx_.now_ms();
  struct WithId {
    std::string id, type;
    const Json* payload;
    std::optional<Cause> cause;
    std::optional<std::string> lane;
    bool settled;
  };
  std::vector<WithId> with_ids;
  for (const NewEvent& e : events)
    with_ids.push_back({e.id ? *e.id : ids_(), e.type, &e.payload, e.cause, e.lane, e.settled});
  std::vector<std::string> args =
      V(session_id, std::to_string(now), std::to_string(with_ids.size()));
  for (const WithId& e : with_ids) {
    args.push_back(e.id);
    args.push_back(e.type);
    args.push_back(JsonText(*e.payload));
    std::string cause;
    // json({ ...e.cause }) (ts 904, 916): the caller's object, in its order. A caller's
    // literal is not knowable here; the order is store.ts's EventCause, as the seed itself
    // writes a cause ({ index, attempt }, ts 1119).
    if (e.cause && e.cause->batch_size)
      cause = LiteralText({{"index", e.cause->index},
                           {"attempt", e.cause->attempt},
                           {"batchSize", *e.cause->batch_size}});
    else if (e.cause)
      cause = LiteralText({{"index", e.cause->index}, {"attempt", e.cause->attempt}});
    args.push_back(cause);
    args.push_back(e.lane.value_or(""));
    args.push_back(e.settled ? "1" : "0");
  }
  const sim::Reply reply = co_await eval("APPEND_LUA", write_keys(session_id), std::move(args));
  const std::vector<sim::Reply>& r = reply.elements;
  const std::string verdict = r.empty() ? "" : StrOr(r[0]);
  AppendResult out;
  if (verdict == "empty") {
    out.has_pending = StrOr(r.at(1)) == "1";
    co_return out;
  }
  if (verdict == "foreign")
    throw A2Error("PARTIAL_DUPLICATE_BATCH",
                  "event id '" + StrOr(r.at(1)) + "' already exists in another session");
  if (verdict == "no_parent")
    throw TypeError("no event at index " + StrOr(r.at(1)) + " in session '" + session_id + "'");
  if (verdict == "superseded")
    throw A2Error("SUPERSEDED_ATTEMPT", "a newer attempt owns event " + StrOr(r.at(1)) +
                                            " in session '" + session_id + "'");
  if (verdict == "partial")
    throw A2Error(
        "PARTIAL_DUPLICATE_BATCH",
        absl::StrCat("batch mixes ", StrOr(r.at(1)), " already-appended and ",
                     static_cast<int64_t>(events.size()) - Num(r.at(1)), " fresh events"));
  if (verdict == "dup") {
    // A retry of a committed batch whose ack was lost: the original rows, by index (ts 962).
    out.has_pending = StrOr(r.at(1)) == "1";
    std::vector<int64_t> wanted;
    for (size_t i = 2; i < r.size(); ++i) wanted.push_back(Num(r[i]));
    std::vector<StoredEvent> rows =
        co_await read_range(session_id, AfterMinimum(wanted), std::nullopt);
    std::vector<StoredEvent> existing;
    for (StoredEvent& row : rows)
      if (std::find(wanted.begin(), wanted.end(), row.index) != wanted.end())
        existing.push_back(std::move(row));
    out.events = IdempotentReplay(std::move(existing));
    co_return out;
  }
  const int64_t base = Num(r.at(1)) - 1;
  if (r.size() > 3 && StrOr(r[3]) == "1" && notify_)
    notify_(session_id, base + static_cast<int64_t>(with_ids.size()));
  for (size_t i = 0; i < with_ids.size(); ++i)
    out.events.push_back(Fresh(with_ids[i].id, with_ids[i].type, *with_ids[i].payload,
                               base + 1 + static_cast<int64_t>(i), session_id, now,
                               with_ids[i].cause, with_ids[i].lane, with_ids[i].settled));
  out.has_pending = StrOr(r.at(2)) == "1";
  co_return out;
}

// claimAvailable (ts 1018-1042).
sim::Task<ClaimResult> Store::claim_available(ClaimOptions o) {
  if (js_) co_return FromJs<ClaimResult>(co_await js_->Run("claim", JsArgs(o)));
  const int64_t now = ctx_.now_ms();
  const int64_t expires_at = o.expires_at_ms.value_or(now + o.ttl_ms);
  std::vector<std::string> args = V(o.holder, std::to_string(now), std::to_string(expires_at),
                                    std::to_string(o.exclude_indexes.size()));
  for (int64_t i : o.exclude_indexes) args.push_back(std::to_string(i));
  const sim::Reply reply =
      co_await eval("CLAIM_AVAILABLE_LUA",
                    V(store_key(o.session_id), count_key(o.session_id), meta_key(o.session_id),
                      pending_key(o.session_id), ready_key(o.session_id)),
                    std::move(args));
  co_return ToClaimAvailableResult(o.session_id, reply);
}

// renewClaims (ts 1044-1066).
sim::Task<RenewResult> Store::renew_claims(std::string session_id, std::string holder,
                                           std::vector<ClaimRef> claims, int64_t ttl_ms,
                                           std::optional<int64_t> expires_at_ms) {
  if (js_)
    co_return FromJs<RenewResult>(
        co_await js_->Run("renew", JsArgs(session_id, holder, claims, ttl_ms, expires_at_ms)));
  const int64_t now = ctx_.now_ms();
  const int64_t expires_at = expires_at_ms.value_or(now + ttl_ms);
  std::vector<std::string> args =
      V(holder, std::to_string(now), std::to_string(expires_at), std::to_string(claims.size()));
  for (const ClaimRef& c : claims) {
    args.push_back(std::to_string(c.index));
    args.push_back(std::to_string(c.attempt));
  }
  const sim::Reply reply = co_await eval(
      "RENEW_CLAIMS_LUA", V(count_key(session_id), meta_key(session_id)), std::move(args));
  const std::vector<sim::Reply>& r = reply.elements;
  const int64_t renewed_count = r.empty() ? 0 : Num(r[0]);
  RenewResult out;
  for (size_t i = 1; i < r.size(); ++i)
    (static_cast<int64_t>(i) <= renewed_count ? out.renewed : out.superseded).push_back(Num(r[i]));
  std::sort(out.renewed.begin(), out.renewed.end());
  std::sort(out.superseded.begin(), out.superseded.end());
  co_return out;
}

// completeAttempt (ts 1068-1170).
sim::Task<CompleteResult> Store::complete_attempt(std::string session_id, int64_t index,
                                                  int64_t attempt, std::vector<ChildEvent> events) {
  if (js_)
    co_return FromJs<CompleteResult>(
        co_await js_->Run("complete", JsArgs(session_id, index, attempt, events)));
  std::set<std::string> ids;
  for (const ChildEvent& e : events) ids.insert(e.id);
  if (ids.size() != events.size())
    throw A2Error("PARTIAL_DUPLICATE_BATCH", "batch contains the same event id more than once");
  const int64_t now = ctx_.now_ms();
  std::vector<std::string> args = V(session_id, std::to_string(now), std::to_string(index),
                                    std::to_string(attempt), std::to_string(events.size()));
  for (const ChildEvent& e : events) {
    args.push_back(e.id);
    args.push_back(e.type);
    args.push_back(JsonText(e.payload));
    args.push_back(e.lane.value_or(""));
    args.push_back(e.settled ? "1" : "0");
  }
  const sim::Reply reply =
      co_await eval("COMPLETE_ATTEMPT_LUA", write_keys(session_id), std::move(args));
  const std::vector<sim::Reply>& r = reply.elements;
  const std::string outcome = r.empty() ? "" : StrOr(r[0]);
  if (outcome == "missing")
    throw TypeError(absl::StrCat("no event at index ", index, " in session '", session_id, "'"));
  if (outcome == "partial")
    throw A2Error("PARTIAL_DUPLICATE_BATCH",
                  "returned event ids do not match the completed attempt");
  CompleteResult out;
  if (outcome == "superseded") {
    out.outcome = outcome;
    co_return out;
  }
  const Cause cause{index, attempt, std::nullopt};
  if (outcome == "ok") {
    const int64_t base = Num(r.at(1)) - 1;
    if (!events.empty() && r.size() > 2 && StrOr(r[2]) == "1" && notify_)
      notify_(session_id, base + static_cast<int64_t>(events.size()));
    out.outcome = "completed";
    for (size_t i = 0; i < events.size(); ++i)
      out.events.push_back(Fresh(events[i].id, events[i].type, events[i].payload,
                                 base + 1 + static_cast<int64_t>(i), session_id, now, cause,
                                 events[i].lane, events[i].settled));
    co_return out;
  }
  if (outcome == "duplicate") {
    out.outcome = "completed";
    if (events.empty()) co_return out;
    std::vector<int64_t> wanted;
    for (size_t i = 1; i < r.size(); ++i) wanted.push_back(Num(r[i]));
    std::vector<StoredEvent> rows =
        co_await read_range(session_id, AfterMinimum(wanted), std::nullopt);
    std::map<int64_t, StoredEvent> by_index;
    for (StoredEvent& row : rows) by_index[row.index] = std::move(row);
    std::vector<StoredEvent> existing;
    for (int64_t w : wanted) existing.push_back(by_index[w]);
    out.events = IdempotentReplay(std::move(existing));
    co_return out;
  }
  throw TypeError("unexpected completion outcome '" + outcome + "'");
}

// failAttempt (ts 1172-1195).
sim::Task<FailResult> Store::fail_attempt(std::string session_id, int64_t index, int64_t attempt,
                                          std::string error, int64_t max_failures) {
  if (js_)
    co_return FromJs<FailResult>(
        co_await js_->Run("fail", JsArgs(session_id, index, attempt, error, max_failures)));
  const sim::Reply reply =
      co_await eval("FAIL_ATTEMPT_LUA",
                    V(count_key(session_id), meta_key(session_id), pending_key(session_id),
                      ready_key(session_id)),
                    V(std::to_string(index), std::to_string(attempt), std::move(error),
                      std::to_string(max_failures), std::to_string(ctx_.now_ms())));
  const std::vector<sim::Reply>& r = reply.elements;
  const std::string outcome = r.empty() ? "" : StrOr(r[0]);
  if (outcome == "missing")
    throw TypeError(absl::StrCat("no event at index ", index, " in session '", session_id, "'"));
  co_return FailResult{outcome, r.size() > 1 ? Num(r[1]) : 0};
}

// putSnapshot (ts 1235-1243).
sim::Task<void> Store::put_snapshot(std::string session_id, std::string reducer_name, int64_t index,
                                    Json state) {
  if (js_) {
    co_await js_->Run("putSnapshot", JsArgs(session_id, reducer_name, index, state));
    co_return;
  }
  Json j = Json::object();
  j["index"] = index;
  j["state"] = std::move(state);
  j["updatedAt"] = ctx_.now_ms();
  co_await eval("PUT_SNAPSHOT_LUA", V(snap_key(session_id, reducer_name)),
                V(std::to_string(index), JsonText(j)));
}

// presence.set (ts 1246-1293).
sim::Task<std::optional<PresencePatch>> Store::presence_set(
    std::string ns, std::string participant, std::vector<std::pair<std::string, Json>> values,
    PresenceMeta meta) {
  if (js_)
    co_return FromJs<std::optional<PresencePatch>>(
        co_await js_->Run("presenceSet", JsArgs(ns, participant, values, meta)));
  if (values.empty()) co_return std::nullopt;
  const int64_t at_ms = meta.at;
  // Expiry anchors on the injected storage clock (ts 1252-1255).
  const int64_t expires_at_ms = ctx_.now_ms() + meta.ttl_ms;
  std::vector<std::string> args =
      V(std::to_string(at_ms), std::to_string(meta.ttl_ms), std::to_string(values.size()));
  for (const auto& [field, value] : values) {
    args.push_back(JsonText(Json::array({participant, field})));
    if (value.is_null()) {
      args.push_back("");
    } else {
      // json({ v, s, a, e }) (ts 1266-1271), in the literal's order.
      args.push_back(
          LiteralText({{"v", value}, {"s", meta.seen}, {"a", at_ms}, {"e", expires_at_ms}}));
    }
  }
  const sim::Reply applied =
      co_await eval("PRESENCE_SET_LUA", V(presence_key(ns)), std::move(args));
  if (applied.elements.empty()) co_return std::nullopt;
  PresencePatch patch;
  patch.participant = participant;
  patch.values = Json::object();
  for (const sim::Reply& position : applied.elements) {
    const auto& [field, value] = values.at(static_cast<size_t>(Num(position) - 1));
    patch.values[field] = value;
  }
  patch.seen = meta.seen;
  patch.at = at_ms;
  co_return patch;
}

// markWatched (ts 1490-1492).
sim::Task<void> Store::mark_watched(std::string session_id, int64_t ttl_ms) {
  if (js_) {
    co_await js_->Run("markWatched", JsArgs(session_id, ttl_ms));
    co_return;
  }
  co_await call(V("SET", watched_key(session_id), "1", "PX", std::to_string(ttl_ms)));
}

}  // namespace testbed::real::a2
