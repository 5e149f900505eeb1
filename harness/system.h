// The seam between the harness and a system under test (FoundationDB registers a workload with
// WorkloadFactory, madsim adds a simulator): a system declares its versions, its property table
// and its options, and runs one property's workload; `check`, `list`, `replay`, minimization,
// scenario files and reports go only through this interface and never name a system.
//
// Adding a system: its folders (real/<system>/, model/<system>, properties/<system>/), one line
// in properties/registry.cc (or RegisterSystem from a binary of its own, as the toy system in
// tests/toy/ does), and its CMake entries.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "real/redis_server.h"
#include "real/script_catalog.h"
#include "sim/faults.h"
#include "sim/fidelity.h"
#include "sim/runtime.h"
#include "sim/trace.h"

namespace testbed::props {

struct VersionInfo {
  std::string name;          // a directory under real/scripts/<system>/, e.g. "beta30"
  std::string rolling_from;  // the version a rolling deploy to it comes from ("": none)
  std::string what;          // one line for `testbed list`
};

// A named kind of violation of one property (issue "Findings a team can live with"): runs,
// reports and baselines count classes, so a second bug in a property that already fails every
// run still shows as new.
struct AnomalyClass {
  std::string name;      // "duplicate-version"; stable: baselines name it
  std::string sentence;  // "two writers were acknowledged with the same version"
};

struct PropertyInfo {
  std::string name;
  std::string contract;  // one sentence: what a caller may rely on
  // Whether the property means anything for a version and its old pods' version (else "n/a").
  std::function<bool(const std::string& version, const std::string& old_version)> applies;
  sim::FaultSet sets_aside;  // fault kinds that would make it meaningless; it runs without them
  // What its findings can be named; others are generic. Any property also has "script-error",
  // which System::Run adds when a script fails at run time, and "calls-without-end", when a run
  // stops at its limit of calls (sim::WorldOptions::max_steps).
  std::vector<AnomalyClass> classes = {};
};

// An operation a finding is about: the calls `actor` made from `from_ms` to `to_ms` (virtual
// ms since the run's start, inclusive). Timeline pages (check --html) highlight them.
struct Involved {
  std::string actor;  // "client0", as the trace names actors
  int64_t from_ms = 0, to_ms = 0;
  std::string op = "";  // the SDK operation ("compareAndSet", "commit", "claim"), when known
};

// A deadline a finding turns on (a lease's end, a key's TTL): drawn on the timeline from these
// fields, at `at_ms` (virtual ms since the run's start) on `actor`'s lane ("": every lane).
struct Deadline {
  std::string actor;
  int64_t at_ms = 0;
  std::string what;  // "lease of client1 (attempt 2) ends"
};

// The operation ctx's actor ran from `from_ms` (the world's virtual time, not an actor's
// skewed clock) until now.
Involved Since(sim::Ctx& ctx, int64_t from_ms);

// One violation a run found. A system names its class when one of the property's classes
// describes it; otherwise `shape` (free of seeds, times, keys and values: which operations, in
// which order, with which kinds of results) keys a generic class, "shape-<digest>", so nothing
// is dropped and the same shape is the same class in every run.
struct Finding {
  std::string cls;         // a name from PropertyInfo::classes, or "" (generic)
  std::string text;        // the counterexample: one or more lines, without indentation
  std::string shape = {};  // for a generic class (optional for a named one)
  std::vector<Involved> involved = {};   // the operations it is about, when the check knows them
  std::vector<Deadline> deadlines = {};  // the deadlines it turns on, when the check knows them
};

// The class a finding counts under: its own, or "shape-" + 8 hex digits of its shape.
std::string ClassOf(const Finding& f);
// The sentence that explains a class of a property ("" when unknown).
std::string SentenceOf(const PropertyInfo& p, const std::string& cls);

// A system's own `check` flag (state's --ops-mix): kept in scenario files under scenario_key.
struct SystemOption {
  std::string flag;          // "ops-mix"
  std::string scenario_key;  // "ops_mix"
  std::string default_value;
  std::vector<std::string> choices;  // empty: a non-negative integer
  std::string help;
  // A setting of the system's workloads that tests and scenario files set and users do not
  // (not a flag, not listed); a scenario file holds it only when it is not the default.
  bool hidden = false;
};

using SkipSet = std::set<std::pair<int, int>>;  // (client, operation) pairs shrunk away

// Ceilings on one run, checked wherever a run comes from (flags, scenario files): a larger
// workload does not fit in this tool's memory or time (a hot key runs 3 actors per client).
inline constexpr int64_t kMaxClients = 200;
inline constexpr int64_t kMaxOps = 10000;         // per client
inline constexpr int64_t kMaxClientOps = 100000;  // clients x ops
// A run stops after kCallsPerOperation calls per operation of its workload (kMinCallLimit at
// least): a client that calls without end is then a finding (class calls-without-end). The
// shipped clients' runs make 2,150 calls at most at the default sizes, where the limit is
// 24,000 to 48,000 (docs/findings.md: how that is measured).
inline constexpr int64_t kCallsPerOperation = 1000;
inline constexpr int64_t kMinCallLimit = 10000;
inline constexpr int64_t kMaxSeed = (int64_t{1} << 62) - 1;  // a seed plus a run index < 2^63

// Everything that decides one run of one property.
struct RunSpec {
  std::string property;
  std::string version;
  std::string old_version;  // the old pods' version in a rolling deploy ("": none)
  uint64_t seed = 1;
  int clients = 1;
  int ops = 1;
  SkipSet skip;
  sim::FaultList faults;                       // as asked; the property's set-aside applies
  std::map<std::string, std::string> options;  // SystemOption::flag -> value (absent: default)
  // A recorded trace (testbed import's file) whose clients' operations the run makes, each
  // client its own in order, in place of the workload's (testbed explore): "" for the
  // workload. Client c's operation i is (c, i) in `skip`.
  std::string trace;
  bool operator==(const RunSpec&) const = default;
};

class PropertyRun;  // harness/property.h

// A history a property judged, as it can leave the testbed in Jepsen's form (testbed check
// --jepsen): `jepsen` computes, only when asked, {"fits": bool, "history": [...],
// "unfit": [reasons]} (checker/jepsen_history.h), where `model` is the elle-cli model the
// history is written for ("cas-register").
struct JudgedHistory {
  std::string name;  // the key (or draft, lease) it is the history of
  std::string model;
  std::function<nlohmann::json()> jepsen;
};

struct RunOutcome {
  bool violated = false;    // Run(): exactly when there are findings
  bool incomplete = false;  // a checker gave up: no verdict (never a pass)
  // What a checker could not decide, one line each (e.g. a key, its concurrency and its
  // ambiguous operations): why the run has no verdict.
  std::vector<std::string> undecided;
  // Every violation the run found, not only the first: a run that shows a known anomaly keeps
  // checking, so a new one next to it is still seen. Run() fills in generic class names.
  std::vector<Finding> findings;
  std::vector<std::string> classes;  // Run(): ClassOf each finding, first seen first, unique
  std::string description;           // Run(): the findings, one "  "-indented line each
  sim::Trace trace;
  std::string trace_hash() const { return trace.Hash(); }  // computed on each call
  sim::RunResult run;                                      // the schedule's choices among them
  // Redis calls that ran a script and got an error reply (a script failing at run time).
  std::vector<size_t> script_errors;     // indices into trace.events
  std::vector<JudgedHistory> histories;  // each history a property judged that fits a Jepsen model
};

// Recorded traces (testbed import): which commands of a capture are a system's calls. A
// recognizer sees every client command of a capture in order and may learn from them (a2 learns
// its key prefix from the keys its scripts name).
class TraceRecognizer {
 public:
  virtual ~TraceRecognizer() = default;
  // How surely `argv` is this system's call: 0 not at all, 1 by its keys' common prefix, 2 by
  // something only this system writes (handles' namespaces under the state store's prefix). The
  // system with the highest claim takes the call. script: the catalog id of the body an EVAL or
  // EVALSHA runs ("" for none, or a body the catalog does not hold).
  virtual int Claims(const std::vector<std::string>& argv, const std::string& script) = 0;
  // Whether the calls claimed so far cannot be `version`'s (the state store: a v2 key is not
  // beta.3's), when no script names the version.
  virtual bool RulesOut(const std::string& version) const { return false; }
  // A FLUSHALL or FLUSHDB ended a segment: what rules a version out starts again (what the
  // recognizer learnt of keys, it keeps).
  virtual void NewSegment() {}
};

// Recorded traces: one call of a trace as a system's trace support reads it.
struct RecordedCall {
  int client = 0;     // an index into the trace's clients, in the order they first appear
  int64_t at_ms = 0;  // the capture's instant (ms since the Unix epoch)
  int64_t line = 0;   // its line in the capture
  std::vector<std::string> argv;
  std::string script;  // the catalog id of the body an EVAL or EVALSHA ran ("": none)
  sim::Reply reply;    // what the call got (the emulator's, in the recorded order)
  bool has_reply = false;
};
using RecordedCalls = std::vector<RecordedCall>;

// One argument of a recorded trace's call: a string, or {"repr": ...} in Redis's escapes
// (unescaped). Throws std::invalid_argument starting with `where`.
std::string RecordedArgument(const nlohmann::json& a, const std::string& where);
// A recorded trace's file read as calls (without replies); `start_ms` gets the segment's first
// instant. Throws std::invalid_argument naming what is wrong. An argument in Redis's escaped
// form ({"repr": ...}) is unescaped.
RecordedCalls ReadRecordedCalls(const nlohmann::json& trace, int64_t* start_ms = nullptr);
// The same, from a file, read once per process and path (runs of testbed explore share it).
std::shared_ptr<const RecordedCalls> LoadRecordedCalls(const std::string& path,
                                                       int64_t* start_ms = nullptr);

// What a system can judge of a recorded trace (item 3 of issue 29) and explore around it: the
// SDK operations its clients made, rebuilt from their calls, judged by the property's own
// checker; or the same operations made again through the ports, each client its own in order,
// while the strategies and faults vary the interleaving and timing (testbed explore).
struct TraceSupport {
  std::vector<std::string> properties;  // those a trace can be judged by
  bool judges(const std::string& property) const {
    return std::find(properties.begin(), properties.end(), property) != properties.end();
  }
  std::string others;  // why the system's other properties cannot be (one sentence)
  // How many operations each client of the trace made (clients without any left out).
  std::function<std::vector<int>(const RecordedCalls&)> ops_per_client;
  // Judges the recorded calls (with their replies) as `property` judges a run.
  std::function<void(const std::string& property, const RecordedCalls&, int64_t start_ms,
                     RunOutcome&)>
      judge;
  // The run of `property` whose clients make the trace's operations (spec.clients, spec.ops
  // and spec.skip cut them); nullptr while the system's operations are judged on a trace but
  // not made again (testbed explore then says so).
  std::function<std::unique_ptr<PropertyRun>(const std::string& property, const RecordedCalls&,
                                             const RunSpec&, const sim::FaultOptions&,
                                             const real::ScriptCatalog&)>
      explore;
  // Throws std::invalid_argument naming the first call whose operation explore cannot make
  // again, of those ops_per_client counts (nullptr: it can make each).
  std::function<void(const RecordedCalls&)> check_made_again;
};

// The findings of a run or a judged trace named and described as System::Run does it
// (violated, classes, description).
void Conclude(RunOutcome& out);

using ScriptShapeFn = sim::fidelity::ScriptShape (*)(const real::ScriptFile& script,
                                                     sim::fidelity::ArgDraws& draws);

// What a system is, as data: one struct, so that a system's class holds only its behaviour.
struct SystemInfo {
  std::string name;
  std::string what;                   // one line for `testbed list`
  std::vector<VersionInfo> versions;  // ported, oldest first
  std::string default_version;
  std::vector<SystemOption> options = {};
  int default_clients = 3;
  int default_ops = 12;
  // How many old versions a rolling deploy may mix with the new one (--rolling-from A,B: old
  // pods of A and of B at once). One unless the system's workloads take more.
  int max_old_versions = 1;
  int64_t horizon_ms = 60000;  // the virtual time after which a run stops (ms after its start)
  // The system whose scripts its versions run, under <scripts_of>/<version> in the catalog
  // ("": its own; handles run on the state store's).
  std::string scripts_of = "";
  // How `testbed fidelity` draws the arguments of one of its scripts (nullptr: it runs them with
  // no keys and no arguments).
  ScriptShapeFn script_shape = nullptr;
  // The seeds' own JavaScript that --client js runs for these versions (testbed mutate
  // --client js mutates `file` of the SDK build, leaving alone the classes and functions in
  // `skip`: code no property reaches through the port interface).
  struct JsClientFile {
    std::vector<std::string> versions;
    std::string file;  // in the SDK build, e.g. runtime/state.js
    std::vector<std::string> skip;
  };
  std::vector<JsClientFile> js_client_files = {};
};

class System {
 public:
  virtual ~System() = default;
  virtual const SystemInfo& info() const = 0;
  virtual const std::vector<PropertyInfo>& properties() const = 0;
  // Recorded traces: what a trace of `version`'s calls can be judged by (nullptr: nothing).
  virtual const TraceSupport* trace_support(const std::string& version) const { return nullptr; }
  // Recorded traces: a fresh recognizer for one capture (nullptr: none of its calls is known).
  virtual std::unique_ptr<TraceRecognizer> NewTraceRecognizer() const { return nullptr; }

