// The emulator's connection, server and transaction commands (sim/emulator_commands.h): what a
// client library sends to look after its connection (HELLO, CLIENT, ECHO, SELECT, INFO,
// COMMAND), the keyspace's databases (SELECT, SWAPDB, MOVE, DBSIZE, FLUSHDB, FLUSHALL), and
// MULTI/EXEC/DISCARD/WATCH/UNWATCH as multi.c runs them. Each runs as the client the emulator
// was last told of (Emulator::use_client).
#include <absl/strings/ascii.h>
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <climits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/emulator_commands.h"
#include "sim/lua_scripting.h"
#include "sim/redis_text.h"

namespace testbed::sim {

using namespace redis_text;

namespace {

bool ValidClientName(const std::string& name) {
  for (const char c : name)
    if (c < '!' || c > '~') return false;
  return true;
}

Reply BadClientName() {
  return Reply::Error("ERR Client names cannot contain spaces, newlines or special characters.");
}

// HELLO's reply in RESP2: the map as a flat array (Redis 7.0.15's fields and values).
Reply HelloReply(int64_t id) {
  std::vector<Reply> e;
  for (const char* kv : {"server", "redis", "version", "7.0.15"}) e.push_back(Reply::Bulk(kv));
  e.push_back(Reply::Bulk("proto"));
  e.push_back(Reply::Integer(2));
  e.push_back(Reply::Bulk("id"));
  e.push_back(Reply::Integer(id));
  for (const char* kv : {"mode", "standalone", "role", "master", "modules"})
    e.push_back(Reply::Bulk(kv));
  e.push_back(Reply::Array({}));
  return Reply::Array(std::move(e));
}

// getIntFromObjectOrReply for a database index, then selectDb's range check.
std::optional<int> DbIndex(const std::string& arg, Reply* error) {
  const auto db = String2ll(arg);
  if (!db || *db < INT_MIN || *db > INT_MAX) {
    *error = Reply::Error(!db ? kNotInteger
                              : "ERR value is out of range, value must between -2147483648 and "
                                "2147483647");
    return std::nullopt;
  }
  if (*db < 0 || *db >= Emulator::kDatabases) {
    *error = Reply::Error("ERR DB index is out of range");
    return std::nullopt;
  }
  return static_cast<int>(*db);
}

}  // namespace

Reply Commands::Hello(Emulator& em, const Argv& a) {
  size_t next = 1;
  if (a.size() >= 2) {
    const auto version = String2ll(a[1]);
    if (!version) return Reply::Error("ERR Protocol version is not an integer or out of range");
    // RESP3 is not spoken here (a deviation: Redis 7.0 would switch to it).
    if (*version != 2) return Reply::Error("NOPROTO unsupported protocol version");
    next = 2;
  }
  std::string setname;
  bool named = false;
  for (; next < a.size(); ++next) {
    if (Is(a[next], "AUTH") && next + 2 < a.size()) {
      next += 2;  // no password is set: any credentials pass, as AUTH's default user
    } else if (Is(a[next], "SETNAME") && next + 1 < a.size()) {
      setname = a[++next];
      named = true;
      if (!ValidClientName(setname)) return BadClientName();
    } else {
      return Reply::Error("ERR Syntax error in HELLO option '" + a[next] + "'");
    }
  }
  if (named) em.session().name = setname;
  return HelloReply(static_cast<int64_t>(em.client_));
}

Reply Commands::Client(Emulator& em, const Argv& a) {
  const std::string sub = ToUpper(a[1]);
  if (sub == "ID")
    return a.size() == 2 ? Reply::Integer(static_cast<int64_t>(em.client_))
                         : Reply::Error(WrongArity("client|id"));
  if (sub == "GETNAME") {
    if (a.size() != 2) return Reply::Error(WrongArity("client|getname"));
    const std::string& name = em.session().name;
    return name.empty() ? Reply::Nil() : Reply::Bulk(name);
  }
  if (sub == "SETNAME") {
    if (a.size() != 3) return Reply::Error(WrongArity("client|setname"));
    if (!ValidClientName(a[2])) return BadClientName();
    em.session().name = a[2];
    return Reply::Ok();
  }
  // CLIENT SETINFO came with Redis 7.2; 7.0.15 answers it as any subcommand it lacks (clients
  // such as node-redis send it and ignore the error).
  if (sub == "SETINFO" || sub == "NO-TOUCH") return UnknownSubcommand(a);
  return Unsupported("CLIENT subcommand '" + a[1] + "'");
}

Reply Commands::Echo(Emulator&, const Argv& a) { return Reply::Bulk(a[1]); }

Reply Commands::Info(Emulator& em, const Argv&) {
  std::string keyspace;
  for (int db = 0; db < Emulator::kDatabases; ++db) {
    int64_t keys = 0, expires = 0;
    for (const auto& [k, e] : em.db_map(db))
      if (em.alive(e)) {
        ++keys;
        expires += e.expire_at != -1;
      }
    if (keys > 0)
      absl::StrAppend(&keyspace, "db", db, ":keys=", keys, ",expires=", expires, ",avg_ttl=0\r\n");
  }
  return Reply::Bulk(
      "# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\narch_bits:64\r\n"
      "executable:testbed serve\r\n\r\n# Replication\r\nrole:master\r\nconnected_slaves:0\r\n"
      "\r\n# Keyspace\r\n" +
      keyspace);
}

Reply Commands::Command(Emulator&, const Argv& a) {
  // redis-cli asks for COMMAND DOCS to show hints; the emulator has none to give.
  if (a.size() >= 2 && Is(a[1], "DOCS")) return Reply::Array({});
  return Unsupported("COMMAND" + (a.size() >= 2 ? " " + a[1] : std::string()));
}

// FUNCTION FLUSH empties a library set the emulator never has (Redis's test harness sends it
// before each unit); the rest of FUNCTION is not emulated.
Reply Commands::Function(Emulator&, const Argv& a) {
  if (Is(a[1], "FLUSH")) {
    if (a.size() > 3 || (a.size() == 3 && !Is(a[2], "SYNC") && !Is(a[2], "ASYNC")))
      return Reply::Error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
    return Reply::Ok();
  }
  return Unsupported("FUNCTION " + a[1]);
}

// selectCommand. A script's SELECT lasts until the script ends (Redis 7.0: the caller's
// database is not changed by it).
Reply Commands::Select(Emulator& em, const Argv& a) {
  Reply error;
  const auto db = DbIndex(a[1], &error);
  if (!db) return error;
  em.select(*db);
  if (!em.in_script_) em.session().db = *db;
  return Reply::Ok();
}

Reply Commands::DbSize(Emulator& em, const Argv&) {
  // dictSize: keys past their expiry that nothing has deleted yet still count.
  return Reply::Integer(static_cast<int64_t>(em.keys_.size()));
}

// flushdbCommand / flushallCommand: watched keys that held a value are touched first.
Reply Commands::FlushDb(Emulator& em, const Argv& a) {
  if (a.size() > 2 || (a.size() == 2 && !Is(a[1], "ASYNC") && !Is(a[1], "SYNC")))
    return Reply::Error(kSyntax);
  em.touch_all(em.db_, -1);
  em.restore({});
  return Reply::Ok();
}

Reply Commands::FlushAll(Emulator& em, const Argv& a) {
  if (a.size() > 2 || (a.size() == 2 && !Is(a[1], "ASYNC") && !Is(a[1], "SYNC")))
    return Reply::Error(kSyntax);
  for (int db = 0; db < Emulator::kDatabases; ++db) em.touch_all(db, -1);
  em.restore({});
  for (auto& parked : em.parked_) parked.clear();
  return Reply::Ok();
}

// swapdbCommand: the two databases trade contents; the clients that selected either keep their
// index and now see the other's keys.
Reply Commands::SwapDb(Emulator& em, const Argv& a) {
  const auto first = String2ll(a[1]), second = String2ll(a[2]);
  if (!first || *first < INT_MIN || *first > INT_MAX)
    return Reply::Error("ERR invalid first DB index");
  if (!second || *second < INT_MIN || *second > INT_MAX)
    return Reply::Error("ERR invalid second DB index");
  if (*first < 0 || *first >= Emulator::kDatabases || *second < 0 ||
      *second >= Emulator::kDatabases)
    return Reply::Error("ERR DB index is out of range");
  if (*first == *second) return Reply::Ok();
  em.touch_all(static_cast<int>(*first), static_cast<int>(*second));
  em.touch_all(static_cast<int>(*second), static_cast<int>(*first));
  const int current = em.db_;
  em.select(static_cast<int>(*first));
  em.last_ = em.keys_.end();
  em.keys_.swap(em.parked_[*second]);
  em.select(current);
  em.last_ = em.keys_.end();
  return Reply::Ok();
}

// moveCommand: the key, with its expiry, into another database where it is not yet.
Reply Commands::Move(Emulator& em, const Argv& a) {
  Reply error;
  const auto db = DbIndex(a[2], &error);
  if (!db) return error;
  if (*db == em.db_) return Reply::Error("ERR source and destination objects are the same");
  Entry* e = em.lookup(a[1]);
  if (!e) return Reply::Integer(0);
  auto& target = em.parked_[*db];
  if (auto it = target.find(a[1]); it != target.end()) {
    if (em.alive(it->second)) return Reply::Integer(0);
    target.erase(it);
  }
  target.emplace(a[1], std::move(*e));
  em.erase_key(a[1]);
  if (!em.watchers_.empty()) em.touch_watched(*db, a[1]);
  return Reply::Integer(1);
}

namespace {

// The parameters CONFIG GET and SET know, with redis-server 7.0.15's defaults, and the old names
// Redis still accepts for the listpack ones. Their values are kept and read back; none changes
// what the emulator does (an application's tests read them, or set one and read it back).
struct ConfigParameter {
  const char* name;
  const char* alias;
  const char* value;
};
constexpr ConfigParameter kConfig[] = {
    {"appendonly", nullptr, "no"},
    {"busy-reply-threshold", "lua-time-limit", "5000"},
    {"client-query-buffer-limit", nullptr, "1073741824"},
    {"databases", nullptr, "16"},
    {"hash-max-listpack-entries", "hash-max-ziplist-entries", "128"},
    {"hash-max-listpack-value", "hash-max-ziplist-value", "64"},
    {"lazyfree-lazy-expire", nullptr, "no"},
    {"lazyfree-lazy-server-del", nullptr, "no"},
    {"lazyfree-lazy-user-del", nullptr, "no"},
    {"lazyfree-lazy-user-flush", nullptr, "no"},
    {"list-compress-depth", nullptr, "0"},
    {"list-max-listpack-size", "list-max-ziplist-size", "-2"},
    {"maxclients", nullptr, "10000"},
    {"maxmemory", nullptr, "0"},
    {"min-replicas-to-write", "min-slaves-to-write", "0"},
    {"maxmemory-policy", nullptr, "noeviction"},
    {"notify-keyspace-events", nullptr, ""},
    {"proto-max-bulk-len", nullptr, "536870912"},
    {"rdb-key-save-delay", nullptr, "0"},
    {"repl-ping-replica-period", "repl-ping-slave-period", "10"},
    {"replica-read-only", "slave-read-only", "yes"},
    {"replica-serve-stale-data", "slave-serve-stale-data", "yes"},
    {"save", nullptr, ""},
    {"set-max-intset-entries", nullptr, "512"},
    {"stream-node-max-bytes", nullptr, "4096"},
    {"stream-node-max-entries", nullptr, "100"},
    {"timeout", nullptr, "0"},
    {"zset-max-listpack-entries", "zset-max-ziplist-entries", "128"},
    {"zset-max-listpack-value", "zset-max-ziplist-value", "64"},
};

const ConfigParameter* FindConfig(const std::string& name) {
  for (const ConfigParameter& p : kConfig)
    if (absl::EqualsIgnoreCase(name, p.name) || (p.alias && absl::EqualsIgnoreCase(name, p.alias)))
      return &p;
  return nullptr;
}

}  // namespace

// (On the hot path of every hash, set and sorted-set insert: a run that never CONFIG SETs
// skips the map, and the defaults are parsed once.)
int64_t Commands::ConfigInt(const Emulator& em, std::string_view name) {
  if (!em.config_.empty()) {
    const auto set = em.config_.find(std::string(name));
    if (set != em.config_.end()) return String2ll(set->second).value_or(0);
  }
  static const absl::flat_hash_map<std::string_view, int64_t> defaults = [] {
    absl::flat_hash_map<std::string_view, int64_t> d;
    for (const ConfigParameter& p : kConfig) d[p.name] = String2ll(p.value).value_or(0);
    return d;
  }();
  const auto it = defaults.find(name);
  return it == defaults.end() ? 0 : it->second;
}

// objectCommand: ENCODING, REFCOUNT, IDLETIME, FREQ and HELP; a missing key is a nil.
Reply Commands::Object(Emulator& em, const Argv& a) {
  if (a.size() == 2 && Is(a[1], "HELP"))
    return HelpReply("OBJECT",
                     {"ENCODING <key>",
                      "    Return the kind of internal representation used in order to "
                      "store the value",
                      "    associated with a <key>.", "FREQ <key>",
                      "    Return the access frequency index of the <key>. The returned "
                      "integer is",
                      "    proportional to the logarithm of the recent access frequency "
                      "of the key.",
                      "IDLETIME <key>",
                      "    Return the idle time of the <key>, that is the approximated "
                      "number of",
                      "    seconds elapsed since the last access to the key.", "REFCOUNT <key>",
                      "    Return the number of references of the value associated with "
                      "the specified",
                      "    <key>."});
  // Redis 7.0 has each subcommand in its command table: an unknown one, or a known one with
  // the wrong arity, is refused before it runs.
  const bool known = Is(a[1], "REFCOUNT") || Is(a[1], "ENCODING") || Is(a[1], "IDLETIME") ||
                     Is(a[1], "FREQ") || Is(a[1], "HELP");
  if (!known) return UnknownSubcommand(a);
  if (a.size() != (Is(a[1], "HELP") ? 2u : 3u))
    return Reply::Error(WrongArity("object|" + ToLower(a[1])));
  const Entry* e = em.lookup(a[2]);
  if (!e) return Reply::Nil();
  const std::string encoding = Encoding(em, *e);
  if (Is(a[1], "ENCODING")) return Reply::Bulk(encoding);
  if (Is(a[1], "REFCOUNT")) {
    // Integers 0..9999 are Redis's shared objects (OBJ_SHARED_REFCOUNT).
    const auto n = encoding == "int" ? String2ll(std::get<std::string>(e->value)) : std::nullopt;
    return Reply::Integer(n && *n >= 0 && *n < 10000 ? INT_MAX : 1);
  }
  std::string policy = "noeviction";
  if (const auto set = em.config_.find("maxmemory-policy"); set != em.config_.end())
    policy = set->second;
  const bool lfu = absl::StrContains(policy, "lfu");
  if (Is(a[1], "IDLETIME")) {
    if (lfu)
      return Reply::Error(
          "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when "
          "switching between policies at runtime LRU and LFU data will take some time to adjust.");
    return Reply::Integer(0);  // the emulator keeps no access clock
  }
  if (!lfu)
    return Reply::Error(
        "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note "
        "that when switching between policies at runtime LRU and LFU data will take some time to "
        "adjust.");
  return Reply::Integer(0);
}

// MEMORY USAGE key [SAMPLES count]: a nil for a missing key, else an estimate of the bytes the
// key and its value take (their lengths plus a fixed overhead per element), not what Redis's
// allocator would count.
Reply Commands::Memory(Emulator& em, const Argv& a) {
  if (!Is(a[1], "USAGE")) return Unsupported("MEMORY " + a[1]);
  if (a.size() < 3) return Reply::Error(WrongArity("memory|usage"));
  for (size_t j = 3; j < a.size(); ++j) {
    if (Is(a[j], "SAMPLES") && j + 1 < a.size()) {
      if (!String2ll(a[++j])) return Reply::Error(kNotInteger);
    } else {
      return Reply::Error(kSyntax);
    }
  }
  const Entry* e = em.lookup(a[2]);
  if (!e) return Reply::Nil();
  constexpr int64_t kPerElement = 16;
  int64_t bytes = 56 + static_cast<int64_t>(a[2].size());
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          bytes += static_cast<int64_t>(v.size());
        } else if constexpr (std::is_same_v<T, HashValue>) {
          for (const auto& [f, sv] : v.fields)
            bytes += kPerElement + static_cast<int64_t>(f.size() + sv.second.size());
        } else if constexpr (std::is_same_v<T, ZSetValue>) {
          for (const auto& [m, score] : v.scores)
            bytes += kPerElement + 8 + static_cast<int64_t>(m.size());
        } else if constexpr (std::is_same_v<T, SetValue>) {
          for (const std::string& m : v.members)
            bytes += kPerElement + static_cast<int64_t>(m.size());
        } else if constexpr (std::is_same_v<T, ListValue>) {
          for (const std::string& m : v.items)
            bytes += kPerElement + static_cast<int64_t>(m.size());
        } else {
          for (const auto& [id, fields] : v.entries) {
            bytes += kPerElement + 16;
            for (const std::string& f : fields) bytes += static_cast<int64_t>(f.size());
          }
        }
      },
      e->value);
  return Reply::Integer(bytes);
}

