#include "serve/server.h"

#include <absl/strings/ascii.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <deque>
#include <set>
#include <unordered_map>
#include <stdexcept>
#include <vector>

#include "serve/resp_request.h"
#include "sim/emulator.h"
#include "sim/monitor_text.h"

namespace testbed::serve {

ServedClock::ServedClock(std::function<int64_t()> wall) : wall_(std::move(wall)) {}

int64_t ServedClock::now_us() const { return frozen_ ? frozen_at_ : wall_() + offset_; }

void ServedClock::set(int64_t ms) {
  if (frozen_)
    frozen_at_ = ms * 1000;
  else
    offset_ = ms * 1000 - wall_();
}

void ServedClock::freeze() {
  frozen_at_ = now_us();
  frozen_ = true;
}

void ServedClock::follow() {
  if (!frozen_) return;
  frozen_ = false;
  offset_ = frozen_at_ - wall_();
}

FaultInjector::FaultInjector(const sim::FaultList& list, uint64_t seed)
    : list_(list), options_(list.Options()), prng_(seed) {
  for (const sim::Fault f : list.kinds)
    if (std::find(std::begin(kInjected), std::end(kInjected), f) == std::end(kInjected)) {
      std::vector<std::string> names;
      for (const sim::Fault k : kInjected) names.emplace_back(sim::InfoOf(k).name);
      throw std::invalid_argument("serve cannot inject " + std::string(sim::InfoOf(f).name) +
                                  " (it acts on a simulated world; serve injects " +
                                  absl::StrJoin(names, ", ") + ")");
    }
}

FaultInjector::Fate FaultInjector::Next() {
  Fate fate;
  if (!on_) return fate;
  fate.drop_before = prng_.chance(options_.lost_request);
  fate.drop_after = !fate.drop_before && prng_.chance(options_.lost_reply);
  if (options_.latency_ms_max > 0)
    fate.delay_ms = prng_.range(options_.latency_ms_min, options_.latency_ms_max);
  return fate;
}

std::string FaultInjector::Describe() const { return (on_ ? "on: " : "off: ") + list_.ToString(); }

struct Service::State {
  explicit State(const sim::Clock& clock) : emulator(clock) {}
  sim::Emulator emulator;
  int64_t next_client_id = 1;
  std::ostream* record = nullptr;
  struct Ran {
    sim::Argv argv;
    bool from_script;
    int db;
  };
  std::vector<Ran> ran;  // what the recorded command ran: itself, its script's, EXEC's
};

void Service::Record(std::ostream* out) {
  state_->record = out;
  state_->emulator.observer = [this](const sim::Argv& argv, bool from_script) {
    state_->ran.push_back({argv, from_script, state_->emulator.db()});
  };
}

Service::Service(std::function<int64_t()> wall)
    : clock_(std::make_unique<ServedClock>(std::move(wall))),
      state_(std::make_unique<State>(*clock_)) {}

Service::~Service() = default;

namespace {

// The last instant a JavaScript Date holds (8.64e15 ms after the epoch).
constexpr int64_t kLastDateMs = 8640000000000000;

using sim::Reply;

std::string Upper(const std::string& s) { return absl::AsciiStrToUpper(s); }

Reply AdminUsage() {
  return Reply::Error(
      "ERR TESTBED subcommands: TIME [SET ms | ADVANCE ms | FREEZE | FOLLOW], FAULTS [ON | OFF]");
}

}  // namespace

Reply Service::Admin(const sim::Argv& argv) {
  if (argv.size() >= 2 && Upper(argv[1]) == "FAULTS") {
    if (!faults_) return Reply::Error("ERR no faults: start serve with --faults LIST");
    if (argv.size() == 2) return Reply::Bulk(faults_->Describe());
    if (argv.size() == 3 && (Upper(argv[2]) == "ON" || Upper(argv[2]) == "OFF")) {
      faults_->set_on(Upper(argv[2]) == "ON");
      return Reply::Ok();
    }
    return Reply::Error("ERR TESTBED FAULTS [ON | OFF]");
  }
  if (argv.size() < 2 || Upper(argv[1]) != "TIME") return AdminUsage();
  if (argv.size() == 2) return Reply::Integer(clock_->now_ms());
  const std::string op = Upper(argv[2]);
  if ((op == "FREEZE" || op == "FOLLOW") && argv.size() == 3) {
    op == "FREEZE" ? clock_->freeze() : clock_->follow();
    return Reply::Ok();
  }
  long long ms = 0;
  if ((op == "SET" || op == "ADVANCE") && argv.size() == 4) {
    if (!StrictInt64(argv[3], &ms) || ms < 0)
      return Reply::Error("ERR TESTBED TIME " + op + " needs a non-negative integer of ms");
    // The clock stays within JavaScript's Date range, so that an expiry it adds to, and the
    // microseconds MONITOR prints, cannot overflow.
    const int64_t now = clock_->now_ms();
    if (ms > kLastDateMs || (op == "ADVANCE" && ms > kLastDateMs - now))
      return Reply::Error("ERR TESTBED TIME " + op + " " + argv[3] + " would move the clock past " +
                          std::to_string(kLastDateMs) + " ms (JavaScript's last Date)");
    op == "SET" ? clock_->set(ms) : clock_->advance(ms);
    return Reply::Ok();
  }
  return AdminUsage();
}

bool Service::IsAdmin(const sim::Argv& argv) { return Upper(argv[0]) == "TESTBED"; }

// Recorded as MONITOR shows it: a command after the commands it ran, but for a script, which
// comes first (eval.c feeds MONITOR before it runs); EXEC after the commands it ran; a command
// queued or refused inside MULTI not at all (it never runs); each with its database.
Reply Service::Execute(Client& client, const sim::Argv& argv) {
  if (client.id == 0) client.id = state_->next_client_id++;
  if (!state_->record || IsAdmin(argv)) return Run(client, argv);
  sim::Emulator& em = state_->emulator;
  em.use_client(static_cast<uint64_t>(client.id));
  const int64_t micros = clock_->now_ms() * 1000;
  const int db = em.db();
  const std::string name = Upper(argv[0]);
  const bool queued = em.in_multi() && name != "EXEC" && name != "DISCARD" && name != "MULTI" &&
                      name != "WATCH" && name != "QUIT";
  state_->ran.clear();
  Reply reply = Run(client, argv);
  if (queued) return reply;
  std::vector<State::Ran> ran = std::move(state_->ran);
  if (!ran.empty() && !ran.front().from_script) ran.erase(ran.begin());  // the command itself
  std::ostream& out = *state_->record;
  auto line = [&](const State::Ran& r) {
    out << sim::monitor::Format({micros, r.db, r.from_script ? "lua" : client.address, r.argv})
        << "\n";
  };
  const bool exec = name == "EXEC";
  if (!exec) line({argv, false, db});
  for (const State::Ran& r : ran) line(r);
  if (exec) line({argv, false, em.db()});
  out << sim::monitor::FormatReply(reply.resp2()) << "\n";
  out.flush();
  return reply;
}

Reply Service::Run(Client& client, const sim::Argv& argv) {
  const std::string name = Upper(argv[0]);
  if (name == "TESTBED") return Admin(argv);
  if (name == "QUIT") {
    client.close_after_reply = true;
    return Reply::Ok();
  }
  state_->emulator.use_client(static_cast<uint64_t>(client.id));
  return state_->emulator.execute(argv);
}

void Service::Disconnected(const Client& client) {
  if (client.id != 0) state_->emulator.drop_client(static_cast<uint64_t>(client.id));
}

namespace {

struct Connection {
  RequestParser parser;
  Service::Client client;
  std::string out;                                   // due: written as the socket takes it
  std::deque<std::pair<int64_t, std::string>> held;  // (due at, reply) delayed by latency
  bool closing = false;                              // reply with what is queued, then close
  bool drop = false;                                 // a fault: closed now, whatever is queued
  uint32_t watched = 0;                              // the epoll events asked for
  // Replies that are due move to `out`, in order; the time the next one is due, or -1.
  int64_t Release(int64_t now) {
    while (!held.empty() && held.front().first <= now) {
      out += held.front().second;
      held.pop_front();
    }
    return held.empty() ? -1 : held.front().first;
  }
};

void NonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

int64_t WallUs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000 + ts.tv_nsec / 1000;
}
int64_t WallMs() { return WallUs() / 1000; }

}  // namespace

