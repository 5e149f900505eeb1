// testbed check-history FILE [--model cas-register|mutex]: a history in Jepsen's JSON form (what
// elle-cli reads; checker/jepsen_history.h) or EDN (checker/edn_read.h), checked for
// linearizability with the testbed's own checker. Exit 0 when it is linearizable, 1 when it is not
// (with the operations that cannot be ordered), 3 when the search ran out of its budget
// (--max-states: no verdict, never a pass), 2 for a file that cannot be read or is not such a
// history (one line naming the entry and what is wrong).
#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>
#include <vector>

#include "cmd/cli_internal.h"
#include "checker/edn_read.h"
#include "checker/jepsen_history.h"
#include "model/json_file.h"

namespace testbed::cli {
namespace {

using internal::AppendFlag;

void DefineCheckHistory(CLI::App& app, CheckHistorySpec& s) {
  app.add_option("history", s.history,
                 "the history: a JSON array of operation maps, or EDN (one map per line, or one "
                 "vector or list of them)")
      ->required();
  std::string models;
  for (const checker::HistoryModel& m : checker::HistoryModels())
    absl::StrAppend(&models, models.empty() ? "" : "; ", m.name, ": ", m.what);
  app.add_option("--model", s.model, "the model (default cas-register): " + models);
  app.add_flag("--independent", s.independent,
               "each value is a jepsen.independent [key value] tuple: every key is checked on its "
               "own (exit 1 when any key is not linearizable, else 3 when any has no verdict)");
  app.add_flag("--json", s.json,
               "print the verdict as one JSON object, as elle-cli does: valid? (true, false or "
               "\"unknown\"), the anomaly, the operations it names, the counts; with "
               "--independent, results by key and the keys that failed");
  app.add_option("--max-states", s.max_states,
                 "the search's budget: states it may visit before it ends without a verdict "
                 "(exit 3; default 10000000)");
}

CheckHistorySpec ResolveCheckHistory(const CheckHistorySpec& s) {
  if (!checker::FindHistoryModel(s.model)) {
    std::vector<std::string> names;
    for (const checker::HistoryModel& m : checker::HistoryModels()) names.push_back(m.name);
    throw UsageError("--model " + s.model + ": the models are: " + absl::StrJoin(names, ", "));
  }
  if (s.max_states < 1)
    throw UsageError("--max-states must be at least 1, not " + std::to_string(s.max_states));
  if (!std::filesystem::is_regular_file(s.history))
    throw UsageError("cannot read history " + s.history);
  return s;
}

using Json = nlohmann::json;

// A verdict's exit code: 0 linearizable, 1 not, 3 no verdict.
int Code(const checker::HistoryVerdict& v) { return !v.decided ? 3 : v.linearizable ? 0 : 1; }
// elle-cli's valid? for an exit code.
Json Valid(int code) { return code == 0 ? Json(true) : code == 1 ? Json(false) : Json("unknown"); }

// One verdict as elle-cli's JSON result: valid? true, false or "unknown", the anomaly (the
// verdict's sentence) and the operations it names, one line each, and the counts.
nlohmann::ordered_json VerdictJson(const checker::HistoryVerdict& v, const std::string& model) {
  nlohmann::ordered_json j;
  j["valid?"] = Valid(Code(v));
  j["model"] = model;
  const size_t nl = v.text.find('\n');
  j["anomaly"] = v.decided && v.linearizable ? Json(nullptr) : Json(v.text.substr(0, nl));
  j["operations"] = Json::array();
  for (size_t at = nl; at != std::string::npos && at + 1 < v.text.size();) {
    const size_t next = v.text.find('\n', at + 1);
    std::string line = v.text.substr(at + 1, next - at - 1);
    if (line.rfind("  ", 0) == 0) line.erase(0, 2);
    if (!line.empty()) j["operations"].push_back(line);
    at = next;
  }
  j["counts"] = {{"operations", v.operations}, {"info", v.ambiguous}, {"failed", v.failed}};
  j["decided-by"] = v.decided_by.empty() ? Json(nullptr) : Json(v.decided_by);
  return j;
}

int ExecuteCheckHistory(const CheckHistorySpec& spec) {
  std::ifstream file(spec.history, std::ios::binary);
  const std::string text{std::istreambuf_iterator<char>(file), {}};
  nlohmann::json history;
  try {
    std::istringstream in(text);
    history = model::ReadJson(in, spec.history);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  // Not JSON: EDN, as Jepsen's history.edn and Knossos's test data are written.
  if (history.is_discarded()) try {
      history = checker::ReadEdnHistory(text);
    } catch (const std::invalid_argument& e) {
      throw UsageError(spec.history + ": not JSON, nor " + e.what());
    }
  checker::HistoryCheckOptions options;
  options.max_states = spec.max_states;
  const checker::HistoryModel& model = *checker::FindHistoryModel(spec.model);
  // Every history is read, and every bad entry refused, before anything is printed.
  std::vector<std::pair<nlohmann::json, checker::HistoryVerdict>> verdicts;
  try {
    if (!spec.independent) {
      verdicts.emplace_back(nullptr, model.check(history, options));
    } else {
      for (const auto& [key, part] : checker::SplitIndependentKeys(history))
        verdicts.emplace_back(key, model.check(part, options));
    }
  } catch (const std::invalid_argument& e) {
    throw UsageError(spec.history + ": " + e.what());
  }
  int rejected = 0, undecided = 0;
  for (const auto& [key, v] : verdicts) {
    rejected += Code(v) == 1;
    undecided += Code(v) == 3;
  }
  const int code = rejected > 0 ? 1 : undecided > 0 ? 3 : 0;
  if (spec.json) {
    nlohmann::ordered_json out;
    if (!spec.independent) {
      out = VerdictJson(verdicts[0].second, spec.model);
    } else {
      out["valid?"] = Valid(code);
      out["model"] = spec.model;
      out["results"] = nlohmann::ordered_json::object();
      out["failures"] = nlohmann::ordered_json::array();
      for (const auto& [key, v] : verdicts) {
        out["results"][key.is_string() ? key.get<std::string>() : key.dump()] =
            VerdictJson(v, spec.model);
        if (Code(v) == 1) out["failures"].push_back(nlohmann::ordered_json::parse(key.dump()));
      }
    }
    std::printf("%s\n", out.dump().c_str());
    return code;
  }
  if (spec.independent)
    std::printf("%zu independent keys: %zu linearizable, %d not, %d without a verdict\n",
                verdicts.size(), verdicts.size() - rejected - undecided, rejected, undecided);
  for (const auto& [key, v] : verdicts)
    std::printf("%s%s", spec.independent ? ("key " + key.dump() + ": ").c_str() : "",
                v.text.c_str());
  return code;
}

}  // namespace

std::string CheckHistorySpec::Write() const {
  std::string line = "testbed check-history";
  AppendFlag(line, "", history);
  line.erase(line.rfind(" --"), 3);  // a positional argument, not a flag
  if (model != "cas-register") AppendFlag(line, "model", model);
  if (independent) line += " --independent";
  if (json) line += " --json";
  if (max_states != CheckHistorySpec().max_states)
    AppendFlag(line, "max-states", std::to_string(max_states));
  return line;
}

CheckHistorySpec ParseCheckHistory(const std::vector<std::string>& args) {
  return internal::ParseWith<CheckHistorySpec, CheckHistorySpec>(
      "check-history", args, DefineCheckHistory, ResolveCheckHistory);
}

int RunCheckHistory(const CheckHistorySpec& spec) { return ExecuteCheckHistory(spec); }

namespace internal {
Command CheckHistoryCommand() {
  return MakeCommand<CheckHistorySpec, CheckHistorySpec>(
      "check-history",
      "Checks a history in Jepsen's JSON form (as elle-cli reads it: process, type, f, value) or "
      "in EDN (Jepsen's history.edn, Knossos's test data) for linearizability against a model "
      "(cas-register, mutex): exit 0 linearizable, 1 not (with "
      "the operations that cannot be ordered), 3 no verdict (the search's budget ran out).",
      DefineCheckHistory, ResolveCheckHistory, RunCheckHistory);
}
}  // namespace internal

}  // namespace testbed::cli
