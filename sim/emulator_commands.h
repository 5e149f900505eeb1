// The emulator's command table (internal to sim/): struct Commands holds one static handler per
// command, grouped as miniredis groups them, each group in its own file, cmd_<group>.cc: strings
// and generic commands, hashes, sorted sets, streams, scripting. emulator.cc holds the table
// and the dispatcher. Each handler follows the order of checks of its Redis 7.0 counterpart
// (argument parsing, then key lookup, then type check), because the order decides which error
// a malformed call gets.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/functional/function_ref.h>
#include <absl/strings/match.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/emulator.h"
#include "sim/redis_text.h"

namespace testbed::sim {

inline Reply Unsupported(const std::string& what) {
  return Reply::Error("ERR unsupported by the emulator: " + what);
}

// An option name, compared as Redis does (case-insensitively); the length first, without a strlen.
template <size_t N>
inline bool Is(const std::string& arg, const char (&upper)[N]) {
  return arg.size() == N - 1 && absl::EqualsIgnoreCase(arg, absl::string_view(upper, N - 1));
}

template <typename T>
inline T* As(Entry* e) {
  return e ? std::get_if<T>(&e->value) : nullptr;
}

inline Reply WrongType() { return Reply::Error(redis_text::kWrongType); }

// getPositiveLongFromObjectOrReply: a non-negative integer, or `msg` as the error (for what is
// not an integer too).
inline std::optional<int64_t> PositiveLong(
    const std::string& arg, Reply* error,
    const char* msg = "ERR value is out of range, must be positive") {
  const auto n = redis_text::String2ll(arg);
  if (!n || *n < 0) {
    *error = Reply::Error(msg);
    return std::nullopt;
  }
  return n;
}

struct Commands {
  using Handler = Reply (*)(Emulator&, const Argv&);
  struct Spec {
    int arity;
    bool noscript;
    Handler handler;
  };
  static const absl::flat_hash_map<std::string, Spec>& Table();
  // The spec of an upper-case command name, or nullptr: the table's names bucketed by length
  // (a few share one) and compared, without hashing the name.
  static const Spec* Find(std::string_view upper);

  // The value of type T at `key` in *out (nullptr when the key is missing and !create; a new
  // empty one when create); false when the key holds another type. HashOf, ZSetOf, ListOf and
  // SetOf name it for their types.
  template <typename T>
  static bool ValueOf(Emulator& em, const std::string& key, T** out, bool create) {
    Entry* e = em.lookup(key);
    if (e && !As<T>(e)) return false;
    if (!e && create) e = &(em.keys_[key] = Entry{T{}, -1});
    *out = e ? As<T>(e) : nullptr;
    return true;
  }

  // ---- generic / strings (cmd_strings.cc) ----
  struct StringOptions {
    bool nx = false, xx = false, get = false, keep_ttl = false, persist = false;
    const std::string* expire = nullptr;  // the expiry's argument, if one was given
    bool seconds = false;                 // EX, EXAT
    bool relative = false;                // EX, PX
  };
  static Reply ParseStringOptions(const Argv& a, bool set, StringOptions* o);
  static Reply ExpireMs(Emulator& em, const StringOptions& o, const char* name, int64_t* when);
  static Reply MSetNx(Emulator& em, const Argv& a);
  static Reply GetSet(Emulator& em, const Argv& a);
  static std::optional<Reply> TooLong(const Emulator& em, int64_t size, int64_t append);
  static Reply SetRange(Emulator& em, const Argv& a);
  static Reply GetRange(Emulator& em, const Argv& a);
  static std::optional<uint64_t> BitOffset(const Emulator& em, const std::string& arg);
  static Reply GetBit(Emulator& em, const Argv& a);
  static Reply SetBit(Emulator& em, const Argv& a);
  static Reply Lcs(Emulator& em, const Argv& a);
  static std::optional<unsigned long long> ScanCursor(const std::string& cs);
  static Reply ScanValue(Emulator& em, const Argv& a);
  static Reply GetEx(Emulator& em, const Argv& a);
  static Reply Get(Emulator& em, const Argv& a);
  static Reply Set(Emulator& em, const Argv& a);
  static Reply MGet(Emulator& em, const Argv& a);
  static Reply MSet(Emulator& em, const Argv& a);
  static Reply Del(Emulator& em, const Argv& a);
  static Reply Exists(Emulator& em, const Argv& a);
  // db.c typeCommand.
  static Reply TypeOf(Emulator& em, const Argv& a);
  static Reply Keys(Emulator& em, const Argv& a);
  // SCAN cursor [MATCH pattern] [COUNT n]: see the deviation note in emulator.h.
  static Reply Scan(Emulator& em, const Argv& a);
  static Reply PExpire(Emulator& em, const Argv& a);
  static Reply PTtl(Emulator& em, const Argv& a);
  // ---- counters, expiry, small string commands (cmd_counters.cc) ----
  static Reply Incr(Emulator& em, const Argv& a);
  static Reply Decr(Emulator& em, const Argv& a);
  static Reply IncrBy(Emulator& em, const Argv& a);
  static Reply DecrBy(Emulator& em, const Argv& a);
  static Reply Append(Emulator& em, const Argv& a);
  static Reply StrLen(Emulator& em, const Argv& a);
  static Reply GetDel(Emulator& em, const Argv& a);
  static Reply SetNx(Emulator& em, const Argv& a);
  static Reply SetEx(Emulator& em, const Argv& a);
  static Reply PSetEx(Emulator& em, const Argv& a);
  static Reply Expire(Emulator& em, const Argv& a);
  static Reply ExpireAt(Emulator& em, const Argv& a);
  static Reply PExpireAt(Emulator& em, const Argv& a);
  static Reply Ttl(Emulator& em, const Argv& a);
  static Reply ExpireTime(Emulator& em, const Argv& a);
  static Reply PExpireTime(Emulator& em, const Argv& a);
  static Reply IncrByFloat(Emulator& em, const Argv& a);
  static Reply Persist(Emulator& em, const Argv& a);
  static Reply IncrDecr(Emulator& em, const std::string& key, int64_t incr);
  static Reply ExpireGeneric(Emulator& em, const Argv& a, int64_t base, bool seconds,
                             const char* name);
  static Reply SetWithExpire(Emulator& em, const Argv& a, bool seconds, const char* name);
  static Reply Ping(Emulator&, const Argv& a);
  static Reply Time(Emulator& em, const Argv&);

