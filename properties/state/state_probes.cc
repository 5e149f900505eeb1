// Probe workloads: see state_workloads.h.
#include "properties/state/state_workloads.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include <absl/strings/escaping.h>
#include <absl/strings/match.h>
#include <absl/strings/str_cat.h>

#include "model/state_store.h"
#include "sim/clock.h"

namespace testbed::props::state {

using model::RegisterOp;

std::string Show(const std::optional<real::state::StateValue>& v) {
  return v ? real::state::Stringify(v->value) + " v" + std::to_string(v->version) : "null";
}

namespace {

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

LockstepCall DrawLockstepCall(sim::Prng& rng, int i, const std::vector<std::string>& keys,
                              const real::state::NamespaceOptions& o, int64_t ttl_max,
                              real::state::memory_beta30::Namespace& memory) {
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
    const std::optional<real::state::StateValue> seen = memory.get(c.key);
    const int64_t current = seen ? seen->version : 0;
    c.stale = rng.chance({1, 3});
    c.expected = c.stale ? current + 1 : current;
    c.text = "compareAndSet(" + quoted + ", " + std::to_string(c.expected) + ", " + value_text +
             ", ttl " + ttl_text + ")";
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
    return "error-precedence";
  if (redis.error() || memory.error()) return generic;
  if (c.op == LockstepCall::Op::kCas && redis.refused_at_expected &&
      memory.full.rfind("ok ", 0) == 0)
    return "cas-refused-at-current-version";
  if (redis.shape == memory.shape) return "value-differs";
  if (c.op != LockstepCall::Op::kList) return generic;
  // Rows compared without their values: a value the CAS script bent is value-differs' finding
  // (it shows on the write first), not a question of which rows list() returns.
  std::vector<std::string> r = KeysOf(redis_rows, false), m = KeysOf(memory_rows, false);
  std::sort(r.begin(), r.end());
  std::sort(m.begin(), m.end());
  if (r == m) return "differs-on-list-order";
  std::vector<std::string> all = KeysOf(memory_all, false);
  std::sort(all.begin(), all.end());
  if (r.size() == m.size() && all.size() > m.size() &&
      std::includes(all.begin(), all.end(), r.begin(), r.end()))
    return "differs-on-list-limit";
  return generic;
}

}  // namespace

// One call on both backends at the same instant; the first disagreement is recorded. A call
// either backend refuses with an error is compared by its message.
sim::Task<void> MemoryLockstep(sim::Ctx& ctx, real::state::StateNamespace& redis,
                               real::state::memory_beta30::Namespace& memory,
                               const std::vector<std::string>& keys,
                               const real::state::NamespaceOptions& o, sim::Prng& rng, int i,
                               int64_t ttl_max, const std::string& space,
                               std::set<std::string>* desynced, Recorder* rec) {
  if (desynced->count(space)) co_return;
  const LockstepCall c = DrawLockstepCall(rng, i, keys, o, ttl_max, memory);
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
        from_memory.row("", memory.get(c.key));
        break;
      case LockstepCall::Op::kSet:
        from_memory.row("", memory.set(c.key, c.value, c.ttl));
        break;
      case LockstepCall::Op::kCas: {
        real::state::CasResult m = memory.compare_and_set(c.key, c.expected, c.value, c.ttl);
        from_memory.row(m.ok ? "ok " : "fail ", m.ok ? m.value : m.current);
        break;
      }
      case LockstepCall::Op::kDelete:
        memory.del(c.key);
        from_memory.text("done");
        break;
      case LockstepCall::Op::kList:
        memory_rows = memory.list(c.limit, c.prefix);
        memory_all = memory.list(std::nullopt, c.prefix);
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
      cls != "error-precedence" && cls != "value-differs")
    desynced->insert(space);
}

// The values whose JSON a store could bend: empty containers, integers past 1e14, binary
// fractions, escapes, unicode, nesting.
real::state::Json TrickyValue(sim::Prng& rng) {
  static const std::vector<std::string> values = {R"({"list":[]})",
                                                  R"({"n":1234567890123456})",
                                                  R"({"f":0.30000000000000004})",
                                                  R"({"path":"a/b"})",
                                                  R"({"s":"caf\u00e9 \ud83d\ude00"})",
                                                  R"({"nested":{"a":[1,[2,{}]]}})",
                                                  R"({"neg":-0.5,"big":9007199254740991})",
                                                  R"({"empty":{}})",
                                                  R"([1,2,3])",
                                                  R"("text")"};
  return real::state::Json::parse(values[rng.below(values.size())]);
}

const AdversarialCase& AdversarialValue(sim::Prng& rng, bool deep) {
  auto nested = [](bool objects, int depth) {
    real::state::Json v = objects ? real::state::Json::object() : real::state::Json::array();
    for (int d = 1; d < depth; ++d) {
      real::state::Json outer = objects ? real::state::Json::object() : real::state::Json::array();
      if (objects)
        outer["a"] = std::move(v);
      else
        outer.push_back(std::move(v));
      v = std::move(outer);
    }
    return v;
  };
  // Built once: the cases are constants, and the deep ones are costly to build.
  static const std::vector<AdversarialCase> kCases = [&] {
    std::vector<AdversarialCase> c;
    c.push_back({"{\"z\":-0}", real::state::Json{{"z", -0.0}}});
    c.push_back({"{\"big\":1e21}", real::state::Json{{"big", 1e21}}});
    c.push_back({"{\"sum\":0.30000000000000004}", real::state::Json{{"sum", 0.1 + 0.2}}});
    c.push_back({"[[[]],{},[{}]]", real::state::Json::parse("[[[]],{},[{}]]")});
    c.push_back({R"({"b":1,"a":"café 😀"})",
                 real::state::Json::parse(R"({"b":1,"a":"caf\u00e9 \ud83d\ude00"})")});
    // A JavaScript string holding a lone surrogate, kept as its WTF-8 bytes (JSON.stringify
    // writes it as the escape "\ud83d").
    c.push_back({R"({"s":"x\ud83dy"})", real::state::Json{{"s", std::string("x\xED\xA0\xBDy")}}});
    c.push_back({"an array nested 1001 deep", nested(false, 1001)});
    c.push_back({"an object nested 1001 deep", nested(true, 1001)});
    c.push_back({"an array nested 1000 deep", nested(false, 1000)});
    return c;
  }();
  return kCases[rng.below(deep ? kCases.size() : kShallowAdversarialCases)];
}

