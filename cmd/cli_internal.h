// Internal to cmd/: how a subcommand declares its flags with CLI11 and joins the CLI.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cmd/cli.h"
#include "real/script_catalog.h"
#include "reports/check_report.h"
#include "sim/lua_coverage.h"

namespace testbed::cli::internal {

// A decimal integer option in [min, max] (digits only: "-3", "0x10" and "010" are refused,
// where CLI11's own conversion would wrap or read octal; a value past max names the limit).
// Sets *given when present.
inline constexpr int64_t kMaxCount = 1'000'000'000;  // runs, schedules, samples
CLI::Option* AddInt(CLI::App& app, const std::string& name, int64_t* out, int64_t min,
                    const std::string& help, bool* given = nullptr, int64_t max = kMaxCount);
CLI::Option* AddSeed(CLI::App& app, uint64_t* out, bool* given);

// A CLI11 parse error's text, its unexpected arguments in the order they were given.
std::string ParseErrorText(const CLI::ParseError& e);
// A usage error naming the first option of `app` given an empty value ('' is never a default).
void RefuseEmptyValues(const CLI::App& app, const std::string& command);
// Parses args (the words after the subcommand) into `app`; a parse error becomes a UsageError
// naming the flag, with a pointer to --help.
void ParseArgs(CLI::App& app, const std::string& command, std::vector<std::string> args);

// For a command that shares check's flags (diff, mutate): each system's own options
// (--ops-mix), added once, bound into `values` by flag name.
void AddSystemOptions(CLI::App& app, std::map<std::string, std::string>& values);
// The flags in `values` parsed as check parses them (the same checks and messages), with
// --runs `default_runs` when it was not given.
CheckSpec ParseAsCheck(const std::map<std::string, std::string>& values,
                       const std::string& default_runs, const std::string& command);

// SIGINT and SIGTERM: from CatchInterrupts() on (call it before starting threads), the first
// one is only recorded, so that a campaign can stop at a run boundary and write what it found;
// a second one (or the first, when !at_boundary) ends the process at once (exit 128 + the
// signal) after stopping every spawned redis-server and removing its directory.
// Interrupted() is the first signal's number, 0 before any. `command` names the stop's line.
void CatchInterrupts(const std::string& command, bool at_boundary = true);
int Interrupted();
// "SIGINT", "SIGTERM".
std::string SignalName(int sig);

// A subcommand: adds its options to `sub` and returns what runs it once parsed.
struct Command {
  std::string name;
  std::string help;
  std::function<std::function<int()>(CLI::App& sub)> define;
};
const std::vector<Command>& Commands();

// Parses args with a command's flags (`define` binds them into a Raw) and resolves the spec.
template <typename Raw, typename Spec>
Spec ParseWith(const std::string& command, const std::vector<std::string>& args,
               void (*define)(CLI::App&, Raw&), Spec (*resolve)(const Raw&)) {
  CLI::App app;
  Raw raw;
  define(app, raw);
  ParseArgs(app, command, args);
  return resolve(raw);
}

template <typename Raw, typename Spec>
Command MakeCommand(const std::string& name, const std::string& help,
                    void (*define)(CLI::App&, Raw&), Spec (*resolve)(const Raw&),
                    int (*run)(const Spec&)) {
  return {name, help, [define, resolve, run](CLI::App& sub) -> std::function<int()> {
            auto raw = std::make_shared<Raw>();
            define(sub, *raw);
            return [raw, resolve, run] { return run(resolve(*raw)); };
          }};
}

// Each subcommand's file provides one.
Command FidelityCommand();
Command CheckCommand();
Command ExploreCommand();
Command ReplayCommand();
Command DiffCommand();
Command MergeCommand();
Command CheckHistoryCommand();
Command ImportCommand();
Command ServeCommand();
Command MutateCommand();
Command ListCommand();

// The shipped scripts with --scripts DIR's changes (see `testbed check --help`), adding a line
// for each replacement to `lines` (printed after the seed, once nothing more can be refused).
// Errors are usage errors naming --flag.
real::ScriptCatalog CatalogWithOverrides(const std::string& dir, const props::System& system,
                                         const std::string& version,
                                         std::vector<std::string>& lines,
                                         const std::string& flag = "scripts");

// A directory that can hold output: it is one, or the nearest part of its path that exists is a
// writable directory; a usage error naming the flag otherwise. Nothing is created (the writer
// makes what is missing), so a command refused later leaves nothing behind.
void CheckWritable(const std::string& dir, const std::string& flag);
// The same for a file: not a directory, and its directory can be made and written.
void CheckWritableFile(const std::string& file, const std::string& flag);

// Writes a check report's files: JUnit XML to `junit` and report.json/.md into `out` (each
// skipped when ""), printing each path.
void WriteReportFiles(const reports::CheckReport& report, const std::string& out,
                      const std::string& junit, double seconds);

// One script's line coverage row: its lines with code, and the counts of those that ran
// (`ran`: the runs' coverage, by body SHA1); `file` is where its body was read from.
reports::CoverageRow CoverageRowOf(const real::ScriptFile& script, const sim::LineCoverage& ran,
                                   const std::string& file);

// --jepsen DIR: each history `outcome` judged (props::JudgedHistory) in Jepsen's forms, under
// DIR/<stem>/: <name>.json (the JSON elle-cli reads) and <name>.edn, and index.json naming each
// history with its model, whether it fits, why not, and the verdict the testbed's own
// cas-register checker gives the written file (testbed check-history reads it back). Prints
// the directory.
void WriteJepsenHistories(const std::string& dir, const std::string& stem,
                          const props::RunOutcome& outcome);

// --jobs as given, or the cores (1 to 8) when it is 0.
int64_t JobsOrCores(int64_t jobs);

// Appends " --flag value" (value quoted for a shell when it needs it).
void AppendFlag(std::string& line, const std::string& flag, const std::string& value);

}  // namespace testbed::cli::internal
