// The CLI as a user meets it: seed first, typed exit codes, clear messages for bad input.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace {

struct Result {
  int code;
  std::string out;
};

Result RunCli(const std::string& args, const std::string& env = "") {
  const std::string cmd = env + " " + TESTBED_CLI_PATH + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(Cli, PrintsTheSeedFirstAndATraceHashLast) {
  Result r = RunCli("fidelity --redis none --seed 7 --commands 200");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.rfind("seed: 7\n", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("trace-hash: "), std::string::npos);
  EXPECT_NE(r.out.find("coverage: command/option x count"), std::string::npos);
}

TEST(Cli, UnknownFlagsAndCommandsAreUsageErrors) {
  for (const char* args : {"fidelity --bogus", "frobnicate", "fidelity --seed -3",
                           "fidelity --redis 10.0.0.1:6379", "fidelity --commands"}) {
    Result r = RunCli(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find("testbed: "), std::string::npos) << r.out;
  }
}

TEST(Cli, AMissingRedisServerIsASetupErrorWithExitCode2) {
  Result r = RunCli("fidelity --seed 1 --commands 10", "TESTBED_REDIS_SERVER=/nonexistent/redis-server");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("setup error"), std::string::npos) << r.out;
}

TEST(Cli, ADivergenceExitsWith1AndPrintsAShrunkCounterexampleAndAReplayCommand) {
  Result r = RunCli("fidelity --seed 1 --commands 2000 --inject-fault expiry-shift");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("shortest failing sequence"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("replay: testbed fidelity --seed 1 --commands 2000 --inject-fault expiry-shift"),
            std::string::npos)
      << r.out;
}

}  // namespace