void Serve(int port, std::ostream* record, FaultInjector* faults,
           const std::function<void(int)>& ready, const std::function<bool()>& stop) {
  rlimit files{};  // a thousand connections need as many descriptors: the hard limit
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  if (listener < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  int one = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);  // loopback only
  if (bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      listen(listener, 511) != 0) {
    const std::string why = std::strerror(errno);
    close(listener);
    throw std::runtime_error("cannot listen on 127.0.0.1:" + std::to_string(port) + ": " + why);
  }
  socklen_t len = sizeof addr;
  getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  NonBlocking(listener);
  Service service(WallUs);
  if (record) service.Record(record);
  service.Faults(faults);
  // One epoll set, level-triggered: a wake-up costs what is ready, not what is connected (the
  // poll loop this replaces rebuilt and walked every connection each time round). A
  // connection asks for EPOLLOUT only while it has replies the socket has not taken.
  const int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) {
    close(listener);
    throw std::runtime_error(std::string("epoll_create1: ") + std::strerror(errno));
  }
  const auto watch = [&](int op, int fd, uint32_t events) {
    epoll_event ev{};
    ev.events = events;
    ev.data.fd = fd;
    epoll_ctl(ep, op, fd, &ev);
  };
  watch(EPOLL_CTL_ADD, listener, EPOLLIN);
  std::unordered_map<int, Connection> connections;
  // Replies held back by latency: (due at, fd), the earliest first; an entry whose
  // connection has gone, or whose reply has already left, is passed over.
  std::set<std::pair<int64_t, int>> timers;
  // What the connection waits for: input unless it is closing, output while some is queued.
  const auto interest = [](const Connection& c) -> uint32_t {
    return (c.closing ? 0u : static_cast<uint32_t>(EPOLLIN)) |
           (c.out.empty() ? 0u : static_cast<uint32_t>(EPOLLOUT));
  };
  const auto close_connection = [&](int fd) {
    epoll_ctl(ep, EPOLL_CTL_DEL, fd, nullptr);
    close(fd);
    service.Disconnected(connections.at(fd).client);
    connections.erase(fd);
  };
  // Releases what is due, writes what the socket takes, then closes or re-arms the connection.
  const auto flush = [&](int fd, bool drop) {
    Connection& c = connections.at(fd);
    drop = drop || c.drop;
    if (!drop) {
      const int64_t next_due = c.Release(WallMs());
      if (next_due >= 0) timers.emplace(next_due, fd);
    }
    if (!drop && !c.out.empty()) {
      const ssize_t n = send(fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
      if (n > 0)
        c.out.erase(0, static_cast<size_t>(n));
      else if (n < 0 && errno != EAGAIN && errno != EINTR)
        drop = true;
    }
    if (drop || (c.closing && c.out.empty() && c.held.empty())) {
      close_connection(fd);
      return;
    }
    const uint32_t want = interest(c);
    if (want != c.watched) {
      watch(EPOLL_CTL_MOD, fd, want);
      c.watched = want;
    }
  };
  const auto serve_input = [&](int fd, Connection& c) -> bool {  // false: the client is gone
    char buf[65536];
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
      return false;  // a client gone, maybe in the middle of a command: forgotten
    if (n < 0) return true;
    c.parser.feed(std::string_view(buf, static_cast<size_t>(n)));
    sim::Argv argv;
    std::string error;
    while (!c.closing) {
      const RequestParser::Status s = c.parser.next(&argv, &error);
      if (s == RequestParser::Status::kNeedMore) break;
      if (s == RequestParser::Status::kError) {
        c.out += "-" + error + "\r\n";
        c.closing = true;
        break;
      }
      const FaultInjector::Fate fate =
          faults && !Service::IsAdmin(argv) ? faults->Next() : FaultInjector::Fate{};
      if (fate.drop_before) {
        c.drop = true;
        break;
      }
      std::string reply = service.Execute(c.client, argv).resp2();
      if (fate.drop_after) {
        c.drop = true;
        break;
      }
      // FIFO: a reply never leaves before one queued ahead of it.
      const int64_t due =
          std::max(WallMs() + fate.delay_ms, c.held.empty() ? int64_t{0} : c.held.back().first);
      if (fate.delay_ms > 0 || !c.held.empty())
        c.held.emplace_back(due, std::move(reply));
      else
        c.out += reply;
      c.closing = c.client.close_after_reply;
    }
    return true;
  };
  ready(ntohs(addr.sin_port));
  std::vector<epoll_event> events(256);
  while (!stop()) {
    int timeout = 100;  // stop() is asked at least this often
    if (!timers.empty())
      timeout = static_cast<int>(
          std::clamp<int64_t>(timers.begin()->first - WallMs(), 0, int64_t{timeout}));
    const int n = epoll_wait(ep, events.data(), static_cast<int>(events.size()), timeout);
    for (int i = 0; i < n; ++i) {
      const int fd = events[static_cast<size_t>(i)].data.fd;
      const uint32_t ready_events = events[static_cast<size_t>(i)].events;
      if (fd == listener) {
        while (true) {
          sockaddr_in peer{};
          socklen_t peer_len = sizeof peer;
          const int client = accept4(listener, reinterpret_cast<sockaddr*>(&peer), &peer_len,
                                     SOCK_NONBLOCK | SOCK_CLOEXEC);
          if (client < 0) break;
          setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          Connection& c = connections[client];
          char ip[INET_ADDRSTRLEN] = "127.0.0.1";
          inet_ntop(AF_INET, &peer.sin_addr, ip, sizeof ip);
          c.client.address = absl::StrCat(ip, ":", ntohs(peer.sin_port));
          c.watched = EPOLLIN;
          watch(EPOLL_CTL_ADD, client, EPOLLIN);
        }
        continue;
      }
      const auto it = connections.find(fd);
      if (it == connections.end()) continue;  // closed earlier in this batch
      Connection& c = it->second;
      // (A closing connection that hangs up can take nothing more.)
      bool drop = (ready_events & EPOLLERR) != 0 || (c.closing && (ready_events & EPOLLHUP));
      if (!drop && (ready_events & (EPOLLIN | EPOLLHUP)) && !c.closing) drop = !serve_input(fd, c);
      flush(fd, drop);
    }
    const int64_t now = WallMs();
    while (!timers.empty() && timers.begin()->first <= now) {
      const int fd = timers.begin()->second;
      timers.erase(timers.begin());
      if (connections.count(fd) != 0) flush(fd, false);
    }
    if (n == static_cast<int>(events.size())) events.resize(events.size() * 2);
  }
  for (const auto& [fd, c] : connections) close(fd);
  close(ep);
  close(listener);
}

}  // namespace testbed::serve