  // The info's fields, by name.
  const std::string& name() const { return info().name; }
  const std::string& what() const { return info().what; }
  const std::vector<VersionInfo>& versions() const { return info().versions; }
  const std::string& default_version() const { return info().default_version; }
  const std::vector<SystemOption>& options() const { return info().options; }
  int default_clients() const { return info().default_clients; }
  int default_ops() const { return info().default_ops; }
  int max_old_versions() const { return info().max_old_versions; }
  ScriptShapeFn script_shape() const { return info().script_shape; }
  // Where a version's scripts live in the catalog.
  std::string scripts_dir(const std::string& version) const {
    return (info().scripts_of.empty() ? name() : info().scripts_of) + "/" + version;
  }
  // Why `old` (a comma list) cannot be the old pods of `version` ("": it can).
  std::string OldVersionsError(const std::string& version, const std::string& old) const;

  // One run. The harness calls Run, which applies the property's set-aside faults, prepares
  // the property's run, builds the world (one backend: the emulator, or `server`), lets the
  // property start its actors, runs the world and has the property check what they saw; then
  // it names the findings' classes, describes them and finds the script errors in the trace.
  // strategy: which pending call runs next (nullptr: a random walk from the seed).
  RunOutcome Run(const RunSpec& spec, const real::ScriptCatalog& scripts, real::RedisServer* server,
                 sim::Strategy* strategy = nullptr) const;

