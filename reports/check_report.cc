#include "reports/check_report.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace testbed::reports {
namespace {

void WriteAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + tmp);
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace

std::string ToJson(const CheckReport& r) {
  nlohmann::ordered_json j;
  j["seed"] = r.seed;
  j["system"] = r.system;
  j["version"] = r.version;
  j["rolling_from"] = r.old_version;
  j["properties"] = nlohmann::ordered_json::object();
  for (const auto& p : r.properties)
    j["properties"][p.property] = p.applies ? nlohmann::ordered_json{{"runs", p.runs},
                                                                     {"passed", p.passed},
                                                                     {"violated", p.violated}}
                                            : nlohmann::ordered_json("n/a");
  j["violations"] = nlohmann::ordered_json::array();
  for (const auto& v : r.violations)
    j["violations"].push_back({{"property", v.property},
                               {"seed", v.seed},
                               {"clients", v.clients},
                               {"ops", v.ops},
                               {"counterexample", v.counterexample},
                               {"redis_calls", v.redis_calls},
                               {"replay", v.replay}});
  return j.dump(2) + "\n";
}

std::string ToMarkdown(const CheckReport& r) {
  std::string md = "## testbed check: " + r.system + " " + r.version +
                   (r.old_version.empty() ? "" : " (rolling deploy from " + r.old_version + ")") +
                   " (seed " + std::to_string(r.seed) +
                   ")\n\n| property | runs | passed | violated |\n|---|---|---|---|\n";
  for (const auto& p : r.properties)
    if (!p.applies)
      md += "| " + p.property + " | n/a | | |\n";
    else
      md += "| " + p.property + " | " + std::to_string(p.runs) + " | " + std::to_string(p.passed) +
            " | " + std::to_string(p.violated) + (p.violated ? " :x:" : "") + " |\n";
  if (r.violations.empty()) return md + "\nNo violation.\n";
  for (const auto& v : r.violations) {
    md += "\n### " + v.property + " (seed " + std::to_string(v.seed) + ", " +
          std::to_string(v.clients) + " clients x " + std::to_string(v.ops) +
          " operations)\n\n```\n" + v.counterexample + "```\n\n<details><summary>Redis calls (" +
          std::to_string(v.redis_calls.size()) + ")</summary>\n\n```\n";
    for (const auto& c : v.redis_calls) md += c + "\n";
    md += "```\n</details>\n\nReplay: `" + v.replay + "`\n";
  }
  return md;
}

std::vector<std::string> WriteReports(const CheckReport& r, const std::string& dir) {
  std::filesystem::create_directories(dir);
  const std::string json = dir + "/report.json", md = dir + "/report.md";
  WriteAtomically(json, ToJson(r));
  WriteAtomically(md, ToMarkdown(r));
  return {json, md};
}

}  // namespace testbed::reports
