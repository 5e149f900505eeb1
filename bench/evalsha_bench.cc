// The same EVALSHA workload on the emulator and on a spawned redis-server over loopback:
// the beta.30 compare-and-set script on a small namespace (8 keys, one index), one client.
// Entries end in /emulator and /real_redis so their ratio is read from one run.
#include <benchmark/benchmark.h>

#include <memory>

#include "real/redis_server.h"
#include "real/script_catalog.h"
#include "sim/clock.h"
#include "sim/emulator.h"
#include "sim/lua_scripting.h"

namespace testbed {
namespace {

// Each iteration: CAS key (i % 8) from its current version to the next; the reply tells the
// new version, so every call succeeds and the workload stays the same on both worlds.
void CasWorkload(benchmark::State& state, sim::RedisConnection& conn,
                 const std::function<void(int64_t)>& set_time) {
  const real::ScriptCatalog catalog = real::ScriptCatalog::Load(real::ScriptCatalog::ShippedDir());
  const std::string& body = catalog.get("state/beta30/COMPARE_AND_SET_WITH_QUOTA_SCRIPT").body;
  const std::string sha = sim::Sha1Hex(body);
  conn.call({"SCRIPT", "LOAD", body});
  int64_t versions[8] = {0};
  int64_t now = sim::kDefaultEpochMs;
  int64_t i = 0;
  for (auto _ : state) {
    const int k = static_cast<int>(i++ % 8);
    now += 1;
    set_time(now);
    const std::string envelope = "{\"value\":{\"n\":" + std::to_string(i) +
                                 "},\"version\":" + std::to_string(versions[k] + 1) +
                                 ",\"createdAt\":\"2026-01-01T00:00:00.000Z\"}";
    sim::CallResult r = conn.call({"EVALSHA", sha, "2", "ns:k" + std::to_string(k), "ns:idx",
                                   std::to_string(versions[k]), std::to_string(now), "100",
                                   std::to_string(now + 60000), "120000", envelope});
    auto* reply = std::get_if<sim::Reply>(&r);
    if (!reply || reply->elements.empty() || reply->elements[0].integer != 1) {
      state.SkipWithError("CAS did not succeed");
      break;
    }
    versions[k]++;
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_CasEvalsha_Emulator(benchmark::State& state) {
  sim::VirtualClock clock;
  sim::Emulator em(clock);
  CasWorkload(state, em, [&](int64_t t) { clock.set(t); });
}

void BM_CasEvalsha_RealRedis(benchmark::State& state) {
  std::unique_ptr<real::RedisServer> server;
  try {
    server = std::make_unique<real::RedisServer>(sim::kDefaultEpochMs);
  } catch (const real::SetupError& e) {
    state.SkipWithError(e.what());
    return;
  }
  auto conn = server->connect();
  CasWorkload(state, *conn, [&](int64_t t) { server->set_time_ms(t); });
}

BENCHMARK(BM_CasEvalsha_Emulator)->Name("cas_evalsha_beta30/emulator");
BENCHMARK(BM_CasEvalsha_RealRedis)->Name("cas_evalsha_beta30/real_redis");

}  // namespace
}  // namespace testbed

BENCHMARK_MAIN();
