#include "cmd/cli.h"

#include <absl/strings/match.h>
#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>
#include <absl/strings/str_split.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "cmd/cli_internal.h"
#include "checker/jepsen_history.h"
#include "real/redis_server.h"
#include "reports/check_report.h"
#include "reports/timeline.h"
#include "sim/lua_scripting.h"

namespace testbed::cli {

uint64_t FreshSeed() {
  std::FILE* f = std::fopen("/dev/urandom", "rb");
  uint64_t s = 0;
  if (!f || std::fread(&s, sizeof s, 1, f) != 1) s = 42;
  if (f) std::fclose(f);
  return s % 1000000000000ULL;
}

void CheckRedisFlag(const std::string& value, const std::string& extra_hint) {
  if (value != "none" && value != "spawn")
    throw UsageError("--redis takes none or spawn, not '" + value + "'" + extra_hint);
}

std::vector<size_t> ParseChoices(const std::string& list) {
  std::vector<size_t> out;
  if (list.empty()) return out;
  for (const std::string& c : std::vector<std::string>(absl::StrSplit(list, ','))) {
    size_t v = 0;
    if (c.empty() || c.find_first_not_of("0123456789") != std::string::npos ||
        !absl::SimpleAtoi(c, &v))
      throw UsageError("--choices takes a comma list of indices, not '" + list + "'");
    out.push_back(v);
  }
  return out;
}

namespace internal {

namespace {
CLI::Validator Decimal(int64_t min, int64_t max) {
  return CLI::Validator(
      [min, max](std::string& v) -> std::string {
        int64_t n = 0;
        if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos)
          return "takes a non-negative decimal integer, not '" + v + "'";
        if (!absl::SimpleAtoi(v, &n) || n > max)
          return absl::StrCat("must be at most ", max, ", not ", v);
        if (n < min) return absl::StrCat("must be at least ", min, ", not ", v);
        return "";
      },
      absl::StrCat("INT in [", min, ", ", max, "]"));
}
}  // namespace

CLI::Option* AddInt(CLI::App& app, const std::string& name, int64_t* out, int64_t min,
                    const std::string& help, bool* given, int64_t max) {
  return app
      .add_option_function<std::string>(
          name,
          [out, given](const std::string& v) {
            absl::SimpleAtoi(v, out);
            if (given) *given = true;
          },
          help)
      ->check(Decimal(min, max));
}

CLI::Option* AddSeed(CLI::App& app, uint64_t* out, bool* given) {
  return app
      .add_option_function<std::string>(
          "--seed",
          [out, given](const std::string& v) {
            absl::SimpleAtoi(v, out);
            *given = true;
          },
          "the seed (default: a fresh one, printed first)")
      ->check(Decimal(0, props::kMaxSeed));
}

// A parse error's text. CLI11 lists unexpected arguments last first: they are put back in the
// order they were given ("--seeds 1", not "1 --seeds").
std::string ParseErrorText(const CLI::ParseError& e) {
  const std::string what = e.what();
  if (!dynamic_cast<const CLI::ExtrasError*>(&e)) return what;
  const size_t colon = what.find(": ");
  if (colon == std::string::npos) return what;
  std::vector<std::string> args = absl::StrSplit(what.substr(colon + 2), ' ');
  std::reverse(args.begin(), args.end());
  return absl::StrCat(args.size() > 1 ? "unexpected arguments: " : "unexpected argument: ",
                      absl::StrJoin(args, " "));
}

void RefuseEmptyValues(const CLI::App& app, const std::string& command) {
  for (const CLI::Option* o : app.get_options())
    if (o->nonpositional() && o->get_items_expected_min() > 0 && o->count() > 0)
      for (const std::string& v : o->results())
        if (v.empty())
          throw UsageError(absl::StrCat(command, ": ", o->get_name(),
                                        " is empty: give it a value, or leave it out"));
}

void ParseArgs(CLI::App& app, const std::string& command, std::vector<std::string> args) {
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp&) {
    throw;
  } catch (const CLI::ParseError& e) {
    throw UsageError(absl::StrCat(command, ": ", ParseErrorText(e), "\nRun 'testbed ", command,
                                  " --help' for more information."));
  }
  RefuseEmptyValues(app, command);
}

void AppendFlag(std::string& line, const std::string& flag, const std::string& value) {
  absl::StrAppend(&line, " --", flag);
  if (value.empty()) return;
  const bool plain =
      value.find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.,:/+=@") ==
      std::string::npos;
  if (plain) {
    absl::StrAppend(&line, " ", value);
    return;
  }
  std::string quoted = "'";
  for (char c : value) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  absl::StrAppend(&line, " ", quoted, "'");
}

