// Lua line coverage (check --coverage, mutate): the emulator's line hook counts the script's own
// lines, each time one runs, and nothing of a script that is not asked for.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "reports/check_report.h"
#include "sim/lua_coverage.h"
#include "sim/lua_scripting.h"
#include "sim/runtime.h"
#include "tests/cli_run.h"
#include "tests/temp_dir.h"

namespace testbed {
namespace {

constexpr const char* kBody =
    "local x = 0\n"                  // 1
    "local function twice(v)\n"      // 2
    "  return v * 2\n"               // 3
    "end\n"                          // 4
    "if ARGV[1] == 'a' then\n"       // 5
    "  x = twice(1)\n"               // 6
    "else\n"                         // 7
    "  x = 3\n"                      // 8
    "end\n"                          // 9
    "-- a comment\n"                 // 10
    "if ARGV[1] == 'e' then\n"       // 11
    "  return redis.call('INCR')\n"  // 12: a wrong number of arguments
    "end\n"                          // 13
    "return x\n";                    // 14

sim::Reply Eval(sim::EmulatorBackend& backend, const std::string& arg) {
  return backend.execute({"EVAL", kBody, "0", arg}, sim::kDefaultEpochMs);
}

TEST(LuaCoverage, LinesWithCodeAreTheCompiledChunksLinesNestedFunctionsIncluded) {
  const std::vector<int> lines = sim::LinesWithCode(kBody);
  EXPECT_EQ(lines, (std::vector<int>{1, 3, 4, 5, 6, 8, 11, 12, 14}));
  EXPECT_TRUE(sim::LinesWithCode("return (").empty());  // does not compile
}

TEST(LuaCoverage, CountsEachLineThatRanAndOnlyWhileAsked) {
  sim::EmulatorBackend backend;
  EXPECT_EQ(Eval(backend, "b").integer, 3);  // not recorded: no scope
  sim::LineCoverage coverage;
  {
    sim::ScopedLineCoverage scope(&coverage);
    EXPECT_EQ(Eval(backend, "a").integer, 2);
    EXPECT_EQ(Eval(backend, "a").integer, 2);
    EXPECT_EQ(Eval(backend, "b").integer, 3);
    // A script error: its own lines up to the failing call, none of the error handler's.
    EXPECT_TRUE(Eval(backend, "e").is_error());
  }
  EXPECT_EQ(Eval(backend, "b").integer, 3);  // after the scope: not recorded
  ASSERT_EQ(coverage.lines.size(), 1u);
  const std::map<int, int64_t>& hits = coverage.lines.at(sim::Sha1Hex(kBody));
  const std::map<int, int64_t> expected = {{1, 4}, {4, 4},  {5, 4},  {6, 2}, {3, 2},
                                           {8, 2}, {11, 4}, {12, 1}, {14, 3}};
  EXPECT_EQ(hits, expected);
}

TEST(LuaCoverage, AddSumsPerLine) {
  sim::LineCoverage a, b;
  a.lines["s"] = {{1, 2}, {3, 1}};
  b.lines["s"] = {{1, 1}, {4, 5}};
  b.lines["t"] = {{2, 1}};
  a.Add(b);
  EXPECT_EQ(a.lines["s"], (std::map<int, int64_t>{{1, 3}, {3, 1}, {4, 5}}));
  EXPECT_EQ(a.lines["t"], (std::map<int, int64_t>{{2, 1}}));
}

TEST(LuaCoverage, LineRangesJoinRuns) {
  EXPECT_EQ(reports::LineRanges({}), "");
  EXPECT_EQ(reports::LineRanges({3, 7, 8, 9, 12}), "3, 7-9, 12");
}

// check --coverage: the table on the terminal, report.json and an lcov file agree, and a line
// that no run reaches is listed as never run.
TEST(LuaCoverage, CheckPrintsAndWritesTheCoverageOfTheVersionsScripts) {
  testing_dirs::TempDir dir("coverage");
  const testing_cli::Result r =
      testing_cli::Run(TESTBED_CLI_PATH,
                       "check --system state --version beta30 --seed 1 --runs 5 --quiet --coverage "
                       "--properties quota-safety --out " +
                           (dir / "out"));
  ASSERT_NE(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("lua line coverage (lines with code that the runs executed):"),
            std::string::npos)
      << r.out;
  const nlohmann::json j = nlohmann::json::parse(testing_cli::ReadFile(dir / "out/report.json"));
  ASSERT_TRUE(j.contains("lua_coverage")) << j.dump(2);
  const auto& set = j["lua_coverage"]["state/beta30/SET_WITH_QUOTA_SCRIPT"];
  ASSERT_TRUE(set.is_object()) << j["lua_coverage"].dump(2);
  EXPECT_EQ(set["file"], "real/scripts/state/beta30/SET_WITH_QUOTA_SCRIPT.lua");
  EXPECT_GT(set["covered"].get<int>(), 0);
  EXPECT_EQ(set["covered"].get<size_t>() + set["never_run"].size(), set["lines"].get<size_t>());
  const std::string terminal = testing_cli::LineStarting(r.out, "  state/beta30/SET_WITH_QUOTA");
  EXPECT_NE(terminal.find(std::to_string(set["covered"].get<int>()) + " of"), std::string::npos)
      << terminal;
  const std::string lcov = testing_cli::ReadFile(dir / "out/coverage.lcov");
  EXPECT_NE(lcov.find("SF:real/scripts/state/beta30/SET_WITH_QUOTA_SCRIPT.lua\n"),
            std::string::npos)
      << lcov;
  EXPECT_NE(lcov.find("LH:" + std::to_string(set["covered"].get<int>()) + "\n"), std::string::npos);
  // Without --coverage nothing of it is recorded or written.
  const testing_cli::Result plain = testing_cli::Run(
      TESTBED_CLI_PATH,
      "check --system state --version beta30 --seed 1 --runs 2 --quiet --properties "
      "quota-safety --out " +
          (dir / "plain"));
  EXPECT_EQ(plain.out.find("lua line coverage"), std::string::npos);
  EXPECT_EQ(testing_cli::ReadFile(dir / "plain/report.json").find("lua_coverage"),
            std::string::npos);
}

}  // namespace
}  // namespace testbed
