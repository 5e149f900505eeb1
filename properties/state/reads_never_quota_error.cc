// Property "reads-never-quota-error" of the state store: an old pod fills a small namespace with v1
// values, a new pod fills its own scope, then reads the v1 keys: no read may fail with a quota
// error, nor (where the version reads v1 keys) come back null.
#include <absl/strings/escaping.h>
#include <absl/strings/match.h>
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>

#include "model/state_store.h"
#include "properties/state/state_workload.h"
#include "sim/clock.h"

namespace testbed::props::state {
namespace {

// The anomaly classes this file names, declared once: its table and its judge use them.
constexpr char kGetFailsWithQuotaError[] = "get-fails-with-quota-error";
constexpr char kListFailsWithQuotaError[] = "list-fails-with-quota-error";
constexpr char kGetMissesV1ValueInFullScope[] = "get-misses-v1-value-in-full-scope";

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
            {kGetMissesV1ValueInFullScope,
             "namespace " + name + " (maxEntries 2): an old pod (" + w.old_version +
                 ") wrote old1 and old2, this pod wrote new1 and new2; at +" + std::to_string(t) +
                 "ms get(\"" + key + "\") returned null while the old pod's value is live",
             {},
             {Since(ctx, sim::kDefaultEpochMs + t)}});
    } catch (const real::state::StateError& e) {
      if (e.quota())
        rec->findings.push_back(
            {kGetFailsWithQuotaError,
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
          {kListFailsWithQuotaError,
           "namespace " + name + ": list() failed with \"" + std::string(e.what()) + "\""});
  }
}

class ReadsNeverQuotaErrorRunner : public StepRun {
 public:
  using StepRun::StepRun;

 private:
  sim::Task<void> Step(sim::Ctx& ctx, real::state::StateNamespace& ns, int id, int i,
                       sim::Prng& rng) override {
    co_await ReadQuotaProbe(ctx, w, scripts, id, i, &rec);
  }
};

}  // namespace

const StateProperty& ReadsNeverQuotaError() {
  static const StateProperty kProperty = {
      {"reads-never-quota-error",
       "get() and list() never fail with a quota error, and a full scope hides no live value an "
       "old pod wrote",
       Always,
       {},
       {{kGetFailsWithQuotaError, "get() fails with a quota error"},
        {kListFailsWithQuotaError, "list() fails with a quota error"},
        {kGetMissesV1ValueInFullScope,
         "in a full scope, get() of a live value an old pod wrote returns null (a version that "
         "reads v1 keys)"}}},
      MakeRun<ReadsNeverQuotaErrorRunner, StateEnv>};
  return kProperty;
}

}  // namespace testbed::props::state