  // ---- hashes (cmd_hashes.cc) ----
  // The HashValue at `key` in *out (nullptr when there is none and !create); false when the key
  // holds another type (the caller answers WrongType()).
  static bool HashOf(Emulator& em, const std::string& key, HashValue** out, bool create);
  // hashTypeSet after hashTypeTryConversion: the field set, the listpack left past
  // hash-max-listpack-entries or -value.
  static void HashSet(const Emulator& em, HashValue& h, const std::string& f, const std::string& v);
  static void DropIfEmpty(Emulator& em, const std::string& key, size_t size);
  static Reply HIncrByFloat(Emulator& em, const Argv& a);
  static Reply HMSet(Emulator& em, const Argv& a);
  static Reply HLen(Emulator& em, const Argv& a);
  static Reply HStrLen(Emulator& em, const Argv& a);
  static Reply HashListing(Emulator& em, const Argv& a, bool keys, bool values);
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  static Reply RandomPairs(Emulator& em, const Argv& a, const char* with,
                           absl::FunctionRef<bool(Pairs*, bool*)> pairs);
  static Reply HRandField(Emulator& em, const Argv& a);
  static bool ReadLongDouble(const std::string& s, long double* out);
  static std::optional<std::string> FormatLongDouble(long double value);
  static Reply StoreOrDelete(Emulator& em, const std::string& key, std::optional<Value> value,
                             int64_t size);
  static Reply HGet(Emulator& em, const Argv& a);
  static Reply HSet(Emulator& em, const Argv& a);
  static Reply HSetNx(Emulator& em, const Argv& a);
  static Reply HDel(Emulator& em, const Argv& a);
  static Reply HExists(Emulator& em, const Argv& a);
  static Reply HIncrBy(Emulator& em, const Argv& a);
  static std::vector<std::pair<std::string, std::string>> HashInOrder(const HashValue& h);
  static Reply HGetAll(Emulator& em, const Argv& a);
  static Reply HMGet(Emulator& em, const Argv& a);

