// Property "memory-matches-redis" of the state store: each client runs the same operations on the
// SDK's memory backend and on the Redis backend, in lockstep, and compares what each returns.
#include <absl/strings/escaping.h>
#include <absl/strings/match.h>
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "model/state_store.h"
#include "properties/state/state_workload.h"
#include "sim/clock.h"

namespace testbed::props::state {
namespace {

// The anomaly classes this file names, declared once: its table and its judge use them.
constexpr char kDiffersOnListOrder[] = "differs-on-list-order";
constexpr char kDiffersOnListLimit[] = "differs-on-list-limit";
constexpr char kValueDiffers[] = "value-differs";
constexpr char kErrorPrecedence[] = "error-precedence";
constexpr char kCasRefusedAtCurrentVersionMemoryMatchesRedis[] = "cas-refused-at-current-version";

// A row as a caller sees it: value, version and the times (`with_value` false: all but the
// value, to tell a bent value from other differences).
std::string ShowRow(const real::state::StateValue& v, bool with_value = true) {
  return v.key + "=" + (with_value ? real::state::Stringify(v.value) : "_") + " v" +
         std::to_string(v.version) + " exp " + v.expires_at + " created " + v.created_at;
}

std::string ShowRows(const std::vector<real::state::StateValue>& rows, bool with_value = true) {
  std::string out = "[";
  for (const real::state::StateValue& r : rows)
    out += (out.size() > 1 ? ", " : "") + ShowRow(r, with_value);
  return out + "]";
}

// What one backend answered: in full, and with the values left out.
struct Answer {
  std::string full, shape;
  void row(const std::string& lead, const std::optional<real::state::StateValue>& v) {
    full = lead + (v ? ShowRow(*v) : "null");
    shape = lead + (v ? ShowRow(*v, false) : "null");
  }
  void rows(const std::vector<real::state::StateValue>& r) {
    full = ShowRows(r);
    shape = ShowRows(r, false);
  }
  void text(const std::string& t) { full = shape = t; }
  bool error() const { return full.rfind("error: ", 0) == 0; }
  bool refused_at_expected = false;  // compareAndSet failed, reporting the expected version
};

std::vector<std::string> KeysOf(const std::vector<real::state::StateValue>& rows, bool with_value) {
  std::vector<std::string> keys;
  for (const real::state::StateValue& r : rows) keys.push_back(ShowRow(r, with_value));
  return keys;
}

// One drawn call of memory-matches-redis.
struct LockstepCall {
  enum class Op { kGet, kSet, kCas, kDelete, kList } op = Op::kGet;
  std::string key;
  real::state::Json value;
  std::optional<int64_t> ttl;
  int64_t expected = 0;               // compareAndSet
  bool stale = false;                 // compareAndSet: expected is not the current version
  bool bad_policy = false;            // the ttl is past maxTtl or the value past maxValueBytes
  std::optional<std::string> prefix;  // list
  std::optional<int64_t> limit;       // list
  std::string text;                   // the call as printed
};

// A compareAndSet's expected version is the memory backend's current one (or one past it, when
// stale): the caller reads it and writes the call's text (value_text) after this.
LockstepCall DrawLockstepCall(sim::Prng& rng, int i, const std::vector<std::string>& keys,
                              const real::state::NamespaceOptions& o, int64_t ttl_max,
                              std::string* value_text_out) {
  LockstepCall c;
  const uint64_t roll = rng.below(100);
  c.key = keys[rng.below(keys.size())];
  const std::string quoted = "\"" + c.key + "\"";
  // TTLs past maxTtl (a third of the range) and values past maxValueBytes are valid calls
  // that both backends must refuse alike.
  if (ttl_max > 0) c.ttl = rng.range(1, ttl_max + ttl_max / 2);
  const std::string ttl_text = c.ttl ? std::to_string(*c.ttl) : "default";
  const uint64_t value_roll = rng.below(10);
  if (value_roll == 0) {
    c.value = std::string(static_cast<size_t>(o.max_value_bytes), 'x');
  } else if (value_roll < 4) {
    c.value = AdversarialValue(rng, /*deep=*/false).value;
  } else {
    c.value = real::state::Json::object();
    c.value["n"] = i;
  }
  c.bad_policy = c.ttl.value_or(o.default_ttl_ms) > o.max_ttl_ms ||
                 static_cast<int64_t>(real::state::Stringify(c.value).size()) > o.max_value_bytes;
  const std::string value_text = value_roll == 0 ? "<" + std::to_string(o.max_value_bytes) + " x's>"
                                                 : real::state::Stringify(c.value);
  if (roll < 25) {
    c.op = LockstepCall::Op::kGet;
    c.text = "get(" + quoted + ")";
  } else if (roll < 45) {
    c.op = LockstepCall::Op::kSet;
    c.text = "set(" + quoted + ", " + value_text + ", ttl " + ttl_text + ")";
  } else if (roll < 70) {
    c.op = LockstepCall::Op::kCas;
    c.stale = rng.chance({1, 3});
    *value_text_out = value_text + ", ttl " + ttl_text;
  } else if (roll < 82) {
    c.op = LockstepCall::Op::kDelete;
    c.text = "delete(" + quoted + ")";
  } else {
    c.op = LockstepCall::Op::kList;
    const uint64_t p = rng.below(4);
    if (p == 1) c.prefix = "";
    if (p >= 2) c.prefix = p == 2 ? keys[1].substr(0, 2) : keys[2];
    if (rng.chance({1, 2})) c.limit = rng.range(1, 2);
    c.text = "list(prefix " + (c.prefix ? "\"" + *c.prefix + "\"" : std::string("none")) +
             ", limit " + (c.limit ? std::to_string(*c.limit) : std::string("default")) + ")";
  }
  return c;
}

// The class of a disagreement: list() order and limits, which of two errors a compareAndSet
// reports, and values that come back bent are told apart from other differences, so a
// baseline can accept one without the other.
std::string LockstepClass(const LockstepCall& c, const Answer& redis, const Answer& memory,
                          const std::vector<real::state::StateValue>& redis_rows,
                          const std::vector<real::state::StateValue>& memory_rows,
                          const std::vector<real::state::StateValue>& memory_all) {
  static const char* kNames[] = {"get", "set", "compareAndSet", "delete", "list"};
  const std::string generic = std::string("differs-on-") + kNames[static_cast<int>(c.op)];
  if (c.op == LockstepCall::Op::kCas && c.stale && c.bad_policy && redis.error() != memory.error())
    return kErrorPrecedence;
  if (redis.error() || memory.error()) return generic;
  if (c.op == LockstepCall::Op::kCas && redis.refused_at_expected &&
      memory.full.rfind("ok ", 0) == 0)
    return kCasRefusedAtCurrentVersionMemoryMatchesRedis;
  if (redis.shape == memory.shape) return kValueDiffers;
  if (c.op != LockstepCall::Op::kList) return generic;
  // Rows compared without their values: a value the CAS script bent is value-differs' finding
  // (it shows on the write first), not a question of which rows list() returns.
  std::vector<std::string> r = KeysOf(redis_rows, false), m = KeysOf(memory_rows, false);
  std::sort(r.begin(), r.end());
  std::sort(m.begin(), m.end());
  if (r == m) return kDiffersOnListOrder;
  std::vector<std::string> all = KeysOf(memory_all, false);
  std::sort(all.begin(), all.end());
  if (r.size() == m.size() && all.size() > m.size() &&
      std::includes(all.begin(), all.end(), r.begin(), r.end()))
    return kDiffersOnListLimit;
  return generic;
}

// memory-matches-redis: one call drawn over `keys` (get, set, compareAndSet, delete, list; TTLs
// past maxTtl, values past maxValueBytes, stale versions, adversarial values) on both backends
// of namespace `space` (options `o`).
// One call on both backends at the same instant; the first disagreement is recorded. A call
// either backend refuses with an error is compared by its message.
sim::Task<void> MemoryLockstep(sim::Ctx& ctx, real::state::StateNamespace& redis,
                               real::state::StateNamespace& memory,
                               const std::vector<std::string>& keys,
                               const real::state::NamespaceOptions& o, sim::Prng& rng, int i,
                               int64_t ttl_max, const std::string& space,
                               std::set<std::string>* desynced, Recorder* rec) {
  if (desynced->count(space)) co_return;
  std::string cas_tail;
  LockstepCall c = DrawLockstepCall(rng, i, keys, o, ttl_max, &cas_tail);
  if (c.op == LockstepCall::Op::kCas) {
    const std::optional<real::state::StateValue> seen = co_await memory.get(c.key);
    const int64_t current = seen ? seen->version : 0;
    c.expected = c.stale ? current + 1 : current;
    c.text =
        "compareAndSet(\"" + c.key + "\", " + std::to_string(c.expected) + ", " + cas_tail + ")";
  }
  const int64_t t = rec->world->now_ms() - sim::kDefaultEpochMs;
  Answer from_redis, from_memory;
  std::vector<real::state::StateValue> redis_rows, memory_rows, memory_all;
  try {
    switch (c.op) {
      case LockstepCall::Op::kGet:
        from_redis.row("", co_await redis.get(c.key));
        break;
      case LockstepCall::Op::kSet:
        from_redis.row("", co_await redis.set(c.key, c.value, c.ttl));
        break;
      case LockstepCall::Op::kCas: {
        real::state::CasResult r =
            co_await redis.compare_and_set(c.key, c.expected, c.value, c.ttl);
        from_redis.row(r.ok ? "ok " : "fail ", r.ok ? r.value : r.current);
        from_redis.refused_at_expected = !r.ok && r.current && r.current->version == c.expected;
        break;
      }
      case LockstepCall::Op::kDelete:
        co_await redis.del(c.key);
        from_redis.text("done");
        break;
      case LockstepCall::Op::kList:
        redis_rows = co_await redis.list(c.limit, c.prefix);
        from_redis.rows(redis_rows);
        break;
    }
  } catch (const real::state::StateError& e) {
    // Redis may or may not have applied it, the memory backend did not see it: from here on
    // the two backends are not comparable in this namespace.
    if (e.transport()) {
      desynced->insert(space);
      co_return;
    }
    from_redis.text(std::string("error: ") + e.what());
  }
  try {
    switch (c.op) {
      case LockstepCall::Op::kGet:
        from_memory.row("", co_await memory.get(c.key));
        break;
      case LockstepCall::Op::kSet:
        from_memory.row("", co_await memory.set(c.key, c.value, c.ttl));
        break;
      case LockstepCall::Op::kCas: {
        real::state::CasResult m =
            co_await memory.compare_and_set(c.key, c.expected, c.value, c.ttl);
        from_memory.row(m.ok ? "ok " : "fail ", m.ok ? m.value : m.current);
        break;
      }
      case LockstepCall::Op::kDelete:
        co_await memory.del(c.key);
        from_memory.text("done");
        break;
      case LockstepCall::Op::kList:
        memory_rows = co_await memory.list(c.limit, c.prefix);
        memory_all = co_await memory.list(std::nullopt, c.prefix);
        from_memory.rows(memory_rows);
        break;
    }
  } catch (const real::state::StateError& e) {
    from_memory.text(std::string("error: ") + e.what());
  }
  if (from_redis.full == from_memory.full || rec->world->now_ms() - sim::kDefaultEpochMs != t)
    co_return;
  const std::string cls =
      LockstepClass(c, from_redis, from_memory, redis_rows, memory_rows, memory_all);
  for (const Finding& f : rec->findings)
    if (f.cls == cls) co_return;  // one finding per class and run
  rec->findings.push_back({cls,
                           "at +" + std::to_string(t) + "ms in namespace \"" + space + "\" " +
                               c.text + ":\n  redis  " + from_redis.full + "\n  memory " +
                               from_memory.full,
                           {},
                           {Since(ctx, sim::kDefaultEpochMs + t)}});
  // A write one backend made and the other did not leaves them apart for good; reads, refusals
  // on both sides (error-precedence) and bent values leave the same keys and versions.
  if (c.op != LockstepCall::Op::kGet && c.op != LockstepCall::Op::kList &&
      cls != kErrorPrecedence && cls != kValueDiffers)
    desynced->insert(space);
}

class MemoryMatchesRedisRunner : public StateRun {
 public:
  using StateRun::StateRun;