namespace {

// What another writer of the same Redis key may have left there: an older SDK, a migration
// script or an operator's SET. Raw text, so that what JSON.parse and cjson make of duplicate
// keys and key order is exercised too (a JavaScript caller cannot pass raw text to set()).
struct ForeignCase {
  std::string label;
  std::string text;
};

std::vector<ForeignCase> ForeignCases(int64_t now_ms, int64_t ttl_ms) {
  const std::string created = real::state::IsoTime(now_ms),
                    expires = real::state::IsoTime(now_ms + ttl_ms);
  const std::string times = "\"expiresAt\":\"" + expires + "\",\"createdAt\":\"" + created +
                            "\",\"updatedAt\":\"" + created + "\"";
  return {
      {"text that is not JSON", "hello"},
      {"a JSON number", "42"},
      {"an envelope without a version", "{\"value\":{\"n\":1}," + times + "}"},
      {"an envelope whose version is a string",
       "{\"value\":{\"n\":1},\"version\":\"3\"," + times + "}"},
      {"an envelope with the version twice (JSON.parse keeps the last)",
       "{\"value\":{\"n\":1},\"version\":2,\"version\":3," + times + "}"},
      {"an envelope in another key order",
       "{\"updatedAt\":\"" + created +
           "\",\"version\":4,\"value\":{\"b\":1,\"a\":2},\"createdAt\":\"" + created +
           "\",\"expiresAt\":\"" + expires + "\"}"},
      {"an envelope whose value has a key twice",
       "{\"value\":{\"a\":1,\"a\":2},\"version\":5," + times + "}"},
      {"a tombstone whose flag is a string", "{\"deleted\":\"true\"}"},
      {"an envelope whose value holds 2^53 + 1 (JSON.parse reads 2^53)",
       "{\"value\":{\"big\":9007199254740993},\"version\":6," + times + "}"},
  };
}

}  // namespace

// foreign-values-consistent: another writer leaves `c` in the key; then get, and compareAndSet
// at the version get() returned (and get again) must agree about it. list() is not judged: the
// other writer did not index the key, so a store that lists from an index cannot see it.
sim::Task<void> ForeignValueProbe(sim::Ctx& ctx, real::state::StateNamespace& ns,
                                  const real::state::StateNamespace* old_pod,
                                  const std::string& key, sim::Prng& rng, Recorder* rec) {
  constexpr int64_t kTtlMs = 60000;
  const std::vector<ForeignCase> cases = ForeignCases(ctx.now_ms(), kTtlMs);
  const ForeignCase& c = cases[rng.below(cases.size())];
  // Half the time, where the deploy has old pods, the value is in the key an old pod reads and
  // writes (the v1 key, which beta.24 claims): an old pod of another SDK wrote it.
  const bool old_key = old_pod && rng.chance({1, 2});
  const int64_t since = rec->world->now_ms();
  const std::string quoted = "\"" + key + "\"";
  const std::string lead = (old_key ? "the key an old pod keeps " + quoted + " in holds "
                                    : "another writer SET " + quoted + " to ") +
                           c.label + " (" + c.text + "); ";
  sim::Argv set_raw = {"SET", old_key ? old_pod->redis_key(key) : ns.redis_key(key), c.text, "PX",
                       std::to_string(kTtlMs)};
  const sim::CallResult r = co_await ctx.call(std::move(set_raw));
  const sim::Reply* ok = std::get_if<sim::Reply>(&r);
  if (!ok || ok->type != sim::Reply::Type::kStatus) co_return;  // the write itself failed (a fault)
  try {
    const std::optional<real::state::StateValue> got = co_await ns.get(key);
    const std::string read =
        got ? "get() returned version " + std::to_string(got->version) : "get() returned null";
    const int64_t expected = got ? got->version : 0;
    real::state::Json mine = real::state::Json::object();
    mine["mine"] = 1;
    const int64_t cas_from_ms = ctx.world().now_ms();
    const real::state::CasResult cas =
        co_await ns.compare_and_set(key, expected, mine, std::nullopt);
    const std::string cas_text =
        "compareAndSet(" + quoted + ", " + std::to_string(expected) + ", {\"mine\":1})";
    if (!cas.ok) {
      const std::string current = cas.current ? "version " + std::to_string(cas.current->version)
                                              : std::string("current = null");
      rec->findings.push_back({got ? "read-but-cas-refused" : "absent-but-cas-refused",
                               lead + read + ", and " + cas_text + " fails, reporting " + current +
                                   ": a read-then-compareAndSet loop never gets past this key",
                               {},
                               {Since(ctx, since)}});
      co_return;
    }
    // The expiry the write set (a PXAT, which Redis compares with its own clock; beta.3's PX counts
    // from when the script ran, at the earliest from the call): a client paused past it reads null
    // rightly, whatever clock computed it (keys-expire judges that clock).
    const int64_t expires_at_ms =
        ns.expiry_is_relative() ? cas_from_ms + ns.last_ttl_ms() : ns.last_expires_at_ms();
    const std::optional<real::state::StateValue> after = co_await ns.get(key);
    const bool expired = !after && ctx.world().now_ms() > expires_at_ms;
    if (!expired && (!after || after->value != mine))
      rec->findings.push_back(
          {"cas-not-visible",
           lead + read + ", " + cas_text + " succeeded, and get() then returned " + Show(after),
           {},
           {Since(ctx, since)}});
  } catch (const real::state::StateError&) {
    // A transport error leaves the outcome unknown; a quota error is the namespace's to give.
  }
}

