#include "properties/shared/recorded_replies.h"

#include <absl/strings/ascii.h>

#include <algorithm>
#include <exception>

#include "sim/emulator.h"

namespace testbed::props {

const real::ScriptCatalog& ShippedCatalog() {
  static const real::ScriptCatalog kCatalog =
      real::ScriptCatalog::Load(real::ScriptCatalog::ShippedDir());
  return kCatalog;
}

std::string RecordedBody(const RecordedCall& c) {
  // A shipped script is its shipped body, whether the capture sent that or the script as
  // deployed (the same modulo whitespace: harness/trace_import.h).
  if (!c.script.empty()) {
    try {
      return ShippedCatalog().get(c.script).body;
    } catch (const std::exception&) {  // a sha1: a body the catalog does not hold
    }
  }
  if (c.argv.size() > 1 && absl::AsciiStrToUpper(c.argv[0]) == "EVAL") return c.argv[1];
  return "";
}

RepliedCalls::RepliedCalls(const RecordedCalls& in) : calls_(&in) {
  if (std::all_of(in.begin(), in.end(), [](const RecordedCall& c) { return c.has_reply; })) return;
  computed_ = in;
  calls_ = &computed_;
  sim::EmulatorBackend emulator;
  for (RecordedCall& c : computed_) {
    sim::Argv argv = c.argv;
    if (!argv.empty() && absl::AsciiStrToUpper(argv[0]) == "EVALSHA") {
      argv[0] = "EVAL";
      argv[1] = RecordedBody(c);
    }
    c.reply = emulator.execute(argv, c.at_ms);
    c.has_reply = true;
  }
}

std::map<int, std::vector<size_t>> CallsByClient(const RecordedCalls& calls) {
  std::map<int, std::vector<size_t>> by;
  for (size_t i = 0; i < calls.size(); ++i) by[calls[i].client].push_back(i);
  return by;
}

}  // namespace testbed::props
