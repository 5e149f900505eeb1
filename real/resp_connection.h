// A RESP2 connection that keeps what hiredis 0.14 loses: hiredis turns both "*-1" (null array)
// and "$-1" (nil bulk) into REDIS_REPLY_NIL, so a byte-for-byte comparison needs its own reader.
// Used by the fidelity check; client logic uses HiredisConnection.
#pragma once

#include <string>

#include "sim/reply.h"

namespace testbed::real {

class RespConnection : public sim::RedisConnection {
 public:
  RespConnection(const std::string& host, int port, int timeout_ms = 5000);
  ~RespConnection() override;
  RespConnection(const RespConnection&) = delete;
  RespConnection& operator=(const RespConnection&) = delete;
  sim::CallResult call(const sim::Argv& argv) override;
  bool connected() const { return fd_ >= 0; }

 private:
  bool fill();  // reads more bytes into buf_; false on EOF/timeout
  bool parse(sim::Reply* out);
  bool line(std::string* out);
  int fd_ = -1;
  std::string buf_;
  size_t pos_ = 0;
};

}  // namespace testbed::real