// valid-calls-never-script-error: a stored value can always be compare-and-set again at the
// version set() returned (script errors themselves become findings in System::Run).
sim::Task<void> AdversarialProbe(sim::Ctx& ctx, real::state::StateNamespace& ns,
                                 const std::string& key, const AdversarialCase& c, Recorder* rec) {
  const std::string& label = c.label;
  const real::state::Json& value = c.value;
  real::state::Json small = real::state::Json::object();
  small["after"] = 1;
  // The value stored by set(), then compareAndSet at the version set() returned.
  int64_t since = rec->world->now_ms();
  try {
    const real::state::StateValue written = co_await ns.set(key + "s", value, std::nullopt);
    const real::state::CasResult r =
        co_await ns.compare_and_set(key + "s", written.version, small, std::nullopt);
    if (!r.ok && r.current && r.current->version == written.version)
      rec->findings.push_back(
          {"cas-refused-at-current-version",
           "set(\"" + key + "s\", " + label + ") was acknowledged as version " +
               std::to_string(written.version) + "; compareAndSet(\"" + key + "s\", " +
               std::to_string(written.version) +
               ", {\"after\":1}) failed, reporting that same version as current",
           {},
           {Since(ctx, since)}});
  } catch (const real::state::StateError&) {
  }
  // The value written by compareAndSet over an existing key (the scripts that keep createdAt
  // decode the new envelope), then compareAndSet again at the version it returned.
  since = rec->world->now_ms();
  try {
    const real::state::StateValue first = co_await ns.set(key + "c", small, std::nullopt);
    const real::state::CasResult r =
        co_await ns.compare_and_set(key + "c", first.version, value, std::nullopt);
    if (r.ok && r.value) {
      const real::state::CasResult again =
          co_await ns.compare_and_set(key + "c", r.value->version, small, std::nullopt);
      if (!again.ok && again.current && again.current->version == r.value->version)
        rec->findings.push_back(
            {"cas-refused-at-current-version",
             "compareAndSet(\"" + key + "c\", " + std::to_string(first.version) + ", " + label +
                 ") was acknowledged as version " + std::to_string(r.value->version) +
                 "; compareAndSet(\"" + key + "c\", " + std::to_string(r.value->version) +
                 ", {\"after\":1}) failed, reporting that same version as current",
             {},
             {Since(ctx, since)}});
    }
  } catch (const real::state::StateError&) {
  }
}

sim::Task<void> ReadBackProbe(sim::Ctx& ctx, real::state::StateNamespace& ns,
                              const std::string& key, real::state::Json value, Recorder* rec) {
  const int64_t since = rec->world->now_ms();
  try {
    real::state::Json first = real::state::Json::object();
    first["first"] = true;
    co_await ns.set(key, first, std::nullopt);
    real::state::CasResult r = co_await ns.compare_and_set(key, 1, value, std::nullopt);
    std::optional<real::state::StateValue> got = co_await ns.get(key);
    if (r.ok && got && got->value != value)
      rec->findings.push_back({JsonBend(value, got->value),
                               "compareAndSet(\"" + key + "\", 1, " +
                                   real::state::Stringify(value) + ") then get() read back " +
                                   real::state::Stringify(got->value),
                               {},
                               {Since(ctx, since)}});
  } catch (const real::state::StateError&) {
  }
}

namespace {

// The quota probes' write that creates or overwrites `key`, by each of the writes that have a
// quota check of their own in the scripts, in turn (`how` 0, 1, 2: set, compareAndSet at
// `expected`, increment): how a caller names it, whether it wrote, and what it failed with.
struct KeyWrite {
  std::string shown;
  bool written = false;
  std::optional<real::state::StateError> error;
};
sim::Task<KeyWrite> WriteKeyBy(real::state::StateNamespace& ns, int how, std::string key,
                               int64_t expected, real::state::Json value,
                               std::optional<int64_t> ttl) {
  KeyWrite out;
  out.shown = how == 0   ? "set(" + key + ")"
              : how == 1 ? "compareAndSet(" + key + ", " + std::to_string(expected) + ")"
                         : "increment(" + key + ")";
  if (how == 1) {  // its answer says whether it wrote
    try {
      out.written = (co_await ns.compare_and_set(key, expected, value, ttl)).ok;
    } catch (const real::state::StateError& e) {
      out.error = e;
    }
    co_return out;
  }
  // (Each result bound to a name first: see sim::FailureOf on g++ 12.)
  if (how == 0) {
    const std::optional<real::state::StateError> e =
        co_await sim::FailureOf<real::state::StateError>(ns.set(key, value, ttl));
    out.error = e;
  } else {
    const std::optional<real::state::StateError> e =
        co_await sim::FailureOf<real::state::StateError>(ns.increment(key, "n", 1, ttl));
    out.error = e;
  }
  out.written = !out.error;
  co_return out;
}

}  // namespace

sim::Task<void> QuotaProbe(sim::Ctx& ctx, const StateWorkload& w,
                           const real::state::VersionScripts& scripts, int id, int i, int64_t ttl,
                           Recorder* rec) {
  real::state::NamespaceOptions one{
      .default_ttl_ms = 60000, .max_ttl_ms = 120000, .max_entries = 1};
  auto ns_ptr = real::state::MakeNamespace(
      w.version, ctx, scripts, std::string("provider-under-test"),
      "quota" + std::to_string(id) + "-" + std::to_string(i), one, std::string("conn"));
  real::state::StateNamespace& ns = *ns_ptr;
  try {
    real::state::Json value = real::state::Json::object();
    value["n"] = 1;
    const int64_t t_a = rec->world->now_ms();
    co_await ns.set("a", value, ttl);
    // While a is live, a second key must be refused (x expires with a, if it is accepted),
    // whichever write creates it: set, compareAndSet(x, 0) or increment (each has its own
    // quota check in the scripts).
    const KeyWrite x_write = co_await WriteKeyBy(ns, i % 3, "x", 0, value, ttl);
    const bool x_accepted = x_write.written;
    const std::string& write_x = x_write.shown;
    if (x_accepted) {
      const int64_t t1 = rec->world->now_ms();
      std::optional<real::state::StateValue> a = co_await ns.get("a");
      std::optional<real::state::StateValue> x = co_await ns.get("x");
      if (a && x && rec->world->now_ms() == t1 && t1 < t_a + ttl)
        rec->findings.push_back({"overfill",
                                 "at +" + std::to_string(t1 - sim::kDefaultEpochMs) +
                                     "ms, with a live (TTL " + std::to_string(ttl) + " ms), " +
                                     write_x +
                                     " was accepted and get(a), get(x) both return a value: "
                                     "2 live entries in a namespace with maxEntries 1",
                                 {},
                                 {Since(ctx, t_a)}});
      // An acknowledged write reads back while it is live: a refusal reported as a success
      // leaves nothing behind.
      if (!x && rec->world->now_ms() == t1 && t1 < t_a + ttl)
        rec->findings.push_back(
            {"refusal-reported-as-written",
             "at +" + std::to_string(t1 - sim::kDefaultEpochMs) + "ms " + write_x +
                 " was acknowledged as written in a full namespace (maxEntries 1, a live), "
                 "yet get(x) returns null: nothing was stored",
             {},
             {Since(ctx, t_a)}});
    }
    co_await SleepUntil(ctx, rec, t_a + ttl);
    const int64_t t0 = rec->world->now_ms();
    co_await ns.set("b", value, std::nullopt);
    std::optional<real::state::StateValue> a = co_await ns.get("a");
    std::optional<real::state::StateValue> b = co_await ns.get("b");
    if (a && b && rec->world->now_ms() == t0)
      rec->findings.push_back(
          {"expiry-instant-overfill",
           "at +" + std::to_string(t0 - sim::kDefaultEpochMs) +
               "ms, the expiry instant of a (TTL " + std::to_string(ttl) +
               " ms), set(b) was accepted and get(a), get(b) both return a value: "
               "2 live entries in a namespace with maxEntries 1",
           {},
           {Since(ctx, t0)}});
  } catch (const real::state::StateError&) {
  }
}

