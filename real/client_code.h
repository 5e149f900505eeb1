// Which client code a run drives: the C++ ports, or the seeds' own JavaScript (--client js),
// from the seeds' SDK or from a user's build of it (--client-dir). It travels with the script
// catalog (real/script_catalog.h), which is the rest of the code under test.
#pragma once

#include <map>
#include <memory>
#include <string>

namespace testbed::real {

// Changed scripts (check --scripts) as the JavaScript backend runs them, for one version: the
// SHA1 (hex) of the shipped body the SDK embeds -> the body that runs in its place.
using ScriptSwap = std::map<std::string, std::string>;

struct ClientCode {
  bool js = false;  // false: the C++ ports
  std::string dir;  // js: the SDK directory ("": the seeds' own, as tests/js lays them out)
  // js: the catalog's changed scripts by version directory ("beta30", "0.5.0"; null: none),
  // which the ports read from the catalog itself. Only that version's clients run them, as only
  // its pods run a changed script with the ports.
  std::shared_ptr<const std::map<std::string, ScriptSwap>> scripts;
  // The changed scripts of `version`'s clients (null: none).
  std::shared_ptr<const ScriptSwap> SwapFor(const std::string& version) const {
    if (!scripts) return nullptr;
    const auto it = scripts->find(version);
    return it == scripts->end() ? nullptr : std::shared_ptr<const ScriptSwap>(scripts, &it->second);
  }
  bool operator==(const ClientCode& o) const {
    const auto swaps = [](const ClientCode& c) {
      return c.scripts ? *c.scripts : std::map<std::string, ScriptSwap>();
    };
    return js == o.js && dir == o.dir && swaps(*this) == swaps(o);
  }
};

}  // namespace testbed::real
