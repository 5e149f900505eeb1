// The seeds' own JavaScript as the client under test (--client js, real/js_host.h): every
// property of the systems it covers runs with it, and on the same seed and schedule it makes
// the same calls, gets the same replies and reaches the same verdict as the port
// (port fidelity on every workload, item 6 of issue 62).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "harness/system.h"
#include "real/js_host.h"
#include "real/state/js_namespace.h"
#include "tests/test_catalogs.h"

namespace testbed {
namespace {

const real::ScriptCatalog& JsCatalog() {
  static const real::ScriptCatalog c = [] {
    real::ScriptCatalog js = testing_catalogs::Shipped();
    js.set_client({true, ""});
    return js;
  }();
  return c;
}

// The first event where two runs differ, both sides rendered ("" when none).
std::string FirstDifference(const props::RunOutcome& port, const props::RunOutcome& js) {
  const std::vector<std::string> a = port.trace.Lines(), b = js.trace.Lines();
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const std::string x = i < a.size() ? a[i] : "(none)", y = i < b.size() ? b[i] : "(none)";
    if (x != y) return "event " + std::to_string(i) + ":\n  port: " + x + "\n  js:   " + y;
  }
  return "";
}

struct Compared {
  int runs = 0, calls = 0, violated = 0;
};

// Every property of `system` at `version`, seeds 1..seeds, under `faults`: both clients, the
// same trace.
Compared CompareEveryProperty(const std::string& system_name, const std::string& version,
                              uint64_t seeds, const std::string& faults) {
  const props::System* system = props::FindSystem(system_name);
  Compared c;
  for (const props::PropertyInfo& p : system->properties()) {
    if (!p.applies(version, "")) continue;
    for (uint64_t seed = 1; seed <= seeds; ++seed) {
      props::RunSpec spec;
      spec.property = p.name;
      spec.version = version;
      spec.seed = seed;
      spec.clients = system->default_clients();
      spec.ops = system->default_ops();
      spec.faults = sim::FaultList::Parse(faults);
      const props::RunOutcome port = system->Run(spec, testing_catalogs::Shipped(), nullptr);
      const props::RunOutcome js = system->Run(spec, JsCatalog(), nullptr);
      const std::string where = system_name + " " + version + " " + p.name + " seed " +
                                std::to_string(seed) + " faults " + faults;
      EXPECT_EQ(port.trace.Hash(), js.trace.Hash()) << where << "\n" << FirstDifference(port, js);
      EXPECT_EQ(port.classes, js.classes) << where;
      EXPECT_EQ(port.violated, js.violated) << where;
      ++c.runs;
      c.violated += js.violated;
      for (const sim::TraceEvent& e : js.trace.events) c.calls += e.kind == sim::EventKind::kCall;
    }
  }
  return c;
}

TEST(JsClient, StateRunsEveryPropertyWithThePortsCallsAndVerdicts) {
  ASSERT_EQ(real::js::Unavailable({true, ""}), "");
  for (const std::string version : {"beta30", "beta24"}) {
    const Compared none = CompareEveryProperty("state", version, 2, "none");
    const Compared all = CompareEveryProperty("state", version, 2, "all");
    EXPECT_GE(none.runs, 20) << version;
    EXPECT_GT(none.calls + all.calls, 1000) << version;
  }
}

}  // namespace
}  // namespace testbed