  // The first script of <system>/<version>/ that does not compile, as "FILE: error" ("": none).
  std::string FirstCompileError(const real::ScriptCatalog& scripts,
                                const std::string& version) const;

  // Scenario fields beyond the common ones (by default: options() under their scenario keys).
  virtual void WriteScenarioFields(const RunSpec& spec, nlohmann::ordered_json& j) const;
  virtual void ReadScenarioFields(const nlohmann::json& j, RunSpec& spec) const;

  // Lookups into the tables (nullptr / "" when unknown).
  const PropertyInfo* property(const std::string& name) const;
  const VersionInfo* version(const std::string& name) const;
  std::string option(const RunSpec& spec, const std::string& flag) const;  // value or default

 protected:
  // The run of spec.property (faults: the spec's, with the property's set-aside kinds off):
  // the system's parameters of one run, bound to the property's registered make
  // (harness/property.h). Throws std::invalid_argument for what the spec cannot run.
  virtual std::unique_ptr<PropertyRun> Prepare(const RunSpec& spec, const sim::FaultOptions& faults,
                                               const real::ScriptCatalog& scripts) const = 0;
};

// What System::Run does once the property's run is prepared: builds the world (seed, horizon,
// faults; the emulator, or `server`), lets the run start its actors, runs the world, has the
// run check it, and names, describes and script-checks the findings. An exception that escaped
// client logic is rethrown as std::runtime_error.
// `scripts` names the script bodies in fault texts and findings.
// max_calls: the calls after which the run stops, a finding of class calls-without-end.
RunOutcome RunProperty(PropertyRun& run, uint64_t seed, int64_t horizon_ms,
                       const sim::FaultOptions& faults, const real::ScriptCatalog& scripts,
                       real::RedisServer* server, sim::Strategy* strategy = nullptr,
                       int64_t max_calls = kMinCallLimit);

// The shipped scripts as `testbed fidelity` calls them, in the catalog's order, each with the
// argument shape of the system whose scripts they are (real::ScriptFile::id's first part). The
// shapes read `scripts`, which must outlive what this returns.
std::vector<sim::fidelity::Script> FidelityScripts(const real::ScriptCatalog& scripts);

// The registry: every system the CLI knows, in registration order.
const std::vector<const System*>& Systems();
const System* FindSystem(const std::string& name);
// For a binary that brings a system of its own (tests/toy/); call before the CLI runs.
void RegisterSystem(std::unique_ptr<System> system);

// "0:1,2:3" <-> skip pairs (throws std::invalid_argument on a malformed list).
SkipSet ParseSkip(const std::string& list);
std::string FormatSkip(const SkipSet& skip);

}  // namespace testbed::props
