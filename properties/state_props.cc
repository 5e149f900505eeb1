#include "properties/state_props.h"

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "model/state_register.h"
#include "real/real_backend.h"
#include "real/state/beta30.h"
#include "real/state/memory_beta30.h"
#include "sim/clock.h"
#include "sim/prng.h"
#include "sim/strategies.h"

namespace testbed::props {
namespace {

using model::RegisterOp;
using Op = lin::Operation<RegisterOp>;

struct Recorder {
  sim::World* world = nullptr;
  int64_t seq = 0;
  lin::RegisterHistory history;
  std::vector<std::string> boundary_violations;
  std::vector<std::string> read_back_violations;
  std::vector<std::string> quota_violations;
  std::vector<std::string> memory_violations;
  std::vector<std::string> isolation_violations;
};

std::string Show(const std::optional<state::StateValue>& v) {
  return v ? state::Stringify(v->value) + " v" + std::to_string(v->version) : "null";
}

// One operation on both backends at the same instant; the first disagreement is recorded.
Task<void> MemoryLockstep(sim::Ctx& ctx, state::beta30::Namespace& redis,
                          state::memory_beta30::Namespace& memory, const std::string& key,
                          Prng& rng, int i, int64_t ttl_max, Recorder* rec) {
  const uint64_t roll = rng.below(100);
  state::Json value = state::Json::object();
  value["n"] = i;
  const std::optional<int64_t> ttl =
      ttl_max > 0 ? std::optional<int64_t>(rng.range(1, ttl_max)) : std::nullopt;
  const int64_t t = rec->world->now_ms() - kDefaultEpochMs;
  std::string what, from_redis, from_memory;
  try {
    if (roll < 40) {
      what = "get(\"" + key + "\")";
      std::optional<state::StateValue> r = co_await redis.get(key);
      from_redis = Show(r);
      from_memory = Show(memory.get(key));
    } else if (roll < 70) {
      what = "set(\"" + key + "\", ttl " + (ttl ? std::to_string(*ttl) : "default") + ")";
      state::StateValue r = co_await redis.set(key, value, ttl);
      from_redis = "v" + std::to_string(r.version);
      from_memory = "v" + std::to_string(memory.set(key, value, ttl).version);
    } else if (roll < 90) {
      const std::optional<state::StateValue> seen = memory.get(key);
      const int64_t expected = seen ? seen->version : 0;
      what = "compareAndSet(\"" + key + "\", " + std::to_string(expected) + ")";
      state::CasResult r = co_await redis.compare_and_set(key, expected, value, ttl);
      state::CasResult m = memory.compare_and_set(key, expected, value, ttl);
      from_redis = r.ok ? "ok v" + std::to_string(r.value->version) : "fail " + Show(r.current);
      from_memory = m.ok ? "ok v" + std::to_string(m.value->version) : "fail " + Show(m.current);
    } else {
      what = "delete(\"" + key + "\")";
      co_await redis.del(key);
      memory.del(key);
      from_redis = from_memory = "done";
    }
  } catch (const state::StateError& e) {
    co_return;
  }
  if (from_redis != from_memory && rec->world->now_ms() - kDefaultEpochMs == t)
    rec->memory_violations.push_back("at +" + std::to_string(t) + "ms " + what + ": redis " +
                                     from_redis + ", memory " + from_memory);
}

// The values whose JSON a store could bend: empty containers, integers past 1e14, binary
// fractions, escapes, unicode, nesting.
state::Json TrickyValue(Prng& rng) {
  static const std::vector<std::string> values = {
      R"({"list":[]})", R"({"n":1234567890123456})", R"({"f":0.30000000000000004})",
      R"({"path":"a/b"})", R"({"s":"caf\u00e9 \ud83d\ude00"})", R"({"nested":{"a":[1,[2,{}]]}})",
      R"({"neg":-0.5,"big":9007199254740991})", R"({"empty":{}})", R"([1,2,3])", R"("text")"};
  return state::Json::parse(values[rng.below(values.size())]);
}

Task<void> ReadBackProbe(sim::Ctx& ctx, state::beta30::Namespace& ns, const std::string& key,
                         state::Json value, Recorder* rec) {
  try {
    state::Json first = state::Json::object();
    first["first"] = true;
    co_await ns.set(key, first, std::nullopt);
    state::CasResult r = co_await ns.compare_and_set(key, 1, value, std::nullopt);
    std::optional<state::StateValue> got = co_await ns.get(key);
    if (r.ok && got && got->value != value)
      rec->read_back_violations.push_back("compareAndSet(\"" + key + "\", 1, " + state::Stringify(value) +
                                          ") then get() read back " + state::Stringify(got->value));
  } catch (const state::StateError&) {
  }
}

Task<void> QuotaProbe(sim::Ctx& ctx, const state::beta30::Scripts& scripts, int id, int i,
                      int64_t ttl, Recorder* rec) {
  state::NamespaceOptions one{.default_ttl_ms = 60000, .max_ttl_ms = 120000, .max_entries = 1};
  state::beta30::Namespace ns(ctx, scripts, std::string("provider-under-test"),
                              "quota" + std::to_string(id) + "-" + std::to_string(i), one,
                              state::beta30::ConnectionScopeDiscriminator(std::string("conn")));
  try {
    state::Json value = state::Json::object();
    value["n"] = 1;
    co_await ns.set("a", value, ttl);
    co_await ctx.sleep(ttl);
    const int64_t t0 = rec->world->now_ms();
    co_await ns.set("b", value, std::nullopt);
    std::optional<state::StateValue> a = co_await ns.get("a");
    std::optional<state::StateValue> b = co_await ns.get("b");
    if (a && b && rec->world->now_ms() == t0)
      rec->quota_violations.push_back(
          "at +" + std::to_string(t0 - kDefaultEpochMs) + "ms, the expiry instant of a (TTL " +
          std::to_string(ttl) + " ms), set(b) was accepted and get(a), get(b) both return a value: "
          "2 live entries in a namespace with maxEntries 1");
  } catch (const state::StateError&) {
  }
}

// set(key, ttl); sleep(ttl); then get() and list() in the same millisecond of virtual time.
Task<void> ExpiryProbe(sim::Ctx& ctx, state::beta30::Namespace& ns, const std::string& key,
                       int64_t ttl, Recorder* rec) {
  try {
    state::Json value = state::Json::object();
    value["probe"] = ttl;
    co_await ns.set(key, value, ttl);
    co_await ctx.sleep(ttl);
    const int64_t t_get = rec->world->now_ms();
    std::optional<state::StateValue> got = co_await ns.get(key);
    std::vector<state::StateValue> listed = co_await ns.list(std::nullopt, key);
    const int64_t t_list = rec->world->now_ms();
    bool in_list = false;
    for (const auto& v : listed) in_list |= v.key == key;
    if (got && t_get == t_list && !in_list)
      rec->boundary_violations.push_back(
          "at +" + std::to_string(t_get - kDefaultEpochMs) + "ms (the expiry instant of a " +
          std::to_string(ttl) + " ms TTL) get(\"" + key + "\") returned version " +
          std::to_string(got->version) + " but list() did not include it");
  } catch (const state::StateError&) {
    // Faults may fail the probe; it then says nothing.
  }
}

Task<void> Client(sim::Ctx& ctx, int id, StateWorkload w, state::beta30::Scripts* scripts,
                  Recorder* rec) {
  // The workload's own choices come from a stream of the seed per client, so they do not
  // depend on the schedule.
  Prng rng(w.seed * 1000003 + static_cast<uint64_t>(id));
  // Isolation probes give each client its own connection; the other workloads share one.
  const std::string connection =
      w.isolation_probes && !w.broken_scope_for_negative_test ? "conn" + std::to_string(id) : "conn";
  state::beta30::Namespace ns(ctx, *scripts, std::string("provider-under-test"), "ns", w.ns,
                              state::beta30::ConnectionScopeDiscriminator(connection));
  std::map<std::string, int64_t> seen_version;
  auto memory = std::make_unique<state::memory_beta30::Namespace>(ctx.clock(), w.ns);
  for (int i = 0; i < w.ops; ++i) {
    if (w.isolation_probes) {
      try {
        if (rng.chance({1, 2})) {
          state::Json mine = state::Json::object();
          mine["owner"] = id;
          co_await ns.set("shared", mine, std::nullopt);
        } else {
          std::optional<state::StateValue> got = co_await ns.get("shared");
          if (got && got->value.value("owner", -1) != id)
            rec->isolation_violations.push_back(
                "client " + std::to_string(id) + " (connection " + connection + ") read " +
                state::Stringify(got->value) + ", written by another connection");
        }
      } catch (const state::StateError&) {
      }
      co_await ctx.sleep(rng.range(0, 5));
      continue;
    }
    if (w.memory_probes) {
      const std::string key = "mm" + std::to_string(id);
      co_await MemoryLockstep(ctx, ns, *memory, key, rng, i, w.probe_ttl_max_ms, rec);
      if (!rec->memory_violations.empty()) co_return;  // the first disagreement says it all
      co_await ctx.sleep(rng.range(0, 30));
      continue;
    }
    if (w.read_back_probes) {
      const std::string probe_key = "rb" + std::to_string(id) + "-" + std::to_string(i);
      co_await ReadBackProbe(ctx, ns, probe_key, TrickyValue(rng), rec);
      continue;
    }
    if (w.quota_probes) {
      co_await QuotaProbe(ctx, *scripts, id, i, rng.range(1, 50), rec);
      continue;
    }
    if (w.expiry_probes) {
      // Keys of their own, so that other clients' writes do not blur the boundary.
      const std::string probe_key = "probe" + std::to_string(id) + "-" + std::to_string(i);
      co_await ExpiryProbe(ctx, ns, probe_key, rng.range(1, 50), rec);
      continue;
    }
    const std::string key = "k" + std::to_string(rng.below(w.keys));
    uint64_t roll = rng.below(100);
    if (w.cas_only && roll >= 35 && roll < 60) roll += 25;  // a set becomes a compareAndSet
    Op o;
    o.partition = key;
    o.actor = id;
    o.invoke = rec->seq++;
    o.invoke_ms = rec->world->now_ms();
    const state::Json value = {{"client", id}, {"n", i}};
    const std::optional<int64_t> ttl =
        rng.chance({1, 3}) ? std::optional<int64_t>(rng.range(5, 200)) : std::nullopt;
    bool keep = true;
    try {
      if (roll < 35) {
        o.op.kind = RegisterOp::Kind::kGet;
        std::optional<state::StateValue> v = co_await ns.get(key);
        o.op.ok = v.has_value();
        if (v) {
          o.op.out_value = state::Stringify(v->value);
          o.op.out_version = v->version;
          seen_version[key] = v->version;
        }
      } else if (roll < 60) {
        o.op.kind = RegisterOp::Kind::kSet;
        o.op.value = state::Stringify(value);
        state::StateValue v = co_await ns.set(key, value, ttl);
        o.op.out_version = v.version;
        seen_version[key] = v.version;
      } else if (roll < 90) {
        o.op.kind = RegisterOp::Kind::kCas;
        o.op.value = state::Stringify(value);
        o.op.expected = rng.chance({3, 4}) ? seen_version[key] : rng.range(0, 3);
        state::CasResult r = co_await ns.compare_and_set(key, o.op.expected, value, ttl);
        o.op.ok = r.ok;
        if (r.ok) {
          o.op.out_version = r.value->version;
        } else if (r.current) {
          o.op.out_version = r.current->version;
          o.op.out_value = state::Stringify(r.current->value);
        }
        seen_version[key] = o.op.out_version;
      } else {
        o.op.kind = RegisterOp::Kind::kDelete;
        co_await ns.del(key);
        seen_version[key] = 0;
      }
    } catch (const state::StateError& e) {
      if (e.transport()) {
        o.ambiguous = true;  // the outcome is unknown
      } else {
        keep = false;        // quota and policy errors write nothing
      }
    }
    o.op.expires_at_ms = ns.last_expires_at_ms();
    if (!o.ambiguous) {
      o.ret = rec->seq++;
      o.ret_ms = rec->world->now_ms();
    }
    if (keep) rec->history.push_back(o);
    const int64_t pause = rng.range(0, 15);
    co_await ctx.sleep(pause);
  }
}

}  // namespace

std::vector<std::string> StateVersions() { return {"beta30"}; }

std::vector<std::string> StateProperties() {
  return {"cas-versions-linearizable", "expiry-boundary-get-list", "value-read-back",
          "quota-safety", "memory-matches-redis", "connection-isolation"};
}

StateWorkload ForProperty(StateWorkload w, const std::string& property) {
  if (property == "cas-versions-linearizable") return w;
  if (property == "expiry-boundary-get-list") {
    w.expiry_probes = true;
    return w;
  }
  if (property == "value-read-back") {
    w.read_back_probes = true;
    return w;
  }
  if (property == "quota-safety") {
    w.quota_probes = true;
    return w;
  }
  if (property == "memory-matches-redis") {
    w.memory_probes = true;
    return w;
  }
  if (property == "connection-isolation") {
    w.isolation_probes = true;
    return w;
  }
  throw std::invalid_argument("unknown property '" + property + "'");
}

namespace {
const std::vector<std::string>* ProbeFindings(const StateRun& r, const std::string& property) {
  if (property == "expiry-boundary-get-list") return &r.boundary_violations;
  if (property == "value-read-back") return &r.read_back_violations;
  if (property == "quota-safety") return &r.quota_violations;
  if (property == "memory-matches-redis") return &r.memory_violations;
  if (property == "connection-isolation") return &r.isolation_violations;
  return nullptr;
}
}  // namespace

bool Violates(const StateRun& r, const std::string& property) {
  const auto* findings = ProbeFindings(r, property);
  return findings ? !findings->empty() : !r.verdict.ok;
}

std::string DescribeViolation(const StateRun& r, const std::string& property) {
  if (const auto* findings = ProbeFindings(r, property)) {
    std::string out;
    for (const auto& v : *findings) out += "  " + v + "\n";
    return out;
  }
  return "  on key " + r.verdict.partition + ":\n  actor invoke return invoke_ms return_ms operation -> result\n" +
         FormatCounterexample(r);
}

Scenario LoadScenario(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("cannot read scenario " + path);
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw std::invalid_argument(path + " is not a JSON object");
  Scenario s;
  try {
    if (j.at("system") != "state") throw std::invalid_argument("only system \"state\" scenarios exist");
    s.name = j.at("name");
    s.property = j.at("property");
    s.trigger = j.value("trigger", "");
    s.severity = j.value("severity", "");
    s.expect = j.value("expect", "violated");
    s.faults = j.value("faults", "none");
    s.version = j.at("version");
    s.workload.version = s.version;
    s.workload.seed = j.at("seed").get<uint64_t>();
    s.workload.clients = j.at("clients").get<int>();
    s.workload.ops = j.at("ops").get<int>();
    s.workload.cas_only = j.value("ops_mix", "all") == "cas";
    s.workload.faults = sim::FaultOptions::Parse(s.faults);
    s.workload = ForProperty(s.workload, s.property);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(path + ": " + e.what());
  }
  if (s.workload.clients < 1 || s.workload.ops < 1)
    throw std::invalid_argument(path + ": clients and ops must be at least 1");
  return s;
}

StateRun RunStateWorkload(const StateWorkload& w, const ScriptCatalog& scripts, RedisServer* server) {
  if (w.version != "beta30")
    throw std::invalid_argument("state version '" + w.version + "' is not ported yet (ported: beta30)");
  auto bodies = std::make_unique<state::beta30::Scripts>(state::beta30::Scripts::From(scripts));
  std::unique_ptr<sim::Backend> backend;
  if (server) {
    backend = std::make_unique<RealBackend>(*server);
  } else {
    backend = std::make_unique<sim::EmulatorBackend>();
  }
  sim::RandomWalk walk;
  sim::WorldOptions o;
  o.seed = w.seed;
  o.horizon_ms = 600000;
  o.faults = w.faults;
  sim::World world(o, *backend, walk);
  Recorder rec;
  rec.world = &world;
  for (int c = 0; c < w.clients; ++c)
    world.add_actor("client" + std::to_string(c),
                    [&, c](sim::Ctx& ctx) { return Client(ctx, c, w, bodies.get(), &rec); });
  StateRun out;
  out.run = world.run();
  out.trace = world.trace();
  if (!out.run.error.empty()) throw std::runtime_error(out.run.error);
  out.history = rec.history;
  out.boundary_violations = rec.boundary_violations;
  out.read_back_violations = rec.read_back_violations;
  out.quota_violations = rec.quota_violations;
  out.memory_violations = rec.memory_violations;
  out.isolation_violations = rec.isolation_violations;
  model::StateRegisterModel model;
  out.verdict = lin::Checker<model::StateRegisterModel>(model).check(out.history);
  return out;
}

std::string FormatCounterexample(const StateRun& r) {
  std::string out;
  for (const auto& o : r.history)
    if (o.partition == r.verdict.partition) out += "  " + lin::FormatRegisterOperation(o) + "\n";
  return out;
}

}  // namespace testbed::props
