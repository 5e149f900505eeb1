#include "real/real_backend.h"

#include <algorithm>
#include <cctype>

namespace testbed {
namespace {
std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

Reply Must(RedisConnection& c, const Argv& a) {
  CallResult r = c.call(a);
  if (auto* reply = std::get_if<Reply>(&r)) return *reply;
  throw SetupError("lost the connection to the spawned redis-server: " +
                   std::get<TransportError>(r).what);
}

std::string Pairs(const std::vector<Reply>& items, bool sort_pairs) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (size_t i = 0; i + 1 < items.size(); i += 2)
    pairs.push_back({items[i].str, items[i + 1].str});
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

// KEYS and SCAN reply in hash-table order, which redis-server randomizes per process (the
// emulator answers in key order). The order is unspecified, so clients under test must not
// depend on it; sorting here lets the two worlds trace alike. A SCAN that takes more than
// one page still differs (cursors are each world's own): see the emulator's deviation notes.
Reply RealBackend::execute(const Argv& argv, int64_t now_ms) {
  server_.set_time_ms(now_ms);
  Reply r = Must(*conn_, argv);
  auto by_name = [](const Reply& a, const Reply& b) { return a.str < b.str; };
  const std::string cmd = argv.empty() ? "" : Upper(argv[0]);
  if (cmd == "KEYS" && r.type == Reply::Type::kArray)
    std::sort(r.elements.begin(), r.elements.end(), by_name);
  if (cmd == "SCAN" && r.type == Reply::Type::kArray && r.elements.size() == 2)
    std::sort(r.elements[1].elements.begin(), r.elements[1].elements.end(), by_name);
  return r;
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

std::unique_ptr<sim::Backend> MakeBackend(RedisServer* server) {
  if (server) return std::make_unique<RealBackend>(*server);
  return std::make_unique<sim::EmulatorBackend>();
}

}  // namespace testbed