const std::vector<Command>& Commands() {
  static const std::vector<Command> kCommands = {
      FidelityCommand(), CheckCommand(), ExploreCommand(), DiffCommand(),
      MutateCommand(),   MergeCommand(), ReplayCommand(),  CheckHistoryCommand(),
      ImportCommand(),   ServeCommand(), ListCommand()};
  return kCommands;
}

void AddSystemOptions(CLI::App& app, std::map<std::string, std::string>& values) {
  std::map<std::string, bool> added;
  for (const props::System* s : props::Systems())
    for (const auto& o : s->options())
      if (!o.hidden && !added[o.flag]) {
        added[o.flag] = true;
        app.add_option("--" + o.flag, values[o.flag], absl::StrCat(o.help, " (", s->name(), ")"));
      }
}

CheckSpec ParseAsCheck(const std::map<std::string, std::string>& values,
                       const std::string& default_runs, const std::string& command) {
  std::vector<std::string> args;
  for (const auto& [flag, value] : values)
    if (!value.empty()) args.insert(args.end(), {"--" + flag, value});
  if (!values.count("runs") || values.at("runs").empty())
    args.insert(args.end(), {"--runs", default_runs});
  return ParseCheckAs(args, command);
}

int64_t JobsOrCores(int64_t jobs) {
  return jobs > 0 ? jobs : std::clamp<int64_t>(std::thread::hardware_concurrency(), 1, 8);
}

namespace {

// Why `path` cannot be made and written as a directory (want_dir) or a file, or "" when it can:
// nothing is created; the writer makes the missing directories when it writes.
std::string WhyNotWritable(const std::string& path, bool want_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path at = path;
  const fs::file_status self = fs::status(at, ec);
  if (fs::exists(self)) {
    if (want_dir && !fs::is_directory(self)) return path + " is a file, not a directory";
    if (!want_dir && fs::is_directory(self)) return path + " is a directory, not a file";
  }
  // The nearest part of the path that exists must be a directory this process can write into.
  if (!want_dir || !fs::exists(self)) at = at.parent_path();
  while (!at.empty() && !fs::exists(fs::status(at, ec))) at = at.parent_path();
  if (at.empty()) at = ".";
  if (!fs::is_directory(fs::status(at, ec))) return path + " is under " + at.string() + ", a file";
  if (access(at.c_str(), W_OK | X_OK) != 0)
    return path + " cannot be written (" + at.string() + " is not writable)";
  return "";
}

}  // namespace

void CheckWritable(const std::string& dir, const std::string& flag) {
  if (const std::string why = WhyNotWritable(dir, /*want_dir=*/true); !why.empty())
    throw UsageError("--" + flag + " " + why);
}

void CheckWritableFile(const std::string& file, const std::string& flag) {
  if (const std::string why = WhyNotWritable(file, /*want_dir=*/false); !why.empty())
    throw UsageError("--" + flag + " " + why);
}

namespace {
std::atomic<int> interrupted{0};
}  // namespace

void CatchInterrupts(const std::string& command, bool at_boundary) {
  // The signals are blocked in every thread (this one, and those it starts later inherit the
  // mask) and taken by one thread of their own with sigwait: no Redis call is cut short by a
  // handler (a socket read with a timeout fails with EINTR even under SA_RESTART).
  static std::once_flag once;
  std::call_once(once, [&command, at_boundary] {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    std::thread([set, at_boundary, command] {
      int sig = 0;
      while (sigwait(&set, &sig) == 0)
        if (interrupted.exchange(sig) != 0 || !at_boundary) {  // the second one, or at once
          real::StopSpawnedServers();
          std::fprintf(stderr, "testbed %s: stopped by %s\n", command.c_str(),
                       SignalName(sig).c_str());
          std::_Exit(128 + sig);
        }
    }).detach();
  });
}

int Interrupted() { return interrupted.load(); }

std::string SignalName(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "signal " + std::to_string(sig);
}

reports::CoverageRow CoverageRowOf(const real::ScriptFile& script, const sim::LineCoverage& ran,
                                   const std::string& file) {
  reports::CoverageRow row{script.id(), file, sim::LinesWithCode(script.body), {}};
  const auto hits = ran.lines.find(sim::CachedSha1(script.body));
  if (hits != ran.lines.end()) row.hits = hits->second;
  return row;
}

void WriteReportFiles(const reports::CheckReport& report, const std::string& out,
                      const std::string& junit, double seconds) {
  if (!junit.empty()) {
    reports::WriteFileAtomically(junit, reports::ToJUnit(report, seconds));
    std::printf("junit: %s\n", junit.c_str());
  }
  if (!out.empty())
    for (const auto& path : reports::WriteReports(report, out))
      std::printf("report: %s\n", path.c_str());
}

