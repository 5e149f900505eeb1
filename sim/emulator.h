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

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

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
};

struct StreamValue {
  std::map<StreamId, std::vector<std::string>> entries;
  StreamId last_id;
};

using Value = std::variant<std::string, HashValue, ZSetValue, StreamValue>;

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

  // Whole-state copy and restore (snapshots for restarts and replicas in the runtime).
  std::map<std::string, Entry> snapshot() const { return keys_; }
  void restore(std::map<std::string, Entry> keys) {
    last_ = keys_.end();
    keys_ = std::move(keys);
    last_ = keys_.end();
  }

 private:
  friend struct Commands;
  friend class LuaScripting;  // a no-writes script runs read-only
  Reply dispatch(const Argv& argv, bool from_script, bool* known, bool* arity_ok);
  Entry* lookup(const std::string& key);  // nullptr if missing or expired (deletes expired)
  bool alive(const Entry& e) const;
  // Every erase goes through here: it forgets lookup()'s last hit when that is the key.
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
};

}  // namespace testbed::sim
