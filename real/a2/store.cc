#include "real/a2/store.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "model/json_text.h"

namespace testbed::real::a2 {

namespace {
// `Math.min(...wanted) - 1` (s003:973-974, 1162-1163): the index to read after. Math.min of no
// numbers is Infinity, and Infinity - 1 is Infinity, so a reply that names no index reads the
// frontier and then nothing (INT64_MAX stands for Infinity; read_range returns no rows past it).
int64_t AfterMinimum(const std::vector<int64_t>& wanted) {
  if (wanted.empty()) return std::numeric_limits<int64_t>::max();
  return *std::min_element(wanted.begin(), wanted.end()) - 1;
}
}  // namespace
namespace {

// A list of strings built outside the coroutines: g++ 12 rejects a braced list of strings inside
// one ("array used as initializer"; see sim::Ctx::cmd).
template <typename... Args>
std::vector<std::string> V(Args&&... args) {
  return std::vector<std::string>{std::string(std::forward<Args>(args))...};
}

A2Error Unavailable(const std::string& message) { return A2Error("STORE_UNAVAILABLE", message); }

// JSON.parse inside wrap(): a SyntaxError becomes STORE_UNAVAILABLE (ts 675-684).
Json Parse(const std::string& text) {
  Json v = model::JsonParse(text);
  if (v.is_discarded()) throw Unavailable("redis store operation failed");
  return v;
}

// json (ts 580): JSON.stringify(value) ?? 'null'.
std::string JsonText(const Json& v) { return model::JsonStringify(v); }

// json() of an object literal: its members in the order the literal writes them (Json sorts its
// keys; JSON.stringify keeps insertion order, and the script stores the text as it comes).
std::string LiteralText(std::initializer_list<std::pair<const char*, Json>> members) {
  std::string out;
  for (const auto& [name, value] : members) {
    out += out.empty() ? "{" : ",";
    model::JsonAppendString(name, out);
    out += ":" + JsonText(value);
  }
  return out.empty() ? "{}" : out + "}";
}

// A reply element as ioredis gives it: a string, a number, or null.
std::optional<std::string> Str(const sim::Reply& r) {
  switch (r.type) {
    case sim::Reply::Type::kBulk:
    case sim::Reply::Type::kStatus:
      return r.str;
    case sim::Reply::Type::kInteger:
      return std::to_string(r.integer);
    default:
      return std::nullopt;
  }
}
std::string StrOr(const sim::Reply& r, std::string fallback = "") {
  std::optional<std::string> s = Str(r);
  return s ? *s : fallback;
}

// Number(x) of a decimal string the store wrote (integers only here).
int64_t Num(const std::string& s) {
  try {
    size_t used = 0;
    const double d = std::stod(s, &used);
    if (used != s.size()) return 0;
    return static_cast<int64_t>(d);
  } catch (const std::exception&) {
    return 0;
  }
}
int64_t Num(const sim::Reply& r) {
  return r.type == sim::Reply::Type::kInteger ? r.integer : Num(StrOr(r));
}

// fieldMap (ts 541-547).
std::map<std::string, std::string> FieldMap(const sim::Reply& fields) {
  std::map<std::string, std::string> m;
  for (size_t i = 0; i + 1 < fields.elements.size(); i += 2)
    m[StrOr(fields.elements[i])] = StrOr(fields.elements[i + 1]);
  return m;
}

// entryIndex (ts 565-566).
int64_t EntryIndex(const std::string& entry_id) {
  return Num(entry_id.substr(0, entry_id.find('-')));
}

// toEvent (ts 568-578). entry: [id, [field, value, ...]].
Event ToEvent(const std::string& session_id, const sim::Reply& entry) {
  if (entry.elements.size() < 2) throw Unavailable("redis store operation failed");
  std::map<std::string, std::string> f = FieldMap(entry.elements[1]);
  Event e;
  e.id = f["id"];
  e.type = f["type"];
  e.payload = Parse(f["payload"]);
  e.index = EntryIndex(StrOr(entry.elements[0]));
  e.session_id = session_id;
  e.created_at = Num(f["created_at"]);
  return e;
}

bool IsInteger(const Json& v) {
  if (v.is_number_integer()) return true;
  if (!v.is_number_float()) return false;
  const double d = v.get<double>();
  return d == static_cast<double>(static_cast<int64_t>(d));
}

// toCause (ts 590-618).
std::optional<Cause> ToCause(const std::optional<std::string>& raw) {
  if (!raw || raw->empty()) return std::nullopt;
  const Json v = Parse(*raw);
  auto field = [&v](const char* k) { return v.is_object() && v.contains(k) ? v[k] : Json(); };
  const Json index = field("index"), attempt = field("attempt"), batch = field("batchSize");
  if (!IsInteger(index) || index.get<double>() < 1 || !IsInteger(attempt) ||
      attempt.get<double>() < 1)
    throw TypeError("stored event has an invalid cause");
  if (!batch.is_null() && (!IsInteger(batch) || batch.get<double>() < 1))
    throw TypeError("stored event has an invalid cause");
  Cause c{static_cast<int64_t>(index.get<double>()), static_cast<int64_t>(attempt.get<double>()),
          std::nullopt};
  if (!batch.is_null()) c.batch_size = static_cast<int64_t>(batch.get<double>());
  return c;
}

std::optional<std::string> Lane(const std::map<std::string, std::string>& f) {
  auto it = f.find("lane");
  if (it == f.end()) return std::nullopt;  // fields['lane']! of a missing field: undefined
  if (it->second.empty()) return std::nullopt;
  return it->second;
}

std::optional<int64_t> OptNum(const sim::Reply& r) {
  if (r.type == sim::Reply::Type::kNil) return std::nullopt;
  return Num(r);
}

// toClaimAvailableResult (ts 620-673).
ClaimResult ToClaimAvailableResult(const std::string& session_id, const sim::Reply& reply) {
  const std::vector<sim::Reply>& r = reply.elements;
  const std::string outcome = r.empty() ? "" : StrOr(r[0]);
  ClaimResult out;
  if (outcome == "claimed") {
    const int64_t count = Num(r.at(1));
    for (int64_t i = 0; i < count; ++i) {
      const size_t offset = 2 + static_cast<size_t>(i) * 10;
      const sim::Reply& entry = r.at(offset + 9);
      StoredEvent e;
      static_cast<Event&>(e) = ToEvent(session_id, entry);
      const std::map<std::string, std::string> f = FieldMap(entry.elements[1]);
      auto cause = f.find("cause");
      e.cause =
          ToCause(cause == f.end() ? std::nullopt : std::optional<std::string>(cause->second));
      e.lane = Lane(f);
      e.first_claimed_at = OptNum(r.at(offset + 3));
      e.last_claimed_at = Num(r.at(offset + 4));
      e.attempt_count = Num(r.at(offset));
      e.claim_holder = StrOr(r.at(offset + 7));
      e.claim_expires_at = Num(r.at(offset + 8));
      e.failure_count = Num(r.at(offset + 1));
      e.last_failed_at = OptNum(r.at(offset + 5));
      e.last_failed_attempt = OptNum(r.at(offset + 6));
      e.last_error = Str(r.at(offset + 2));
      out.events.push_back(std::move(e));
    }
    out.outcome = "claimed";
    return out;
  }
  if (outcome == "busy") {
    out.outcome = outcome;
    out.retry_at = Num(r.at(1));
    return out;
  }
  if (outcome == "settled") {
    out.outcome = outcome;
    return out;
  }
  throw TypeError("claim referenced a missing event in session '" + session_id + "'");
}

// decodeReturnedEventIds (store-codec.ts, not shown; see the header).
std::vector<std::string> DecodeReturnedEventIds(const std::string& raw) {
  const Json v = Parse(raw);
  std::vector<std::string> ids;
  if (v.is_object() && v.empty()) return ids;
  if (!v.is_array()) throw TypeError("stored event has invalid returned event ids");
  for (const Json& id : v) {
    if (!id.is_string()) throw TypeError("stored event has invalid returned event ids");
    ids.push_back(id.get<std::string>());
  }
  return ids;
}

// STORED_EVENT_META_SUFFIXES (ts 549-563).
const char* const kMetaSuffixes[] = {"p",  "pa", "ri",  "ch", "ce", "f", "fc",
                                     "lc", "lf", "lfa", "d",  "a",  "e"};

// The rows of a fresh append or completion (ts 980-1003, 1120-1150).
StoredEvent Fresh(std::string id, std::string type, Json payload, int64_t index,
                  const std::string& session_id, int64_t now, std::optional<Cause> cause,
                  std::optional<std::string> lane, bool settled) {
  StoredEvent e;
  e.id = std::move(id);
  e.type = std::move(type);
  e.payload = std::move(payload);
  e.index = index;
  e.session_id = session_id;
  e.created_at = now;
  e.cause = std::move(cause);
  e.lane = std::move(lane);
  if (settled) e.processed_at = now;
  return e;
}

// idempotentReplay (not shown; see the header): the stored rows, by index.
std::vector<StoredEvent> IdempotentReplay(std::vector<StoredEvent> existing) { return existing; }

}  // namespace

Store::Store(sim::Ctx& ctx, const Scripts& scripts, std::string key_prefix, IdSource ids,
             Notify notify)
    : ctx_(ctx),
      scripts_(scripts),
      prefix_(std::move(key_prefix)),
      ids_(std::move(ids)),
      notify_(std::move(notify)),
      ids_key_(prefix_ + ":ids"),
      sessions_key_(prefix_ + ":sessions") {}

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

// readFrontier (ts 710-719).
sim::Task<int64_t> Store::read_frontier(const std::string& session_id) {
  const sim::Reply r = co_await call(V("GET", count_key(session_id)));
  const std::string text = StrOr(r, "0");
  // Number(x): a non-numeric text is NaN, which fails isSafeInteger.
  bool numeric = !text.empty();
  for (char c : text) numeric = numeric && ((c >= '0' && c <= '9') || c == '-');
  const int64_t frontier = Num(text);
  if (!numeric || frontier < 0)
    throw Unavailable("redis event count for session '" + session_id + "' is invalid");
  co_return frontier;
}

// readRangePage (ts 721-799).
sim::Task<std::vector<StoredEvent>> Store::read_range_page(const std::string& session_id,
                                                           int64_t after_index,
                                                           int64_t through_index, int64_t limit) {
  std::vector<StoredEvent> rows;
  if (through_index <= after_index) co_return rows;
  const sim::Reply entries =
      co_await call(V("XRANGE", store_key(session_id), absl::StrCat(after_index + 1, "-0"),
                      absl::StrCat(through_index, "-0"), "COUNT", std::to_string(limit)));
  if (entries.elements.empty()) co_return rows;
  sim::Argv hmget = {"HMGET", meta_key(session_id)};
  for (const sim::Reply& entry : entries.elements) {
    const int64_t index = EntryIndex(StrOr(entry.elements.at(0)));
    for (const char* suffix : kMetaSuffixes) hmget.push_back(absl::StrCat(index, ":", suffix));
  }
  const sim::Reply values = co_await call(hmget);
  std::map<std::string, std::string> meta;
  for (size_t i = 2; i < hmget.size(); ++i) {
    const size_t at = i - 2;
    if (at < values.elements.size())
      if (std::optional<std::string> v = Str(values.elements[at])) meta[hmget[i]] = *v;
  }
  auto get = [&meta](int64_t idx, const char* suffix) -> std::optional<std::string> {
    auto it = meta.find(absl::StrCat(idx, ":", suffix));
    if (it == meta.end()) return std::nullopt;
    return it->second;
  };
  auto num = [&get](int64_t idx, const char* suffix) -> std::optional<int64_t> {
    std::optional<std::string> v = get(idx, suffix);
    if (!v) return std::nullopt;
    return Num(*v);
  };
  for (const sim::Reply& entry : entries.elements) {
    StoredEvent e;
    static_cast<Event&>(e) = ToEvent(session_id, entry);
    const int64_t idx = e.index;
    const std::map<std::string, std::string> f = FieldMap(entry.elements[1]);
    auto cause = f.find("cause");
    e.cause = ToCause(cause == f.end() ? std::nullopt : std::optional<std::string>(cause->second));
    e.lane = Lane(f);
    e.processed_at = num(idx, "p");
    e.processed_by_attempt = num(idx, "pa");
    if (std::optional<std::string> ri = get(idx, "ri"))
      e.returned_event_ids = DecodeReturnedEventIds(*ri);
    e.first_claimed_at = num(idx, "fc");
    e.last_claimed_at = num(idx, "lc");
    e.attempt_count = num(idx, "d").value_or(0);
    e.claim_holder = get(idx, "ch");
    e.claim_expires_at = num(idx, "ce");
    e.failure_count = num(idx, "a").value_or(0);
    e.last_failed_at = num(idx, "lf");
    e.last_failed_attempt = num(idx, "lfa");
    e.last_error = get(idx, "e");
    e.failed_at = num(idx, "f");
    rows.push_back(std::move(e));
  }
  co_return rows;
}

// readEventRange (ts 801-839).
sim::Task<std::vector<Event>> Store::read_event_range(const std::string& session_id,
                                                      int64_t after_index, int64_t through_index) {
  std::vector<Event> events;
  if (through_index <= after_index) co_return events;
  int64_t next_index = after_index + 1;
  while (next_index <= through_index) {
    const sim::Reply entries =
        co_await call(V("XRANGE", store_key(session_id), absl::StrCat(next_index, "-0"),
                        absl::StrCat(through_index, "-0"), "COUNT", std::to_string(kReadPageSize)));
    if (entries.elements.empty())
      throw Unavailable(absl::StrCat("redis event range for session '", session_id,
                                     "' ended before index ", through_index));
    for (size_t position = 0; position < entries.elements.size(); ++position) {
      const int64_t index = EntryIndex(StrOr(entries.elements[position].elements.at(0)));
      if (index != next_index + static_cast<int64_t>(position) || index > through_index)
        throw Unavailable("redis event range for session '" + session_id + "' is not contiguous");
    }
    for (const sim::Reply& entry : entries.elements) events.push_back(ToEvent(session_id, entry));
    next_index = events.back().index + 1;
  }
  co_return events;
}

// readRange (ts 841-887).
sim::Task<std::vector<StoredEvent>> Store::read_range(const std::string& session_id,
                                                      int64_t after_index,
                                                      std::optional<int64_t> through_index) {
  std::vector<StoredEvent> rows;
  if (through_index && *through_index <= after_index) co_return rows;
  const int64_t current_frontier = co_await read_frontier(session_id);
  const int64_t frontier = std::min(through_index.value_or(current_frontier), current_frontier);
  if (frontier <= after_index) co_return rows;
  int64_t next_index = after_index + 1;
  while (next_index <= frontier) {
    std::vector<StoredEvent> page =
        co_await read_range_page(session_id, next_index - 1, frontier, kReadPageSize);
    if (page.empty())
      throw Unavailable(absl::StrCat("redis event range for session '", session_id,
                                     "' ended before index ", frontier));
    for (size_t position = 0; position < page.size(); ++position)
      if (page[position].index != next_index + static_cast<int64_t>(position))
        throw Unavailable("redis event range for session '" + session_id + "' is not contiguous");
    const int64_t last_index = page.back().index;
    if (last_index < next_index || last_index > frontier)
      throw Unavailable("redis event range for session '" + session_id + "' did not advance");
    for (StoredEvent& row : page) rows.push_back(std::move(row));
    next_index = last_index + 1;
  }
  co_return rows;
}

// append (ts 889-1005).
sim::Task<AppendResult> Store::append(std::string session_id, std::vector<NewEvent> events) {
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

// read (ts 1007-1016).
sim::Task<std::vector<StoredEvent>> Store::read(std::string session_id, int64_t after_index,
                                                std::optional<int64_t> through_index) {
  co_return co_await read_range(session_id, after_index, through_index);
}

// claimAvailable (ts 1018-1042).
sim::Task<ClaimResult> Store::claim_available(ClaimOptions o) {
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

// readState (ts 1197-1233).
sim::Task<StateRead> Store::read_state(std::string session_id, std::string reducer_name) {
  const sim::Reply reply =
      co_await eval("READ_STATE_LUA", V(snap_key(session_id, reducer_name), count_key(session_id)),
                    std::vector<std::string>());
  const std::string raw = reply.elements.empty() ? "" : StrOr(reply.elements[0]);
  std::optional<Json> parsed;
  if (!raw.empty()) parsed = Parse(raw);
  const std::string frontier_text = reply.elements.size() > 1 ? StrOr(reply.elements[1]) : "";
  const int64_t frontier = Num(frontier_text);
  bool bad = frontier_text.empty() || frontier < 0;
  int64_t snap_index = 0;
  if (parsed) {
    const Json idx = parsed->is_object() && parsed->contains("index") ? (*parsed)["index"] : Json();
    bad = bad || !IsInteger(idx) || idx.get<double>() < 0;
    if (!bad) snap_index = static_cast<int64_t>(idx.get<double>());
  }
  if (bad) throw Unavailable("redis state frontier for session '" + session_id + "' is invalid");
  StateRead out;
  out.events = co_await read_event_range(session_id, snap_index, frontier);
  if (parsed) {
    const Json state = parsed->contains("state") ? (*parsed)["state"] : Json();
    out.snapshot = Snapshot{snap_index, state};
  }
  co_return out;
}

// putSnapshot (ts 1235-1243).
sim::Task<void> Store::put_snapshot(std::string session_id, std::string reducer_name, int64_t index,
                                    Json state) {
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

// presence.read (ts 1295-1327).
sim::Task<std::vector<PresenceRow>> Store::presence_read(std::string ns) {
  const sim::Reply reply =
      co_await eval("PRESENCE_READ_LUA", V(presence_key(ns)), V(std::to_string(ctx_.now_ms())));
  std::vector<PresenceRow> rows;
  for (size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
    const Json key = Parse(StrOr(reply.elements[i]));
    const Json entry = Parse(StrOr(reply.elements[i + 1]));
    PresenceRow row;
    // The script wrote both: a [participant, field] array and a {v, s, a, e} object. Anything
    // else (undefined fields in JavaScript) reads as empty here.
    auto text = [&key](size_t k) {
      return key.is_array() && key.size() > k && key[k].is_string() ? key[k].get<std::string>()
                                                                    : std::string();
    };
    auto num = [&entry](const char* k) {
      return entry.is_object() && entry.contains(k) && entry[k].is_number()
                 ? entry[k].get<int64_t>()
                 : int64_t{0};
    };
    row.participant = text(0);
    row.field = text(1);
    row.value = entry.is_object() && entry.contains("v") ? entry["v"] : Json();
    row.seen = num("s");
    row.at = num("a");
    row.expires_at = num("e");
    rows.push_back(std::move(row));
  }
  co_return rows;
}

// inspect.listSessions (ts 1329-1399). Promise.all of the per-session reads runs them one
// after another here (the order of their Redis calls is then fixed; each is a read).
// Promise.all (ts 1348, 1452): each branch on a thread of the actor's own, through a Store on
// that thread, so the scheduler interleaves the branches' calls as Node's event loop can (all
// the GETs, then the XRANGEs, ..., where the branches are alike: one connection, in the order
// sent). The call fails with the first branch to fail in time, as Promise.all rejects.
sim::Task<void> Store::all(size_t n, std::function<sim::Task<void>(Store&, size_t)> branch) {
  std::vector<std::exception_ptr> errors(n);
  std::vector<int64_t> failed_at(n, 0);
  int64_t failures = 0;
  std::vector<sim::ThreadId> threads;
  for (size_t i = 0; i < n; ++i)
    threads.push_back(ctx_.spawn(
        absl::StrCat("all#", i), [this, &branch, &errors, &failed_at, &failures, i](sim::Ctx& c) {
          return run_branch(c, branch, i, &errors[i], &failed_at[i], &failures);
        }));
  for (const sim::ThreadId t : threads) co_await ctx_.join(t);
  std::optional<size_t> first;
  for (size_t i = 0; i < n; ++i)
    if (errors[i] && (!first || failed_at[i] < failed_at[*first])) first = i;
  if (first) std::rethrow_exception(errors[*first]);
}

sim::Task<void> Store::run_branch(sim::Ctx& ctx,
                                  const std::function<sim::Task<void>(Store&, size_t)>& branch,
                                  size_t i, std::exception_ptr* error, int64_t* failed_at,
                                  int64_t* failures) {
  Store store(ctx, scripts_, prefix_, ids_, notify_);
  try {
    co_await branch(store, i);
  } catch (...) {
    *error = std::current_exception();
    *failed_at = (*failures)++;
  }
}

// One session of listSessions (ts 1349-1351): its readRange, and `rows[0]!.createdAt` of an
// empty one, which throws inside the branch.
sim::Task<void> Store::read_session(std::string session_id, std::vector<StoredEvent>* rows) {
  *rows = co_await read_range(session_id, 0, std::nullopt);
  if (rows->empty()) throw TypeError("Cannot read properties of undefined (reading 'createdAt')");
}

// One key of listSnapshots (ts 1453-1465).
sim::Task<void> Store::read_snapshot(std::string key, std::string start,
                                     std::optional<SnapshotInfo>* out) {
  const sim::Reply raw = co_await call(V("GET", key));
  if (raw.type == sim::Reply::Type::kNil) co_return;
  const Json parsed = Parse(raw.str);
  // parsed.index of JSON null throws (a TypeError); of a number, string or array it is
  // undefined, as are its fields.
  if (parsed.is_null()) throw TypeError("Cannot read properties of null (reading 'index')");
  SnapshotInfo s;
  s.reducer_name = key.substr(start.size());
  if (parsed.is_object() && parsed.contains("index") && parsed["index"].is_number())
    s.index = parsed["index"].get<int64_t>();
  if (parsed.is_object() && parsed.contains("updatedAt") && parsed["updatedAt"].is_number())
    s.updated_at = parsed["updatedAt"].get<int64_t>();
  *out = std::move(s);
}

sim::Task<SessionPage> Store::list_sessions(std::string prefix, int64_t limit,
                                            std::optional<std::string> cursor) {
  const std::string minimum = cursor ? "(" + *cursor : "[" + prefix;
  const sim::Reply candidates = co_await call(
      V("ZRANGEBYLEX", sessions_key_, minimum, "+", "LIMIT", "0", std::to_string(limit + 1)));
  std::vector<std::string> session_ids;
  for (const sim::Reply& c : candidates.elements) {
    const std::string id = StrOr(c);
    if (id.rfind(prefix, 0) == 0 && static_cast<int64_t>(session_ids.size()) < limit)
      session_ids.push_back(id);
  }
  std::vector<std::vector<StoredEvent>> branches(session_ids.size());
  co_await all(session_ids.size(), [&session_ids, &branches](Store& store, size_t i) {
    return store.read_session(session_ids[i], &branches[i]);
  });
  SessionPage page;
  for (size_t i = 0; i < session_ids.size(); ++i) {
    const std::vector<StoredEvent>& rows = branches[i];
    SessionSummary s;
    s.session_id = session_ids[i];
    s.event_count = static_cast<int64_t>(rows.size());
    s.first_event_at = rows[0].created_at;
    s.updated_at = rows[0].created_at;
    for (const StoredEvent& row : rows) {
      s.attempt_count += row.attempt_count;
      s.failure_count += row.failure_count;
      if (!row.processed_at && !row.failed_at) ++s.pending_count;
      if (row.failed_at) ++s.failed_count;
      const std::optional<int64_t> stamps[] = {row.created_at,      row.first_claimed_at,
                                               row.last_claimed_at, row.last_failed_at,
                                               row.processed_at,    row.failed_at};
      for (const std::optional<int64_t>& t : stamps)
        if (t && *t > s.updated_at) s.updated_at = *t;
    }
    page.sessions.push_back(std::move(s));
  }
  // localeCompare: by code units here (the names the workloads use are ASCII).
  std::sort(
      page.sessions.begin(), page.sessions.end(),
      [](const SessionSummary& a, const SessionSummary& b) { return a.session_id < b.session_id; });
  if (static_cast<int64_t>(candidates.elements.size()) > limit &&
      StrOr(candidates.elements[static_cast<size_t>(limit)]).rfind(prefix, 0) == 0 &&
      !session_ids.empty())
    page.cursor = session_ids.back();
  co_return page;
}

namespace {
// escapeGlob (ts 582-588).
std::string EscapeGlob(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '*' || c == '?' || c == '[' || c == ']') out += '\\';
    out += c;
  }
  return out;
}
}  // namespace

// inspect.listSnapshots (ts 1434-1472).
sim::Task<std::vector<SnapshotInfo>> Store::list_snapshots(std::string session_id) {
  const std::string start = prefix_ + ":" + session_id + ":snap:";
  std::string cursor = "0";
  std::vector<std::string> keys;
  do {
    const sim::Reply reply =
        co_await call(V("SCAN", cursor, "MATCH", EscapeGlob(start) + "*", "COUNT", "100"));
    cursor = StrOr(reply.elements.at(0));
    for (const sim::Reply& k : reply.elements.at(1).elements) {
      const std::string key = StrOr(k);
      if (key.rfind(start, 0) == 0) keys.push_back(key);
    }
  } while (cursor != "0");
  std::vector<std::optional<SnapshotInfo>> found(keys.size());
  co_await all(keys.size(), [&keys, &start, &found](Store& store, size_t i) {
    return store.read_snapshot(keys[i], start, &found[i]);
  });
  std::vector<SnapshotInfo> snapshots;
  for (std::optional<SnapshotInfo>& s : found)
    if (s) snapshots.push_back(std::move(*s));
  std::sort(snapshots.begin(), snapshots.end(), [](const SnapshotInfo& a, const SnapshotInfo& b) {
    return a.reducer_name < b.reducer_name;
  });
  co_return snapshots;
}

// readEvents (ts 1478-1488).
sim::Task<std::vector<Event>> Store::read_events(std::string session_id, int64_t after_index) {
  const sim::Reply entries =
      co_await call(V("XRANGE", store_key(session_id), absl::StrCat(after_index + 1, "-0"), "+"));
  std::vector<Event> events;
  for (const sim::Reply& entry : entries.elements) events.push_back(ToEvent(session_id, entry));
  co_return events;
}

// markWatched (ts 1490-1492).
sim::Task<void> Store::mark_watched(std::string session_id, int64_t ttl_ms) {
  co_await call(V("SET", watched_key(session_id), "1", "PX", std::to_string(ttl_ms)));
}

}  // namespace testbed::real::a2
