// In-process Redis 7.0 emulator: the subset of commands the seeds use, Redis's expiry rules in
// virtual milliseconds, and EVAL/EVALSHA running the real Lua scripts on Lua 5.1 + lua-cjson.
//
// Contract:
//   - Single-threaded and deterministic: no wall clock, no hash-map iteration, no randomness.
//   - Every reply and error string is Redis 7.0's, word for word (proven by the differential
//     fidelity tests against a spawned redis-server 7.0).
//   - A command outside the subset answers "ERR unsupported by the emulator: ..." rather than
//     guessing.
//   - Expiry: a key with expiry T is alive while now <= T; PTTL is 0 at T; gone at T + 1.
//     Time is read once per command and is frozen for the whole of a script.
//
// Documented deviations from redis-server:
//   - A script that runs more than `script_instruction_budget` Lua VM instructions stops with
//     an error reply (redis-server would keep running and answer BUSY to everyone else).
//   - SCAN cursors are handles to a resume point in key order, not hash-table positions; the
//     set of keys a full iteration returns follows Redis's guarantees, the order does not.
//   - KEYS and hash-table-encoded HGETALL return keys in a deterministic order (Redis: hash
//     order). The differential checks compare those replies as sets.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "sim/prng.h"
#include "sim/reply.h"

namespace testbed::sim {

struct EmulatorOptions {
  // Lua VM instructions a single script may run before it is stopped with an error.
  int64_t script_instruction_budget = 200'000'000;
  // Deliberate deviations, used only by the negative tests that prove the fidelity check
  // catches them. Both default to Redis's behaviour.
  int64_t fault_expiry_shift_ms = 0;              // a key is alive while now <= T + shift
  bool fault_cjson_empty_table_as_array = false;  // cjson.encode({}) gives "[]"
};

struct StreamId {
  uint64_t ms = 0;
  uint64_t seq = 0;
  auto operator<=>(const StreamId&) const = default;
  std::string str() const { return std::to_string(ms) + "-" + std::to_string(seq); }
};

struct HashValue {
  // field -> (insertion sequence, value). HGETALL on a listpack-encoded hash returns fields in
  // insertion order (an update keeps its place), as Redis 7.0 does.
  std::map<std::string, std::pair<uint64_t, std::string>> fields;
  uint64_t next_seq = 0;
  bool listpack = true;  // false once Redis would have converted it to a hash table
};

// (score, member) in Redis's order: by score, then by member bytes. Transparent, so that a
// member is found by a (score, view) pair without copying its name.
struct ZSetOrder {
  using is_transparent = void;
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    if (a.first != b.first) return a.first < b.first;
    return std::string_view(a.second) < std::string_view(b.second);
  }
};

struct ZSetValue {
  std::map<std::string, double> scores;
  std::set<std::pair<double, std::string>, ZSetOrder> ordered;
  // false once Redis would have converted it to a skiplist (zset-max-listpack-entries and
  // -value); OBJECT ENCODING and the score -0 depend on it.
  bool listpack = true;
};

struct StreamValue {
  std::map<StreamId, std::vector<std::string>> entries;
  StreamId last_id;
};

struct ListValue {
  std::deque<std::string> items;
};

struct SetValue {
  std::set<std::string> members;
  // false once Redis would have converted it to a hash table (a member not an integer, or more
  // than set-max-intset-entries); OBJECT ENCODING says which.
  bool intset = true;
};

using Value = std::variant<std::string, HashValue, ZSetValue, StreamValue, ListValue, SetValue>;

struct Entry {
  Value value;
  int64_t expire_at = -1;  // absolute ms, -1 for none
};

class LuaScripting;

class Emulator : public RedisConnection {
 public:
  Emulator(const Clock& clock, EmulatorOptions options = {});
  ~Emulator() override;
  Emulator(const Emulator&) = delete;  // last_ points into keys_
  Emulator& operator=(const Emulator&) = delete;

  CallResult call(const Argv& argv) override { return execute(argv); }
  Reply execute(const Argv& argv);

  // Introspection for the differential checks (never used by client logic).
  // A canonical text dump of every live key: type, value, PTTL; sorted by key.
  std::string dump_keyspace();
  bool hash_is_listpack(const std::string& key);
  const EmulatorOptions& options() const { return options_; }
  // Called with every command the emulator dispatches, from clients and from scripts
  // (coverage tables). Never changes behaviour.
  std::function<void(const Argv&, bool from_script)> observer;

  // Used by the scripting layer: run one command from inside a script at frozen time.
  Reply execute_from_script(const Argv& argv, bool* known_command, bool* arity_ok);

  // Whole-state copy and restore of the selected database (snapshots for restarts and replicas
  // in the runtime, which uses database 0 only).
  std::map<std::string, Entry> snapshot() const { return keys_; }
  void restore(std::map<std::string, Entry> keys) {
    last_ = keys_.end();
    keys_ = std::move(keys);
    last_ = keys_.end();
  }