// set(key, ttl); sleep(ttl); then get() and list() in the same millisecond of virtual time.
namespace {

// get(key) and then list(prefix key): what get() returned when list() left the key out in the
// same millisecond (nullopt otherwise), and that millisecond.
struct ListedMiss {
  std::optional<real::state::StateValue> got;
  int64_t at = 0;
};
sim::Task<ListedMiss> GetButNotListed(real::state::StateNamespace& ns, const std::string& key,
                                      Recorder* rec) {
  ListedMiss miss;
  miss.at = rec->world->now_ms();
  std::optional<real::state::StateValue> got = co_await ns.get(key);
  std::vector<real::state::StateValue> listed = co_await ns.list(std::nullopt, key);
  bool in_list = false;
  for (const auto& v : listed) in_list |= v.key == key;
  if (got && rec->world->now_ms() == miss.at && !in_list) miss.got = std::move(got);
  co_return miss;
}

}  // namespace

sim::Task<void> ExpiryProbe(sim::Ctx& ctx, real::state::StateNamespace& ns, const std::string& key,
                            int64_t ttl, Recorder* rec) {
  try {
    real::state::Json value = real::state::Json::object();
    value["probe"] = ttl;
    co_await ns.set(key, value, ttl);
    co_await ctx.sleep(ttl);
    const ListedMiss miss = co_await GetButNotListed(ns, key, rec);
    const int64_t t_get = miss.at;
    if (miss.got)
      rec->findings.push_back(
          {"list-drops-at-expiry-instant",
           "at +" + std::to_string(t_get - sim::kDefaultEpochMs) + "ms (the expiry instant of a " +
               std::to_string(ttl) + " ms TTL) get(\"" + key + "\") returned version " +
               std::to_string(miss.got->version) + " but list() did not include it",
           {},
           {Since(ctx, t_get)}});
  } catch (const real::state::StateError&) {
    // Faults may fail the probe; it then says nothing.
  }
}

// expiry-boundary-get-list, across a deploy: an old pod, configured with a longer maxTtl than
// the new pods (a deploy may change the options), writes a key with a TTL past the new pods'
// maxTtl; a new pod reads it (beta.24 adopts it into its scope and index, refreshing the index's
// TTL to its own maxTtl); once that maxTtl has passed, with the entry still alive, get() and
// list() at one instant must agree.
sim::Task<void> AdoptedEntryProbe(sim::Ctx& ctx, const StateWorkload& w,
                                  const real::state::VersionScripts& scripts, int id, int i,
                                  Recorder* rec) {
  constexpr int64_t kNewMaxTtl = 100, kOldTtl = 400, kReadAt = 250;
  const std::string name = "lt" + std::to_string(id) + "-" + std::to_string(i);
  real::state::NamespaceOptions young{
      .default_ttl_ms = 50, .max_ttl_ms = kNewMaxTtl, .max_entries = 10};
  real::state::NamespaceOptions old_options = young;
  old_options.default_ttl_ms = 500;
  old_options.max_ttl_ms = 1000;
  auto old = OldPod(ctx, w, scripts, name, old_options, "conn");
  if (!old) co_return;
  auto ns = real::state::MakeNamespace(w.version, ctx, scripts, std::string("provider-under-test"),
                                       name, young, std::string("conn"));
  const std::string key = "long";
  try {
    const int64_t start = rec->world->now_ms();
    real::state::Json value = real::state::Json::object();
    value["old"] = i;
    co_await old->set(key, value, kOldTtl);
    if (!(co_await ns->get(key))) co_return;  // this version cannot read v1 values at all
    co_await SleepUntil(ctx, rec, start + kReadAt);
    const ListedMiss miss = co_await GetButNotListed(*ns, key, rec);
    if (miss.got)
      rec->findings.push_back(
          {"list-misses-adopted-entry",
           "an old pod (" + w.old_version + ", maxTtl 1000) set(\"" + key + "\", ttl " +
               std::to_string(kOldTtl) + ") in namespace " + name + "; a new pod (maxTtl " +
               std::to_string(kNewMaxTtl) + ") read it at once; at +" +
               std::to_string(miss.at - start) + "ms get(\"" + key + "\") returns version " +
               std::to_string(miss.got->version) + " but list() does not include it",
           {},
           {Since(ctx, start)}});
  } catch (const real::state::StateError&) {
    // Faults may fail the probe; it then says nothing.
  }
}

sim::Task<void> SleepUntil(sim::Ctx& ctx, Recorder* rec, int64_t t) {
  const int64_t now = rec->world->now_ms();
  if (t > now) co_await ctx.sleep(t - now);
}

