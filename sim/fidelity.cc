// testbed fidelity's execution: the steps run on the emulator and the reference server, their
// replies and keyspaces compared, a divergence shrunk (sim/fidelity.h).
#include "sim/fidelity.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <set>

#include "sim/clock.h"
#include "sim/digest.h"
#include "sim/lua_scripting.h"
#include "sim/prng.h"
#include "sim/redis_text.h"

namespace testbed::sim::fidelity {
namespace {

using sim::redis_text::ToUpper;

std::string Resolve(const Arg& a, int64_t now) {
  if (!a.relative_to_now) return a.text;
  const std::string t = std::to_string(now + a.offset);
  if (a.text.empty()) return t;
  // Templates such as {"a":@,"e":@}: the first @ is now, the second now + offset.
  std::string out = a.text;
  size_t first = out.find('@');
  out.replace(first, 1, std::to_string(now));
  size_t second = out.find('@');
  if (second != std::string::npos) out.replace(second, 1, t);
  return out;
}

sim::Argv ResolveAll(const std::vector<Arg>& args, int64_t now) {
  sim::Argv out;
  for (const Arg& a : args) out.push_back(Resolve(a, now));
  return out;
}

std::string Rendered(const sim::CallResult& r) {
  if (auto* reply = std::get_if<sim::Reply>(&r)) return reply->resp2();
  return "transport error: " + std::get<sim::TransportError>(r).what;
}

sim::Reply Normalize(sim::Reply r, Compare mode) {
  if (r.type != sim::Reply::Type::kArray) return r;
  if (mode == Compare::kSortedArray) {
    std::sort(r.elements.begin(), r.elements.end(),
              [](const sim::Reply& a, const sim::Reply& b) { return a.str < b.str; });
  } else if (mode == Compare::kUnorderedPairs) {
    std::vector<std::pair<std::string, std::string>> pairs;
    for (size_t i = 0; i + 1 < r.elements.size(); i += 2)
      pairs.push_back({r.elements[i].str, r.elements[i + 1].str});
    std::sort(pairs.begin(), pairs.end());
    r.elements.clear();
    for (auto& [k, v] : pairs) {
      r.elements.push_back(sim::Reply::Bulk(k));
      r.elements.push_back(sim::Reply::Bulk(v));
    }
  }
  return r;
}

// Iterates SCAN to the end and returns the sorted set of keys, or the first error reply.
sim::Reply ScanAll(sim::RedisConnection& c, const sim::Argv& options) {
  std::set<std::string> keys;
  std::string cursor = "0";
  for (int rounds = 0; rounds < 100000; ++rounds) {
    sim::Argv argv = {"SCAN", cursor};
    argv.insert(argv.end(), options.begin(), options.end());
    sim::CallResult r = c.call(argv);
    auto* reply = std::get_if<sim::Reply>(&r);
    if (!reply) return sim::Reply::Error("transport error");
    if (reply->type != sim::Reply::Type::kArray) return *reply;
    for (const sim::Reply& k : reply->elements.at(1).elements) keys.insert(k.str);
    cursor = reply->elements.at(0).str;
    if (cursor == "0") break;
  }
  std::vector<sim::Reply> out;
  for (const auto& k : keys) out.push_back(sim::Reply::Bulk(k));
  return sim::Reply::Array(std::move(out));
}

std::string CoverageKey(const sim::Argv& argv) {
  std::string name = ToUpper(argv[0]);
  static const std::set<std::string> options = {"PX",    "PXAT",       "NX",   "MATCH", "COUNT",
                                                "LIMIT", "WITHSCORES", "LOAD", "EXISTS"};
  std::string key = name;
  const size_t first_option = name == "SET" ? 3 : (name == "ZADD" || name == "SCRIPT") ? 1 : 2;
  if (name == "EVAL" || name == "EVALSHA" || name == "XADD" || name == "HSET") return key;
  std::set<std::string> seen;
  for (size_t i = first_option; i < argv.size(); ++i) {
    const std::string up = ToUpper(argv[i]);
    if (options.count(up) && !seen.count(up)) {
      seen.insert(up);
      key += " " + up;
    }
  }
  return key;
}

// A reply's shape for the coverage table: types, small integers, and the tag a reply starts
// with ('ok', 'dup', ...), never the data itself.
std::string Shape(const sim::Reply& r, int depth = 0, size_t index = 0) {
  switch (r.type) {
    case sim::Reply::Type::kStatus:
      return "status";
    case sim::Reply::Type::kError: {
      std::string s = r.str.substr(0, r.str.find(" script:"));
      if (s.size() > 60) s = s.substr(0, 60) + "...";
      return "error(" + s + ")";
    }
    case sim::Reply::Type::kInteger:
      return r.integer >= -2 && r.integer <= 2 ? std::to_string(r.integer) : "int";
    case sim::Reply::Type::kBulk: {
      const bool tag = !r.str.empty() && r.str.size() <= 16 &&
                       std::all_of(r.str.begin(), r.str.end(), [](char ch) {
                         return std::isalpha(static_cast<unsigned char>(ch)) || ch == '_';
                       });
      return tag && depth == 1 && index == 0 ? "'" + r.str + "'" : "bulk";
    }
    case sim::Reply::Type::kNil:
      return "nil";
    case sim::Reply::Type::kNilArray:
      return "nil-array";
    case sim::Reply::Type::kArray: {
      std::string out = "[";
      for (size_t i = 0; i < r.elements.size() && i < 3; ++i) {
        if (i) out += ",";
        out += Shape(r.elements[i], depth + 1, i);
      }
      if (r.elements.size() > 3) out += ",...";
      return out + "]";
    }
  }
  return "?";
}

}  // namespace

Runner::Runner(ReferenceServer* server, EmulatorOptions options)
    : server_(server), options_(options) {}

// One run, fed a step at a time: nothing of the sequence is kept, the trace is hashed as it
// goes, so a campaign's memory does not grow with its length.
class Runner::Session {
 public:
  Session(ReferenceServer* server, const EmulatorOptions& options, Coverage* coverage)
      : emulator_(clock_, options), coverage_(coverage), server_(server) {
    if (server) real_ = &server->Reset(clock_.now_ms());
    if (coverage) {
      emulator_.observer = [coverage](const sim::Argv& argv, bool) {
        coverage->commands[CoverageKey(argv)]++;
      };
    }
  }

