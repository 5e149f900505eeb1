// Differential fidelity: the same random command sequence, interleaved with virtual-time
// advances, runs on the emulator and on a spawned redis-server 7.0; every reply must match
// byte for byte (RESP2) and the whole keyspace (types, values, PTTL) must match at checkpoints.
//
// The sequence is generated up front from the seed and never depends on replies, so it can be
// shrunk: on a divergence the failing prefix is cut down (delta debugging) to the shortest
// sequence that still diverges. Arguments that name "now" are resolved at run time from the
// virtual clock, so removing a time advance keeps them meaningful.
//
// Replies whose order Redis leaves to its hash tables are compared as sets: KEYS, full SCAN
// iterations, and HGETALL (also through a script) of a hash that Redis keeps as a hash table.
#pragma once

#include <cstdint>
#include <functional>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/emulator.h"
#include "sim/prng.h"
#include "sim/reply.h"

namespace testbed::sim::fidelity {

struct Arg {
  std::string text;
  bool relative_to_now = false;  // value is now + offset at execution time
  int64_t offset = 0;
};

enum class Compare { kExact, kSortedArray, kUnorderedPairs };

struct Step {
  enum class Kind { kCommand, kAdvance, kScanAll, kCheckpoint };
  Kind kind = Kind::kCommand;
  std::vector<Arg> args;   // command (kCommand) or SCAN options (kScanAll)
  int64_t advance_ms = 0;  // kAdvance
  Compare compare = Compare::kExact;
  std::string hash_key;        // kUnorderedPairs only if this hash is a hash table
  std::string script_id;       // which seed script an EVAL/EVALSHA runs, for coverage
  std::string render() const;  // one line, for counterexamples
};

// The draws a generator makes, one PRNG in one fixed order; a script's arguments are drawn with
// them (Script::shape).
class ArgDraws {
 public:
  explicit ArgDraws(uint64_t seed) : rng_(seed) {}
  Arg Lit(std::string s) { return Arg{std::move(s)}; }
  Arg Now(int64_t offset) { return Arg{"", true, offset}; }  // now + offset, at run time
  std::string Pick(const std::vector<std::string>& v) { return rng_.pick(v); }
  int64_t PickInt(const std::vector<int64_t>& v) { return rng_.pick(v); }
  bool Chance(uint64_t n, uint64_t d) { return rng_.chance({n, d}); }
  int64_t Range(int64_t lo, int64_t hi) { return rng_.range(lo, hi); }
  std::string Int(int64_t lo, int64_t hi) { return std::to_string(Range(lo, hi)); }
  std::string AnyKey();   // a key of any type, or none
  std::string Scalar();   // numbers at their limits, garbage, binary
  std::string Json();     // JSON cjson may bend: empty containers, big numbers, surrogates, depth
  std::string SmallMs();  // a millisecond count that lands on expiry boundaries often
  // A state envelope ({"value":...,"version":...}), or now and then one that is not.
  std::string Envelope();

 protected:
  Prng rng_;
};

// A seed script as the generator calls it: its arguments are drawn by `shape`, which the system
// that ships the script supplies (harness: FidelityScripts). Without one, it runs with no keys
// and no arguments.
struct ScriptShape {
  std::vector<Arg> keys, args;
  // Arguments past this one are never replaced by garbage (a value the script must read whole).
  size_t garbage_limit = SIZE_MAX;
  Compare compare = Compare::kExact;
  std::string hash_key;  // kUnorderedPairs: the hash whose order Redis leaves to its table
};
struct Script {
  std::string id;  // "a2/0.5.0/APPEND_LUA"
  std::string body;
  std::function<ScriptShape(ArgDraws&)> shape;
};

// The server the emulator is compared with (a spawned redis-server: real/real_backend.h).
class ReferenceServer {
 public:
  virtual ~ReferenceServer() = default;
  // Empties it (keys and scripts) and sets its clock; the connection its calls then go through.
  virtual RedisConnection& Reset(int64_t now_ms) = 0;
  virtual void SetTimeMs(int64_t now_ms) = 0;
  // The keyspace as Emulator::dump_keyspace writes it.
  virtual std::string DumpKeyspace() = 0;
};

// The steps of a campaign, one at a time, from the seed: a campaign of any length runs in
// constant memory, and the prefix up to a divergence is generated again for shrinking.
class StepStream {
 public:
  StepStream(uint64_t seed, int64_t commands, const std::vector<Script>& scripts,
             int checkpoint_every = 100);
  ~StepStream();
  bool Next(Step* out);  // false at the end

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The first max_steps steps of the same sequence, as a vector.
std::vector<Step> Generate(uint64_t seed, int64_t commands, const std::vector<Script>& scripts,
                           int checkpoint_every = 100, size_t max_steps = SIZE_MAX);

struct Divergence {
  size_t step = 0;
  std::string emulator;  // what the emulator said (reply or keyspace dump)
  std::string redis;     // what redis-server said
};

struct Coverage {
  std::map<std::string, int64_t> commands;       // "SET PX", "ZADD NX", "SCAN MATCH COUNT", ...
  std::map<std::string, int64_t> script_shapes;  // "state/beta30/... -> [1,bulk]"
};

// One or two worlds: the emulator always, the spawned server if given.
class Runner {
 public:
  Runner(ReferenceServer* server, EmulatorOptions options);
  // Runs from a clean state (fresh emulator, flushed server). Stops at the first divergence.
  std::optional<Divergence> run(const std::vector<Step>& steps, Coverage* coverage = nullptr,
                                std::string* trace_hash = nullptr);
  // The same, streamed (the trace hash is the same as for the vector); *count: steps run.
  std::optional<Divergence> run(StepStream& steps, size_t* count, Coverage* coverage = nullptr,
                                std::string* trace_hash = nullptr);
  int64_t runs() const { return runs_; }

 private:
  class Session;
  ReferenceServer* server_;
  EmulatorOptions options_;
  int64_t runs_ = 0;
};

// The shortest sub-sequence of `steps` (kept in order) that still diverges; `budget` runs at most.
std::vector<Step> Shrink(std::vector<Step> steps, Runner& runner, int budget = 400);

// The coverage table, printed by `testbed fidelity`.
std::string FormatCoverage(const Coverage& c);
// Every command/option of the subset that a campaign is expected to exercise.
std::vector<std::string> ExpectedCoverage();

}  // namespace testbed::sim::fidelity
