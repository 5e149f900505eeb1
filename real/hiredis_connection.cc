#include "real/hiredis_connection.h"

#include <hiredis/hiredis.h>

#include <vector>

namespace testbed::real {
namespace {

sim::Reply Convert(const redisReply* r) {
  switch (r->type) {
    case REDIS_REPLY_STATUS:
      return sim::Reply::Status(std::string(r->str, r->len));
    case REDIS_REPLY_ERROR:
      return sim::Reply::Error(std::string(r->str, r->len));
    case REDIS_REPLY_INTEGER:
      return sim::Reply::Integer(r->integer);
    case REDIS_REPLY_STRING:
      return sim::Reply::Bulk(std::string(r->str, r->len));
    case REDIS_REPLY_NIL:
      return sim::Reply::Nil();
    case REDIS_REPLY_ARRAY: {
      std::vector<sim::Reply> e;
      for (size_t i = 0; i < r->elements; ++i) e.push_back(Convert(r->element[i]));
      return sim::Reply::Array(std::move(e));
    }
  }
  return sim::Reply::Error("testbed: unknown hiredis reply type");
}

}  // namespace

HiredisConnection::HiredisConnection(std::string host, int port, int timeout_ms)
    : host_(std::move(host)), port_(port), timeout_ms_(timeout_ms) {
  ensure_connected();
}

HiredisConnection::~HiredisConnection() {
  if (ctx_) redisFree(ctx_);
}

bool HiredisConnection::ensure_connected() {
  if (ctx_) return true;
  timeval tv{timeout_ms_ / 1000, (timeout_ms_ % 1000) * 1000};
  ctx_ = redisConnectWithTimeout(host_.c_str(), port_, tv);
  if (!ctx_ || ctx_->err) {
    last_error_ = ctx_ ? ctx_->errstr : "cannot allocate redis context";
    if (ctx_) redisFree(ctx_);
    ctx_ = nullptr;
    return false;
  }
  redisSetTimeout(ctx_, tv);
  return true;
}

sim::CallResult HiredisConnection::call(const sim::Argv& argv) {
  if (!ensure_connected()) return sim::TransportError{"connect: " + last_error_};
  std::vector<const char*> ptrs;
  std::vector<size_t> lens;
  for (const auto& a : argv) {
    ptrs.push_back(a.data());
    lens.push_back(a.size());
  }
  auto* reply = static_cast<redisReply*>(
      redisCommandArgv(ctx_, static_cast<int>(argv.size()), ptrs.data(), lens.data()));
  if (!reply) {
    last_error_ = ctx_->errstr;
    redisFree(ctx_);
    ctx_ = nullptr;
    return sim::TransportError{last_error_};
  }
  sim::Reply out = Convert(reply);
  freeReplyObject(reply);
  return out;
}

}  // namespace testbed::real