// strEncoding of the encoding Redis 7.0.15 would hold the value in. A string's is read from its
// bytes (int when string2l reads it, embstr up to 44 bytes, raw above): Redis also keeps raw a
// short string that APPEND or SETRANGE made, which the emulator does not tell apart.
std::string Commands::Encoding(const Emulator& em, const Entry& e) {
  (void)em;
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          if (v.size() <= 20 && String2ll(v)) return "int";
          return v.size() <= 44 ? "embstr" : "raw";
        } else if constexpr (std::is_same_v<T, HashValue>) {
          return v.listpack ? "listpack" : "hashtable";
        } else if constexpr (std::is_same_v<T, ZSetValue>) {
          return v.listpack ? "listpack" : "skiplist";
        } else if constexpr (std::is_same_v<T, SetValue>) {
          return v.intset ? "intset" : "hashtable";
        } else if constexpr (std::is_same_v<T, ListValue>) {
          return "quicklist";  // Redis 7.0's only list encoding
        } else {
          return "stream";
        }
      },
      e.value);
}

// addReplyHelp: the command's usage line, the lines given, then HELP's own, as status replies.
Reply Commands::HelpReply(const std::string& command, std::initializer_list<const char*> lines) {
  std::vector<Reply> out;
  out.push_back(
      Reply::Status(command + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"));
  for (const char* line : lines) out.push_back(Reply::Status(line));
  out.push_back(Reply::Status("HELP"));
  out.push_back(Reply::Status("    Prints this help."));
  return Reply::Array(std::move(out));
}

// processCommand's refusal of a subcommand its container does not have.
Reply Commands::UnknownSubcommand(const Argv& a) {
  return Reply::Error("ERR unknown subcommand '" + a[1].substr(0, 128) + "'. Try " +
                      absl::AsciiStrToUpper(a[0]) + " HELP.");
}

// configGetCommand (a pattern per argument, each parameter once, under the name that matched)
// and configSetCommand (name value pairs, all or none applied).
Reply Commands::Config(Emulator& em, const Argv& a) {
  if (Is(a[1], "GET")) {
    if (a.size() < 3) return Reply::Error(WrongArity("config|get"));
    std::vector<Reply> out;
    std::vector<const ConfigParameter*> given;
    for (size_t j = 2; j < a.size(); ++j) {
      const std::string pattern = ToLower(a[j]);
      for (const ConfigParameter& p : kConfig)
        for (const char* name : {p.name, p.alias}) {
          if (!name || !GlobMatch(pattern, name)) continue;
          if (std::find(given.begin(), given.end(), &p) != given.end()) break;
          given.push_back(&p);
          const auto set = em.config_.find(p.name);
          out.push_back(Reply::Bulk(name));
          out.push_back(Reply::Bulk(set != em.config_.end() ? set->second : p.value));
          break;
        }
    }
    return Reply::Array(std::move(out));
  }
  if (Is(a[1], "SET")) {
    if (a.size() < 4 || a.size() % 2 != 0) return Reply::Error(WrongArity("config|set"));
    std::vector<std::pair<const ConfigParameter*, std::string>> changes;
    for (size_t j = 2; j + 1 < a.size(); j += 2) {
      const ConfigParameter* p = FindConfig(a[j]);
      if (!p)
        return Reply::Error("ERR Unknown option or number of arguments for CONFIG SET - '" + a[j] +
                            "'");
      changes.emplace_back(p, a[j + 1]);
    }
    for (const auto& [p, value] : changes) em.config_[p->name] = value;
    return Reply::Ok();
  }
  if (Is(a[1], "RESETSTAT")) return Reply::Ok();
  return Unsupported("CONFIG " + a[1]);
}

// DEBUG SET-ACTIVE-EXPIRE: Redis's test suite turns active expiry off to watch stale keys. The
// emulator has none (a key goes only when read), so either setting is accepted and changes
// nothing; the rest of DEBUG is not emulated.
Reply Commands::Debug(Emulator& em, const Argv& a) {
  if (Is(a[1], "SET-ACTIVE-EXPIRE") && a.size() == 3) return Reply::Ok();  // atoi: any value
  // DEBUG OBJECT key: debug.c's line, with the encoding OBJECT ENCODING gives; the address,
  // serialized length and LRU clock are not kept (0), and a list has no quicklist figures.
  if (Is(a[1], "OBJECT") && a.size() == 3) {
    const Entry* e = em.lookup(a[2]);
    if (!e) return Reply::Error("ERR no such key");
    return Reply::Status("Value at:0x0 refcount:1 encoding:" + Encoding(em, *e) +
                         " serializedlength:0 lru:0 lru_seconds_idle:0");
  }
  // DEBUG RELOAD: the data saved and loaded again, as rdbLoadObject re-encodes it (a set of at
  // most set-max-intset-entries integers is an intset again; a hash or sorted set that fits
  // the listpack limits is a listpack again); keys already expired are not loaded.
  if (Is(a[1], "RELOAD")) {
    for (int db = 0; db < Emulator::kDatabases; ++db) {
      auto& keys = em.db_map(db);
      for (auto it = keys.begin(); it != keys.end();) {
        if (it->second.expire_at >= 0 && it->second.expire_at <= em.now_) {
          it = keys.erase(it);
          continue;
        }
        Reencode(em, it->second.value);
        ++it;
      }
    }
    em.last_ = em.keys_.end();
    return Reply::Ok();
  }
  return Unsupported("DEBUG " + a[1]);
}

void Commands::Reencode(const Emulator& em, Value& value) {
  if (auto* set = std::get_if<SetValue>(&value)) {
    SetValue loaded;
    for (const std::string& m : set->members) SetInsert(em, loaded, m);
    *set = std::move(loaded);
  } else if (auto* h = std::get_if<HashValue>(&value)) {
    const auto max_value = static_cast<size_t>(ConfigInt(em, "hash-max-listpack-value"));
    h->listpack =
        static_cast<int64_t>(h->fields.size()) <= ConfigInt(em, "hash-max-listpack-entries");
    for (const auto& [f, v] : h->fields)
      if (f.size() > max_value || v.second.size() > max_value) h->listpack = false;
  } else if (auto* z = std::get_if<ZSetValue>(&value)) {
    z->listpack =
        static_cast<int64_t>(z->scores.size()) <= ConfigInt(em, "zset-max-listpack-entries");
    for (const auto& [m, score] : z->scores)
      if (static_cast<int64_t>(m.size()) > ConfigInt(em, "zset-max-listpack-value"))
        z->listpack = false;
  }
}

Reply Commands::Multi(Emulator& em, const Argv&) {
  Emulator::Session& s = em.session();
  if (s.multi) return Reply::Error("ERR MULTI calls can not be nested");
  s.multi = true;
  return Reply::Ok();
}

Reply Commands::Discard(Emulator& em, const Argv&) {
  Emulator::Session& s = em.session();
  if (!s.multi) return Reply::Error("ERR DISCARD without MULTI");
  em.discard(s);
  return Reply::Ok();
}

Reply Commands::Exec(Emulator& em, const Argv&) { return em.exec(); }

Reply Commands::Watch(Emulator& em, const Argv& a) {
  Emulator::Session& s = em.session();
  if (s.multi) return Reply::Error("ERR WATCH inside MULTI is not allowed");
  if (s.dirty_cas) return Reply::Ok();  // no point in watching: EXEC fails already
  for (size_t i = 1; i < a.size(); ++i) em.watch(a[i]);
  return Reply::Ok();
}

Reply Commands::Unwatch(Emulator& em, const Argv&) {
  em.unwatch_all(em.client_);
  em.session().dirty_cas = false;
  return Reply::Ok();
}

}  // namespace testbed::sim