  // ---- sorted sets (cmd_zsets.cc) ----
  // The ZSetValue at `key` in *out (nullptr when there is none and !create); false when the key
  // holds another type (the caller answers WrongType()).
  static bool ZSetOf(Emulator& em, const std::string& key, ZSetValue** out, bool create);
  static bool ZInsert(const Emulator& em, ZSetValue& z, const std::string& m, double score);
  static void ZErase(ZSetValue& z, const std::string& m);
  static Reply ZAddGeneric(Emulator& em, const Argv& a, bool incr);
  static Reply ZAdd(Emulator& em, const Argv& a);
  static Reply ZIncrBy(Emulator& em, const Argv& a);
  static Reply ZRem(Emulator& em, const Argv& a);
  static Reply ZScore(Emulator& em, const Argv& a);
  static Reply ZMScore(Emulator& em, const Argv& a);
  static Reply ZCard(Emulator& em, const Argv& a);
  static Reply ZRank(Emulator& em, const Argv& a, bool reverse);
  enum class RangeKind { kRank, kScore, kLex };
  struct LexBound {
    enum { kMin, kMax, kValue } kind;
    std::string value;
    bool exclusive;
  };
  struct ZRange {
    RangeKind kind = RangeKind::kRank;
    bool reverse = false;
    int64_t start = 0, stop = 0;      // kRank
    redis_text::ScoreBound min, max;  // kScore
    LexBound lex_min{}, lex_max{};    // kLex
    int64_t offset = 0, limit = -1;   // LIMIT
  };
  static std::optional<Reply> ZParseRange(const Argv& a, size_t min_at, size_t max_at, ZRange* r);
  static void ZSelect(const ZSetValue& z, const ZRange& r,
                      std::vector<std::pair<double, std::string>>* picked);
  // zrangeGenericCommand: options first (those `kind` and `reverse` leave open), then conflicts,
  // then min/max, then the key.
  static Reply ZRangeGeneric(Emulator& em, const Argv& a, size_t first, bool store,
                             std::optional<RangeKind> kind, std::optional<bool> reverse);
  static void Window(std::vector<std::pair<double, std::string>>& v, int64_t offset, int64_t limit);
  static std::optional<LexBound> ParseLexBound(const std::string& s);
  static bool LexGteMin(const std::string& m, const LexBound& b);
  static bool LexLteMax(const std::string& m, const LexBound& b);
  static Reply ZInRange(Emulator& em, const Argv& a, RangeKind kind, bool remove);
  enum class PopReply { kFlat, kKeyFlat, kKeyNested };
  static Reply ZPop(Emulator& em, const Argv& a, size_t first, size_t last, bool max, int64_t count,
                    PopReply shape, bool blocking);
  static Reply ZPopMinMax(Emulator& em, const Argv& a, bool max);
  static std::optional<Reply> BadTimeout(const std::string& arg);
  static Reply BZPopMinMax(Emulator& em, const Argv& a, bool max);
  static Reply ZMPop(Emulator& em, const Argv& a, bool blocking);
  static Reply ZRandMember(Emulator& em, const Argv& a);
  enum class ZSetOp { kUnion, kInter, kDiff };
  // zunionInterDiffGenericCommand: numkeys at a[numkeys_at], then the keys (sets or sorted sets),
  // then WEIGHTS, AGGREGATE, WITHSCORES or LIMIT as the command takes them. `store`: the result
  // goes to a[1]; `card`: ZINTERCARD.
  static Reply ZSetAlgebra(Emulator& em, const Argv& a, size_t numkeys_at, ZSetOp op, bool store,
                           bool card);

  // ---- streams (cmd_streams.cc) ----
  // util.c string2ull: string2ll first, then strtoull with its permissive rules.
  static std::optional<uint64_t> String2ull(const std::string& s);
  // streamGenericParseIDOrReply. seq_given is null for the non-XADD forms.
  static std::optional<StreamId> ParseStreamId(const std::string& s, uint64_t missing_seq,
                                               bool strict, bool* seq_given);
  static Reply XAdd(Emulator& em, const Argv& a);
  // t_stream.c xdelCommand: every ID is parsed before any is deleted; an emptied stream stays
  // (with its last ID).
  static Reply XDel(Emulator& em, const Argv& a);
  static Reply XRange(Emulator& em, const Argv& a);

  // ---- lists (cmd_lists.cc) ----
  // The ListValue at `key` in *out (nullptr when there is none and !create); false when the key
  // holds another type.
  static bool ListOf(Emulator& em, const std::string& key, ListValue** out, bool create);
  static void DropIfEmptyList(Emulator& em, const std::string& key, const ListValue& l);
  static Reply Push(Emulator& em, const Argv& a, bool head, bool xx);
  static Reply Pop(Emulator& em, const Argv& a, bool head);
  static Reply MoveElement(Emulator& em, const Argv& a, bool from_head, bool to_head);
  static Reply LPush(Emulator& em, const Argv& a);
  static Reply RPush(Emulator& em, const Argv& a);
  static Reply LPushX(Emulator& em, const Argv& a);
  static Reply RPushX(Emulator& em, const Argv& a);
  static Reply LPop(Emulator& em, const Argv& a);
  static Reply RPop(Emulator& em, const Argv& a);
  static Reply LLen(Emulator& em, const Argv& a);
  static Reply LIndex(Emulator& em, const Argv& a);
  static Reply LSet(Emulator& em, const Argv& a);
  static Reply LRange(Emulator& em, const Argv& a);
  static Reply LTrim(Emulator& em, const Argv& a);
  static Reply LRem(Emulator& em, const Argv& a);
  static Reply LInsert(Emulator& em, const Argv& a);
  static Reply LPos(Emulator& em, const Argv& a);
  static Reply RPopLPush(Emulator& em, const Argv& a);
  static Reply LMove(Emulator& em, const Argv& a);

