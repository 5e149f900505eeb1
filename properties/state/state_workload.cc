// What several state probes share (state_workload.h says who uses each).
#include "properties/state/state_workload.h"

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

std::string ErrorKind(const real::state::StateError& e) {
  if (e.quota()) return "quota";
  if (e.transport()) return "transport";
  return "policy";
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
        {kSkewOverfill,
         wrote_a + "client 1 set(b) at +" + std::to_string(inv - sim::kDefaultEpochMs) +
             "ms and it was accepted: 2 live entries (client 1's clock runs ahead of client "
             "0's; the store counts live entries by the caller's clock)",
         {},
         {Since(ctx, a_inv)}});
  if (!safety && !refused.empty() && inv > a_ret + kSkewTtlMs)
    rec->findings.push_back(
        {kSkewExpiredSlotRefused,
         wrote_a + "client 1 set(c) at +" + std::to_string(inv - sim::kDefaultEpochMs) +
             "ms, after a expired by the server's clock, failed with \"" + refused +
             "\" (client 1's clock runs behind client 0's; the store counts live entries by "
             "the caller's clock)",
         {},
         {Since(ctx, a_inv)}});
}

}  // namespace testbed::props::state
