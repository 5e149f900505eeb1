// SIGINT and SIGTERM to every long-running command (issue 60): a campaign (check, diff, mutate)
// stops at a run boundary and writes what it has, marked incomplete, exit 128 + the signal; a
// second signal, or the first to a command that spawns a server and has no boundary to stop at
// (replay, fidelity), ends it at once; and every spawned redis-server's directory is gone.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "tests/cli_run.h"
#include "tests/temp_dir.h"

namespace {

using testbed::testing_dirs::TempDir;

// The testbed CLI started with `args`, its output in a log and its TMPDIR a directory of the
// test's own (where a spawned redis-server makes its directory).
class Child {
 public:
  Child(const TempDir& tmp, std::vector<std::string> args)
      : log_(tmp / "log"), tmpdir_(tmp / "tmp") {
    std::filesystem::create_directories(tmpdir_);
    // Everything the child needs is made before fork: it only redirects and execs.
    std::vector<std::string> env = {"TMPDIR=" + tmpdir_};
    for (char** e = environ; *e != nullptr; ++e)
      if (std::string(*e).rfind("TMPDIR=", 0) != 0) env.push_back(*e);
    args.insert(args.begin(), "testbed");
    std::vector<char*> argv, envp;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    const int fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    EXPECT_GE(fd, 0);
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      execve(TESTBED_CLI_PATH, argv.data(), envp.data());
      _exit(127);
    }
    close(fd);
  }
  ~Child() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  std::string printed() const { return testbed::testing_cli::ReadFile(log_); }
  // Whether a spawned server's directory is in TMPDIR.
  bool ServerDir() const {
    for (const auto& e : std::filesystem::directory_iterator(tmpdir_))
      if (e.path().filename().string().rfind("testbed-redis-", 0) == 0) return true;
    return false;
  }
  // Waits up to a minute for `ready`.
  bool Await(const std::function<bool()>& ready) const {
    for (int i = 0; i < 600; ++i) {
      if (ready()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }
  void Signal(int sig) const { kill(pid_, sig); }
  // The exit code, waiting up to two minutes (-1: it did not stop, or did not exit).
  int Wait() {
    int status = 0;
    pid_t done = 0;
    for (int i = 0; i < 1200 && done == 0; ++i) {
      done = waitpid(pid_, &status, WNOHANG);
      if (done == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (done == 0) return -1;
    exited_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  // What is left in TMPDIR (a spawned server's directory must not be).
  std::vector<std::string> LeftInTmp() const {
    std::vector<std::string> left;
    for (const auto& e : std::filesystem::directory_iterator(tmpdir_))
      left.push_back(e.path().filename().string());
    return left;
  }

 private:
  std::string log_, tmpdir_;
  pid_t pid_ = -1;
  bool exited_ = false;
};

std::string Name(int sig) { return sig == SIGINT ? "SIGINT" : "SIGTERM"; }

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(Interrupt, ACheckWritesAnIncompleteReportAndStopsItsServer) {
  // Ctrl-C (or a CI runner's SIGTERM) two seconds into a long check on a spawned redis-server:
  // the check stops at a run boundary, writes its report marked incomplete, stops the server
  // and removes its directory, and exits 128 + the signal.
  for (const int sig : {SIGINT, SIGTERM}) {
    TempDir tmp("interrupt-check");
    const std::string out = tmp / "out";
    Child child(tmp, {"check", "--system", "state", "--version", "beta30", "--seed", "1", "--runs",
                      "1000000", "--jobs", "1", "--quiet", "--redis", "spawn", "--properties",
                      "cas-versions-linearizable,quota-safety", "--out", out});
    EXPECT_TRUE(child.Await([&] { return child.ServerDir(); })) << child.printed();
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    child.Signal(sig);
    const int code = child.Wait();
    const std::string printed = child.printed();
    EXPECT_EQ(code, 128 + sig) << printed;
    EXPECT_TRUE(Contains(printed, "incomplete: interrupted by " + Name(sig) + " after "))
        << printed;
    const std::string json = testbed::testing_cli::ReadFile(out + "/report.json");
    EXPECT_TRUE(Contains(json, "\"incomplete\": \"interrupted by " + Name(sig) + " after "))
        << json;
    const std::string md = testbed::testing_cli::ReadFile(out + "/report.md");
    EXPECT_EQ(md.rfind("**:warning: incomplete, interrupted by " + Name(sig), 0), 0u) << md;
    EXPECT_TRUE(child.LeftInTmp().empty()) << "left behind: " << child.LeftInTmp().front();
    for (const auto& e : std::filesystem::directory_iterator(out)) {
      const std::string file = e.path().filename().string();
      EXPECT_TRUE(file == "report.json" || file == "report.md") << "left behind: " << file;
    }
  }
}

TEST(Interrupt, ASecondSignalEndsACheckAtOnceAndStillRemovesItsServer) {
  TempDir tmp("interrupt-twice");
  Child child(tmp, {"check", "--system", "state", "--seed", "1", "--runs", "1000000", "--jobs", "1",
                    "--quiet", "--redis", "spawn", "--properties", "quota-safety"});
  EXPECT_TRUE(child.Await([&] { return child.ServerDir(); })) << child.printed();
  child.Signal(SIGINT);
  child.Signal(SIGINT);
  const int code = child.Wait();
  EXPECT_EQ(code, 128 + SIGINT) << child.printed();
  EXPECT_TRUE(child.LeftInTmp().empty()) << "left behind: " << child.LeftInTmp().front();
}

TEST(Interrupt, ADiffStopsAtARunBoundaryAndPrintsWhatItHasMarkedIncomplete) {
  for (const int sig : {SIGINT, SIGTERM}) {
    TempDir tmp("interrupt-diff");
    Child child(tmp, {"diff", "--system", "state", "--candidate",
                      TESTBED_SOURCE_DIR "/tests/fixed_scripts/beta30-expiry-by-server-clock",
                      "--seed", "1", "--runs", "1000000", "--jobs", "1"});
    EXPECT_TRUE(child.Await([&] { return Contains(child.printed(), "seed: 1\n"); }))
        << child.printed();
    // Some pairs are made by then, under the sanitizers too.
    std::this_thread::sleep_for(std::chrono::milliseconds(3000));
    child.Signal(sig);
    const int code = child.Wait();
    const std::string printed = child.printed();
    EXPECT_EQ(code, 128 + sig) << printed;
    EXPECT_TRUE(Contains(printed, "pass->fail")) << printed;  // the table of the runs made
    EXPECT_TRUE(Contains(printed, "\nresult: ")) << printed;
    EXPECT_TRUE(Contains(printed, "\nincomplete: interrupted by " + Name(sig) + " after "))
        << printed;
    EXPECT_FALSE(Contains(printed, "after 0 paired runs")) << printed;
  }
}

TEST(Interrupt, AMutateRunStopsAtARunBoundaryCountingOnlyTheMutantsJudged) {
  for (const int sig : {SIGINT, SIGTERM}) {
    TempDir tmp("interrupt-mutate");
    // One property: the shipped scripts' runs end soon (under the sanitizers too), and the
    // mutants' take seconds more.
    Child child(tmp, {"mutate", "--system", "state", "--version", "beta30", "--seed", "1", "--runs",
                      "200", "--jobs", "1", "--properties", "cas-versions-linearizable"});
    // Once a mutant has its verdict.
    EXPECT_TRUE(child.Await([&] {
      const std::string p = child.printed();
      return Contains(p, "\nkilled ") || Contains(p, "\nsurvived ") || Contains(p, "\nstillborn ");
    })) << child.printed();
    child.Signal(sig);
    const int code = child.Wait();
    const std::string printed = child.printed();
    EXPECT_EQ(code, 128 + sig) << printed;
    EXPECT_TRUE(Contains(printed, "stillborn  killed")) << printed;  // the table of those judged
    EXPECT_TRUE(Contains(printed, "\nincomplete: interrupted by " + Name(sig) + " after "))
        << printed;
    EXPECT_FALSE(Contains(printed, "\nresult: ")) << printed;
    EXPECT_FALSE(Contains(printed, "after 0 mutants")) << printed;
  }
}

TEST(Interrupt, CommandsThatSpawnAServerRemoveItsDirectoryOnASignal) {
  const std::vector<std::vector<std::string>> commands = {
      {"replay", TESTBED_SOURCE_DIR "/scenarios", "--redis", "spawn"},
      {"fidelity", "--commands", "100000000", "--redis", "spawn"},
  };
  for (const auto& args : commands)
    for (const int sig : {SIGINT, SIGTERM}) {
      TempDir tmp("interrupt-spawn");
      Child child(tmp, args);
      EXPECT_TRUE(child.Await([&] { return child.ServerDir(); })) << child.printed();
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      child.Signal(sig);
      const int code = child.Wait();
      const std::string printed = child.printed();
      EXPECT_EQ(code, 128 + sig) << args[0] << "\n" << printed;
      EXPECT_TRUE(Contains(printed, "testbed " + args[0] + ": stopped by " + Name(sig))) << printed;
      EXPECT_TRUE(child.LeftInTmp().empty())
          << args[0] << " left behind: " << child.LeftInTmp().front();
    }
}

}  // namespace