std::unique_ptr<real::state::StateNamespace> OldPod(sim::Ctx& ctx, const StateWorkload& w,
                                                    const real::state::VersionScripts& scripts,
                                                    const std::string& name,
                                                    real::state::NamespaceOptions o,
                                                    const std::string& connection) {
  if (w.old_version.empty()) return nullptr;
  return real::state::MakeNamespace(w.old_version, ctx, scripts, std::string("provider-under-test"),
                                    name, o, connection);
}

namespace {
// Whether a fault's text names the index of namespace `name` (or a member of it): an index key
// holds its namespace's prefix in base64 ("...:index:<base64>"). An entry's eviction frees its
// slot instead, so only the index's loss lets the quota admit past maxEntries.
bool NamesIndexOf(const std::string& text, const std::string& name) {
  const size_t at = text.find(":index:");
  if (at == std::string::npos) return false;
  const std::string b64 = text.substr(at + 7, text.find_first_of("\":", at + 7) - at - 7);
  std::string decoded;
  return absl::Base64Unescape(b64, &decoded) &&
         absl::StrContains(decoded, absl::StrCat(":", name, ":"));
}

// The first key-loss fault (an eviction, sim/faults.h) of namespace `name`'s index between the
// world's instants from and to, as its trace prints it ("" when none hit).
std::string EvictionBetween(const Recorder* rec, const std::string& name, int64_t from,
                            int64_t to) {
  const int64_t start = rec->world->start_ms();
  for (const sim::TraceEvent& e : rec->world->trace().events)
    if (e.fault == sim::Fault::kKeyLoss && !e.planned && e.at_ms >= from - start &&
        e.at_ms <= to - start && NamesIndexOf(e.text, name))
      return absl::StrCat("+", e.at_ms, "ms ", e.text);
  return "";
}
}  // namespace

// quota-safety, concurrently: at one instant every client sets its own key in a shared
// maxEntries-1 namespace; 100 ms later client 0 reads them all in one millisecond. The
// namespace's index lost to an eviction meanwhile is named as the cause: the quota counts the
// index, and what it no longer holds it no longer counts (an entry's own eviction frees its
// slot, and is no excuse).
sim::Task<void> QuotaRace(sim::Ctx& ctx, const StateWorkload& w,
                          const real::state::VersionScripts& scripts, int id, int i,
                          Recorder* rec) {
  if (w.clients < 2) co_return;
  real::state::NamespaceOptions one{
      .default_ttl_ms = 60000, .max_ttl_ms = 120000, .max_entries = 1};
  const std::string name = "race-" + std::to_string(i);
  auto ns = real::state::MakeNamespace(w.version, ctx, scripts, std::string("provider-under-test"),
                                       name, one, std::string("conn"));
  const int64_t slot = sim::kDefaultEpochMs + 1000 * (i + 1);
  co_await SleepUntil(ctx, rec, slot);
  real::state::Json value = real::state::Json::object();
  value["client"] = id;
  [[maybe_unused]] const std::optional<real::state::StateError> refused =
      co_await sim::FailureOf<real::state::StateError>(
          ns->set("c" + std::to_string(id), value, std::nullopt));
  if (id != 0) co_return;
  co_await SleepUntil(ctx, rec, slot + 100);
  const int64_t t0 = rec->world->now_ms();
  int live = 0;
  try {
    for (int c = 0; c < w.clients; ++c) {
      std::optional<real::state::StateValue> got = co_await ns->get("c" + std::to_string(c));
      live += got ? 1 : 0;
    }
  } catch (const real::state::StateError&) {
    co_return;
  }
  if (live > 1 && rec->world->now_ms() == t0) {
    const std::string evicted = EvictionBetween(rec, name, slot, t0);
    rec->findings.push_back(
        {evicted.empty() ? "concurrent-overfill" : "overfill-after-eviction",
         absl::StrCat(w.clients, " clients each set their own key at +",
                      slot - sim::kDefaultEpochMs, "ms in namespace ", name,
                      " (maxEntries 1); at +", t0 - sim::kDefaultEpochMs, "ms ", live,
                      " of those keys are live",
                      evicted.empty() ? "" : ", after an eviction between them: ", evicted)});
  }
}

// quota-safety and quota-liveness across two clients' clocks, judged by the server's clock
// (the clock every caller shares, and the one Redis expires keys by). Client 0 writes a with
// TTL kSkewTtlMs into a maxEntries-1 namespace; it is live by the server's clock until its
// write's instant + kSkewTtlMs.
//   safety:   kSkewMarginMs before that, client 1 sets b. Accepted: two live entries.
//   liveness: kSkewMarginMs after it (a second namespace), client 1 sets c. Refused with a
//             quota error: a slot that is free by the server's clock stays taken.
// Without skew, both pass. A client whose clock is ahead of the writer's by more than the
// margin admits b; one whose clock is behind refuses c.
constexpr int64_t kSkewTtlMs = 400, kSkewMarginMs = 150;

