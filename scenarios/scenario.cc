#include "scenarios/scenario.h"

#include <absl/strings/str_cat.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace testbed::scenarios {
namespace {

using nlohmann::json;

// The field, or a clear error naming it.
template <typename T>
T Field(const json& j, const std::string& key, const std::string& what) {
  if (!j.contains(key)) throw std::invalid_argument("missing field \"" + key + "\" (" + what + ")");
  try {
    return j.at(key).get<T>();
  } catch (const json::exception&) {
    throw std::invalid_argument("field \"" + key + "\" must be " + what + ", not " +
                                j.at(key).dump());
  }
}

template <typename T>
T Optional(const json& j, const std::string& key, T fallback, const std::string& what) {
  return j.contains(key) ? Field<T>(j, key, what) : fallback;
}

}  // namespace

Scenario Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("cannot read scenario " + path);
  const json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw std::invalid_argument(path + " is not a JSON object");
  Scenario s;
  try {
    const std::string system = Field<std::string>(j, "system", "a system name");
    s.system = props::FindSystem(system);
    if (!s.system)
      throw std::invalid_argument("field \"system\": no system \"" + system + "\" is registered");
    s.name = Field<std::string>(j, "name", "a string");
    props::RunSpec& r = s.spec;
    r.property = Field<std::string>(j, "property", "a property name");
    if (!s.system->property(r.property))
      throw std::invalid_argument("field \"property\": " + system + " has no property \"" +
                                  r.property + "\"");
    r.version = Field<std::string>(j, "version", "a version name");
    if (!s.system->version(r.version))
      throw std::invalid_argument("field \"version\": " + system + " has no ported version \"" +
                                  r.version + "\"");
    r.old_version = Optional<std::string>(j, "old_version", "", "a version name");
    if (const std::string err = s.system->OldVersionsError(r.version, r.old_version); !err.empty())
      throw std::invalid_argument("field \"old_version\": " + err);
    r.seed = Field<uint64_t>(j, "seed", "a non-negative integer");
    r.clients = Field<int>(j, "clients", "an integer");
    r.ops = Field<int>(j, "ops", "an integer");
    if (r.clients < 1) throw std::invalid_argument("field \"clients\" must be at least 1");
    if (r.ops < 1) throw std::invalid_argument("field \"ops\" must be at least 1");
    try {
      r.skip =
          props::ParseSkip(Optional<std::string>(j, "skip", "", "a string such as \"0:1,2:3\""));
      r.faults = sim::FaultList::Parse(Optional<std::string>(j, "faults", "none", "a string"));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("field \"") +
                                  (j.contains("faults") ? "faults" : "skip") + "\": " + e.what());
    }
    s.system->ReadScenarioFields(j, r);
    s.trigger = Optional<std::string>(j, "trigger", "", "a string");
    s.severity = Optional<std::string>(j, "severity", "", "a string");
    s.why = Optional<std::string>(j, "why", "", "a string");
    s.expect = Optional<std::string>(j, "expect", "violated", "\"violated\" or \"passes\"");
    if (s.expect != "violated" && s.expect != "passes")
      throw std::invalid_argument("field \"expect\" must be \"violated\" or \"passes\", not \"" +
                                  s.expect + "\"");
    s.cls = Optional<std::string>(j, "class", "", "an anomaly class name");
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(path + ": " + e.what());
  }
  return s;
}

std::string Save(const std::string& dir, const Scenario& s) {
  std::filesystem::create_directories(dir);
  const props::RunSpec& r = s.spec;
  nlohmann::ordered_json j;
  j["name"] = s.name;
  j["system"] = s.system->name();
  j["version"] = r.version;
  if (!r.old_version.empty()) j["old_version"] = r.old_version;
  j["property"] = r.property;
  j["seed"] = r.seed;
  j["clients"] = r.clients;
  j["ops"] = r.ops;
  if (!r.skip.empty()) j["skip"] = props::FormatSkip(r.skip);
  j["faults"] = r.faults.ToString();
  s.system->WriteScenarioFields(r, j);
  j["trigger"] = s.trigger;
  j["severity"] = s.severity;
  j["why"] = s.why;
  j["expect"] = s.expect;
  if (!s.cls.empty()) j["class"] = s.cls;
  const std::string path = absl::StrCat(dir, "/", s.name, ".json");
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << j.dump(2) << "\n";
    if (!out) throw std::runtime_error("cannot write " + tmp);
  }
  std::filesystem::rename(tmp, path);
  return path;
}

}  // namespace testbed::scenarios
