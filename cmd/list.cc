// testbed list: the registered systems with their versions and properties, the scripts that
// have no client port yet, and the fault kinds.
#include <absl/strings/str_join.h>
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "cmd/cli_internal.h"
#include "real/script_catalog.h"

namespace testbed::cli {

int RunList() {
  const real::ScriptCatalog c = real::ScriptCatalog::Load(real::ScriptCatalog::ShippedDir());
  std::map<std::string, int> dirs;  // "<system>/<version>" -> scripts
  for (const auto& s : c.all()) ++dirs[s.file.substr(0, s.file.rfind('/'))];
  std::set<std::string> ported;
  for (const props::System* s : props::Systems()) {
    std::printf("system %s: %s\n  versions (testbed check --system %s --version V):\n",
                s->name().c_str(), s->what().c_str(), s->name().c_str());
    for (const auto& v : s->versions()) {
      const std::string dir = s->scripts_dir(v.name);
      ported.insert(dir);
      const int n = dirs.count(dir) ? dirs[dir] : 0;
      const std::string scripts =
          !n ? "no scripts (plain commands)"
             : absl::StrCat(n, " scripts", dir == s->name() + "/" + v.name ? "" : " of " + dir);
      std::printf("    %-10s %s; %s%s%s\n", v.name.c_str(), scripts.c_str(), v.what.c_str(),
                  v.rolling_from.empty() ? "" : "; rolling deploy from ", v.rolling_from.c_str());
    }
    std::printf("  properties:\n");
    for (const auto& p : s->properties()) {
      std::string na;
      for (const auto& v : s->versions())
        if (!p.applies(v.name, v.rolling_from)) na += (na.empty() ? "" : ", ") + v.name;
      std::printf("    %-30s %s\n", p.name.c_str(), p.contract.c_str());
      if (!na.empty()) std::printf("    %-30s n/a for %s\n", "", na.c_str());
      if (!p.sets_aside.empty())
        std::printf("    %-30s runs without faults: %s\n", "", p.sets_aside.Describe().c_str());
      // The versions whose recorded traces it judges (testbed replay), and explores around.
      std::string traced;
      bool explored = true;
      for (const auto& v : s->versions())
        if (const props::TraceSupport* t = s->trace_support(v.name); t && t->judges(p.name)) {
          traced += (traced.empty() ? "" : ", ") + v.name;
          explored = explored && t->explore;
        }
      if (!traced.empty())
        std::printf("    %-30s judged on recorded traces (%s) of %s\n", "",
                    explored ? "replay, explore" : "replay", traced.c_str());
    }
    for (const auto& o : s->options()) {
      if (o.hidden) continue;
      std::printf("  option --%s (default %s): %s\n", o.flag.c_str(), o.default_value.c_str(),
                  o.help.c_str());
      std::printf("    %-30s %s\n", "", absl::StrJoin(o.choices, ", ").c_str());
    }
  }
  std::printf("scripts without a client port yet (under real/scripts/):\n");
  for (const auto& [dir, n] : dirs)
    if (!ported.count(dir)) std::printf("  %-16s %d scripts\n", dir.c_str(), n);
  std::printf("faults (--faults all, none, or a comma list):\n");
  for (const auto& f : sim::FaultKinds())
    std::printf("  %-13s %s\n", f.name.c_str(), f.what.c_str());
  return 0;
}

namespace internal {
Command ListCommand() {
  return {"list",
          "Lists systems, versions, properties (and where they are n/a), scripts and faults.",
          [](CLI::App&) -> std::function<int()> { return [] { return RunList(); }; }};
}
}  // namespace internal

}  // namespace testbed::cli
