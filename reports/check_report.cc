#include "reports/check_report.h"

#include <absl/strings/numbers.h>
#include <absl/strings/str_split.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "model/json_file.h"
#include "reports/terminal.h"

namespace testbed::reports {
namespace {

void WriteAtomically(const std::string& path, const std::string& text) {
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + tmp);
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace

std::string Count(int64_t n, const std::string& noun) {
  if (n == 1) return "1 " + noun;
  if (noun.size() > 1 && noun.back() == 'y' &&
      std::string("aeiou").find(noun[noun.size() - 2]) == std::string::npos)  // "properties"
    return std::to_string(n) + " " + noun.substr(0, noun.size() - 1) + "ies";
  const bool es = !noun.empty() && (noun.back() == 's' || noun.back() == 'x');  // "classes"
  return std::to_string(n) + " " + noun + (es ? "es" : "s");
}

int64_t NewClasses(const CheckReport& r) {
  int64_t n = 0;
  for (const auto& p : r.properties)
    for (const auto& c : p.classes) n += c.status == "new";
  return n;
}

int64_t NoVerdict(const CheckReport& r) {
  int64_t n = 0;
  for (const auto& p : r.properties) n += p.no_verdict;
  return n;
}

std::string NoVerdictLine(int64_t runs) {
  return "no verdict for " + Count(runs, "run") +
         ": the check is not a pass (fewer --clients or --ops keep the histories checkable)\n";
}

std::string VerdictLine(const CheckReport& r, const std::string& out) {
  int64_t runs = 0, classes = 0, properties = 0, violated = 0;
  for (const auto& p : r.properties) {
    if (!p.applies) continue;
    runs += p.runs;
    ++properties;
    classes += static_cast<int64_t>(p.classes.size());
    violated += p.classes.empty() ? 0 : 1;
  }
  const int64_t fresh = NewClasses(r), undecided = NoVerdict(r);
  const std::string report = out.empty() ? "" : "; report: " + out + "/report.md";
  const std::string undecided_text =
      undecided == 0 ? "" : ", and " + Count(undecided, "run") + " gave no verdict (not a pass)";
  if (!r.baseline.empty()) {
    // Runs without a verdict have their own line above ("no verdict for N runs"), and CI scripts
    // match this one whole.
    if (fresh == 0) return "result: nothing new against the baseline";
    return "result: " + Count(fresh, "new class") + " against the baseline" + undecided_text +
           ", each above with its replay: line" + report;
  }
  if (classes == 0)
    return "result: no violation in " + Count(runs, "run") + " of " +
           Count(properties, "property") + undecided_text + report;
  return "result: " + Count(classes, "anomaly class") + " in " + Count(violated, "property") +
         undecided_text + ", each above with its replay: line" + report +
         "; to gate on them, accept them with --write-baseline FILE and check with --baseline FILE";
}

int64_t CoverageRow::covered() const {
  return std::count_if(code_lines.begin(), code_lines.end(),
                       [&](int line) { return hits.count(line) > 0; });
}

std::vector<int> CoverageRow::never_run() const {
  std::vector<int> out;
  for (const int line : code_lines)
    if (!hits.count(line)) out.push_back(line);
  return out;
}

std::string LineRanges(const std::vector<int>& lines) {
  std::string out;
  for (size_t i = 0; i < lines.size();) {
    size_t j = i;
    while (j + 1 < lines.size() && lines[j + 1] == lines[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += std::to_string(lines[i]);
    if (j > i) out += "-" + std::to_string(lines[j]);
    i = j + 1;
  }
  return out;
}

std::string ToLcov(const CheckReport& r) {
  std::string out;
  for (const CoverageRow& c : r.scripts) {
    out += "TN:\nSF:" + c.file + "\n";
    for (const int line : c.code_lines) {
      const auto hit = c.hits.find(line);
      out += "DA:" + std::to_string(line) + "," +
             std::to_string(hit == c.hits.end() ? 0 : hit->second) + "\n";
    }
    out += "LF:" + std::to_string(c.code_lines.size()) + "\nLH:" + std::to_string(c.covered()) +
           "\nend_of_record\n";
  }
  return out;
}

namespace {

// A violation as report.json holds it; a shard's candidates each with its operations.
nlohmann::ordered_json ViolationJson(const ViolationRow& v) {
  nlohmann::ordered_json vj{{"property", v.property}, {"class", v.cls}, {"sentence", v.sentence}};
  if (!v.status.empty()) vj["status"] = v.status;
  vj["seed"] = v.seed;
  vj["clients"] = v.clients;
  vj["ops"] = v.ops;
  vj["counterexample"] = v.counterexample;
  vj["redis_calls"] = v.redis_calls;
  vj["replay"] = v.replay;
  if (!v.html.empty()) vj["html"] = v.html;
  if (!v.candidates.empty()) {
    vj["candidates"] = nlohmann::ordered_json::array();
    for (const ViolationRow& c : v.candidates) {
      nlohmann::ordered_json cj = ViolationJson(c);
      cj["operations"] = c.operations;
      vj["candidates"].push_back(cj);
    }
  }
  return vj;
}

ViolationRow ViolationFromJson(const nlohmann::ordered_json& v) {
  ViolationRow row{v.at("property").get<std::string>(),
                   v.at("class").get<std::string>(),
                   v.at("sentence").get<std::string>(),
                   v.value("status", ""),
                   v.at("seed").get<uint64_t>(),
                   v.at("clients").get<int>(),
                   v.at("ops").get<int>(),
                   v.at("counterexample").get<std::string>(),
                   v.at("redis_calls").get<std::vector<std::string>>(),
                   v.at("replay").get<std::string>(),
                   v.value("html", "")};
  row.operations = v.value("operations", int64_t{0});
  if (v.contains("candidates"))
    for (const auto& c : v.at("candidates")) row.candidates.push_back(ViolationFromJson(c));
  return row;
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
    if (p.no_verdict > 0) row["no_verdict"] = p.no_verdict;
    if (!p.no_verdict_why.empty()) row["no_verdict_why"] = p.no_verdict_why;
    if (!p.sets_aside.empty()) row["sets_aside"] = p.sets_aside;
    if (p.dfs_exhausted >= 0) row["dfs_exhausted"] = p.dfs_exhausted == 1;
    j["properties"][p.property] = row;
  }
  j["violations"] = nlohmann::ordered_json::array();
  for (const auto& v : r.violations) j["violations"].push_back(ViolationJson(v));
  if (!r.baseline.empty()) {
    j["known_not_seen"] = nlohmann::ordered_json::array();
    for (const auto& u : r.unseen)
      j["known_not_seen"].push_back(
          {{"property", u.property}, {"class", u.cls}, {"reason", u.reason}});
  }
  if (!r.incomplete.empty()) j["incomplete"] = r.incomplete;
  if (r.coverage) {
    j["lua_coverage"] = nlohmann::ordered_json::object();
    for (const CoverageRow& c : r.scripts) {
      nlohmann::ordered_json hits = nlohmann::ordered_json::object();
      for (const auto& [line, n] : c.hits) hits[std::to_string(line)] = n;
      j["lua_coverage"][c.script] = {{"file", c.file},         {"lines", c.code_lines.size()},
                                     {"covered", c.covered()}, {"code_lines", c.code_lines},
                                     {"hits", hits},           {"never_run", c.never_run()}};
    }
  }
  if (r.shard.count > 0)
    j["shard"] = {{"index", r.shard.index},
                  {"count", r.shard.count},
                  {"command", r.shard.command},
                  {"seconds", r.shard.seconds}};
  return j.dump(2) + "\n";
}

CheckReport FromJson(const std::string& text, const std::string& origin) {
  using J = nlohmann::ordered_json;
  CheckReport r;
  try {
    const J j = model::ParseOrderedJson(text, origin);
    r.seed = j.at("seed").get<uint64_t>();
    r.system = j.at("system").get<std::string>();
    r.version = j.at("version").get<std::string>();
    r.old_version = j.at("rolling_from").get<std::string>();
    r.baseline = j.value("baseline", "");
    r.incomplete = j.value("incomplete", "");
    for (const auto& [name, p] : j.at("properties").items()) {
      if (p.is_string()) {
        r.properties.push_back({name, 0, 0, 0, false});
        continue;
      }
      PropertyRow row{name, p.at("runs").get<int64_t>(), p.at("passed").get<int64_t>(),
                      p.at("violated").get<int64_t>()};
      for (const auto& [cls, c] : p.at("classes").items())
        row.classes.push_back({cls, c.at("sentence").get<std::string>(),
                               c.at("runs").get<int64_t>(), c.at("first_seed").get<uint64_t>(),
                               c.value("status", "")});
      row.no_verdict = p.value("no_verdict", int64_t{0});
      row.no_verdict_why = p.value("no_verdict_why", "");
      row.sets_aside = p.value("sets_aside", "");
      if (p.contains("dfs_exhausted"))
        row.dfs_exhausted = p.at("dfs_exhausted").get<bool>() ? 1 : 0;
      r.properties.push_back(row);
    }
    for (const auto& v : j.at("violations")) r.violations.push_back(ViolationFromJson(v));
    if (j.contains("known_not_seen"))
      for (const auto& u : j.at("known_not_seen"))
        r.unseen.push_back({u.at("property").get<std::string>(), u.at("class").get<std::string>(),
                            u.at("reason").get<std::string>()});
    if (j.contains("lua_coverage")) {
      r.coverage = true;
      for (const auto& [script, c] : j.at("lua_coverage").items()) {
        CoverageRow row{script,
                        c.at("file").get<std::string>(),
                        c.at("code_lines").get<std::vector<int>>(),
                        {}};
        for (const auto& [line, n] : c.at("hits").items()) {
          int at = 0;
          if (!absl::SimpleAtoi(line, &at)) throw std::invalid_argument(origin + ": line " + line);
          row.hits[at] = n.get<int64_t>();
        }
        r.scripts.push_back(std::move(row));
      }
    }
    if (j.contains("shard")) {
      const J& s = j.at("shard");
      r.shard = {s.at("index").get<int64_t>(), s.at("count").get<int64_t>(),
                 s.at("command").get<std::string>(), s.at("seconds").get<double>()};
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(origin + " is not a report.json of testbed check (" + e.what() +
                                ")");
  }
  return r;
}

namespace {

// The first line of report.md: what a reviewer needs before anything else.
std::string Verdict(const CheckReport& r) {
  int64_t classes = 0, known = 0, runs = 0;
  for (const auto& p : r.properties) {
    runs = std::max(runs, p.runs);
    for (const auto& c : p.classes) {
      ++classes;
      known += c.status == "known";
    }
  }
  const int64_t fresh = NewClasses(r), no_verdict = NoVerdict(r);
  std::string v;
  if (!r.baseline.empty())
    v = fresh > 0 ? "**:x: " + Count(fresh, "new class") + " against the baseline**"
                  : "**:white_check_mark: nothing new against the baseline** (" +
                        Count(known, "known class") + " seen)";
  else
    v = classes > 0 ? "**:x: " + Count(classes, "anomaly class") + "**"
                    : "**:white_check_mark: no violation**";
  if (no_verdict > 0) v += ", " + Count(no_verdict, "run") + " without a verdict (not a pass)";
  if (!r.incomplete.empty()) v = "**:warning: incomplete, " + r.incomplete + "**: " + v;
  return v + ": " + r.system + " " + r.version + ", seed " + std::to_string(r.seed) + ", " +
         Count(runs, "run") + " per property\n";
}

// A counterexample's lines for the PR comment, at most `max` of them (report.json has all).
std::string Capped(const std::vector<std::string>& lines, size_t max) {
  std::string out;
  for (size_t i = 0; i < lines.size() && i < max; ++i) out += Shorten(lines[i], 300) + "\n";
  if (lines.size() > max)
    out += "... " + std::to_string(lines.size() - max) + " more in report.json\n";
  return out;
}

}  // namespace

std::string ToMarkdown(const CheckReport& r) {
  std::string md = Verdict(r) + "\n## testbed check: " + r.system + " " + r.version +
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
    md += "\n<details><summary>" + Count(static_cast<int64_t>(r.unseen.size()), "known class") +
          " not seen this run</summary>\n\n";
    for (const auto& u : r.unseen) md += "- " + u.property + " / " + u.cls + "\n";
    md += "\n</details>\n";
  }
  if (r.coverage) {
    md +=
        "\n<details><summary>Lua line coverage</summary>\n\n| script | lines run | never run "
        "|\n|---|---|---|\n";
    for (const CoverageRow& c : r.scripts)
      md += "| " + c.script + " | " + std::to_string(c.covered()) + " of " +
            std::to_string(c.code_lines.size()) + " | " + LineRanges(c.never_run()) + " |\n";
    md += "\n</details>\n";
  }
  if (r.violations.empty()) return md + "\nNo violation.\n";
  std::string known;
  int64_t known_count = 0;
  for (const auto& v : r.violations) {
    if (v.status == "known") {
      ++known_count;
      known += "- " + v.property + " / " + v.cls + " (seed " + std::to_string(v.seed) + "): `" +
               v.replay + "`\n";
      continue;
    }
    std::vector<std::string> lines = absl::StrSplit(v.counterexample, '\n', absl::SkipEmpty());
    md += "\n### " + v.property + " / " + v.cls + (v.status.empty() ? "" : " (" + v.status + ")") +
          "\n\n" + v.sentence + " (seed " + std::to_string(v.seed) + ", " +
          Count(v.clients, "client") + " x " + Count(v.ops, "operation") + ")\n\n```\n" +
          Capped(lines, 60) + "```\n\n" +
          (v.html.empty() ? "" : "Timeline: [" + v.html + "](" + v.html + ")\n\n") +
          "<details><summary>Redis calls (" + std::to_string(v.redis_calls.size()) +
          ")</summary>\n\n```\n" + Capped(v.redis_calls, 80) + "```\n</details>\n\nReplay: `" +
          v.replay + "`\n";
  }
  if (known_count > 0)
    md += "\n<details><summary>" + Count(known_count, "known class") +
          " seen (their counterexamples are in report.json)</summary>\n\n" + known +
          "\n</details>\n";
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
      // Per class counts go in its output: the common schema has no properties per test case.
      const std::string counts = "runs: " + std::to_string(c.runs) +
                                 ", first seed: " + std::to_string(c.first_seed) + "\n";
      if (c.status == "known") {
        cases += "      <system-out>" +
                 XmlEscape(counts + "known (" + r.baseline + "): " + c.sentence +
                           "\nreplay: " + replay) +
                 "</system-out>\n";
      } else {
        ++suite_failures;
        cases += "      <failure message=\"" + XmlEscape(c.sentence) + "\" type=\"" +
                 (c.status.empty() ? "violation" : "new") + "\">" + XmlEscape("replay: " + replay) +
                 "</failure>\n      <system-out>" + XmlEscape(counts) + "</system-out>\n";
      }
      cases += "    </testcase>\n";
    }
    tests += suite_tests;
    failures += suite_failures;
    suites += "  <testsuite name=\"" + XmlEscape(classname) + "\" tests=\"" +
              std::to_string(suite_tests) + "\" failures=\"" + std::to_string(suite_failures) +
              "\" errors=\"0\">\n    <properties><property name=\"runs\" value=\"" +
              std::to_string(p.runs) + "\"/><property name=\"passed\" value=\"" +
              std::to_string(p.passed) + "\"/><property name=\"violated\" value=\"" +
              std::to_string(p.violated) + "\"/></properties>\n" + cases + "  </testsuite>\n";
  }
  // An interrupted check is an error of its own: its counts cover only the runs it made.
  int errors = 0;
  if (!r.incomplete.empty()) {
    ++tests;
    ++errors;
    suites += "  <testsuite name=\"" + XmlEscape(r.system + "." + r.version) +
              ".campaign\" tests=\"1\" failures=\"0\" errors=\"1\">\n    <testcase classname=\"" +
              XmlEscape(r.system + "." + r.version + ".campaign") +
              "\" name=\"complete\">\n      <error message=\"" + XmlEscape(r.incomplete) +
              "\" type=\"incomplete\"/>\n    </testcase>\n  </testsuite>\n";
  }
  char time[32];
  std::snprintf(time, sizeof time, "%.3f", seconds);
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"testbed check " +
         XmlEscape(r.system + " " + r.version) + " seed " + std::to_string(r.seed) + "\" tests=\"" +
         std::to_string(tests) + "\" failures=\"" + std::to_string(failures) + "\" errors=\"" +
         std::to_string(errors) + "\" time=\"" + time + "\">\n" + suites + "</testsuites>\n";
}

void WriteFileAtomically(const std::string& path, const std::string& text) {
  WriteAtomically(path, text);
}

std::vector<std::string> WriteReports(const CheckReport& r, const std::string& dir) {
  std::filesystem::create_directories(dir);
  const std::string json = dir + "/report.json", md = dir + "/report.md";
  WriteAtomically(json, ToJson(r));
  CheckReport linked = r;  // timeline links relative to report.md
  for (auto& v : linked.violations)
    if (!v.html.empty())
      v.html = std::filesystem::relative(std::filesystem::absolute(v.html),
                                         std::filesystem::absolute(dir))
                   .generic_string();
  WriteAtomically(md, ToMarkdown(linked));
  if (!r.coverage) return {json, md};
  const std::string lcov = dir + "/coverage.lcov";
  WriteAtomically(lcov, ToLcov(r));
  return {json, md, lcov};
}

}  // namespace testbed::reports
