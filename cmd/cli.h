// The testbed CLI: one spec struct per subcommand, parsed once from the command line (CLI11)
// and written back out as the replay line (TigerBeetle's flags.parse into CLIArgs). A printed
// replay line is always Write() of the spec that ran, with only the fields that identify the
// counterexample changed, so it cannot drift from what ran; tests/cli_spec_test.cc parses
// written specs back and compares.
//
// Exit codes: 0 no violation or divergence, 1 one found, 2 usage or setup error (one line on
// stderr naming what is wrong, checked before the work starts).
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/system.h"
#include "real/client_code.h"
#include "real/redis_server.h"
#include "sim/faults.h"

namespace testbed::cli {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
using testbed::real::SetupError;  // real/redis_server.h: a missing redis-server, unreadable scripts

struct FidelitySpec {
  uint64_t seed = 0;
  int64_t commands = 10000;
  std::string redis = "spawn";  // spawn | none
  int64_t checkpoint_every = 100;
  std::string inject_fault;  // "" | expiry-shift | cjson-empty-array
  bool check_determinism = false;
  bool no_shrink = false;
  std::string Write() const;
  bool operator==(const FidelitySpec&) const = default;
};

struct CheckSpec {
  std::string system;
  std::string version;          // resolved: the system's default when not given
  std::string rolling_from;     // "" unless given
  std::string trace;            // --trace FILE: a recorded trace's operations ("": the workload)
  std::string scripts;          // --scripts DIR ("": shipped)
  std::string client = "port";  // --client port|js: the C++ ports or the seeds' JavaScript
  std::string client_dir;       // --client-dir DIR: a build of the SDK for --client js
  std::string baseline;         // --baseline FILE ("": none; any violation fails)
  std::string write_baseline;   // --write-baseline FILE
  std::string junit;            // --junit FILE
  uint64_t seed = 0;
  int64_t runs = 0;            // 0: not given (100, or as many as the budget allows)
  int64_t budget_seconds = 0;  // 0: not given
  int64_t clients = 0;         // resolved: the system's default when not given
  int64_t ops = 0;             // resolved likewise
  sim::FaultList faults;
  std::vector<std::string> properties;         // empty: every property
  std::map<std::string, std::string> options;  // the system's own flags, when not default
  props::SkipSet skip;
  std::string redis = "none";  // none | spawn
  int64_t real_sample = 0;     // 0: off
  int64_t jobs = 0;            // 0: the cores
  std::string out;
  std::string save_scenarios;
  std::string html;    // --html DIR: a timeline page per counterexample
  std::string jepsen;  // --jepsen DIR: each counterexample's judged histories in Jepsen's forms
  // --shard i/n: this process runs the runs i-1, i-1+n, ... of the seed space (0/0: all).
  int64_t shard_index = 0, shard_count = 0;
  bool quiet = false;
  bool verbose = false;   // every class's counterexample in full (by default a known one is a line)
  bool coverage = false;  // Lua line coverage of the runs: printed, in report.json and lcov
  std::string format = "text";  // text | github (also workflow annotations for new classes)
  // Exploration: random (a walk from each seed), pct, dfs (every schedule of each seed's
  // workload, up to the preemption bound; a pass is a proof for that size), replay (choices).
  std::string strategy = "random";
  int64_t pct_depth = 2;
  int64_t preemption_bound = -1;   // dfs: -1 unbounded
  int64_t max_schedules = 100000;  // dfs: per seed and property
  std::vector<size_t> choices;     // replay
  std::string Write() const;
  bool operator==(const CheckSpec&) const = default;
  // --client and --client-dir as the runs' client code.
  real::ClientCode ClientCode() const { return {client == "js", client_dir}; }
  // The old pods' version: --rolling-from, or the version's predecessor.
  std::string OldVersion() const;
};

// testbed diff: the same seeds and schedules on the shipped scripts and on a candidate.
struct DiffSpec {
  std::string system;
  std::string version;       // resolved: the system's default when not given
  std::string rolling_from;  // "" unless given
  std::string candidate;     // the candidate scripts (the layout of --scripts; "": the shipped)
  // --candidate-client DIR: a changed JavaScript build the candidate runs (both sides then run
  // the JavaScript, the shipped side the seeds' own); "": the candidate runs `client`'s code.
  std::string candidate_client;
  std::string client = "port";  // --client: what both sides run without --candidate-client
  uint64_t seed = 0;
  int64_t runs = 50;
  int64_t clients = 0;  // resolved: the system's default when not given
  int64_t ops = 0;
  // Given: one pass under `faults`. Not given: a fault-free pass, then one under every fault
  // kind (DiffPasses).
  sim::FaultList faults;
  bool faults_given = false;
  std::vector<std::string> properties;  // empty: every property
  std::map<std::string, std::string> options;
  int64_t jobs = 0;  // 0: the cores
  std::string Write() const;
  bool operator==(const DiffSpec&) const = default;
  real::ClientCode ShippedClient() const {
    return {client == "js" || !candidate_client.empty(), ""};
  }
  real::ClientCode CandidateClient() const {
    return candidate_client.empty() ? ShippedClient() : real::ClientCode{true, candidate_client};
  }
};

// testbed mutate: every one-line mutant of a system's scripts against its properties.
struct MutateSpec {
  std::string system;
  std::vector<std::string> versions;  // resolved: every version of the system when not given
  uint64_t seed = 0;
  int64_t runs = 60;
  std::map<std::string, int64_t> runs_of;  // --runs-of P=N: one property's runs, not --runs
  int64_t clients = 0;                     // resolved: the system's default when not given
  int64_t ops = 0;
  sim::FaultList faults;
  std::vector<std::string> properties;  // empty: every property
  std::map<std::string, std::string> options;
  int64_t jobs = 0;               // 0: the cores
  std::string equivalent;         // --equivalent FILE ("": none)
  std::string baselines;          // --baselines DIR ("": none)
  std::string only;               // --only ID ("": every mutant)
  std::string write_mutants;      // --write-mutants DIR ("": none)
  bool trust_equivalent = false;  // --trust-equivalent: listed mutants are not run
  // --client js: the mutants are of the seeds' JavaScript client code (SystemInfo's
  // js_client_files), run with --client js; the scripts stay as shipped.
  std::string client = "port";
  std::string Write() const;
  bool operator==(const MutateSpec&) const = default;
};

// testbed merge: shards' report.json files into one report.
struct MergeSpec {
  std::vector<std::string> reports;
  std::string out;    // report.json and report.md here ("": none)
  std::string junit;  // JUnit XML here ("": none)
  std::string Write() const;
  bool operator==(const MergeSpec&) const = default;
};

// testbed check-history: a history in Jepsen's JSON form, checked against a model.
struct CheckHistorySpec {
  std::string history;  // the file
  std::string model = "cas-register";
  int64_t max_states = 10'000'000;  // the search's budget (checker::HistoryCheckOptions)
  bool independent = false;         // values are jepsen.independent [key value] tuples
  bool json = false;                // the verdict as JSON, elle-cli's valid? and the rest
  std::string Write() const;
  bool operator==(const CheckHistorySpec&) const = default;
};

// testbed import: a redis-cli MONITOR capture, written as recorded-trace files.
struct ImportSpec {
  std::string capture;
  std::string out;
  std::string Write() const;
  bool operator==(const ImportSpec&) const = default;
};

// testbed serve: the emulator as a RESP2 server on loopback.
struct ServeSpec {
  int64_t port = 6379;    // 0: a free port (printed)
  std::string record;     // --record FILE: a MONITOR capture with replies ("": none)
  sim::FaultList faults;  // injected per command, from `seed`
  uint64_t seed = 0;
  std::string Write() const;
  bool operator==(const ServeSpec&) const = default;
};

struct ReplaySpec {
  std::vector<std::string> files;  // resolved: directories expanded to their *.json, sorted
  std::string redis = "none";
  std::string jepsen;  // --jepsen DIR: each scenario's judged histories in Jepsen's forms
  // --baseline: a baseline file, or a directory of <system>/<version>.json (baselines/): a
  // recorded trace's judged classes it accepts do not fail the replay.
  std::string baseline;
  std::string Write() const;
  bool operator==(const ReplaySpec&) const = default;
};

// Parse a command line (the words after "testbed"); throws UsageError. Parsing resolves what
// the run needs to be repeatable: a seed is drawn when none is given, defaults are filled in.
FidelitySpec ParseFidelity(const std::vector<std::string>& args);
CheckSpec ParseCheck(const std::vector<std::string>& args);
// The same for a command that takes check's flags (diff, mutate): its errors name `command`.
CheckSpec ParseCheckAs(const std::vector<std::string>& args, const std::string& command);
ReplaySpec ParseReplay(const std::vector<std::string>& args);
DiffSpec ParseDiff(const std::vector<std::string>& args);
MergeSpec ParseMerge(const std::vector<std::string>& args);
MutateSpec ParseMutate(const std::vector<std::string>& args);
CheckHistorySpec ParseCheckHistory(const std::vector<std::string>& args);
ImportSpec ParseImport(const std::vector<std::string>& args);
ServeSpec ParseServe(const std::vector<std::string>& args);

int RunFidelity(const FidelitySpec& spec);
int RunCheck(const CheckSpec& spec);
// The same, as `testbed explore` (its name in the line a signal prints).
int RunExplore(const CheckSpec& spec);
int RunReplay(const ReplaySpec& spec);
int RunDiff(const DiffSpec& spec);
int RunMerge(const MergeSpec& spec);
int RunMutate(const MutateSpec& spec);
int RunCheckHistory(const CheckHistorySpec& spec);
int RunImport(const ImportSpec& spec);
int RunServe(const ServeSpec& spec);
int RunList();

// The CLI: parses argv, runs the subcommand, maps errors to exit code 2.
int Main(int argc, char** argv);

// ---- shared by the subcommands ----
uint64_t FreshSeed();  // the only place the testbed reads entropy
// "0,1,1" -> {0, 1, 1}; a usage error naming --choices otherwise.
std::vector<size_t> ParseChoices(const std::string& list);
// "none" or "spawn"; anything else is a usage error naming the flag.
void CheckRedisFlag(const std::string& value, const std::string& extra_hint = "");

}  // namespace testbed::cli