void WriteJepsenHistories(const std::string& dir, const std::string& stem,
                          const props::RunOutcome& outcome) {
  const std::filesystem::path at = std::filesystem::path(dir) / reports::SafeFileName(stem);
  std::filesystem::create_directories(at);
  nlohmann::ordered_json index = nlohmann::ordered_json::array();
  for (const props::JudgedHistory& h : outcome.histories) {
    const nlohmann::json j = h.jepsen();
    nlohmann::ordered_json entry = {
        {"name", h.name}, {"model", h.model}, {"fits", j["fits"]}, {"unfit", j["unfit"]}};
    if (j["fits"].get<bool>()) {
      const std::string base = reports::SafeFileName(h.name);
      reports::WriteFileAtomically((at / (base + ".json")).string(), j["history"].dump(1) + "\n");
      reports::WriteFileAtomically((at / (base + ".edn")).string(),
                                   checker::JepsenEdn(j["history"]));
      const checker::HistoryVerdict v = checker::FindHistoryModel(h.model)->check(j["history"], {});
      entry["json"] = base + ".json";
      entry["edn"] = base + ".edn";
      entry["verdict"] = !v.decided       ? "no verdict"
                         : v.linearizable ? "linearizable"
                                          : "not linearizable";
    }
    index.push_back(std::move(entry));
  }
  reports::WriteFileAtomically((at / "index.json").string(), index.dump(2) + "\n");
  std::printf("jepsen: %s\n", at.string().c_str());
}

}  // namespace internal

namespace {

// Edit distance, for "did you mean" (the commands are a handful of short words).
size_t Distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// An error line, named by the command it came from: "testbed check: ..." (a message that already
// starts with the command's name, from a replay line's parse, is not named twice).
std::string Named(const CLI::App& app, const std::string& kind, std::string what) {
  const auto subs = app.get_subcommands();
  if (subs.empty()) return "testbed: " + kind + what;
  const std::string name = subs.front()->get_name();
  if (absl::StartsWith(what, name + ": ")) what.erase(0, name.size() + 2);
  return "testbed " + name + ": " + kind + what;
}

}  // namespace

int Main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "--version") {
    std::printf("testbed %s (commit %s)\n", TESTBED_VERSION, TESTBED_COMMIT);
    return 0;
  }
  if (argc >= 2 && argv[1][0] != '-' && std::string(argv[1]) != "help") {
    const std::string given = argv[1];
    std::string nearest;
    size_t best = SIZE_MAX;
    bool known = false;
    for (const auto& c : internal::Commands()) {
      known = known || c.name == given;
      const size_t d = Distance(given, c.name);
      if (d < best) best = d, nearest = c.name;
    }
    if (!known) {
      std::fprintf(stderr, "testbed: unknown command '%s'%s\nRun 'testbed --help' for the list.\n",
                   given.c_str(), best <= 2 ? (" (did you mean '" + nearest + "'?)").c_str() : "");
      return 2;
    }
  }
  CLI::App app(
      "Finds races in Redis Lua-script protocols: deterministic simulation of the real "
      "scripts and ported clients, with faults, checked against models.",
      "testbed");
  app.require_subcommand(1);
  app.footer("testbed --version prints the version and the commit it was built from.");
  std::function<int()> action;
  for (const auto& c : internal::Commands()) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    auto run = c.define(*sub);
    sub->callback([&action, run] { action = run; });
  }
  try {
    if (argc >= 2 && std::string(argv[1]) == "help") {
      std::cout << app.help();
      return 0;
    }
    // A flag where the command goes names itself (CLI11 would say a subcommand is required).
    if (argc >= 2 && argv[1][0] == '-' && std::string(argv[1]) != "--help" &&
        std::string(argv[1]) != "-h")
      throw UsageError(absl::StrCat(argv[1],
                                    " is not a command: testbed COMMAND [FLAGS] (run "
                                    "'testbed --help' for the commands)"));
    try {
      app.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
      std::cout << app.help();
      return 0;
    } catch (const CLI::CallForAllHelp&) {
      std::cout << app.help("", CLI::AppFormatMode::All);
      return 0;
    } catch (const CLI::ParseError& e) {
      const auto subs = app.get_subcommands();
      const std::string where = subs.empty() ? "" : " " + subs.front()->get_name();
      std::fprintf(stderr, "testbed%s: %s\nRun 'testbed%s --help' for more information.\n",
                   where.c_str(), internal::ParseErrorText(e).c_str(), where.c_str());
      return 2;
    }
    for (const CLI::App* sub : app.get_subcommands())
      internal::RefuseEmptyValues(*sub, sub->get_name());
    return action();
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s\n", Named(app, "", e.what()).c_str());
    return 2;
  } catch (const real::SetupError& e) {
    std::fprintf(stderr, "%s\n", Named(app, "setup error: ", e.what()).c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", Named(app, "error: ", e.what()).c_str());
    return 2;
  }
}

}  // namespace testbed::cli