  // Runs step i; returns the divergence it shows, if any.
  std::optional<Divergence> feed(const Step& step, size_t i) {
    if (step.kind == Step::Kind::kAdvance) {
      clock_.advance(step.advance_ms);
      if (real_) server_time();
      absorb("advance " + std::to_string(step.advance_ms));
      return std::nullopt;
    }
    if (step.kind == Step::Kind::kCheckpoint) {
      const std::string mine = emulator_.dump_keyspace();
      absorb(mine);
      if (real_) {
        const std::string theirs = server_->DumpKeyspace();
        if (mine != theirs) return Divergence{i, mine, theirs};
      }
      return std::nullopt;
    }
    const sim::Argv argv = ResolveAll(step.args, clock_.now_ms());
    if (step.kind == Step::Kind::kScanAll) {
      const sim::Reply mine = ScanAll(emulator_, argv);
      absorb("scan " + sim::render_argv(argv) + " -> " + mine.resp2());
      if (real_) {
        const sim::Reply theirs = ScanAll(*real_, argv);
        if (!(mine == theirs)) return Divergence{i, mine.resp2(), theirs.resp2()};
      }
      return std::nullopt;
    }
    const Compare mode =
        step.compare == Compare::kUnorderedPairs && emulator_.hash_is_listpack(step.hash_key)
            ? Compare::kExact
            : step.compare;
    const sim::Reply mine = emulator_.execute(argv);
    absorb(sim::render_argv(argv) + " -> " + mine.resp2());
    if (coverage_ && !step.script_id.empty() && ToUpper(argv[0]) != "SCRIPT")
      coverage_->script_shapes[step.script_id + " -> " + Shape(mine)]++;
    if (real_) {
      const sim::CallResult theirs = real_->call(argv);
      const std::string a = Normalize(mine, mode).resp2();
      const std::string b = std::holds_alternative<sim::Reply>(theirs)
                                ? Normalize(std::get<sim::Reply>(theirs), mode).resp2()
                                : Rendered(theirs);
      if (a != b) return Divergence{i, a, b};
    }
    return std::nullopt;
  }

  std::string hash() { return hasher_.hex(); }

 private:
  void absorb(const std::string& line) { hasher_.add(line); }
  void server_time();

