#include "real/redis_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace testbed::real {
namespace {

// Every server this process has started and not yet stopped, for StopSpawnedServers.
std::mutex spawned_mu;
std::set<RedisServer*>& Spawned() {
  static std::set<RedisServer*> spawned;
  return spawned;
}

int FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (fd >= 0) close(fd);
    throw SetupError("cannot find a free loopback port");
  }
  close(fd);
  return ntohs(addr.sin_port);
}

bool Executable(const std::string& p) { return access(p.c_str(), X_OK) == 0; }

}  // namespace

std::string RedisServer::FindBinary() {
  if (const char* env = std::getenv("TESTBED_REDIS_SERVER")) {
    if (Executable(env)) return env;
    throw SetupError(std::string("TESTBED_REDIS_SERVER=") + env + " is not executable");
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  dirs += ":/usr/bin:/usr/sbin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string candidate = dirs.substr(start, end - start) + "/redis-server";
    if (end > start && Executable(candidate)) return candidate;
    start = end + 1;
  }
  throw SetupError(
      "redis-server not found on PATH (install it: apt-get install redis-server, or set "
      "TESTBED_REDIS_SERVER)");
}

RedisServer::RedisServer(int64_t start_ms) {
  const std::string binary = FindBinary();
  if (!Executable(TESTBED_TIMESHIM_PATH))
    throw SetupError(std::string("clock shim missing: ") + TESTBED_TIMESHIM_PATH);
  // In $TMPDIR (a test's own directory), else /tmp.
  std::error_code tmp_error;
  std::string tmpl = std::filesystem::temp_directory_path(tmp_error).string();
  if (tmp_error || tmpl.empty()) tmpl = "/tmp";
  tmpl += "/testbed-redis-XXXXXX";
  if (!mkdtemp(tmpl.data())) throw SetupError("cannot create a temp dir for redis-server");
  dir_ = tmpl;
  {
    std::lock_guard<std::mutex> lock(spawned_mu);
    Spawned().insert(this);
  }
  const std::string clock_file = dir_ + "/clock";
  int fd = open(clock_file.c_str(), O_RDWR | O_CREAT, 0600);
  auto fail = [this](const std::string& why) {  // the temp dir goes with a failed start
    stop();
    return SetupError(why);
  };
  if (fd < 0 || ftruncate(fd, sizeof(int64_t)) != 0) {
    if (fd >= 0) close(fd);
    throw fail("cannot create clock file");
  }
  void* p = mmap(nullptr, sizeof(int64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) throw fail("cannot map clock file");
  clock_ = static_cast<volatile int64_t*>(p);
  set_time_ms(start_ms);

  for (int attempt = 0; attempt < 5 && pid_ < 0; ++attempt) {
    port_ = FreeLoopbackPort();
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) throw fail("fork failed");
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(1);
      // Out of the terminal's process group: a Ctrl-C goes to the check alone, which stops at a
      // run boundary and then stops this server itself.
      setpgid(0, 0);
      sigset_t none;  // the check blocks SIGINT and SIGTERM for its own thread to take
      sigemptyset(&none);
      sigprocmask(SIG_SETMASK, &none, nullptr);
      int devnull = open("/dev/null", O_WRONLY);
      dup2(devnull, 1);
      dup2(devnull, 2);
      setenv("LD_PRELOAD", TESTBED_TIMESHIM_PATH, 1);
      setenv("TESTBED_CLOCK_FILE", clock_file.c_str(), 1);
      const std::string port = std::to_string(port_);
      execl(binary.c_str(), binary.c_str(), "--port", port.c_str(), "--bind", "127.0.0.1", "--save",
            "", "--appendonly", "no", "--dir", dir_.c_str(), "--daemonize", "no",
            "--protected-mode", "no", "--logfile", "", static_cast<char*>(nullptr));
      _exit(127);
    }
    // Wait for PING, up to 5 s; give up on this port if the child died.
    for (int i = 0; i < 250; ++i) {
      int status;
      if (waitpid(pid, &status, WNOHANG) == pid) break;
      HiredisConnection probe("127.0.0.1", port_, 200);
      if (probe.connected()) {
        auto r = probe.call({"PING"});
        if (auto* reply = std::get_if<sim::Reply>(&r); reply && reply->str == "PONG") {
          pid_ = pid;
          break;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (pid_ < 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  if (pid_ < 0) throw fail("redis-server (" + binary + ") did not start on a loopback port");
}

RedisServer::~RedisServer() { stop(); }

void StopSpawnedServers() {
  std::lock_guard<std::mutex> lock(spawned_mu);
  for (RedisServer* s : Spawned()) s->kill_now();
}

void RedisServer::kill_now() {  // under spawned_mu
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    dir_.clear();
  }
}

void RedisServer::stop() {
  std::lock_guard<std::mutex> lock(spawned_mu);
  Spawned().erase(this);
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    for (int i = 0; i < 100; ++i) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }
  if (clock_) {
    munmap(const_cast<int64_t*>(clock_), sizeof(int64_t));
    clock_ = nullptr;
  }
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    dir_.clear();
  }
}

void RedisServer::set_time_ms(int64_t ms) {
  __atomic_store_n(const_cast<int64_t*>(clock_), ms * 1000, __ATOMIC_RELEASE);
}

std::unique_ptr<HiredisConnection> RedisServer::connect() const {
  auto c = std::make_unique<HiredisConnection>("127.0.0.1", port_);
  if (!c->connected()) throw SetupError("cannot connect to the spawned redis-server");
  return c;
}

std::unique_ptr<RespConnection> RedisServer::connect_raw() const {
  auto c = std::make_unique<RespConnection>("127.0.0.1", port_);
  if (!c->connected()) throw SetupError("cannot connect to the spawned redis-server");
  return c;
}

void RedisServer::reset() {
  auto c = connect();
  c->call({"FLUSHALL"});
  c->call({"SCRIPT", "FLUSH"});
}

}  // namespace testbed::real
