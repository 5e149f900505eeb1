#include "properties/state_props.h"
#include "properties/state_workloads.h"

#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <nlohmann/json.hpp>
#include <cstdio>
#include <stdexcept>

#include "model/state_register.h"
#include "model/state_store.h"
#include "real/real_backend.h"
#include "real/state/namespace.h"
#include "real/state/memory_beta30.h"
#include "sim/clock.h"
#include "sim/prng.h"
#include "sim/strategies.h"

namespace testbed::props {
namespace {

using model::RegisterOp;
using Op = lin::Operation<RegisterOp>;

using namespace detail;

Task<void> Client(sim::Ctx& ctx, int id, StateWorkload w, const state::VersionScripts* scripts,
                  Recorder* rec) {
  // The workload's own choices come from a stream of the seed per client, so they do not
  // depend on the schedule.
  Prng rng(w.seed * 1000003 + static_cast<uint64_t>(id));
  // Isolation probes give each client its own connection; the other workloads share one.
  const std::string connection =
      w.isolation_probes && !w.broken_scope_for_negative_test ? "conn" + std::to_string(id) : "conn";
  if (w.model_probes) {
    if (id == 0) co_await SequentialClient(ctx, w, *scripts, rec);
    co_return;
  }
  if (w.legacy_read_probes || w.adoption_probes || w.rolling_probes) {
    co_await LegacyClient(ctx, id, w, *scripts, rec);
    co_return;
  }
  auto ns_ptr = state::MakeNamespace(w.version, ctx, *scripts, std::string("provider-under-test"),
                                     "ns", w.ns, connection);
  state::StateNamespace& ns = *ns_ptr;
  std::map<std::string, int64_t> seen_version;
  auto memory = std::make_unique<state::memory_beta30::Namespace>(ctx.clock(), w.ns);
  for (int i = 0; i < w.ops; ++i) {
    if (w.skip.count({id, i})) continue;  // shrunk away
    rng = Prng(OpSeed(w.seed, id, i));
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
      co_await QuotaProbe(ctx, w, *scripts, id, i, rng.range(1, 50), rec);
      co_await QuotaRace(ctx, w, *scripts, id, i, rec);
      continue;
    }
    if (w.liveness_probes) {
      co_await LivenessProbe(ctx, w, *scripts, id, i, rng, rec);
      continue;
    }
    if (w.read_quota_probes) {
      co_await ReadQuotaProbe(ctx, w, *scripts, id, i, rec);
      continue;
    }
    if (w.ack_probes) {
      co_await AckStep(ctx, ns, id, i, rng, rec);
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
    if (ns.expiry_is_relative() && (o.op.kind == RegisterOp::Kind::kSet || o.op.kind == RegisterOp::Kind::kCas)) {
      // beta.3: SET ... PX ttl runs somewhere inside the operation (server time).
      o.op.expires_at_ms = o.invoke_ms + ns.last_ttl_ms();
      o.op.expires_hi_ms = (o.ambiguous ? o.invoke_ms + 600000 : rec->world->now_ms()) + ns.last_ttl_ms();
    }
    if (!o.ambiguous) {
      o.ret = rec->seq++;
      o.ret_ms = rec->world->now_ms();
    }
    if (keep) rec->history.push_back(o);
    const int64_t pause = rng.range(0, 15);
    co_await ctx.sleep(pause);
  }
}


// acknowledged-writes-visible: a read that found nothing although an acknowledged write
// returned before it began, outlives it, and no other operation that could remove the entry
// (a delete, an ambiguous write, a write that expires sooner) overlaps the gap.
std::vector<std::string> CheckAcknowledgedWrites(const std::vector<AckOp>& ops) {
  using K = AckOp::Kind;
  for (const AckOp& r : ops) {
    if ((r.kind != K::kGet && r.kind != K::kList) || r.ambiguous || r.found) continue;
    for (const AckOp& w : ops) {
      if (w.kind != K::kSet || w.ambiguous || w.key != r.key || w.ret_seq >= r.inv_seq) continue;
      if (w.exp_lo < r.ret_ms) continue;
      bool removable = false;
      for (const AckOp& o : ops) {
        if (&o == &w || o.key != r.key || (o.kind != K::kSet && o.kind != K::kDelete)) continue;
        const bool overlaps = o.inv_seq < r.ret_seq && (o.ambiguous || o.ret_seq > w.inv_seq);
        if (overlaps && (o.kind == K::kDelete || o.ambiguous || o.exp_lo < r.ret_ms)) removable = true;
      }
      if (removable) continue;
      auto at = [](int64_t ms) { return "+" + std::to_string(ms - kDefaultEpochMs) + "ms"; };
      auto set_of = [&](const AckOp& x) {
        return "client " + std::to_string(x.actor) + " set(\"" + x.key + "\", ttl " +
               (x.ttl ? std::to_string(*x.ttl) : std::string("default")) + ") acknowledged at " +
               at(x.ret_ms) + " (alive through " + at(x.exp_lo) + ")";
      };
      std::string later;
      for (const AckOp& o : ops)
        if (&o != &w && o.key == r.key && o.kind == K::kSet && o.ret_seq > w.inv_seq && o.inv_seq < r.ret_seq)
          later += ", then " + set_of(o);
      return {set_of(w) + later + "; then client " + std::to_string(r.actor) + "'s " +
              (r.kind == K::kGet ? "get" : "list") + " from " + at(r.inv_ms) + " to " + at(r.ret_ms) +
              " found nothing, though no delete ran and every write keeps the key alive through " +
              at(r.ret_ms)};
    }
  }
  return {};
}

}  // namespace

std::vector<std::string> StateVersions() { return state::PortedVersions(); }

std::string FirstCompileError(const ScriptCatalog& scripts, const std::string& version) {
  sim::EmulatorBackend emulator;
  for (const auto& f : scripts.all()) {
    if (f.file.rfind("state/" + version + "/", 0) != 0) continue;
    const Reply r = emulator.execute({"SCRIPT", "LOAD", f.body}, kDefaultEpochMs);
    if (r.is_error()) return f.file + ": " + r.str;
  }
  return "";
}

std::string RollingFrom(const std::string& version) {
  if (version == "beta23") return "beta3";
  if (version == "beta24") return "beta23";
  if (version == "beta30") return "beta3";
  return "";
}

bool Applies(const std::string& property, const std::string& version, const std::string& old_version) {
  const bool old_is_v1 = old_version == "beta3" || old_version == "beta23";
  if (property == "memory-matches-redis") return version == "beta30";
  if (property == "connection-isolation") return state::HasConnectionScopes(version);
  if (property == "legacy-readable") return old_is_v1;
  if (property == "legacy-adopted-once") return old_is_v1 && state::HasConnectionScopes(version);
  if (property == "rolling-deploy-writes-visible") return !old_version.empty();
  return true;
}

std::vector<std::string> StateProperties() {
  return {"cas-versions-linearizable", "expiry-boundary-get-list", "value-read-back",
          "quota-safety", "memory-matches-redis", "connection-isolation",
          "acknowledged-writes-visible", "quota-liveness", "reads-never-quota-error",
          "legacy-readable", "legacy-adopted-once", "rolling-deploy-writes-visible",
          "model-matches-implementation"};
}

std::string FaultsSetAside(const std::string& property) {
  if (property == "acknowledged-writes-visible" || property == "legacy-readable" ||
      property == "legacy-adopted-once" || property == "rolling-deploy-writes-visible")
    return "restart, failover";  // they lose acknowledged writes by themselves
  if (property == "quota-liveness") return "restart, failover, skew, clock-jump";
  if (property == "expiry-boundary-get-list" || property == "quota-safety" ||
      property == "memory-matches-redis")
    return "latency, delay, pause, skew, clock-jump";  // the probes aim at one exact millisecond
  if (property == "model-matches-implementation") return "all";
  return "";
}

namespace {
void SetAside(sim::FaultOptions& f, const std::string& which) {
  if (which == "all") {
    f = sim::FaultOptions{};
    return;
  }
  if (which.find("restart") != std::string::npos) f.restart = false;
  if (which.find("failover") != std::string::npos) f.failover_lag_commands = -1;
  if (which.find("skew") != std::string::npos) f.clock_skew_ms_max = 0;
  if (which.find("clock-jump") != std::string::npos) f.clock_jump = Ratio{0, 1};
  if (which.find("latency") != std::string::npos) f.latency_ms_min = f.latency_ms_max = 0;
  if (which.find("delay") != std::string::npos) f.delayed_request = Ratio{0, 1};
  if (which.find("pause") != std::string::npos) f.actor_pause = Ratio{0, 1};
}
}  // namespace

StateWorkload ForProperty(StateWorkload w, const std::string& property) {
  SetAside(w.faults, FaultsSetAside(property));
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
  if (property == "acknowledged-writes-visible") {
    w.ack_probes = true;
    return w;
  }
  if (property == "quota-liveness") {
    w.liveness_probes = true;
    return w;
  }
  if (property == "reads-never-quota-error") {
    w.read_quota_probes = true;
    return w;
  }
  if (property == "legacy-readable") {
    w.legacy_read_probes = true;
    return w;
  }
  if (property == "legacy-adopted-once") {
    w.adoption_probes = true;
    return w;
  }
  if (property == "rolling-deploy-writes-visible") {
    w.rolling_probes = true;
    return w;
  }
  if (property == "model-matches-implementation") {
    w.model_probes = true;  // fault-free: one instant per call, see SequentialClient
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
  if (property == "acknowledged-writes-visible") return &r.ack_violations;
  if (property == "quota-liveness") return &r.liveness_violations;
  if (property == "reads-never-quota-error") return &r.read_quota_violations;
  if (property == "legacy-readable") return &r.legacy_read_violations;
  if (property == "legacy-adopted-once") return &r.adoption_violations;
  if (property == "rolling-deploy-writes-visible") return &r.rolling_violations;
  if (property == "model-matches-implementation") return &r.model_violations;
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

std::set<std::pair<int, int>> ParseSkip(const std::string& list) {
  std::set<std::pair<int, int>> out;
  for (size_t start = 0; start < list.size();) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    const std::string item = list.substr(start, end - start);
    int c = -1, i = -1;
    char tail = 0;
    if (std::sscanf(item.c_str(), "%d:%d%c", &c, &i, &tail) != 2 || c < 0 || i < 0)
      throw std::invalid_argument("--skip takes CLIENT:OP pairs such as 0:1,2:3, not '" + item + "'");
    out.insert({c, i});
    start = end + 1;
  }
  return out;
}

std::string FormatSkip(const std::set<std::pair<int, int>>& skip) {
  std::string out;
  for (const auto& [c, i] : skip) out += (out.empty() ? "" : ",") + std::to_string(c) + ":" + std::to_string(i);
  return out;
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
    s.old_version = j.value("old_version", "");
    s.workload.old_version = s.old_version;
    s.workload.seed = j.at("seed").get<uint64_t>();
    s.workload.clients = j.at("clients").get<int>();
    s.workload.ops = j.at("ops").get<int>();
    s.workload.cas_only = j.value("ops_mix", "all") == "cas";
    s.workload.skip = ParseSkip(j.value("skip", ""));
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
  if (!state::IsPorted(w.version) || (!w.old_version.empty() && !state::IsPorted(w.old_version)))
    throw std::invalid_argument("state version '" + w.version + "' or '" + w.old_version +
                                "' has no client port (ported: beta3, beta23, beta24, beta30)");
  auto bodies = std::make_unique<state::VersionScripts>(scripts);
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
  out.liveness_violations = rec.liveness_violations;
  out.read_quota_violations = rec.read_quota_violations;
  out.rolling_violations = rec.rolling_violations;
  out.model_violations = rec.model_violations;
  for (const auto& e : out.trace.events)
    if (e.kind == sim::EventKind::kReply && e.argv[0] == "EVAL" && e.reply.is_error())
      out.script_errors.push_back(out.trace.Render(e));
  // ForProperty sets aside the faults that lose acknowledged writes for these two.
  out.ack_violations = CheckAcknowledgedWrites(rec.ack_ops);
  out.legacy_read_violations = CheckLegacyReads(rec.legacy_keys);
  for (const auto& [origin, scopes] : rec.adopters)
    if (scopes.size() > 1) {
      std::string list;
      for (const auto& c : scopes) list += (list.empty() ? "" : ", ") + c;
      out.adoption_violations.push_back("the old pod's write " + origin + " of A was read by " +
                                        std::to_string(scopes.size()) + " connections: " + list);
    }
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