  sim::VirtualClock clock_;
  sim::Emulator emulator_;
  Coverage* coverage_;
  ReferenceServer* server_;
  RedisConnection* real_ = nullptr;
  sim::Sha256Lines hasher_;
};

void Runner::Session::server_time() { server_->SetTimeMs(clock_.now_ms()); }

std::optional<Divergence> Runner::run(const std::vector<Step>& steps, Coverage* coverage,
                                      std::string* trace_hash) {
  ++runs_;
  Session session(server_, options_, coverage);
  std::optional<Divergence> divergence;
  for (size_t i = 0; i < steps.size() && !divergence; ++i) divergence = session.feed(steps[i], i);
  if (trace_hash) *trace_hash = session.hash();
  return divergence;
}

std::optional<Divergence> Runner::run(StepStream& steps, size_t* count, Coverage* coverage,
                                      std::string* trace_hash) {
  ++runs_;
  Session session(server_, options_, coverage);
  std::optional<Divergence> divergence;
  size_t i = 0;
  Step step;
  while (!divergence && steps.Next(&step)) divergence = session.feed(step, i++);
  if (count) *count = i;
  if (trace_hash) *trace_hash = session.hash();
  return divergence;
}

std::vector<Step> Shrink(std::vector<Step> steps, Runner& runner, int budget) {
  // Delta debugging over single steps and chunks: drop a chunk, keep the drop if the run still
  // diverges. Checkpoints are kept out of the way: the final one decides.
  auto diverges = [&](const std::vector<Step>& s) {
    std::vector<Step> with_check = s;
    Step c;
    c.kind = Step::Kind::kCheckpoint;
    with_check.push_back(c);
    return runner.run(with_check).has_value();
  };
  std::vector<Step> current;
  for (const Step& s : steps)
    if (s.kind != Step::Kind::kCheckpoint) current.push_back(s);
  if (!diverges(current)) return steps;
  int used = 1;
  for (size_t chunk = std::max<size_t>(1, current.size() / 2); chunk >= 1 && used < budget;) {
    bool removed = false;
    for (size_t start = 0; start < current.size() && used < budget;) {
      std::vector<Step> candidate;
      for (size_t i = 0; i < current.size(); ++i)
        if (i < start || i >= start + chunk) candidate.push_back(current[i]);
      ++used;
      if (!candidate.empty() && diverges(candidate)) {
        current = std::move(candidate);
        removed = true;
      } else {
        start += chunk;
      }
    }
    if (!removed) {
      if (chunk == 1) break;
      chunk /= 2;
    }
  }
  Step c;
  c.kind = Step::Kind::kCheckpoint;
  current.push_back(c);
  return current;
}

std::vector<std::string> ExpectedCoverage() {
  return {"GET",
          "SET",
          "SET PX",
          "SET PXAT",
          "MGET",
          "DEL",
          "EXISTS",
          "KEYS",
          "SCAN MATCH COUNT",
          "PEXPIRE",
          "PTTL",
          "PING",
          "TIME",
          "HGET",
          "HSET",
          "HSETNX",
          "HDEL",
          "HEXISTS",
          "HINCRBY",
          "HGETALL",
          "HMGET",
          "ZADD",
          "ZADD NX",
          "ZREM",
          "ZSCORE",
          "ZCARD",
          "ZRANGE",
          "ZRANGEBYSCORE LIMIT",
          "ZRANGEBYLEX LIMIT",
          "ZREMRANGEBYSCORE",
          "XADD",
          "XRANGE",
          "XRANGE COUNT",
          "EVAL",
          "EVALSHA",
          "SCRIPT LOAD"};
}

std::string FormatCoverage(const Coverage& c) {
  std::string out = "coverage: command/option x count\n";
  char line[256];
  for (const auto& [k, n] : c.commands) {
    std::snprintf(line, sizeof line, "  %-28s %10lld\n", k.c_str(), static_cast<long long>(n));
    out += line;
  }
  std::vector<std::string> missing;
  for (const auto& want : ExpectedCoverage())
    if (!c.commands.count(want)) missing.push_back(want);
  out += "  missing from the subset: " + std::string(missing.empty() ? "none" : "");
  for (const auto& m : missing) out += m + "; ";
  out += "\ncoverage: seed script x reply shape\n";
  for (const auto& [k, n] : c.script_shapes) {
    std::snprintf(line, sizeof line, "  %-90s %8lld\n", k.c_str(), static_cast<long long>(n));
    out += line;
  }
  return out;
}

}  // namespace testbed::sim::fidelity
