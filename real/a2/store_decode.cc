// The a2 store core of seed 003: decoding Redis's replies into events, causes, claims and rows,
// and building fresh rows (store_internal.h).
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "model/json_text.h"
#include "real/a2/store_internal.h"

namespace testbed::real::a2 {

namespace internal {
// `Math.min(...wanted) - 1` (s003:973-974, 1162-1163): the index to read after. Math.min of no
// numbers is Infinity, and Infinity - 1 is Infinity, so a reply that names no index reads the
// frontier and then nothing (INT64_MAX stands for Infinity; read_range returns no rows past it).
int64_t AfterMinimum(const std::vector<int64_t>& wanted) {
  if (wanted.empty()) return std::numeric_limits<int64_t>::max();
  return *std::min_element(wanted.begin(), wanted.end()) - 1;
}
}  // namespace internal
namespace internal {

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
std::string StrOr(const sim::Reply& r, std::string fallback) {
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
const char* const kMetaSuffixes[13] = {"p",  "pa", "ri",  "ch", "ce", "f", "fc",
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

}  // namespace internal

}  // namespace testbed::real::a2
