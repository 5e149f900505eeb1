// testbed merge: the report.json files of one check's shards (check --shard I/N, one per CI
// job) as the one report the check would have written in one process: report.json and
// report.md, and JUnit XML. Exit 1 when a class is not known (new against the baseline, or any
// class without one), as check does.
#include <absl/strings/str_cat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "cmd/cli_internal.h"
#include "reports/check_report.h"
#include "reports/terminal.h"

namespace testbed::cli {
namespace {

using internal::AppendFlag;

void DefineMerge(CLI::App& app, MergeSpec& s) {
  app.add_option("reports", s.reports, "the shards' report.json files (check --shard I/N --out)")
      ->required();
  app.add_option("--out", s.out, "write the merged report.json and report.md here");
  app.add_option("--junit", s.junit, "write the merged JUnit XML here");
}

MergeSpec ResolveMerge(const MergeSpec& s) {
  for (const std::string& f : s.reports)
    if (!std::filesystem::is_regular_file(f)) throw UsageError("cannot read report " + f);
  return s;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

int ExecuteMerge(const MergeSpec& spec) {
  std::vector<reports::CheckReport> shards;
  reports::CheckReport merged;
  try {
    for (const std::string& f : spec.reports) shards.push_back(reports::FromJson(ReadAll(f), f));
    merged = reports::Merge(shards);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (!spec.out.empty()) internal::CheckWritable(spec.out, "out");
  if (!spec.junit.empty()) internal::CheckWritableFile(spec.junit, "junit");
  double seconds = 0;
  for (const auto& s : shards) seconds += s.shard.seconds;
  std::printf("merged %zu shards of: %s\n", shards.size(), shards.front().shard.command.c_str());
  std::printf("%s", reports::SummaryText(merged).c_str());
  if (!merged.baseline.empty()) std::printf("%s", reports::BaselineText(merged).c_str());
  int code = 0;  // as check's: any class that is not known fails
  for (const auto& p : merged.properties)
    for (const auto& c : p.classes) code |= c.status != "known";
  internal::WriteReportFiles(merged, spec.out, spec.junit, seconds);
  // As check's: runs without a verdict are not a pass, exit 3 when nothing else failed.
  if (const int64_t no_verdict = reports::NoVerdict(merged); no_verdict > 0 && code == 0) {
    std::printf("%s", reports::NoVerdictLine(no_verdict).c_str());
    code = 3;
  }
  std::printf("%s\n", reports::VerdictLine(merged, spec.out).c_str());
  if (!merged.incomplete.empty())
    std::printf("incomplete: %s; the report covers the runs made\n", merged.incomplete.c_str());
  return code;
}

}  // namespace

std::string MergeSpec::Write() const {
  std::string line = "testbed merge";
  for (const std::string& f : reports) {
    AppendFlag(line, "", f);
    line.erase(line.rfind(" --"), 3);  // a positional argument, not a flag
  }
  if (!out.empty()) AppendFlag(line, "out", out);
  if (!junit.empty()) AppendFlag(line, "junit", junit);
  return line;
}

MergeSpec ParseMerge(const std::vector<std::string>& args) {
  return internal::ParseWith<MergeSpec, MergeSpec>("merge", args, DefineMerge, ResolveMerge);
}

int RunMerge(const MergeSpec& spec) { return ExecuteMerge(spec); }

namespace internal {
Command MergeCommand() {
  return MakeCommand<MergeSpec, MergeSpec>(
      "merge",
      "Merges the report.json files of one check's shards (check --shard I/N) into the report "
      "the check would have written in one process: report.json, report.md and JUnit XML.",
      DefineMerge, ResolveMerge, RunMerge);
}
}  // namespace internal

}  // namespace testbed::cli
