// Property "valid-calls-never-script-error" of the a2 event store: valid calls with adversarial
// values and names never fail with a script error. One sequential caller; its calls are all
// valid input, and System::Run reports each script that fails at run time as a finding
// (script-error); the answers themselves are not judged.
#include "properties/a2/a2_sequential.h"

namespace testbed::props::a2 {
namespace {

const Mix kValidCallsNeverScriptErrorMix = {{20, 8, 0, 6, 0, 4, 0, 10, 16, 20, 10, 0, 4, 0},
                                            {"s1", "s:x*"},
                                            {"sum", "r:1"},
                                            {"room-1", ""},
                                            true,
                                            true};

std::string NotJudged(const std::vector<SequentialStep>&, size_t) { return ""; }

}  // namespace

const A2Property& ValidCallsNeverScriptError() {
  static const A2Property kProperty = {
      {"valid-calls-never-script-error",
       "valid calls, with adversarial values (nested 1001 deep, 2^53 + 1, -0, unicode) and "
       "names, never fail with a script error",
       Always,
       sim::FaultSet::All(),
       {}},
      Sequential<kValidCallsNeverScriptErrorMix, NotJudged>};
  return kProperty;
}

}  // namespace testbed::props::a2
