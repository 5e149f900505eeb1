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
      {"ZADD", {-4, false, ZAdd}},
      {"ZREM", {-3, false, ZRem}},
      {"ZSCORE", {3, false, ZScore}},
      {"ZCARD", {2, false, ZCard}},
      {"ZRANGE",
       {-4, false,
        [](Emulator& em, const Argv& a) { return ZRangeGeneric(em, a, RangeKind::kRank); }}},
      {"ZRANGEBYSCORE",
       {-4, false,
        [](Emulator& em, const Argv& a) { return ZRangeGeneric(em, a, RangeKind::kScore); }}},
      {"ZRANGEBYLEX",
       {-4, false,
        [](Emulator& em, const Argv& a) { return ZRangeGeneric(em, a, RangeKind::kLex); }}},
      {"ZREMRANGEBYSCORE", {4, false, ZRemRangeByScore}},
      {"XADD", {-5, false, XAdd}},
      {"XDEL", {-3, false, XDel}},
      {"XRANGE", {-4, false, XRange}},
      {"EVAL", {-3, true, Eval}},
      {"EVALSHA", {-3, true, EvalSha}},
      {"EVAL_RO", {-3, true, EvalRo}},
      {"EVALSHA_RO", {-3, true, EvalShaRo}},
      {"SCRIPT", {-2, true, Script}},
  };
  return table;
}

// Redis 7.0's `write` commands of the table (the command table's flags, commands.def).
bool Commands::Writes(const Spec* spec) {
  static const absl::flat_hash_set<const Spec*> writes = [] {
    absl::flat_hash_set<const Spec*> w;
    for (const char* name : {"SET",     "DEL",    "PEXPIRE",          "INCR",     "DECR",
                             "INCRBY",  "DECRBY", "APPEND",           "GETDEL",   "SETNX",
                             "SETEX",   "PSETEX", "EXPIRE",           "EXPIREAT", "PEXPIREAT",
                             "PERSIST", "HSET",   "HSETNX",           "HDEL",     "HINCRBY",
                             "ZADD",    "ZREM",   "ZREMRANGEBYSCORE", "XADD",     "XDEL"})
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
    : clock_(clock), options_(options), lua_(std::make_unique<LuaScripting>(*this)) {}

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
}

Reply Emulator::dispatch(const Argv& argv, bool from_script, bool* known, bool* arity_ok) {
  *known = false;
  *arity_ok = false;
  if (argv.empty()) return Reply::Error("ERR unsupported by the emulator: empty command");
  // The name in upper case, on the stack (no command name is longer than the buffer), looked
  // up in the table; the spec is then remembered for the name as it was written ("zadd", "ZADD"),
  // in one of 16 slots picked by its length and first letter: a script calls a few commands
  // over and over, and comparing one short name costs less than upper-casing and finding it.
  struct Remembered {
    char name[24];
    size_t size = 0;
    const Commands::Spec* spec = nullptr;
  };
  thread_local std::array<Remembered, 16> remembered;
  char upper[24];
  const std::string& name = argv[0];
  const Commands::Spec* spec = nullptr;
  if (name.size() <= sizeof upper && !name.empty()) {
    Remembered& r = remembered[(name.size() * 7 + static_cast<unsigned char>(name[0])) & 15];
    if (r.spec && r.size == name.size() && std::memcmp(r.name, name.data(), name.size()) == 0) {
      spec = r.spec;
    } else {
      for (size_t i = 0; i < name.size(); ++i) upper[i] = absl::ascii_toupper(name[i]);
      spec = Commands::Find(std::string_view(upper, name.size()));
      if (spec) {
        std::memcpy(r.name, name.data(), name.size());
        r.size = name.size();
        r.spec = spec;
      }
    }
  }
  if (!spec) return Unsupported("command '" + argv[0] + "'");
  *known = true;
  if (observer) observer(argv, from_script);
  const int arity = spec->arity;
  const int argc = static_cast<int>(argv.size());
  if ((arity > 0 && argc != arity) || (arity < 0 && argc < -arity))
    return Reply::Error(WrongArity(ToLower(argv[0])));
  *arity_ok = true;
  if (from_script && spec->noscript)
    return Reply::Error("ERR This Redis command is not allowed from script");
  if (from_script && read_only_script_ && Commands::Writes(spec))
    return Reply::Error("ERR Write commands are not allowed from read-only scripts.");
  return spec->handler(*this, argv);
}

Reply Emulator::execute(const Argv& argv) {
  now_ = clock_.now_ms();
  bool known, arity_ok;
  return dispatch(argv, false, &known, &arity_ok);
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
    }
    out += " pttl=" +
           std::to_string(e.expire_at == -1 ? -1 : std::max<int64_t>(0, e.expire_at - now_));
    out += "\n";
  }
  return out;
}

}  // namespace testbed::sim
