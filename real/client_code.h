// Which client code a run drives: the C++ ports, or the seeds' own JavaScript (--client js),
// from the seeds' SDK or from a user's build of it (--client-dir). It travels with the script
// catalog (real/script_catalog.h), which is the rest of the code under test.
#pragma once

#include <string>

namespace testbed::real {

struct ClientCode {
  bool js = false;  // false: the C++ ports
  std::string dir;  // js: the SDK directory ("": the seeds' own, as tests/js lays them out)
  bool operator==(const ClientCode&) const = default;
};

}  // namespace testbed::real
