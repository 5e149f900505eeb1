// Property "names-are-opaque" of the state store: one client, fault-free, runs each operation twice
// at one instant: under plain names, and under names with ':', '*', '?', '[', '\\', empty or
// unicode (provider, connections, namespaces, keys), under another provider; the answers must
// match.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "properties/state/state_workload.h"

namespace testbed::props::state {

namespace {

// names-are-opaque: the names one run uses. Index i means the same thing under both name
// sets; the adversarial set is drawn once per run from its own stream of the seed.
struct NameSet {
  std::string provider;
  std::string connections[2];
  // [0] and [2] are provider-scoped namespaces, [1] a connection-scoped one.
  std::string namespaces[3];
  std::string keys[4];
};

NameSet PlainNames() {
  return {"plain-provider",
          {"conn-a", "conn-b"},
          {"shared", "ns", "shared2"},
          {"k0", "k1", "k2", "k3"}};
}

// Names a caller may pass (the API takes any string) that a key-building or glob-matching
// store may mistake: separators that let two (namespace, key) pairs build one Redis key ("n" +
// "a:k0" and "n:a" + "k0"; "n" + "scope:provider:k0" and "n:scope:provider" + "k0"), glob
// characters that KEYS and SCAN MATCH expand, the empty string, backslashes and unicode.
NameSet AdversarialNames(uint64_t seed) {
  sim::Prng rng(seed * 0x9E3779B97F4A7C15ULL + 0x6e616d6573ULL);
  auto pick = [&rng](std::initializer_list<const char*> options) {
    return std::string(options.begin()[rng.below(options.size())]);
  };
  NameSet n;
  n.provider = pick({"provider-under-test", "p:q", "p*"});
  n.connections[0] = pick({"c:1", "c*"});
  n.connections[1] = pick({"", "\xC3\xBC\xF0\x9F\x99\x82"});  // "ü🙂"
  n.namespaces[0] = "n";
  n.namespaces[1] = pick({"n:a", "n*", "", "n?[\\]"});
  n.namespaces[2] = "n:scope:provider";
  n.keys[0] = "k0";
  n.keys[1] = "a:k0";
  n.keys[2] = pick({"scope:provider:k0", "*", "?"});
  n.keys[3] = pick({"", "\xC3\xA9\xF0\x9F\x99\x82", "k\\[x]"});  // "é🙂"
  return n;
}

std::string Quote(const std::string& s) { return "\"" + s + "\""; }

std::string Describe(const NameSet& n) {
  std::string out = "provider " + Quote(n.provider) + ", connections " + Quote(n.connections[0]) +
                    " " + Quote(n.connections[1]) + ", namespaces " + Quote(n.namespaces[0]) + " " +
                    Quote(n.namespaces[1]) + " " + Quote(n.namespaces[2]) + ", keys";
  for (const auto& k : n.keys) out += " " + Quote(k);
  return out;
}

// An entry with its key written as the index of the name set ("key#1"), so that the two runs
// compare; a key outside the set is shown as it is.
std::string Normal(const NameSet& n, const std::optional<real::state::StateValue>& v) {
  if (!v) return "null";
  std::string key = Quote(v->key);
  for (int i = 0; i < 4; ++i)
    if (v->key == n.keys[i]) key = "key#" + std::to_string(i);
  return key + "=" + real::state::Stringify(v->value) + " v" + std::to_string(v->version) +
         " createdAt " + v->created_at + " expiresAt " + v->expires_at;
}

struct OpSpec {
  uint64_t roll = 0;
  int connection = 0;  // 0, 1, or 2: the missing connection
  int ns = 0;
  int key = 0;
  std::optional<int64_t> ttl;
  real::state::Json value;
  int64_t expected = 0;  // compareAndSet; -1: the version the same call's get reads
  bool list_by_prefix = false;
  std::optional<int64_t> limit;
};

// One operation under one name set; what it answered, with names as indexes.
sim::Task<std::string> RunOp(sim::Ctx& ctx, const StateWorkload& w,
                             const real::state::VersionScripts& scripts, const NameSet& n,
                             const OpSpec& op) {
  const bool provider_ns = op.ns != 1;
  real::state::NamespaceOptions so{.provider_scope = provider_ns,
                                   .default_ttl_ms = 40,
                                   .max_ttl_ms = 100,
                                   .max_entries = 3,
                                   .max_value_bytes = 256};
  const std::optional<std::string> connection =
      op.connection == 2 ? std::nullopt : std::optional<std::string>(n.connections[op.connection]);
  const std::string& key = n.keys[op.key];
  auto ns = real::state::MakeNamespace(w.version, ctx, scripts, n.provider, n.namespaces[op.ns], so,
                                       connection);
  std::string out;
  try {
    if (op.roll < 25) {
      out = Normal(n, co_await ns->get(key));
    } else if (op.roll < 45) {
      out = Normal(n, co_await ns->set(key, op.value, op.ttl));
    } else if (op.roll < 60) {
      int64_t expected = op.expected;
      if (expected < 0) {
        std::optional<real::state::StateValue> seen = co_await ns->get(key);
        expected = seen ? seen->version : 0;
      }
      real::state::CasResult r = co_await ns->compare_and_set(key, expected, op.value, op.ttl);
      out = (r.ok ? "ok " : "fail ") + Normal(n, r.ok ? r.value : r.current);
    } else if (op.roll < 68) {
      co_await ns->del(key);
      out = "done";
    } else if (op.roll < 80) {
      const std::optional<std::string> prefix =
          op.list_by_prefix ? std::optional<std::string>(key) : std::nullopt;
      std::vector<real::state::StateValue> rows = co_await ns->list(op.limit, prefix);
      std::vector<std::string> shown;
      for (const auto& r : rows) shown.push_back(Normal(n, r));
      std::sort(shown.begin(), shown.end());  // list() promises no order
      out = std::to_string(rows.size()) + " rows:";
      for (const auto& s : shown) out += " " + s + ";";
    } else if (op.roll < 88) {
      out = Normal(n, co_await ns->increment(key, "n", 2, op.ttl));
    } else {
      auto old = real::state::MakeNamespace("beta23", ctx, scripts, n.provider, n.namespaces[op.ns],
                                            so, connection);
      co_await old->set(key, op.value, std::nullopt);
      out = "done";
    }
  } catch (const real::state::StateError& e) {
    out = ErrorKind(e) + " error";
  }
  co_return out;
}

std::string Show(const NameSet& n, const OpSpec& op) {
  static const char* kOps[] = {"get", "set", "compareAndSet", "delete", "list", "increment"};
  const int kind = op.roll < 25   ? 0
                   : op.roll < 45 ? 1
                   : op.roll < 60 ? 2
                   : op.roll < 68 ? 3
                   : op.roll < 80 ? 4
                   : op.roll < 88 ? 5
                                  : 6;
  const std::string who =
      (op.connection == 2 ? std::string("missing connection")
                          : "connection " + Quote(n.connections[op.connection])) +
      ", namespace " + Quote(n.namespaces[op.ns]) + ": ";
  if (kind == 6) return who + "an old pod (beta23) sets " + Quote(n.keys[op.key]);
  if (kind == 4)
    return who + "list(prefix " + (op.list_by_prefix ? Quote(n.keys[op.key]) : "-") + ")";
  return who + kOps[kind] + "(" + Quote(n.keys[op.key]) + ")";
}

sim::Task<void> NamesLockstepClient(sim::Ctx& ctx, const StateWorkload& w,
                                    const real::state::VersionScripts& scripts, Recorder* rec) {
  const NameSet plain = PlainNames(), odd = AdversarialNames(w.seed);
  const bool legacy = w.version == "beta24";
  std::vector<std::string> log;
  for (int i = 0; i < w.ops; ++i) {
    if (w.skip.count({0, i})) continue;  // shrunk away
    sim::Prng rng(sim::OpSeed(w.seed, 0, i));
    co_await ctx.sleep(rng.range(0, 25));
    OpSpec op;
    op.connection = static_cast<int>(rng.below(3));
    op.ns = static_cast<int>(rng.below(3));
    op.key = static_cast<int>(rng.below(4));
    op.roll = rng.below(100);
    if (!legacy && op.roll >= 88) op.roll = rng.below(20) + 25;  // no old pods: a set instead
    const uint64_t ttl_roll = rng.below(10);
    op.ttl = ttl_roll < 3    ? std::optional<int64_t>(rng.range(1, 60))
             : ttl_roll == 3 ? std::optional<int64_t>(150)
                             : std::nullopt;
    op.value = rng.chance({1, 3}) ? TrickyValue(rng) : real::state::Json::object();
    if (op.value.is_object() && op.value.empty()) op.value["n"] = i;
    op.expected = rng.chance({3, 4}) ? -1 : rng.range(0, 3);
    // list(prefix ""): every key, as no prefix; under plain names that would be a real prefix.
    op.list_by_prefix = rng.chance({1, 2}) && !odd.keys[op.key].empty();
    if (rng.chance({1, 4})) op.limit = rng.range(0, 2);
    const int64_t now = rec->world->now_ms();
    const std::string a = co_await RunOp(ctx, w, scripts, plain, op);
    const std::string b = co_await RunOp(ctx, w, scripts, odd, op);
    log.push_back("+" + std::to_string(now - sim::kDefaultEpochMs) + "ms " + Show(odd, op) +
                  " -> " + b);
    if (a == b) continue;
    std::string out = "the same calls under plain names and under " + Describe(odd) +
                      " answer differently; the last operations (the odd names):";
    for (size_t k = log.size() > 8 ? log.size() - 8 : 0; k < log.size(); ++k)
      out += "\n    " + log[k];
    out += "\n    under plain names (" + Show(plain, op) + "): " + a;
    const std::string what = Show(plain, op);
    const size_t colon = what.rfind(": ");
    std::string kind = what.substr(colon + 2);
    kind = kind.substr(0, kind.find('('));
    if (kind.rfind("an old pod", 0) == 0) kind = "legacy-write";
    rec->findings.push_back({"names-change-" + kind, out});
    co_return;
  }
}

class NamesAreOpaqueRunner : public StateRun {
 public:
  using StateRun::StateRun;

 private:
  sim::Task<void> Client(sim::Ctx& ctx, int id) override {
    if (id == 0) co_await NamesLockstepClient(ctx, w, scripts, &rec);
  }
};

}  // namespace

const StateProperty& NamesAreOpaque() {
  static const StateProperty kProperty = {
      {"names-are-opaque",
       "provider ids, connection ids, namespaces and keys are opaque strings: the same calls "
       "answer the same under names with ':', '*', '?', '[', '\\', the empty string or unicode "
       "as under plain ones (no two names share data, no name matches another)",
       Always,
       sim::FaultSet::All(),
       {{"names-change-get", "get() answers differently under the odd names"},
        {"names-change-set", "set() answers differently under the odd names"},
        {"names-change-compareAndSet", "compareAndSet() answers differently under the odd names"},
        {"names-change-list", "list() answers differently under the odd names"},
        {"names-change-increment", "increment() answers differently under the odd names"},
        {"names-change-legacy-write",
         "an old pod's write (the version before the v2 layout) answers differently under the odd "
         "names"}}},
      MakeRun<NamesAreOpaqueRunner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
