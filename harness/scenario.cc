#include "harness/scenario.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "model/json_file.h"

namespace testbed::harness {
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

// An integer field in [min, max]: not a float (7.5, 1e30), not negative for a seed.
int64_t IntField(const json& j, const std::string& key, int64_t min, int64_t max) {
  if (!j.contains(key)) throw std::invalid_argument("missing field \"" + key + "\" (an integer)");
  const json& v = j.at(key);
  // (JSON's 0 and every positive integer read as unsigned: both ends are checked either way.)
  const bool in_range =
      v.is_number_unsigned()
          ? v.get<uint64_t>() <= static_cast<uint64_t>(max) &&
                (min <= 0 || v.get<uint64_t>() >= static_cast<uint64_t>(min))
          : v.is_number_integer() && v.get<int64_t>() >= min && v.get<int64_t>() <= max;
  if (!in_range)
    throw std::invalid_argument(absl::StrCat("field \"", key, "\" must be an integer from ", min,
                                             " to ", max, ", not ", v.dump()));
  return v.get<int64_t>();
}

template <typename T>
T Optional(const json& j, const std::string& key, T fallback, const std::string& what) {
  return j.contains(key) ? Field<T>(j, key, what) : fallback;
}

}  // namespace

Scenario Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("cannot read scenario " + path);
  const json j = model::ReadJson(in, "scenario " + path);
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
    r.seed = static_cast<uint64_t>(IntField(j, "seed", 0, props::kMaxSeed));
    r.clients = static_cast<int>(IntField(j, "clients", 1, props::kMaxClients));
    r.ops = static_cast<int>(IntField(j, "ops", 1, props::kMaxOps));
    if (int64_t{r.clients} * r.ops > props::kMaxClientOps)
      throw std::invalid_argument(absl::StrCat("fields \"clients\" x \"ops\" must be at most ",
                                               props::kMaxClientOps, ", not ", r.clients, " x ",
                                               r.ops));
    // Each field's own error names it (the message of ParseSkip and FaultList::Parse names the
    // flag they read for check).
    const auto named = [](const std::string& field, const auto& parse) {
      try {
        return parse();
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("field \"" + field + "\": " + e.what());
      }
    };
    r.skip = named("skip", [&] {
      return props::ParseSkip(Optional<std::string>(j, "skip", "", "a string such as \"0:1,2:3\""));
    });
    r.faults = named("faults", [&] {
      return sim::FaultList::Parse(Optional<std::string>(j, "faults", "none", "a string"));
    });
    s.system->ReadScenarioFields(j, r);
    s.trigger = Optional<std::string>(j, "trigger", "", "a string");
    s.severity = Optional<std::string>(j, "severity", "", "a string");
    s.why = Optional<std::string>(j, "why", "", "a string");
    s.expect = Optional<std::string>(j, "expect", "violated", "\"violated\" or \"passes\"");
    if (s.expect != "violated" && s.expect != "passes")
      throw std::invalid_argument("field \"expect\" must be \"violated\" or \"passes\", not \"" +
                                  s.expect + "\"");
    if (j.contains("scripts")) {
      const std::string rel = Field<std::string>(j, "scripts", "a directory");
      const std::filesystem::path dir =
          (std::filesystem::path(path).parent_path() / rel).lexically_normal();
      if (rel.empty() || !std::filesystem::is_directory(dir))
        throw std::invalid_argument("field \"scripts\": " + dir.generic_string() +
                                    " is not a directory");
      s.scripts = dir.generic_string();
    }
    const std::string client = Optional<std::string>(j, "client", "port", "\"port\" or \"js\"");
    if (client != "port" && client != "js")
      throw std::invalid_argument("field \"client\" must be \"port\" or \"js\", not \"" + client +
                                  "\"");
    s.client.js = client == "js";
    if (j.contains("client_dir")) {
      const std::string rel = Field<std::string>(j, "client_dir", "a directory");
      const std::filesystem::path dir =
          (std::filesystem::path(path).parent_path() / rel).lexically_normal();
      if (!s.client.js || rel.empty() || !std::filesystem::is_directory(dir))
        throw std::invalid_argument(
            "field \"client_dir\": " + dir.generic_string() +
            (s.client.js ? " is not a directory" : " needs \"client\": \"js\""));
      s.client.dir = dir.generic_string();
    }
    if (j.contains("trace")) {  // testbed explore: a recorded trace's operations
      const std::string rel = Field<std::string>(j, "trace", "a recorded trace file");
      const std::filesystem::path file =
          (std::filesystem::path(path).parent_path() / rel).lexically_normal();
      if (rel.empty() || !std::filesystem::is_regular_file(file))
        throw std::invalid_argument("field \"trace\": " + file.generic_string() + " is not a file");
      r.trace = file.generic_string();
      const props::TraceSupport* t = s.system->trace_support(r.version);
      if (!t || !t->judges(r.property) || !t->explore)
        throw std::invalid_argument("field \"trace\": " + r.property + " of " + system + " " +
                                    r.version + " cannot be explored on a recorded trace");
    }
    s.cls = Optional<std::string>(j, "class", "", "an anomaly class name");
    if (!s.cls.empty() && props::SentenceOf(*s.system->property(r.property), s.cls).empty())
      throw std::invalid_argument("field \"class\": " + r.property + " has no class \"" + s.cls +
                                  "\" (see testbed list)");
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(path + ": " + e.what());
  }
  return s;
}

real::ScriptCatalog CatalogWithOverrides(
    const std::string& dir, const props::System& system, const std::string& version,
    std::vector<std::pair<std::string, std::string>>* replaced) {
  real::ScriptCatalog catalog = real::ScriptCatalog::Load(real::ScriptCatalog::ShippedDir());
  if (dir.empty()) return catalog;
  std::vector<std::pair<std::string, std::filesystem::path>> changes;  // shipped file, candidate
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".lua") continue;
    const std::string rel = std::filesystem::relative(entry.path(), dir).generic_string();
    const std::string target =
        rel.find('/') == std::string::npos ? system.scripts_dir(version) + "/" + rel : rel;
    bool shipped = false;
    for (const auto& f : catalog.all()) shipped |= f.file == target;
    if (!shipped)
      throw std::invalid_argument(rel + " would replace " + target +
                                  ", which is not a shipped script");
    changes.emplace_back(target, entry.path());
  }
  if (changes.empty()) throw std::invalid_argument("no *.lua file in it");
  std::sort(changes.begin(), changes.end());
  for (const auto& [target, path] : changes) {
    std::ifstream in(path, std::ios::binary);
    catalog.replace(target, std::string(std::istreambuf_iterator<char>(in), {}));
    if (replaced) replaced->emplace_back(target, path.string());
  }
  return catalog;
}

real::ScriptCatalog ScriptsOf(const Scenario& s) {
  real::ScriptCatalog catalog = CatalogWithOverrides(s.scripts, *s.system, s.spec.version);
  catalog.set_client(s.client);
  return catalog;
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
  if (!s.scripts.empty())
    j["scripts"] = std::filesystem::relative(std::filesystem::absolute(s.scripts),
                                             std::filesystem::absolute(dir))
                       .generic_string();
  if (s.client.js) j["client"] = "js";
  if (!s.client.dir.empty())
    j["client_dir"] = std::filesystem::relative(std::filesystem::absolute(s.client.dir),
                                                std::filesystem::absolute(dir))
                          .generic_string();
  if (!r.trace.empty())
    j["trace"] = std::filesystem::relative(std::filesystem::absolute(r.trace),
                                           std::filesystem::absolute(dir))
                     .generic_string();
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

}  // namespace testbed::harness
