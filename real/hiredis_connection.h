// RedisConnection over hiredis (Debian ships 0.14: RESP2). A failed or timed-out exchange is a
// TransportError, never a Reply; the connection reconnects on the next call.
#pragma once

#include <string>

#include "sim/reply.h"

struct redisContext;

namespace testbed::real {

class HiredisConnection : public sim::RedisConnection {
 public:
  HiredisConnection(std::string host, int port, int timeout_ms = 5000);
  ~HiredisConnection() override;
  HiredisConnection(const HiredisConnection&) = delete;
  HiredisConnection& operator=(const HiredisConnection&) = delete;

  sim::CallResult call(const sim::Argv& argv) override;
  bool connected() const { return ctx_ != nullptr; }
  const std::string& last_error() const { return last_error_; }

 private:
  bool ensure_connected();
  std::string host_;
  int port_;
  int timeout_ms_;
  redisContext* ctx_ = nullptr;
  std::string last_error_;
};

}  // namespace testbed::real
