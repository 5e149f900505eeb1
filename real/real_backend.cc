#include "real/real_backend.h"

#include "sim/redis_text.h"

#include <algorithm>
#include <cctype>

namespace testbed::real {
namespace {
std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

sim::Reply Must(sim::RedisConnection& c, const sim::Argv& a) {
  sim::CallResult r = c.call(a);
  if (auto* reply = std::get_if<sim::Reply>(&r)) return *reply;
  throw SetupError("lost the connection to the spawned redis-server: " +
                   std::get<sim::TransportError>(r).what);
}

std::string Pairs(const std::vector<sim::Reply>& items, bool sort_pairs) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (size_t i = 0; i + 1 < items.size(); i += 2)
    pairs.push_back({items[i].str, items[i + 1].str});
  if (sort_pairs) std::sort(pairs.begin(), pairs.end());
  std::string out;
  for (const auto& [a, b] : pairs) out += " " + sim::render_argv({a, b});
  return out;
}

}  // namespace

sim::RedisConnection& SpawnedReference::Reset(int64_t now_ms) {
  server_.reset();
  server_.set_time_ms(now_ms);
  connection_ = server_.connect_raw();
  return *connection_;
}

std::string DumpKeyspace(sim::RedisConnection& c) {
  std::vector<std::string> names;
  for (const sim::Reply& k : Must(c, {"KEYS", "*"}).elements) names.push_back(k.str);
  std::sort(names.begin(), names.end());
  std::string out;
  for (const std::string& key : names) {
    const std::string type = Must(c, {"TYPE", key}).str;
    const sim::Reply pttl = Must(c, {"PTTL", key});
    if (pttl.integer == -2) continue;
    out += sim::render_argv({key}) + " ";
    if (type == "string") {
      out += "string " + sim::render_argv({Must(c, {"GET", key}).str});
    } else if (type == "hash") {
      out += "hash" + Pairs(Must(c, {"HGETALL", key}).elements, true);
    } else if (type == "zset") {
      out += "zset" + Pairs(Must(c, {"ZRANGE", key, "0", "-1", "WITHSCORES"}).elements, false);
    } else if (type == "stream") {
      out += "stream";
      for (const sim::Reply& e : Must(c, {"XRANGE", key, "-", "+"}).elements) {
        sim::Argv fields;
        for (const sim::Reply& f : e.elements.at(1).elements) fields.push_back(f.str);
        out += " " + e.elements.at(0).str + " " + sim::render_argv(fields);
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

// KEYS replies in hash-table order, which redis-server randomizes per process (the emulator
// answers in key order). The order is unspecified, so clients under test must not depend on
// it; sorting here lets the two worlds trace alike.
//
// SCAN leaves more open: which keys a page holds follows the server's hash table, so a client
// that stops after a few pages (beta.23's bounded backfill) would see different keys on every
// run. Here a client's SCAN is answered from the server's live keys (KEYS *, sorted) with the
// emulator's split: a page is the next COUNT live keys in key order after the cursor's last
// key, cursors numbered 1, 2, ... per world. That is one split Redis itself may produce
// (every live key is returned once in a full iteration), pinned so that both worlds agree;
// exploring other legal splits is the emulator's job, not the server's.
sim::Reply RealBackend::execute(const sim::Argv& argv, int64_t now_ms, int client) {
  server_.set_time_ms(now_ms);
  const std::string cmd = argv.empty() ? "" : Upper(argv[0]);
  if (cmd == "SCAN")
    if (std::optional<sim::Reply> page = Scan(argv)) return *page;
  std::unique_ptr<RespConnection>& own = client < 0 ? conn_ : clients_[client];
  if (!own) own = server_.connect_raw();
  sim::Reply r = Must(*own, argv);
  auto by_name = [](const sim::Reply& a, const sim::Reply& b) { return a.str < b.str; };
  if (cmd == "KEYS" && r.type == sim::Reply::Type::kArray)
    std::sort(r.elements.begin(), r.elements.end(), by_name);
  return r;
}

std::optional<sim::Reply> RealBackend::Scan(const sim::Argv& argv) {
  uint64_t cursor = 0;
  if (argv.size() < 2 || argv[1].empty() || argv[1].size() > 19 ||
      argv[1].find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;  // let the server answer what is not a plain page request
  cursor = std::stoull(argv[1]);
  int64_t count = 10;
  std::string pattern = "*";
  for (size_t i = 2; i + 1 < argv.size(); i += 2) {
    const std::string opt = Upper(argv[i]);
    if (opt == "COUNT" && argv[i + 1].find_first_not_of("0123456789") == std::string::npos &&
        !argv[i + 1].empty() && argv[i + 1].size() < 10 && std::stoll(argv[i + 1]) >= 1) {
      count = std::stoll(argv[i + 1]);
    } else if (opt == "MATCH") {
      pattern = argv[i + 1];
    } else {
      return std::nullopt;
    }
  }
  if (argv.size() % 2 != 0) return std::nullopt;
  sim::Reply keys = Must(*conn_, {"KEYS", "*"});
  std::vector<std::string> live;
  for (const sim::Reply& k : keys.elements) live.push_back(k.str);
  std::sort(live.begin(), live.end());
  auto it = live.begin();
  if (cursor != 0)
    if (auto resume = scan_cursors_.find(cursor); resume != scan_cursors_.end())
      it = std::upper_bound(live.begin(), live.end(), resume->second);
  std::vector<sim::Reply> found;
  std::string last;
  for (int64_t visited = 0; it != live.end() && visited < count; ++it, ++visited) {
    last = *it;
    if (sim::redis_text::GlobMatch(pattern, *it)) found.push_back(sim::Reply::Bulk(*it));
  }
  std::string next = "0";
  if (it != live.end()) {
    const uint64_t id = next_cursor_++;
    scan_cursors_[id] = last;
    next = std::to_string(id);
  }
  return sim::Reply::Array({sim::Reply::Bulk(next), sim::Reply::Array(std::move(found))});
}

void RealBackend::rebuild(const std::vector<sim::LoggedCommand>& prefix, int64_t now_ms) {
  scan_cursors_.clear();  // a restarted server knows no cursor, as the emulator's new instance
  next_cursor_ = 1;
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

}  // namespace testbed::real