  // ---- sets (cmd_sets.cc) ----
  static bool SetOf(Emulator& em, const std::string& key, SetValue** out, bool create);
  static std::vector<std::string> Members(const SetValue& s);
  static bool SetInsert(const Emulator& em, SetValue& s, const std::string& m);
  enum class SetOp { kInter, kUnion, kDiff };
  // limit: -1 for a set reply or a store; else SINTERCARD's (0: none), and the count is the reply.
  static Reply SetAlgebra(Emulator& em, const Argv& a, size_t first, size_t last, SetOp op,
                          bool store, int64_t limit = -1);
  static Reply SAdd(Emulator& em, const Argv& a);
  static Reply SRem(Emulator& em, const Argv& a);
  static Reply SCard(Emulator& em, const Argv& a);
  static Reply SIsMember(Emulator& em, const Argv& a);
  static Reply SMIsMember(Emulator& em, const Argv& a);
  static Reply SMove(Emulator& em, const Argv& a);
  static Reply SMembers(Emulator& em, const Argv& a);
  static Reply SInter(Emulator& em, const Argv& a);
  static Reply SUnion(Emulator& em, const Argv& a);
  static Reply SDiff(Emulator& em, const Argv& a);
  static Reply SInterStore(Emulator& em, const Argv& a);
  static Reply SUnionStore(Emulator& em, const Argv& a);
  static Reply SDiffStore(Emulator& em, const Argv& a);
  static Reply SInterCard(Emulator& em, const Argv& a);
  static Reply SPop(Emulator& em, const Argv& a);
  static Reply SRandMember(Emulator& em, const Argv& a);

  // ---- connection, server, databases, transactions (cmd_server.cc) ----
  static Reply Hello(Emulator& em, const Argv& a);
  static Reply Client(Emulator& em, const Argv& a);
  static Reply Echo(Emulator& em, const Argv& a);
  static Reply Info(Emulator& em, const Argv& a);
  static Reply Command(Emulator& em, const Argv& a);
  static Reply Function(Emulator& em, const Argv& a);
  static Reply Config(Emulator& em, const Argv& a);
  // A numeric parameter's value: as CONFIG SET left it, else redis-server 7.0.15's default.
  static int64_t ConfigInt(const Emulator& em, std::string_view name);
  static Reply Object(Emulator& em, const Argv& a);
  static Reply Memory(Emulator& em, const Argv& a);
  static void Reencode(const Emulator& em, Value& value);
  static std::string Encoding(const Emulator& em, const Entry& e);
  static Reply HelpReply(const std::string& command, std::initializer_list<const char*> lines);
  static Reply UnknownSubcommand(const Argv& a);
  static Reply Debug(Emulator& em, const Argv& a);
  static Reply Select(Emulator& em, const Argv& a);
  static Reply DbSize(Emulator& em, const Argv& a);
  static Reply FlushDb(Emulator& em, const Argv& a);
  static Reply FlushAll(Emulator& em, const Argv& a);
  static Reply SwapDb(Emulator& em, const Argv& a);
  static Reply Move(Emulator& em, const Argv& a);
  static Reply Multi(Emulator& em, const Argv& a);
  static Reply Exec(Emulator& em, const Argv& a);
  static Reply Discard(Emulator& em, const Argv& a);
  static Reply Watch(Emulator& em, const Argv& a);
  static Reply Unwatch(Emulator& em, const Argv& a);

  // ---- scripting (cmd_scripting.cc) ----
  static Reply ParseNumKeys(const Argv& a, int64_t* numkeys);
  static Reply InScript(Emulator& em, absl::FunctionRef<Reply()> run);
  static Reply Eval(Emulator& em, const Argv& a);
  static Reply EvalSha(Emulator& em, const Argv& a);
  static Reply Script(Emulator& em, const Argv& a);
  static Reply EvalRo(Emulator& em, const Argv& a);
  static Reply EvalShaRo(Emulator& em, const Argv& a);
  static bool Writes(const Spec* spec);  // a write command (refused in a read-only script)
};

}  // namespace testbed::sim
