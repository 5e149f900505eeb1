#include "real/resp_connection.h"

#include <algorithm>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace testbed::real {

RespConnection::RespConnection(const std::string& host, int port, int timeout_ms) {
  fd_ = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd_);
    fd_ = -1;
  }
}

RespConnection::~RespConnection() {
  if (fd_ >= 0) close(fd_);
}

bool RespConnection::fill() {
  char chunk[65536];
  const ssize_t n = read(fd_, chunk, sizeof chunk);
  if (n <= 0) return false;
  buf_.append(chunk, static_cast<size_t>(n));
  return true;
}

bool RespConnection::line(std::string* out) {
  size_t end;
  while ((end = buf_.find("\r\n", pos_)) == std::string::npos)
    if (!fill()) return false;
  *out = buf_.substr(pos_, end - pos_);
  pos_ = end + 2;
  return true;
}

// One reply. Arrays are read with a stack of their own, not by recursion: Redis nests a Lua
// reply up to 7,995 arrays deep, and as many frames overflowed a sanitized build's stack.
bool RespConnection::parse(sim::Reply* out) {
  struct Open {  // an array being read: its elements so far and how many it has
    std::vector<sim::Reply> elements;
    size_t size = 0;
  };
  std::vector<Open> open;
  for (;;) {
    std::string l;
    if (!line(&l) || l.empty()) return false;
    const std::string rest = l.substr(1);
    sim::Reply value;
    switch (l[0]) {
      case '+':
        value = sim::Reply::Status(rest);
        break;
      case '-':
        value = sim::Reply::Error(rest);
        break;
      case ':':
        value = sim::Reply::Integer(std::stoll(rest));
        break;
      case '$': {
        const long long n = std::stoll(rest);
        if (n < 0) {
          value = sim::Reply::Nil();
          break;
        }
        while (buf_.size() < pos_ + static_cast<size_t>(n) + 2)
          if (!fill()) return false;
        value = sim::Reply::Bulk(buf_.substr(pos_, static_cast<size_t>(n)));
        pos_ += static_cast<size_t>(n) + 2;
        break;
      }
      case '*': {
        const long long n = std::stoll(rest);
        if (n < 0) {
          value = sim::Reply::NilArray();
          break;
        }
        if (n > 0) {
          open.push_back({{}, static_cast<size_t>(n)});
          open.back().elements.reserve(std::min<size_t>(static_cast<size_t>(n), 1024));
          continue;
        }
        value = sim::Reply::Array({});
        break;
      }
      default:
        return false;
    }
    // The value completes the arrays it fills.
    for (;;) {
      if (open.empty()) {
        *out = std::move(value);
        return true;
      }
      open.back().elements.push_back(std::move(value));
      if (open.back().elements.size() < open.back().size) break;
      value = sim::Reply::Array(std::move(open.back().elements));
      open.pop_back();
    }
  }
}

sim::CallResult RespConnection::call(const sim::Argv& argv) {
  if (fd_ < 0) return sim::TransportError{"not connected"};
  std::string req = "*" + std::to_string(argv.size()) + "\r\n";
  for (const auto& a : argv) req += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  for (size_t off = 0; off < req.size();) {
    const ssize_t n = write(fd_, req.data() + off, req.size() - off);
    if (n <= 0) return sim::TransportError{"write failed"};
    off += static_cast<size_t>(n);
  }
  sim::Reply r;
  if (!parse(&r)) {
    close(fd_);
    fd_ = -1;
    return sim::TransportError{"connection closed or timed out"};
  }
  buf_.erase(0, pos_);
  pos_ = 0;
  return r;
}

}  // namespace testbed::real
