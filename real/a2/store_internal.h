// Internal to real/a2/: the store core's decoding of replies and building of rows (store.cc's
// helpers, defined in store_decode.cc), shared by the store's writes (store.cc) and its reads
// and listings (store_reads.cc). Each cites the seed lines it ports.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "real/a2/store.h"

namespace testbed::real::a2::internal {

// A list of strings built outside the coroutines: g++ 12 rejects a braced list of strings inside
// one ("array used as initializer"; see sim::Ctx::cmd).
template <typename... Args>
std::vector<std::string> V(Args&&... args) {
  return std::vector<std::string>{std::string(std::forward<Args>(args))...};
}

// STORED_EVENT_META_SUFFIXES (ts 549-563).
extern const char* const kMetaSuffixes[13];

// `Math.min(...wanted) - 1` (s003:973-974, 1162-1163): the index to read after. Math.min of no
// numbers is Infinity, and Infinity - 1 is Infinity, so a reply that names no index reads the
// frontier and then nothing (INT64_MAX stands for Infinity; read_range returns no rows past it).
int64_t AfterMinimum(const std::vector<int64_t>& wanted);

A2Error Unavailable(const std::string& message);

// JSON.parse inside wrap(): a SyntaxError becomes STORE_UNAVAILABLE (ts 675-684).
Json Parse(const std::string& text);

// json (ts 580): JSON.stringify(value) ?? 'null'.
std::string JsonText(const Json& v);

// json() of an object literal: its members in the order the literal writes them (Json sorts its
// keys; JSON.stringify keeps insertion order, and the script stores the text as it comes).
std::string LiteralText(std::initializer_list<std::pair<const char*, Json>> members);

// A reply element as ioredis gives it: a string, a number, or null.
std::optional<std::string> Str(const sim::Reply& r);

std::string StrOr(const sim::Reply& r, std::string fallback = "");

// Number(x) of a decimal string the store wrote (integers only here).
int64_t Num(const std::string& s);

int64_t Num(const sim::Reply& r);

// fieldMap (ts 541-547).
std::map<std::string, std::string> FieldMap(const sim::Reply& fields);

// entryIndex (ts 565-566).
int64_t EntryIndex(const std::string& entry_id);

// toEvent (ts 568-578). entry: [id, [field, value, ...]].
Event ToEvent(const std::string& session_id, const sim::Reply& entry);

bool IsInteger(const Json& v);

// toCause (ts 590-618).
std::optional<Cause> ToCause(const std::optional<std::string>& raw);

std::optional<std::string> Lane(const std::map<std::string, std::string>& f);

std::optional<int64_t> OptNum(const sim::Reply& r);

// toClaimAvailableResult (ts 620-673).
ClaimResult ToClaimAvailableResult(const std::string& session_id, const sim::Reply& reply);

// decodeReturnedEventIds (store-codec.ts, not shown; see the header).
std::vector<std::string> DecodeReturnedEventIds(const std::string& raw);

// The rows of a fresh append or completion (ts 980-1003, 1120-1150).
StoredEvent Fresh(std::string id, std::string type, Json payload, int64_t index,
                  const std::string& session_id, int64_t now, std::optional<Cause> cause,
                  std::optional<std::string> lane, bool settled);

// idempotentReplay (not shown; see the header): the stored rows, by index.
std::vector<StoredEvent> IdempotentReplay(std::vector<StoredEvent> existing);

}  // namespace testbed::real::a2::internal
