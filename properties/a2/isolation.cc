// Property "isolation" of the a2 event store: names with the key separator and glob
// characters (':', '*', the empty string) answer every call as plain names do. One sequential
// caller makes each call twice, under the odd names and under plain ones on a second key
// prefix, and compares the answers with the names mapped back.
#include "properties/a2/a2_sequential.h"

namespace testbed::props::a2 {
namespace {

const Mix kIsolationMix = {{20, 10, 0, 6, 0, 6, 4, 10, 12, 8, 6, 0, 12, 0},
                           {"s", "s:snap:r", "s*", ""},
                           {"q", "r:snap:q", "*"},
                           {"s", "s:presence", "*"}};

std::string JudgeIsolation(const std::vector<SequentialStep>& steps, size_t k) {
  const SequentialStep& s = steps[k];
  return s.store != s.model ? "names-change-" + s.op : "";
}

}  // namespace

const A2Property& Isolation() {
  static const A2Property kProperty = {
      {"isolation",
       "sessions, reducers and presence namespaces stay isolated: names with ':', '*' or "
       "nothing in them answer every call as plain names do",
       Always, sim::FaultSet::All(),
       Disagreements("names-change-", "answers differently than under plain names", {})},
      Sequential<kIsolationMix, JudgeIsolation, Against::kPlainNames>};
  return kProperty;
}

}  // namespace testbed::props::a2
