// Runs a CLI binary as a user would (through the shell), capturing stdout and stderr together.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

namespace testbed::testing_cli {

struct Result {
  int code;
  std::string out;
};

inline Result Run(const std::string& binary, const std::string& args, const std::string& env = "") {
  const std::string cmd = env + " " + binary + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

#ifdef TESTBED_CLI_PATH
// The CLI this build made (testbed_tests' TESTBED_CLI_PATH), run with `args`.
inline Result Cli(const std::string& args) { return Run(TESTBED_CLI_PATH, args); }
#endif

// The line of `out` that starts with `prefix` (the first one), or "".
inline std::string LineStarting(const std::string& out, const std::string& prefix) {
  const size_t at = out.rfind(prefix, 0) == 0 ? 0 : out.find("\n" + prefix);
  if (at == std::string::npos) return "";
  const size_t begin = at == 0 && out.rfind(prefix, 0) == 0 ? 0 : at + 1;
  const size_t end = out.find('\n', begin);
  return out.substr(begin, end - begin);
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace testbed::testing_cli
