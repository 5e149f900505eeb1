#include "harness/baseline.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "model/json_file.h"
#include "sim/faults.h"

namespace testbed::harness {

const Accepted* Baseline::find(const std::string& property, const std::string& cls) const {
  for (const auto& a : accepted)
    if (a.property == property && a.cls == cls) return &a;
  return nullptr;
}

Baseline LoadBaseline(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("cannot read baseline " + path);
  const nlohmann::json j = model::ReadJson(in, "baseline " + path);
  auto fail = [&](const std::string& what) {
    throw std::invalid_argument("baseline " + path + ": " + what);
  };
  if (j.is_discarded() || !j.is_object()) fail("not a JSON object");
  auto text = [&](const nlohmann::json& o, const std::string& key, bool required) {
    if (!o.contains(key)) {
      if (required) fail("missing field \"" + key + "\"");
      return std::string();
    }
    if (!o[key].is_string()) fail("field \"" + key + "\" must be a string, not " + o[key].dump());
    return o[key].get<std::string>();
  };
  Baseline b;
  b.system = text(j, "system", true);
  b.version = text(j, "version", true);
  if (j.contains("faults")) {
    b.faults = text(j, "faults", true);
    try {
      sim::FaultList::Parse(b.faults, true);
    } catch (const std::invalid_argument& e) {
      fail(std::string("field \"faults\": ") + e.what());
    }
  }
  if (!j.contains("accepted") || !j["accepted"].is_array())
    fail("field \"accepted\" must be an array");
  for (const auto& e : j["accepted"]) {
    if (!e.is_object()) fail("every entry of \"accepted\" must be an object");
    Accepted a{text(e, "property", true), text(e, "class", true), text(e, "reason", true),
               text(e, "scenario", false)};
    if (a.reason.empty()) fail("the entry " + a.property + "/" + a.cls + " gives no reason");
    if (b.find(a.property, a.cls)) fail("the entry " + a.property + "/" + a.cls + " is repeated");
    b.accepted.push_back(a);
  }
  return b;
}

void SaveBaseline(const std::string& path, const Baseline& b) {
  nlohmann::ordered_json j;
  j["system"] = b.system;
  j["version"] = b.version;
  if (b.faults != "none") j["faults"] = b.faults;
  j["accepted"] = nlohmann::ordered_json::array();
  for (const auto& a : b.accepted) {
    nlohmann::ordered_json e;
    e["property"] = a.property;
    e["class"] = a.cls;
    e["reason"] = a.reason;
    if (!a.scenario.empty()) e["scenario"] = a.scenario;
    j["accepted"].push_back(e);
  }
  const std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << j.dump(2) << "\n";
    if (!out) throw std::runtime_error("cannot write " + tmp);
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace testbed::harness
