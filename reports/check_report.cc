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
  if (!r.baseline.empty()) j["baseline"] = r.baseline;
  j["properties"] = nlohmann::ordered_json::object();
  for (const auto& p : r.properties) {
    if (!p.applies) {
      j["properties"][p.property] = "n/a";
      continue;
    }
    nlohmann::ordered_json row{{"runs", p.runs}, {"passed", p.passed}, {"violated", p.violated}};
    row["classes"] = nlohmann::ordered_json::object();
    for (const auto& c : p.classes) {
      nlohmann::ordered_json cj{
          {"sentence", c.sentence}, {"runs", c.runs}, {"first_seed", c.first_seed}};
      if (!c.status.empty()) cj["status"] = c.status;
      row["classes"][c.cls] = cj;
    }
    j["properties"][p.property] = row;
  }
  j["violations"] = nlohmann::ordered_json::array();
  for (const auto& v : r.violations) {
    nlohmann::ordered_json vj{{"property", v.property}, {"class", v.cls}, {"sentence", v.sentence}};
    if (!v.status.empty()) vj["status"] = v.status;
    vj["seed"] = v.seed;
    vj["clients"] = v.clients;
    vj["ops"] = v.ops;
    vj["counterexample"] = v.counterexample;
    vj["redis_calls"] = v.redis_calls;
    vj["replay"] = v.replay;
    j["violations"].push_back(vj);
  }
  if (!r.baseline.empty()) {
    j["known_not_seen"] = nlohmann::ordered_json::array();
    for (const auto& u : r.unseen)
      j["known_not_seen"].push_back(
          {{"property", u.property}, {"class", u.cls}, {"reason", u.reason}});
  }
  return j.dump(2) + "\n";
}

std::string ToMarkdown(const CheckReport& r) {
  std::string md = "## testbed check: " + r.system + " " + r.version +
                   (r.old_version.empty() ? "" : " (rolling deploy from " + r.old_version + ")") +
                   " (seed " + std::to_string(r.seed) + ")\n\n";
  if (!r.baseline.empty()) md += "Baseline: `" + r.baseline + "`\n\n";
  md += "| property / class | runs | passed | violated | first seed |\n|---|---|---|---|---|\n";
  for (const auto& p : r.properties) {
    if (!p.applies) {
      md += "| " + p.property + " | n/a | | | |\n";
      continue;
    }
    md += "| " + p.property + " | " + std::to_string(p.runs) + " | " + std::to_string(p.passed) +
          " | " + std::to_string(p.violated) + " | |\n";
    for (const auto& c : p.classes)
      md += "| &nbsp;&nbsp;" + c.cls + (c.status.empty() ? "" : " (" + c.status + ")") +
            (c.status == "known" ? "" : " :x:") + " | | | " + std::to_string(c.runs) + " | " +
            std::to_string(c.first_seed) + " |\n";
  }
  if (!r.baseline.empty() && !r.unseen.empty()) {
    md += "\nKnown but not seen this run:\n\n";
    for (const auto& u : r.unseen) md += "- " + u.property + " / " + u.cls + ": " + u.reason + "\n";
  }
  if (r.violations.empty()) return md + "\nNo violation.\n";
  for (const auto& v : r.violations) {
    md += "\n### " + v.property + " / " + v.cls + (v.status.empty() ? "" : " (" + v.status + ")") +
          "\n\n" + v.sentence + " (seed " + std::to_string(v.seed) + ", " +
          std::to_string(v.clients) + " clients x " + std::to_string(v.ops) +
          " operations)\n\n```\n" + v.counterexample + "```\n\n<details><summary>Redis calls (" +
          std::to_string(v.redis_calls.size()) + ")</summary>\n\n```\n";
    for (const auto& c : v.redis_calls) md += c + "\n";
    md += "```\n</details>\n\nReplay: `" + v.replay + "`\n";
  }
  return md;
}

namespace {
std::string XmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        // XML 1.0 has no other control characters than tab and newlines.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r')
          out += "?";
        else
          out += c;
    }
  }
  return out;
}
}  // namespace

std::string ToJUnit(const CheckReport& r, double seconds) {
  int tests = 0, failures = 0;
  std::string suites;
  for (const auto& p : r.properties) {
    if (!p.applies) continue;
    std::string cases;
    int suite_tests = 0, suite_failures = 0;
    const std::string classname = r.system + "." + r.version + "." + p.property;
    if (p.classes.empty()) {
      ++suite_tests;
      cases += "    <testcase classname=\"" + XmlEscape(classname) + "\" name=\"no violation\"/>\n";
    }
    for (const auto& c : p.classes) {
      ++suite_tests;
      cases += "    <testcase classname=\"" + XmlEscape(classname) + "\" name=\"" +
               XmlEscape(c.cls) + "\">\n";
      std::string replay;
      for (const auto& v : r.violations)
        if (v.property == p.property && v.cls == c.cls) replay = v.replay;
      if (c.status == "known") {
        cases += "      <system-out>" +
                 XmlEscape("known (" + r.baseline + "): " + c.sentence + "\nreplay: " + replay) +
                 "</system-out>\n";
      } else {
        ++suite_failures;
        cases += "      <failure message=\"" + XmlEscape(c.sentence) + "\" type=\"" +
                 (c.status.empty() ? "violation" : "new") + "\">" + XmlEscape("replay: " + replay) +
                 "</failure>\n";
      }
      cases += "      <properties><property name=\"runs\" value=\"" + std::to_string(c.runs) +
               "\"/><property name=\"first_seed\" value=\"" + std::to_string(c.first_seed) +
               "\"/></properties>\n    </testcase>\n";
    }
    tests += suite_tests;
    failures += suite_failures;
    suites += "  <testsuite name=\"" + XmlEscape(classname) + "\" tests=\"" +
              std::to_string(suite_tests) + "\" failures=\"" + std::to_string(suite_failures) +
              "\">\n    <properties><property name=\"runs\" value=\"" + std::to_string(p.runs) +
              "\"/><property name=\"passed\" value=\"" + std::to_string(p.passed) +
              "\"/><property name=\"violated\" value=\"" + std::to_string(p.violated) +
              "\"/></properties>\n" + cases + "  </testsuite>\n";
  }
  char time[32];
  std::snprintf(time, sizeof time, "%.3f", seconds);
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"testbed check " +
         XmlEscape(r.system + " " + r.version) + " seed " + std::to_string(r.seed) + "\" tests=\"" +
         std::to_string(tests) + "\" failures=\"" + std::to_string(failures) + "\" time=\"" + time +
         "\">\n" + suites + "</testsuites>\n";
}

void WriteFileAtomically(const std::string& path, const std::string& text) {
  WriteAtomically(path, text);
}

std::vector<std::string> WriteReports(const CheckReport& r, const std::string& dir) {
  std::filesystem::create_directories(dir);
  const std::string json = dir + "/report.json", md = dir + "/report.md";
  WriteAtomically(json, ToJson(r));
  WriteAtomically(md, ToMarkdown(r));
  return {json, md};
}

}  // namespace testbed::reports