sim::Task<void> SkewQuotaProbe(sim::Ctx& ctx, const StateWorkload& w,
                               const real::state::VersionScripts& scripts, int id, int i,
                               bool safety, SkewWrites* writes, Recorder* rec) {
  if (w.clients < 2 || id > 1) co_return;
  real::state::NamespaceOptions one{
      .default_ttl_ms = 60000, .max_ttl_ms = 120000, .max_entries = 1};
  const std::string name = (safety ? "skew-" : "skewlive-") + std::to_string(i);
  auto ns = real::state::MakeNamespace(w.version, ctx, scripts, std::string("provider-under-test"),
                                       name, one, std::string("conn"));
  const int64_t base = sim::kDefaultEpochMs + 1000 * (i + 1) + 200;
  real::state::Json value = real::state::Json::object();
  value["client"] = id;
  if (id == 0) {
    co_await SleepUntil(ctx, rec, base);
    const int64_t inv = rec->world->now_ms();
    const std::optional<real::state::StateError> refused =
        co_await sim::FailureOf<real::state::StateError>(ns->set("a", value, kSkewTtlMs));
    if (!refused) (*writes)[name] = {inv, rec->world->now_ms()};
    co_return;
  }
  // Client 1: when client 0's write has returned (or its turn has passed).
  co_await SleepUntil(ctx, rec, base + 1);
  auto a = (*writes).find(name);
  if (a == (*writes).end()) co_return;
  const auto [a_inv, a_ret] = a->second;
  const std::string key = safety ? "b" : "c";
  co_await SleepUntil(
      ctx, rec, safety ? a_inv + kSkewTtlMs - kSkewMarginMs : a_ret + kSkewTtlMs + kSkewMarginMs);
  const int64_t inv = rec->world->now_ms();
  std::string refused;
  const std::optional<real::state::StateError> e =
      co_await sim::FailureOf<real::state::StateError>(ns->set(key, value, std::nullopt));
  if (e) {
    if (!e->quota()) co_return;
    refused = e->what();
  }
  const int64_t ret = rec->world->now_ms();
  const std::string wrote_a =
      "namespace " + name + " (maxEntries 1): client 0 set(a, ttl " + std::to_string(kSkewTtlMs) +
      ") at +" + std::to_string(a_inv - sim::kDefaultEpochMs) + "ms, so a is live until +" +
      std::to_string(a_inv + kSkewTtlMs - sim::kDefaultEpochMs) +
      "ms or later by the server's clock; ";
  if (safety && refused.empty() && ret < a_inv + kSkewTtlMs)
    rec->findings.push_back(
        {"skew-overfill",
         wrote_a + "client 1 set(b) at +" + std::to_string(inv - sim::kDefaultEpochMs) +
             "ms and it was accepted: 2 live entries (client 1's clock runs ahead of client "
             "0's; the store counts live entries by the caller's clock)",
         {},
         {Since(ctx, a_inv)}});
  if (!safety && !refused.empty() && inv > a_ret + kSkewTtlMs)
    rec->findings.push_back(
        {"skew-expired-slot-refused",
         wrote_a + "client 1 set(c) at +" + std::to_string(inv - sim::kDefaultEpochMs) +
             "ms, after a expired by the server's clock, failed with \"" + refused +
             "\" (client 1's clock runs behind client 0's; the store counts live entries by "
             "the caller's clock)",
         {},
         {Since(ctx, a_inv)}});
}

// acknowledged-writes-visible: one random operation on a shared key, recorded.
sim::Task<void> AckStep(sim::Ctx& ctx, real::state::StateNamespace& ns, int id, int i,
                        sim::Prng& rng, int64_t default_ttl_ms, std::vector<AckOp>* ops,
                        Recorder* rec) {
  AckOp a;
  a.key = "a" + std::to_string(rng.below(2));
  a.actor = id;
  const uint64_t roll = rng.below(100);
  a.ttl = rng.chance({1, 2}) ? std::optional<int64_t>(rng.range(10, 300)) : std::nullopt;
  real::state::Json value = real::state::Json::object();
  value["client"] = id;
  value["n"] = i;
  a.kind = roll < 40   ? AckOp::Kind::kSet
           : roll < 65 ? AckOp::Kind::kGet
           : roll < 90 ? AckOp::Kind::kList
                       : AckOp::Kind::kDelete;
  a.inv_seq = rec->seq++;
  a.inv_ms = rec->world->now_ms();
  a.clock_ms = ctx.now_ms();
  a.exp_lo = a.inv_ms + a.ttl.value_or(default_ttl_ms);
  // Recorded as it starts, with an unknown outcome: a client that crashes during the call never
  // returns, and its write may still have landed.
  const size_t at = ops->size();
  {
    AckOp in_flight = a;
    in_flight.ambiguous = true;
    in_flight.ret_seq = std::numeric_limits<int64_t>::max();
    in_flight.ret_ms = std::numeric_limits<int64_t>::max() / 4;  // never, with room for sums
    ops->push_back(in_flight);
  }
  if (!rec->observing) {
    rec->observing = true;
    rec->world->observe_applied_calls([rec](sim::ThreadId t) {
      const auto writing = rec->writing.find(t);
      if (writing == rec->writing.end()) return;
      const int64_t now = rec->world->now_ms();
      const sim::Reply pttl = rec->world->backend().execute({"PTTL", writing->second}, now);
      if (pttl.integer >= 0) {
        rec->expiry_after_call[t] = now + pttl.integer;
      } else {
        rec->expiry_after_call.erase(t);
      }
    });
  }
  rec->expiry_after_call.erase(ctx.thread());
  if (a.kind == AckOp::Kind::kSet) rec->writing[ctx.thread()] = ns.redis_key(a.key);
  try {
    if (a.kind == AckOp::Kind::kSet) {
      co_await ns.set(a.key, value, a.ttl);
    } else if (a.kind == AckOp::Kind::kGet) {
      std::optional<real::state::StateValue> v = co_await ns.get(a.key);
      a.found = v.has_value();
    } else if (a.kind == AckOp::Kind::kList) {
      std::vector<real::state::StateValue> rows = co_await ns.list(std::nullopt, a.key);
      for (const auto& r : rows) a.found |= r.key == a.key;
    } else {
      co_await ns.del(a.key);
    }
  } catch (const real::state::StateError& e) {
    if (e.transport()) {
      a.ambiguous = true;
    } else {
      a.rejected = true;  // quota and policy errors write nothing
    }
  }
  a.ret_seq = rec->seq++;
  a.ret_ms = rec->world->now_ms();
  rec->writing.erase(ctx.thread());
  // What the store set: the key's PTTL on the server right after this set's last applied call
  // (read outside the trace, before any other client's write can replace it), since a changed
  // script may set another expiry than the port computed; else the expiry this port sent.
  a.stated_ms = ns.expiry_is_relative() ? a.exp_lo : ns.last_expires_at_ms();
  const auto stored = rec->expiry_after_call.find(ctx.thread());
  if (a.kind == AckOp::Kind::kSet && !a.ambiguous && !a.rejected &&
      stored != rec->expiry_after_call.end())
    a.stated_ms = stored->second;
  (*ops)[at] = a;
  co_await ctx.sleep(rng.range(0, 20));
}