 private:
  sim::Task<void> Client(sim::Ctx& ctx, int id) override {
    auto ns = Namespace(ctx);
    // A namespace of the client's own on each backend (so that list() and the quota see only
    // its calls), maxEntries 2 over three keys, maxTtl at the probe's TTL bound; the names
    // carry characters a key-building or glob-matching store may mistake (names-are-opaque),
    // drawn once per client from a stream of its own.
    static const char* kOdd[] = {"", ":*", "?[\\]", "\xC3\xA9\xF0\x9F\x99\x82"};
    const std::string odd = kOdd[sim::Prng(sim::OpSeed(w.seed, id, 0) ^ 0x6b657973ULL).below(4)];
    const std::string space = "mm" + std::to_string(id) + odd;
    real::state::NamespaceOptions options = w.ns;
    options.max_entries = 2;
    if (w.probe_ttl_max_ms > 0) options.max_ttl_ms = w.probe_ttl_max_ms;
    const std::vector<std::string> keys = {"k0" + odd, "k1" + odd, "k2" + odd};
    auto redis = real::state::MakeNamespace(
        w.version, ctx, scripts, std::string("provider-under-test"), space, options, "conn");
    auto memory = real::state::MakeMemoryNamespace(ctx, scripts, space, options, "conn");
    for (int i = 0; i < w.ops; ++i) {
      if (w.skip.count({id, i})) continue;  // shrunk away
      sim::Prng rng(sim::OpSeed(w.seed, id, i));
      co_await MemoryLockstep(ctx, *redis, *memory, keys, options, rng, i, w.probe_ttl_max_ms,
                              space, &desynced_, &rec);
      co_await ctx.sleep(rng.range(0, 10));
    }
  }
  std::set<std::string> desynced_;  // namespaces an unknown outcome hit
};

}  // namespace

const StateProperty& MemoryMatchesRedis() {
  static const StateProperty kProperty = {
      {"memory-matches-redis",
       "the memory backend answers as the Redis backend does",
       [](const std::string& v, const std::string&) { return v == "beta30"; },
       AndResend(MovesTheInstant()),
       {{"differs-on-get", "get() answers differently on the two backends"},
        {"differs-on-set", "set() answers differently on the two backends"},
        {"differs-on-compareAndSet", "compareAndSet() answers differently on the two backends"},
        {"differs-on-delete", "delete() answers differently on the two backends"},
        {"differs-on-list", "list() returns other rows on the two backends"},
        {kDiffersOnListOrder,
         "list() returns the same rows in another order (memory: insertion order, Redis: by "
         "expiry)"},
        {kDiffersOnListLimit,
         "list(limit) keeps other rows of the same matches on the two backends"},
        {kValueDiffers,
         "a row comes back with another value (the same version and times) on the two "
         "backends"},
        {kErrorPrecedence,
         "a compareAndSet with a stale version and a ttl or value the policy refuses fails on "
         "one backend and throws on the other"},
        {kCasRefusedAtCurrentVersionMemoryMatchesRedis,
         "compareAndSet at the current version fails on Redis, reporting that version as "
         "current, and succeeds in memory"},
        {"script-error",
         "a valid call fails with a script error on Redis (the SDK reports Redis as "
         "unavailable) where the memory backend answers"}}},
      MakeRun<MemoryMatchesRedisRunner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
