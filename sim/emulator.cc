// The emulator: its command table and dispatcher, key lookup with expiry, and the keyspace dump.
// The commands themselves are in cmd_<group>.cc (sim/emulator_commands.h).
#include "sim/emulator.h"

#include <absl/container/flat_hash_map.h>
#include <absl/container/inlined_vector.h>
#include <absl/strings/ascii.h>
#include <absl/strings/match.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <climits>
#include <cmath>
#include <functional>
#include <unordered_map>

#include <absl/container/flat_hash_set.h>

#include "sim/emulator_commands.h"
#include "sim/lua_scripting.h"
#include "sim/redis_text.h"

namespace testbed::sim {

using namespace redis_text;

const absl::flat_hash_map<std::string, Commands::Spec>& Commands::Table() {
  static const absl::flat_hash_map<std::string, Spec> table = {
      {"GET", {2, false, Get}},
      {"SET", {-3, false, Set}},
      {"MGET", {-2, false, MGet}},
      {"MSET", {-3, false, MSet}},
      {"MSETNX", {-3, false, MSetNx}},
      {"GETSET", {3, false, GetSet}},
      {"SETRANGE", {4, false, SetRange}},
      {"GETRANGE", {4, false, GetRange}},
      {"SUBSTR", {4, false, GetRange}},
      {"GETBIT", {3, false, GetBit}},
      {"SETBIT", {4, false, SetBit}},
      {"LCS", {-3, false, Lcs}},
      {"HSCAN", {-3, false, ScanValue}},
      {"SSCAN", {-3, false, ScanValue}},
      {"ZSCAN", {-3, false, ScanValue}},
      {"DEL", {-2, false, Del}},
      {"EXISTS", {-2, false, Exists}},
      {"KEYS", {2, false, Keys}},
      {"TYPE", {2, false, TypeOf}},
      {"SCAN", {-2, false, Scan}},
      {"PEXPIRE", {-3, false, PExpire}},
      {"PTTL", {2, false, PTtl}},
      {"INCR", {2, false, Incr}},
      {"DECR", {2, false, Decr}},
      {"INCRBY", {3, false, IncrBy}},
      {"DECRBY", {3, false, DecrBy}},
      {"APPEND", {3, false, Append}},
      {"STRLEN", {2, false, StrLen}},
      {"GETDEL", {2, false, GetDel}},
      {"SETNX", {3, false, SetNx}},
      {"SETEX", {4, false, SetEx}},
      {"PSETEX", {4, false, PSetEx}},
      {"EXPIRE", {-3, false, Expire}},
      {"EXPIREAT", {-3, false, ExpireAt}},
      {"PEXPIREAT", {-3, false, PExpireAt}},
      {"TTL", {2, false, Ttl}},
      {"PERSIST", {2, false, Persist}},
      {"EXPIRETIME", {2, false, ExpireTime}},
      {"PEXPIRETIME", {2, false, PExpireTime}},
      {"INCRBYFLOAT", {3, false, IncrByFloat}},
      {"GETEX", {-2, false, GetEx}},
      {"PING", {-1, false, Ping}},
      {"TIME", {1, false, Time}},
      {"HGET", {3, false, HGet}},
      {"HSET", {-4, false, HSet}},
      {"HSETNX", {4, false, HSetNx}},
      {"HDEL", {-3, false, HDel}},
      {"HEXISTS", {3, false, HExists}},
      {"HINCRBY", {4, false, HIncrBy}},
      {"HGETALL", {2, false, HGetAll}},
      {"HMGET", {-3, false, HMGet}},
      {"HINCRBYFLOAT", {4, false, HIncrByFloat}},
      {"HMSET", {-4, false, HMSet}},
      {"HLEN", {2, false, HLen}},
      {"HSTRLEN", {3, false, HStrLen}},
      {"HKEYS",
       {2, false, [](Emulator& em, const Argv& a) { return HashListing(em, a, true, false); }}},
      {"HVALS",
       {2, false, [](Emulator& em, const Argv& a) { return HashListing(em, a, false, true); }}},
      {"HRANDFIELD", {-2, false, HRandField}},
      {"ZADD", {-4, false, ZAdd}},
      {"ZINCRBY", {4, false, ZIncrBy}},
      {"ZREM", {-3, false, ZRem}},
      {"ZSCORE", {3, false, ZScore}},
      {"ZMSCORE", {-3, false, ZMScore}},
      {"ZCARD", {2, false, ZCard}},
      {"ZRANK", {3, false, [](Emulator& em, const Argv& a) { return ZRank(em, a, false); }}},
      {"ZREVRANK", {3, false, [](Emulator& em, const Argv& a) { return ZRank(em, a, true); }}},
      {"ZRANGE",
       {-4, false,
        [](Emulator& em, const Argv& a) {
          return ZRangeGeneric(em, a, 1, false, std::nullopt, std::nullopt);
        }}},
      {"ZREVRANGE",
       {-4, false,
        [](Emulator& em, const Argv& a) {
          return ZRangeGeneric(em, a, 1, false, RangeKind::kRank, true);
        }}},
      {"ZRANGEBYSCORE",
       {-4, false,
        [](Emulator& em, const Argv& a) {
          return ZRangeGeneric(em, a, 1, false, RangeKind::kScore, false);
        }}},
      {"ZREVRANGEBYSCORE",
       {-4, false,
        [](Emulator& em, const Argv& a) {
          return ZRangeGeneric(em, a, 1, false, RangeKind::kScore, true);
        }}},
      {"ZRANGEBYLEX",
       {-4, false,
        [](Emulator& em, const Argv& a) {
          return ZRangeGeneric(em, a, 1, false, RangeKind::kLex, false);
        }}},
      {"ZREVRANGEBYLEX",
       {-4, false,
        [](Emulator& em, const Argv& a) {
          return ZRangeGeneric(em, a, 1, false, RangeKind::kLex, true);
        }}},
      {"ZRANGESTORE",
       {-5, false,
        [](Emulator& em, const Argv& a) {
          return ZRangeGeneric(em, a, 2, true, std::nullopt, std::nullopt);
        }}},
      {"ZREMRANGEBYSCORE",
       {4, false,
        [](Emulator& em, const Argv& a) { return ZInRange(em, a, RangeKind::kScore, true); }}},
      {"ZREMRANGEBYRANK",
       {4, false,
        [](Emulator& em, const Argv& a) { return ZInRange(em, a, RangeKind::kRank, true); }}},
      {"ZREMRANGEBYLEX",
       {4, false,
        [](Emulator& em, const Argv& a) { return ZInRange(em, a, RangeKind::kLex, true); }}},
      {"ZCOUNT",
       {4, false,
        [](Emulator& em, const Argv& a) { return ZInRange(em, a, RangeKind::kScore, false); }}},
      {"ZLEXCOUNT",
       {4, false,
        [](Emulator& em, const Argv& a) { return ZInRange(em, a, RangeKind::kLex, false); }}},
      {"ZPOPMIN",
       {-2, false, [](Emulator& em, const Argv& a) { return ZPopMinMax(em, a, false); }}},
      {"ZPOPMAX", {-2, false, [](Emulator& em, const Argv& a) { return ZPopMinMax(em, a, true); }}},
      {"ZMPOP", {-4, false, [](Emulator& em, const Argv& a) { return ZMPop(em, a, false); }}},
      {"BZMPOP", {-5, false, [](Emulator& em, const Argv& a) { return ZMPop(em, a, true); }}},
      {"BZPOPMIN",
       {-3, false, [](Emulator& em, const Argv& a) { return BZPopMinMax(em, a, false); }}},
      {"BZPOPMAX",
       {-3, false, [](Emulator& em, const Argv& a) { return BZPopMinMax(em, a, true); }}},
      {"ZRANDMEMBER", {-2, false, ZRandMember}},
      {"ZUNION",
       {-3, false,
        [](Emulator& em, const Argv& a) {
          return ZSetAlgebra(em, a, 1, ZSetOp::kUnion, false, false);
        }}},
      {"ZINTER",
       {-3, false,
        [](Emulator& em, const Argv& a) {
          return ZSetAlgebra(em, a, 1, ZSetOp::kInter, false, false);
        }}},
      {"ZDIFF",
       {-3, false,
        [](Emulator& em, const Argv& a) {
          return ZSetAlgebra(em, a, 1, ZSetOp::kDiff, false, false);
        }}},
      {"ZUNIONSTORE",
       {-4, false,
        [](Emulator& em, const Argv& a) {
          return ZSetAlgebra(em, a, 2, ZSetOp::kUnion, true, false);
        }}},
      {"ZINTERSTORE",
       {-4, false,
        [](Emulator& em, const Argv& a) {
          return ZSetAlgebra(em, a, 2, ZSetOp::kInter, true, false);
        }}},
      {"ZDIFFSTORE",
       {-4, false,
        [](Emulator& em, const Argv& a) {
          return ZSetAlgebra(em, a, 2, ZSetOp::kDiff, true, false);
        }}},
      {"ZINTERCARD",
       {-3, false,
        [](Emulator& em, const Argv& a) {
          return ZSetAlgebra(em, a, 1, ZSetOp::kInter, false, true);
        }}},
      {"OBJECT", {-2, false, Object}},
      {"MEMORY", {-2, false, Memory}},
      {"XADD", {-5, false, XAdd}},
      {"XDEL", {-3, false, XDel}},
      {"XRANGE", {-4, false, XRange}},
      {"EVAL", {-3, true, Eval}},
      {"EVALSHA", {-3, true, EvalSha}},
      {"EVAL_RO", {-3, true, EvalRo}},
      {"EVALSHA_RO", {-3, true, EvalShaRo}},
      {"SCRIPT", {-2, true, Script}},
      {"LPUSH", {-3, false, LPush}},
      {"RPUSH", {-3, false, RPush}},
      {"LPUSHX", {-3, false, LPushX}},
      {"RPUSHX", {-3, false, RPushX}},
      {"LPOP", {-2, false, LPop}},
      {"RPOP", {-2, false, RPop}},
      {"LLEN", {2, false, LLen}},
      {"LINDEX", {3, false, LIndex}},
      {"LSET", {4, false, LSet}},
      {"LRANGE", {4, false, LRange}},
      {"LTRIM", {4, false, LTrim}},
      {"LREM", {4, false, LRem}},
      {"LINSERT", {5, false, LInsert}},
      {"LPOS", {-3, false, LPos}},
      {"RPOPLPUSH", {3, false, RPopLPush}},
      {"LMOVE", {5, false, LMove}},
      {"SADD", {-3, false, SAdd}},
      {"SREM", {-3, false, SRem}},
      {"SCARD", {2, false, SCard}},
      {"SISMEMBER", {3, false, SIsMember}},
      {"SMISMEMBER", {-3, false, SMIsMember}},
      {"SMOVE", {4, false, SMove}},
      {"SMEMBERS", {2, false, SMembers}},
      {"SINTER", {-2, false, SInter}},
      {"SUNION", {-2, false, SUnion}},
      {"SDIFF", {-2, false, SDiff}},
      {"SINTERSTORE", {-3, false, SInterStore}},
      {"SUNIONSTORE", {-3, false, SUnionStore}},
      {"SDIFFSTORE", {-3, false, SDiffStore}},
      {"SINTERCARD", {-3, false, SInterCard}},
      {"SPOP", {-2, false, SPop}},
      {"SRANDMEMBER", {-2, false, SRandMember}},
      {"HELLO", {-1, true, Hello}},
      {"CLIENT", {-2, true, Client}},
      {"ECHO", {2, false, Echo}},
      {"INFO", {-1, false, Info}},
      {"COMMAND", {-1, false, Command}},
      {"FUNCTION", {-2, true, Function}},
      {"CONFIG", {-2, true, Config}},
      {"DEBUG", {-2, true, Debug}},
      {"SELECT", {2, false, Select}},
      {"DBSIZE", {1, false, DbSize}},
      {"FLUSHDB", {-1, false, FlushDb}},
      {"FLUSHALL", {-1, false, FlushAll}},
      {"SWAPDB", {3, false, SwapDb}},
      {"MOVE", {3, false, Move}},
      {"MULTI", {1, true, Multi}},
      {"EXEC", {1, true, Exec}},
      {"DISCARD", {1, true, Discard}},
      {"WATCH", {-2, true, Watch}},
      {"UNWATCH", {1, true, Unwatch}},
  };
  return table;
}

// Redis 7.0's `write` commands of the table (the command table's flags, commands.def).
bool Commands::Writes(const Spec* spec) {
  static const absl::flat_hash_set<const Spec*> writes = [] {
    absl::flat_hash_set<const Spec*> w;
    for (const char* name : {"SET",
                             "DEL",
                             "PEXPIRE",
                             "INCR",
                             "DECR",
                             "INCRBY",
                             "DECRBY",
                             "APPEND",
                             "GETDEL",
                             "SETNX",
                             "SETEX",
                             "PSETEX",
                             "EXPIRE",
                             "EXPIREAT",
                             "PEXPIREAT",
                             "PERSIST",
                             "HSET",
                             "HSETNX",
                             "HDEL",
                             "HINCRBY",
                             "HINCRBYFLOAT",
                             "HMSET",
                             "ZADD",
                             "ZREM",
                             "ZREMRANGEBYSCORE",
                             "ZINCRBY",
                             "ZRANGESTORE",
                             "ZREMRANGEBYRANK",
                             "ZREMRANGEBYLEX",
                             "ZPOPMIN",
                             "ZPOPMAX",
                             "ZMPOP",
                             "BZMPOP",
                             "BZPOPMIN",
                             "BZPOPMAX",
                             "ZUNIONSTORE",
                             "ZINTERSTORE",
                             "ZDIFFSTORE",
                             "INCRBYFLOAT",
                             "GETEX",
                             "XADD",
                             "XDEL",
                             "FLUSHDB",
                             "FLUSHALL",
                             "SWAPDB",
                             "MOVE",
                             "LPUSH",
                             "RPUSH",
                             "LPUSHX",
                             "RPUSHX",
                             "LPOP",
                             "RPOP",
                             "LSET",
                             "LTRIM",
                             "LREM",
                             "LINSERT",
                             "RPOPLPUSH",
                             "LMOVE",
                             "SADD",
                             "SREM",
                             "SMOVE",
                             "SINTERSTORE",
                             "SUNIONSTORE",
                             "SDIFFSTORE",
                             "SPOP",
                             "MSET",
                             "MSETNX",
                             "GETSET",
                             "SETRANGE",
                             "SETBIT"})
      w.insert(&Table().at(name));
    return w;
  }();
  return writes.contains(spec);
}

const Commands::Spec* Commands::Find(std::string_view upper) {
  constexpr size_t kLongest = 24;  // the dispatcher's buffer
  using Bucket = std::vector<std::pair<std::string_view, const Spec*>>;
  static const std::array<Bucket, kLongest + 1> by_length = [] {
    std::array<Bucket, kLongest + 1> b;
    for (const auto& [name, spec] : Table()) b[name.size()].emplace_back(name, &spec);
    return b;
  }();
  if (upper.size() > kLongest) return nullptr;
  for (const auto& [name, spec] : by_length[upper.size()])
    if (name[0] == upper[0] && name == upper) return spec;
  return nullptr;
}

Emulator::Emulator(const Clock& clock, EmulatorOptions options)
    : clock_(clock),
      options_(options),
      lua_(std::make_unique<LuaScripting>(*this)),
      session_(&sessions_[0]) {}

Emulator::~Emulator() = default;

bool Emulator::alive(const Entry& e) const {
  return e.expire_at == -1 || now_ <= e.expire_at + options_.fault_expiry_shift_ms;
}

Entry* Emulator::lookup(const std::string& key) {
  auto it = last_ != keys_.end() && last_->first == key ? last_ : keys_.find(key);
  if (it == keys_.end()) return nullptr;
  if (!alive(it->second)) {
    erase_key(key);
    return nullptr;
  }
  last_ = it;
  return &it->second;
}

void Emulator::erase_key(const std::string& key) {
  auto it = last_ != keys_.end() && last_->first == key ? last_ : keys_.find(key);
  if (it == keys_.end()) return;
  if (it == last_) last_ = keys_.end();
  keys_.erase(it);
  touch(key);
}

namespace {

// The spec of a command name as written, or nullptr. The name in upper case, on the stack (no
// command name is longer than the buffer), is looked up in the table; the spec is then
// remembered for the name as it was written ("zadd", "ZADD"), in one of 16 slots picked by its
// length and first letter: a script calls a few commands over and over, and comparing one short
// name costs less than upper-casing and finding it.
const Commands::Spec* Resolve(const std::string& name) {
  struct Remembered {
    char name[24];
    size_t size = 0;
    const Commands::Spec* spec = nullptr;
  };
  thread_local std::array<Remembered, 16> remembered;
  char upper[24];
  if (name.size() > sizeof upper || name.empty()) return nullptr;
  Remembered& r = remembered[(name.size() * 7 + static_cast<unsigned char>(name[0])) & 15];
  if (r.spec && r.size == name.size() && std::memcmp(r.name, name.data(), name.size()) == 0)
    return r.spec;
  for (size_t i = 0; i < name.size(); ++i) upper[i] = absl::ascii_toupper(name[i]);
  const Commands::Spec* spec = Commands::Find(std::string_view(upper, name.size()));
  if (spec) {
    std::memcpy(r.name, name.data(), name.size());
    r.size = name.size();
    r.spec = spec;
  }
  return spec;
}

bool ArityOk(const Commands::Spec& spec, size_t argc) {
  const int n = static_cast<int>(argc);
  return spec.arity > 0 ? n == spec.arity : n >= -spec.arity;
}

}  // namespace

Reply Emulator::dispatch(const Argv& argv, bool from_script, bool* known, bool* arity_ok) {
  *known = false;
  *arity_ok = false;
  if (argv.empty()) return Reply::Error("ERR unsupported by the emulator: empty command");
  const Commands::Spec* spec = Resolve(argv[0]);
  if (!spec) return Unsupported("command '" + argv[0] + "'");
  *known = true;
  if (observer) observer(argv, from_script);
  if (!ArityOk(*spec, argv.size())) return Reply::Error(WrongArity(ToLower(argv[0])));
  *arity_ok = true;
  if (from_script && spec->noscript)
    return Reply::Error("ERR This Redis command is not allowed from script");
  if (from_script && read_only_script_ && Commands::Writes(spec))
    return Reply::Error("ERR Write commands are not allowed from read-only scripts.");
  return spec->handler(*this, argv);
}

Reply Emulator::execute(const Argv& argv) {
  now_ = clock_.now_ms();
  if (session_->multi && !argv.empty()) {
    // processCommand inside MULTI: the command is checked (it exists, its arity) and queued;
    // EXEC, DISCARD, MULTI and WATCH run at once. An error here fails the EXEC.
    static const Commands::Spec* const kNow[] = {
        &Commands::Table().at("EXEC"), &Commands::Table().at("DISCARD"),
        &Commands::Table().at("MULTI"), &Commands::Table().at("WATCH")};
    const Commands::Spec* spec = Resolve(argv[0]);
    if (!spec || std::find(std::begin(kNow), std::end(kNow), spec) == std::end(kNow)) {
      Session& s = *session_;
      Reply error;
      if (!spec)
        error = Unsupported("command '" + argv[0] + "'");
      else if (!ArityOk(*spec, argv.size()))
        error = Reply::Error(WrongArity(ToLower(argv[0])));
      if (error.is_error()) {
        s.dirty_exec = true;
        return error;
      }
      if (!s.dirty_exec && !s.dirty_cas) s.queued.push_back(argv);  // no use keeping it else
      return Reply::Status("QUEUED");
    }
  }
  bool known, arity_ok;
  return dispatch(argv, false, &known, &arity_ok);
}

bool Emulator::in_multi() const { return session_->multi; }

void Emulator::use_client(uint64_t id) {
  if (id == client_) return;
  client_ = id;
  session_ = &sessions_[id];
  select(session_->db);
}

void Emulator::drop_client(uint64_t id) {
  unwatch_all(id);
  if (id == client_) use_client(0);
  if (id != 0) sessions_.erase(id);
}

void Emulator::select(int db) {
  if (db == db_) return;
  keys_.swap(parked_[db_]);
  keys_.swap(parked_[db]);
  db_ = db;
  last_ = keys_.end();
}

bool Emulator::expired_in(int db, const std::string& key) {
  const auto& m = db_map(db);
  const auto it = m.find(key);
  return it != m.end() && !alive(it->second);
}

void Emulator::watch(const std::string& key) {
  Session& s = *session_;
  for (const WatchedKey& wk : s.watched)
    if (wk.db == db_ && wk.key == key) return;  // already watched in this database
  watchers_[{db_, key}].push_back(client_);
  s.watched.push_back({db_, key, expired_in(db_, key)});
}

void Emulator::unwatch_all(uint64_t client) {
  auto found = sessions_.find(client);
  if (found == sessions_.end()) return;
  for (const WatchedKey& wk : found->second.watched) {
    auto it = watchers_.find({wk.db, wk.key});
    if (it == watchers_.end()) continue;
    std::erase(it->second, client);
    if (it->second.empty()) watchers_.erase(it);
  }
  found->second.watched.clear();
}

Emulator::WatchedKey* Emulator::watched_by(uint64_t client, int db, const std::string& key) {
  for (WatchedKey& wk : sessions_[client].watched)
    if (wk.db == db && wk.key == key) return &wk;
  return nullptr;
}

// touchWatchedKey, including its `break` at a key that had expired when watched and is there
// again: the clients after it in the list are not flagged.
void Emulator::touch_watched(int db, const std::string& key) {
  auto it = watchers_.find({db, key});
  if (it == watchers_.end()) return;
  const std::vector<uint64_t> clients = it->second;
  for (const uint64_t c : clients) {
    WatchedKey* wk = watched_by(c, db, key);
    if (!wk) continue;
    if (wk->expired) {
      if (!db_map(db).contains(key)) {
        wk->expired = false;  // the expired key was deleted: logically no change
        continue;
      }
      break;
    }
    sessions_[c].dirty_cas = true;
    unwatch_all(c);
  }
}

// touchAllWatchedKeysInDb (replaced_with -1: none, as for FLUSHDB).
void Emulator::touch_all(int emptied, int replaced_with) {
  for (auto& [where, clients] : watchers_) {
    if (where.first != emptied) continue;
    const std::string& key = where.second;
    const bool in_emptied = db_map(emptied).contains(key);
    const bool in_replacement = replaced_with >= 0 && db_map(replaced_with).contains(key);
    if (!in_emptied && !in_replacement) continue;
    for (const uint64_t c : clients) {
      WatchedKey* wk = watched_by(c, emptied, key);
      if (!wk) continue;
      if (wk->expired) {
        if (!in_replacement) {
          wk->expired = false;  // the expired key is now deleted: no logical change
          continue;
        }
        if (expired_in(replaced_with, key)) continue;  // it stays expired
      } else if (!in_emptied && expired_in(replaced_with, key)) {
        wk->expired = true;  // a key that was not there is replaced by an expired one
        continue;
      }
      sessions_[c].dirty_cas = true;
    }
  }
}

bool Emulator::watched_key_expired(uint64_t client) {
  for (const WatchedKey& wk : sessions_[client].watched)
    if (!wk.expired && expired_in(wk.db, wk.key)) return true;
  return false;
}

void Emulator::discard(Session& s) {
  s.queued.clear();
  s.multi = s.dirty_cas = s.dirty_exec = false;
  unwatch_all(client_);
}

// execCommand: a touched or expired watched key gives a nil array, an error while queueing
// EXECABORT; else every queued command runs, at the EXEC's time, and the replies are its array.
Reply Emulator::exec() {
  Session& s = *session_;
  if (!s.multi) return Reply::Error("ERR EXEC without MULTI");
  if (watched_key_expired(client_)) s.dirty_cas = true;
  if (s.dirty_exec || s.dirty_cas) {
    Reply r = s.dirty_exec
                  ? Reply::Error("EXECABORT Transaction discarded because of previous errors.")
                  : Reply::NilArray();
    discard(s);
    return r;
  }
  unwatch_all(client_);
  const std::vector<Argv> queued = std::move(s.queued);
  s.queued.clear();
  std::vector<Reply> replies;
  replies.reserve(queued.size());
  for (const Argv& argv : queued) {
    bool known, arity_ok;
    replies.push_back(dispatch(argv, false, &known, &arity_ok));
  }
  discard(*session_);
  return Reply::Array(std::move(replies));
}

Reply Emulator::execute_from_script(const Argv& argv, bool* known, bool* arity_ok) {
  return dispatch(argv, true, known, arity_ok);
}

bool Emulator::hash_is_listpack(const std::string& key) {
  auto it = keys_.find(key);
  if (it == keys_.end()) return true;
  auto* h = std::get_if<HashValue>(&it->second.value);
  return !h || h->listpack;
}

std::string Emulator::dump_keyspace() {
  now_ = clock_.now_ms();
  std::string out;
  for (const auto& [key, e] : keys_) {
    if (!alive(e)) continue;
    out += render_argv({key}) + " ";
    if (auto* s = std::get_if<std::string>(&e.value)) {
      out += "string " + render_argv({*s});
    } else if (auto* h = std::get_if<HashValue>(&e.value)) {
      out += "hash";
      for (const auto& [f, v] : h->fields) out += " " + render_argv({f, v.second});
    } else if (auto* z = std::get_if<ZSetValue>(&e.value)) {
      out += "zset";
      for (const auto& [s, m] : z->ordered) out += " " + render_argv({m, FormatDouble(s)});
    } else if (auto* st = std::get_if<StreamValue>(&e.value)) {
      out += "stream";
      for (const auto& [id, fields] : st->entries)
        out += " " + id.str() + " " + render_argv(fields);
    } else if (auto* l = std::get_if<ListValue>(&e.value)) {
      out += "list";
      for (const std::string& item : l->items) out += " " + render_argv({item});
    } else if (auto* set = std::get_if<SetValue>(&e.value)) {
      out += "set";
      for (const std::string& m : set->members) out += " " + render_argv({m});
    }
    out += " pttl=" +
           std::to_string(e.expire_at == -1 ? -1 : std::max<int64_t>(0, e.expire_at - now_));
    out += "\n";
  }
  return out;
}

}  // namespace testbed::sim