// quota-liveness: fill a maxEntries-2 namespace, free one entry (delete by this pod or an old
// pod, or expiry), then a third key must be accepted.
sim::Task<void> LivenessProbe(sim::Ctx& ctx, const StateWorkload& w,
                              const real::state::VersionScripts& scripts, int id, int i,
                              sim::Prng& rng, Recorder* rec) {
  real::state::NamespaceOptions two{
      .default_ttl_ms = 60000, .max_ttl_ms = 120000, .max_entries = 2};
  const std::string name = "live" + std::to_string(id) + "-" + std::to_string(i);
  auto ns = real::state::MakeNamespace(w.version, ctx, scripts, std::string("provider-under-test"),
                                       name, two, std::string("conn"));
  auto old = OldPod(ctx, w, scripts, name, two, "conn");
  const bool by_expiry = rng.chance({1, 3});
  const bool old_deletes = old && rng.chance({1, 2});
  const int64_t ttl = rng.range(5, 40);
  real::state::Json value = real::state::Json::object();
  value["n"] = i;
  try {
    const std::optional<int64_t> ttl_a = by_expiry ? std::optional<int64_t>(ttl) : std::nullopt;
    co_await ns->set("a", value, ttl_a);
    co_await ns->set("b", value, std::nullopt);
    // Rule 3: an overwrite of a live key is always admitted, even in a full namespace (here by
    // the write that creates a key, in turn: set, compareAndSet at its version, increment).
    {
      const int64_t t = rec->world->now_ms();
      const KeyWrite b = co_await WriteKeyBy(*ns, i % 3, "b", 1, value, std::nullopt);
      if (b.error && b.error->quota())
        rec->findings.push_back({"overwrite-refused",
                                 "namespace " + name + " (maxEntries 2) holds a and b; at +" +
                                     std::to_string(t - sim::kDefaultEpochMs) + "ms " + b.shown +
                                     ", an overwrite of a live key, failed with \"" +
                                     b.error->what() + "\"",
                                 {},
                                 {Since(ctx, t)}});
    }
    std::string how;
    if (by_expiry) {
      co_await ctx.sleep(ttl + 1);
      how = "a expired (TTL " + std::to_string(ttl) + " ms)";
    } else if (old_deletes) {
      co_await old->del("a");
      how = "an old pod (" + w.old_version + ") deleted a";
    } else {
      co_await ns->del("a");
      how = "delete(a)";
    }
    const int64_t t = rec->world->now_ms() - sim::kDefaultEpochMs;
    std::string refused;
    const std::optional<real::state::StateError> e =
        co_await sim::FailureOf<real::state::StateError>(ns->set("c", value, std::nullopt));
    if (e && e->quota()) refused = e->what();
    if (!refused.empty()) {
      std::optional<real::state::StateValue> a = co_await ns->get("a");
      // Named by what the refused set found: an entry still live (the old pod's delete never
      // reached the key the new pods read, so the quota counts rightly) or a slot held by an
      // entry that is gone (the quota leaks).
      rec->findings.push_back({by_expiry      ? "expired-slot-refused"
                               : !old_deletes ? "deleted-slot-refused"
                               : a            ? "old-pod-delete-lost"
                                              : "old-pod-delete-leaks-slot",
                               "namespace " + name + " (maxEntries 2): set(a), set(b), then " +
                                   how + "; at +" + std::to_string(t) + "ms set(c) failed with \"" +
                                   refused + "\"; get(a) now returns " +
                                   (a ? "its value: the delete was lost" : "null: only b is live"),
                               {},
                               {Since(ctx, sim::kDefaultEpochMs + t)}});
      // Whatever holds the slot, a is gone and only b is live: writing a again is a new key
      // in a namespace with one live entry (rule 3), and must be admitted, by each write with a
      // quota check of its own in turn (set, compareAndSet from version 0, increment).
      if (!a) {
        const int64_t t2 = rec->world->now_ms() - sim::kDefaultEpochMs;
        const KeyWrite again = co_await WriteKeyBy(*ns, (i + 1) % 3, "a", 0, value, std::nullopt);
        if (again.error && again.error->quota())
          rec->findings.push_back(
              {"deleted-key-recreate-refused",
               "namespace " + name + " (maxEntries 2): set(a), set(b), then " + how +
                   "; get(a) returns null, yet at +" + std::to_string(t2) + "ms " + again.shown +
                   " failed with \"" + again.error->what() + "\" with only b live",
               {},
               {Since(ctx, sim::kDefaultEpochMs + t2)}});
      }
    }
  } catch (const real::state::StateError&) {
  }
}

// reads-never-quota-error: an old pod writes two v1 values, a new pod fills its scope of a
// maxEntries-2 namespace, then reads everything.
sim::Task<void> ReadQuotaProbe(sim::Ctx& ctx, const StateWorkload& w,
                               const real::state::VersionScripts& scripts, int id, int i,
                               Recorder* rec) {
  real::state::NamespaceOptions two{
      .default_ttl_ms = 60000, .max_ttl_ms = 120000, .max_entries = 2};
  const std::string name = "rq" + std::to_string(id) + "-" + std::to_string(i);
  auto ns = real::state::MakeNamespace(w.version, ctx, scripts, std::string("provider-under-test"),
                                       name, two, std::string("conn"));
  auto old = OldPod(ctx, w, scripts, name, two, "conn");
  real::state::Json value = real::state::Json::object();
  value["n"] = i;
  try {
    if (old) {
      co_await old->set("old1", value, std::nullopt);
      co_await old->set("old2", value, std::nullopt);
    }
    co_await ns->set("new1", value, std::nullopt);
    co_await ns->set("new2", value, std::nullopt);
  } catch (const real::state::StateError&) {
    // A full namespace may refuse these writes; the reads below must still work.
  }
  static const char* kKeys[] = {"old1", "old2", "new1"};
  for (const char* key : kKeys) {
    const int64_t t = rec->world->now_ms() - sim::kDefaultEpochMs;
    try {
      const std::optional<real::state::StateValue> got = co_await ns->get(key);
      // A version that reads v1 keys (beta.24's claim) must not hide a live one behind the
      // quota either: the read returns it or, as shipped, refuses; null is the value lost, when
      // the old pod still reads it right after (no fault lost it).
      bool old_reads_it = false;
      if (!got && old && real::state::ClaimsLegacy(w.version) && key[0] == 'o') {
        const std::optional<real::state::StateValue> from_old = co_await old->get(key);
        old_reads_it = from_old.has_value();
      }
      if (old_reads_it)
        rec->findings.push_back(
            {"get-misses-v1-value-in-full-scope",
             "namespace " + name + " (maxEntries 2): an old pod (" + w.old_version +
                 ") wrote old1 and old2, this pod wrote new1 and new2; at +" + std::to_string(t) +
                 "ms get(\"" + key + "\") returned null while the old pod's value is live",
             {},
             {Since(ctx, sim::kDefaultEpochMs + t)}});
    } catch (const real::state::StateError& e) {
      if (e.quota())
        rec->findings.push_back(
            {"get-fails-with-quota-error",
             "namespace " + name + " (maxEntries 2)" +
                 (old ? ", an old pod (" + w.old_version + ") wrote old1 and old2"
                      : std::string()) +
                 ", this pod wrote new1 and new2; at +" + std::to_string(t) + "ms get(\"" + key +
                 "\") failed with \"" + e.what() + "\"",
             {},
             {Since(ctx, sim::kDefaultEpochMs + t)}});
    }
  }
  try {
    co_await ns->list(std::nullopt, std::nullopt);
  } catch (const real::state::StateError& e) {
    if (e.quota())
      rec->findings.push_back(
          {"list-fails-with-quota-error",
           "namespace " + name + ": list() failed with \"" + std::string(e.what()) + "\""});
  }
}

