#include "model/handles.h"

#include <algorithm>

namespace testbed::model {

namespace {
constexpr int64_t kGraceMaxMs = 60 * 60'000;
std::string Key(const std::string& connection, const std::string& handle) {
  return connection + "|" + handle;
}
}  // namespace

int64_t HandleModel::grace(int64_t lifetime) const { return std::min(lifetime, kGraceMaxMs); }

HandleAnswer HandleModel::load(const std::string& key, int64_t now, Record** out) {
  *out = nullptr;
  auto it = records_.find(key);
  if (it == records_.end() || now > it->second.gone_at_ms || it->second.status == "discarded")
    return {kind_.public_access ? "HANDLE_INVALID" : "HANDLE_NOT_FOUND"};
  Record& r = it->second;
  if (now >= r.expires_at_ms || now >= r.max_expires_at_ms) {
    if (kind_.public_access) return {"HANDLE_INVALID"};
    HandleAnswer a{"HANDLE_EXPIRED"};
    a.deadline = r.status == "committed"      ? "result"
                 : kind_.cursor               ? "ttl"
                 : now >= r.max_expires_at_ms ? "max"
                                              : "idle";
    return a;
  }
  *out = &r;
  return {};
}

HandleAnswer HandleModel::create(const std::string& connection, const std::string& handle,
                                 const nlohmann::json& data, int64_t now) {
  Record r;
  r.status = "active";
  r.data = data;
  const int64_t lifetime = kind_.cursor ? kind_.ttl_ms : kind_.max_ttl_ms;
  r.expires_at_ms = now + (kind_.cursor ? lifetime : std::min(kind_.idle_ttl_ms, lifetime));
  r.max_expires_at_ms = now + lifetime;
  r.gone_at_ms = r.max_expires_at_ms + grace(lifetime);
  records_[Key(connection, handle)] = r;
  HandleAnswer a;
  a.status = "active";
  a.data = data;
  a.expires_at_ms = r.expires_at_ms;
  return a;
}

HandleAnswer HandleModel::read(const std::string& connection, const std::string& handle,
                               int64_t now) {
  Record* r = nullptr;
  HandleAnswer a = load(Key(connection, handle), now, &r);
  if (!r) return a;
  if (r->status == "active" && !kind_.cursor)
    r->expires_at_ms = std::min(now + kind_.idle_ttl_ms, r->max_expires_at_ms);
  a.status = r->status;
  a.data = r->data;
  if (r->status == "committed") a.result = r->result;
  a.expires_at_ms = r->expires_at_ms;
  return a;
}

HandleAnswer HandleModel::update(const std::string& connection, const std::string& handle,
                                 const nlohmann::json& data, int64_t now) {
  Record* r = nullptr;
  HandleAnswer a = load(Key(connection, handle), now, &r);
  if (!r) return a;
  if (r->status == "committed") return {"HANDLE_COMMITTED"};
  r->data = data;
  r->expires_at_ms = std::min(now + kind_.idle_ttl_ms, r->max_expires_at_ms);
  a.status = r->status;
  a.data = r->data;
  a.expires_at_ms = r->expires_at_ms;
  return a;
}

HandleAnswer HandleModel::commit(const std::string& connection, const std::string& handle,
                                 int64_t start, int64_t end,
                                 const std::optional<nlohmann::json>& result) {
  Record* r = nullptr;
  HandleAnswer a = load(Key(connection, handle), start, &r);
  if (!r) return a;
  if (r->status == "committed") {
    a.status = "replayed";
    a.result = r->result;
    return a;
  }
  a.work_runs = true;
  if (!result) {  // the work failed: active again, its idle deadline refreshed
    r->expires_at_ms = std::min(end + kind_.idle_ttl_ms, r->max_expires_at_ms);
    a.code = "work-failed";
    return a;
  }
  r->status = "committed";
  r->result = *result;
  r->expires_at_ms = r->max_expires_at_ms = end + kind_.result_ttl_ms;
  r->gone_at_ms = r->expires_at_ms + grace(kind_.result_ttl_ms);
  a.status = "committed";
  a.result = *result;
  return a;
}

std::vector<int64_t> HandleModel::deadlines(const std::string& connection,
                                            const std::string& handle) const {
  auto it = records_.find(Key(connection, handle));
  if (it == records_.end()) return {};
  const Record& r = it->second;
  return {r.expires_at_ms, r.max_expires_at_ms, r.gone_at_ms, r.gone_at_ms + 1};
}

HandleAnswer HandleModel::discard(const std::string& connection, const std::string& handle,
                                  int64_t now) {
  auto it = records_.find(Key(connection, handle));
  if (it != records_.end() && now <= it->second.gone_at_ms) it->second.status = "discarded";
  return {};
}

}  // namespace testbed::model
