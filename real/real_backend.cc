#include "real/real_backend.h"

#include <algorithm>

namespace testbed {
namespace {

Reply Must(RedisConnection& c, const Argv& a) {
  CallResult r = c.call(a);
  if (auto* reply = std::get_if<Reply>(&r)) return *reply;
  throw SetupError("lost the connection to the spawned redis-server: " +
                   std::get<TransportError>(r).what);
}

std::string Pairs(const std::vector<Reply>& items, bool sort_pairs) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (size_t i = 0; i + 1 < items.size(); i += 2) pairs.push_back({items[i].str, items[i + 1].str});
  if (sort_pairs) std::sort(pairs.begin(), pairs.end());
  std::string out;
  for (const auto& [a, b] : pairs) out += " " + render_argv({a, b});
  return out;
}

}  // namespace

std::string DumpKeyspace(RedisConnection& c) {
  std::vector<std::string> names;
  for (const Reply& k : Must(c, {"KEYS", "*"}).elements) names.push_back(k.str);
  std::sort(names.begin(), names.end());
  std::string out;
  for (const std::string& key : names) {
    const std::string type = Must(c, {"TYPE", key}).str;
    const Reply pttl = Must(c, {"PTTL", key});
    if (pttl.integer == -2) continue;
    out += render_argv({key}) + " ";
    if (type == "string") {
      out += "string " + render_argv({Must(c, {"GET", key}).str});
    } else if (type == "hash") {
      out += "hash" + Pairs(Must(c, {"HGETALL", key}).elements, true);
    } else if (type == "zset") {
      out += "zset" + Pairs(Must(c, {"ZRANGE", key, "0", "-1", "WITHSCORES"}).elements, false);
    } else if (type == "stream") {
      out += "stream";
      for (const Reply& e : Must(c, {"XRANGE", key, "-", "+"}).elements) {
        Argv fields;
        for (const Reply& f : e.elements.at(1).elements) fields.push_back(f.str);
        out += " " + e.elements.at(0).str + " " + render_argv(fields);
      }
    } else {
      out += type;
    }
    out += " pttl=" + std::to_string(pttl.integer) + "\n";
  }
  return out;
}

RealBackend::RealBackend(RedisServer& server) : server_(server) {
  server_.reset();
  conn_ = server_.connect_raw();
}

Reply RealBackend::execute(const Argv& argv, int64_t now_ms) {
  server_.set_time_ms(now_ms);
  return Must(*conn_, argv);
}

void RealBackend::rebuild(const std::vector<sim::LoggedCommand>& prefix, int64_t now_ms) {
  Must(*conn_, {"FLUSHALL"});
  for (const auto& c : prefix) {
    server_.set_time_ms(c.at_ms);
    Must(*conn_, c.argv);
  }
  Must(*conn_, {"SCRIPT", "FLUSH"});
  server_.set_time_ms(now_ms);
}

std::string RealBackend::describe_state(int64_t now_ms) {
  server_.set_time_ms(now_ms);
  return DumpKeyspace(*conn_);
}

}  // namespace testbed