  // Connections (serve's clients, a capture's addresses): each has its own selected database,
  // MULTI queue and WATCHed keys, as a redis-server client does. Commands run as the client
  // last named here (0 until then: the simulation's one connection). drop_client forgets one
  // that has gone (its watches, its queue).
  static constexpr int kDatabases = 16;
  void use_client(uint64_t id);
  void drop_client(uint64_t id);
  uint64_t client() const { return client_; }
  int db() const { return db_; }
  bool in_multi() const;  // the client's commands are being queued
  // A number below n from the emulator's own PRNG (SPOP, SRANDMEMBER): the same every run.
  uint64_t random_below(uint64_t n) { return prng_.below(n); }

 private:
  friend struct Commands;
  friend class LuaScripting;  // a no-writes script runs read-only
  // A connection's state (multi.c's client flags and mstate, the client's db and name).
  struct WatchedKey {
    int db;
    std::string key;
    bool expired;  // the key had expired when it was watched (multi.c watchedKey.expired)
  };
  struct Session {
    int db = 0;
    std::string name;
    bool multi = false;
    bool dirty_exec = false;  // an error while queueing: EXEC answers EXECABORT
    bool dirty_cas = false;   // a watched key was touched: EXEC answers a nil array
    std::vector<Argv> queued;
    std::vector<WatchedKey> watched;
  };
  Session& session() { return *session_; }
  void select(int db);  // the selected database becomes keys_
  std::map<std::string, Entry>& db_map(int db) { return db == db_ ? keys_ : parked_[db]; }
  bool expired_in(int db, const std::string& key);  // present and past its expiry (keyIsExpired)
  // multi.c's WATCH machinery: touch is signalModifiedKey, called wherever Redis calls it;
  // touch_all is touchAllWatchedKeysInDb (FLUSHDB, FLUSHALL, SWAPDB).
  void touch(const std::string& key) {
    if (!watchers_.empty()) touch_watched(db_, key);
  }
  void touch_watched(int db, const std::string& key);
  void touch_all(int emptied, int replaced_with);
  void watch(const std::string& key);
  WatchedKey* watched_by(uint64_t client, int db, const std::string& key);
  void unwatch_all(uint64_t client);
  bool watched_key_expired(uint64_t client);
  void discard(Session& s);  // discardTransaction: queue, flags and watches gone
  Reply exec();
  Reply dispatch(const Argv& argv, bool from_script, bool* known, bool* arity_ok);
  Entry* lookup(const std::string& key);  // nullptr if missing or expired (deletes expired)
  bool alive(const Entry& e) const;
  // Every erase goes through here: it forgets lookup()'s last hit when that is the key, and
  // touches the key for WATCH.
  void erase_key(const std::string& key);

  const Clock& clock_;
  EmulatorOptions options_;
  int64_t now_ = 0;  // time of the command (or of the script) being executed
  bool in_script_ = false;
  bool read_only_script_ = false;  // EVAL_RO, EVALSHA_RO, or a shebang's flags=no-writes
  std::map<std::string, Entry> keys_;
  // lookup()'s last hit (keys_.end(): none). A script touches one key several times in a row
  // (the quota index: ZREMRANGEBYSCORE, ZCARD, ZADD, PEXPIRE), and one comparison of the whole
  // key costs less than the walk down the tree, which compares the keys' long shared prefixes
  // at every level. Inserts keep a map's iterators valid; erase_key and restore forget it.
  std::map<std::string, Entry>::iterator last_ = keys_.end();
  std::map<uint64_t, std::string> scan_cursors_;  // cursor -> last key returned
  uint64_t next_cursor_ = 1;
  std::unique_ptr<LuaScripting> lua_;
  Prng prng_{0};
  std::map<std::string, std::string> config_;  // CONFIG SET's values by parameter name
  int db_ = 0;                                 // keys_ is this database; parked_[db_] is empty
  std::array<std::map<std::string, Entry>, kDatabases> parked_;
  uint64_t client_ = 0;
  std::map<uint64_t, Session> sessions_;  // a map: session_ stays valid as clients come
  Session* session_;
  // (db, key) -> the clients watching it, in the order they began to (multi.c's
  // db->watched_keys lists).
  std::map<std::pair<int, std::string>, std::vector<uint64_t>> watchers_;
};

// One client connection of an emulator: its calls run as that client (its database, its MULTI
// queue, its watched keys), as a second connection to one redis-server would.
class EmulatorClient : public RedisConnection {
 public:
  EmulatorClient(Emulator& em, uint64_t id) : em_(em), id_(id) {}
  CallResult call(const Argv& argv) override {
    em_.use_client(id_);
    return em_.execute(argv);
  }

 private:
  Emulator& em_;
  uint64_t id_;
};

}  // namespace testbed::sim