// A v1 value visible to a scope is the old pods' entry, and writing the key there is a new entry
// (model rule 7 with rule 3): a scope that holds maxEntries live entries of its own must refuse
// it, however the value got there. beta.24's claim adopts the v1 value into the scope only when
// the scope has room (CLAIM_LEGACY_SCRIPT 25-30): a claim that skips that check lets the next
// write through as an overwrite.
sim::Task<void> ClaimQuotaProbe(sim::Ctx& ctx, const StateWorkload& w,
                                const real::state::VersionScripts& scripts, int id, int i,
                                Recorder* rec) {
  real::state::NamespaceOptions two{
      .default_ttl_ms = 60000, .max_ttl_ms = 120000, .max_entries = 2};
  const std::string name = "cq" + std::to_string(id) + "-" + std::to_string(i);
  auto old = OldPod(ctx, w, scripts, name, two, "conn");
  if (!old) co_return;
  auto ns = real::state::MakeNamespace(w.version, ctx, scripts, std::string("provider-under-test"),
                                       name, two, std::string("conn"));
  real::state::Json value = real::state::Json::object();
  value["n"] = i;
  try {
    co_await old->set("old1", value, std::nullopt);
    co_await old->set("old2", value, std::nullopt);
  } catch (const real::state::StateError&) {
  }
  int own = 0;  // acknowledged writes of this scope's own keys, all live (ttl 60 s)
  for (const char* key : {"new1", "new2"}) {
    try {
      co_await ns->set(key, value, std::nullopt);
      ++own;
    } catch (const real::state::StateError&) {
    }
  }
  try {
    co_await ns->get("old1");
  } catch (const real::state::StateError&) {
    // reads-never-quota-error's to judge
  }
  if (own < 2) co_return;  // the scope is not full
  const int64_t t = rec->world->now_ms() - sim::kDefaultEpochMs;
  // The scope holds what it reads back: a fault that lost new1 or new2 leaves it room.
  const auto holds_three = [&]() -> sim::Task<bool> {
    for (const char* key : {"new1", "new2", "old1"}) {
      const std::optional<real::state::StateValue> back = co_await ns->get(key);
      if (!back) co_return false;
    }
    co_return true;
  };
  try {
    co_await ns->set("old1", value, std::nullopt);
    const bool overfull = co_await holds_three();
    if (overfull)
      rec->findings.push_back(
          {"adopted-key-overfill",
           "namespace " + name + " (maxEntries 2): an old pod (" + w.old_version +
               ") wrote old1 and old2, this pod wrote new1 and new2 (both live), read old1, and at "
               "+" +
               std::to_string(t) +
               "ms set(\"old1\") was acknowledged, and new1, new2 and old1 all read back: the "
               "scope "
               "holds three live entries of its own",
           {},
           {Since(ctx, sim::kDefaultEpochMs + t)}});
  } catch (const real::state::StateError&) {
  }
  // compareAndSet claims inline (COMPARE_AND_SET_WITH_QUOTA_SCRIPT 40-72), at the version the
  // old pod wrote.
  const int64_t t2 = rec->world->now_ms() - sim::kDefaultEpochMs;
  try {
    const real::state::CasResult r = co_await ns->compare_and_set("old2", 1, value, std::nullopt);
    bool overfull = false;
    if (r.ok) {
      const std::optional<real::state::StateValue> new1 = co_await ns->get("new1");
      const std::optional<real::state::StateValue> new2 = co_await ns->get("new2");
      overfull = new1 && new2;
    }
    if (overfull)
      rec->findings.push_back(
          {"adopted-key-overfill",
           "namespace " + name + " (maxEntries 2): an old pod (" + w.old_version +
               ") wrote old1 and old2, this pod wrote new1 and new2 (both live), and at +" +
               std::to_string(t2) +
               "ms compareAndSet(\"old2\", 1) succeeded, and new1 and new2 still read back: the "
               "scope holds three live entries of its own",
           {},
           {Since(ctx, sim::kDefaultEpochMs + t2)}});
  } catch (const real::state::StateError& e) {
    // The full scope refuses it: as a quota error, the one a caller can act on.
    if (!e.quota() && !e.transport())
      rec->findings.push_back({"refusal-misreported",
                               "namespace " + name + " (maxEntries 2, full): at +" +
                                   std::to_string(t2) +
                                   "ms compareAndSet(\"old2\", 1) failed with \"" + e.what() +
                                   "\" where the full scope's refusal is a quota error",
                               {},
                               {Since(ctx, sim::kDefaultEpochMs + t2)}});
  }
}

}  // namespace testbed::props::state
