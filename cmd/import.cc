// testbed import CAPTURE --out DIR: a `redis-cli MONITOR` capture from Redis 7.0, written as one
// recorded-trace file per system and segment (harness/trace_import.h says how it is read).
// Exit 0 with a summary; 2 with one line naming the capture's line and what is wrong in it, or
// an output that cannot be written, and then nothing is left in DIR.
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "cmd/cli_internal.h"
#include "harness/trace_import.h"

namespace testbed::cli {
namespace {

using internal::AppendFlag;

void DefineImport(CLI::App& app, ImportSpec& s) {
  app.add_option("capture", s.capture, "the capture: what `redis-cli MONITOR` printed")->required();
  app.add_option("--out", s.out, "write the trace files here")->required();
}

ImportSpec ResolveImport(const ImportSpec& s) {
  if (!std::filesystem::is_regular_file(s.capture))
    throw UsageError("cannot read capture " + s.capture);
  internal::CheckWritable(s.out, "out");
  return s;
}

int ExecuteImport(const ImportSpec& spec) {
  harness::ImportSummary summary;
  try {
    summary = harness::ImportCapture(spec.capture, spec.out,
                                     real::ScriptCatalog::Load(real::ScriptCatalog::ShippedDir()));
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  std::printf(
      "read %lld lines: %lld calls, %lld housekeeping commands set aside, %lld calls of other "
      "applications kept (replayed, not judged; %lld of them opaque)\n",
      static_cast<long long>(summary.lines), static_cast<long long>(summary.calls),
      static_cast<long long>(summary.ignored), static_cast<long long>(summary.foreign),
      static_cast<long long>(summary.opaque));
  for (const std::string& f : summary.files) std::printf("wrote %s\n", f.c_str());
  return 0;
}

}  // namespace

std::string ImportSpec::Write() const {
  std::string line = "testbed import";
  AppendFlag(line, "", capture);
  line.erase(line.rfind(" --"), 3);  // a positional argument, not a flag
  AppendFlag(line, "out", out);
  return line;
}

ImportSpec ParseImport(const std::vector<std::string>& args) {
  return internal::ParseWith<ImportSpec, ImportSpec>("import", args, DefineImport, ResolveImport);
}

int RunImport(const ImportSpec& spec) { return ExecuteImport(spec); }

namespace internal {
Command ImportCommand() {
  return MakeCommand<ImportSpec, ImportSpec>(
      "import",
      "Reads a redis-cli MONITOR capture (Redis 7.0) and writes one recorded-trace file per "
      "system and segment (FLUSHALL or FLUSHDB starts a segment), recognizing each system and "
      "version from its keys and script SHA1s.",
      DefineImport, ResolveImport, RunImport);
}
}  // namespace internal

}  // namespace testbed::cli
