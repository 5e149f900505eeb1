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

// ---------------------------------------------------------------------------------------------
// Generation. Every choice comes from one Prng, in one fixed order.

const std::vector<std::string> kStringKeys = {"k1", "k2", "k3"};
const std::vector<std::string> kHashKeys = {"h1", "h2"};
const std::vector<std::string> kZsetKeys = {"z1", "z2"};
const std::vector<std::string> kStreamKeys = {"s1", "s2"};

std::string Deep(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

const std::vector<std::string>& JsonValues() {
  static const std::vector<std::string> v = {"[]",
                                             "{}",
                                             "{\"a\":[]}",
                                             "12345678901234567",
                                             "0.1",
                                             "0.30000000000000004",
                                             "\"a/b\"",
                                             "\"caf\xc3\xa9\"",
                                             "\"\\ud83d\\ude00\"",
                                             "\"\\ud800\"",
                                             "\"\\udc00x\"",
                                             "null",
                                             "true",
                                             "[1,[2,[3,{}]]]",
                                             "\"\\u0001\\u007f\"",
                                             "-0",
                                             "1e21",
                                             "1e-7",
                                             "{\"b\":1,\"a\":2,\"c\":[true,false,null]}",
                                             "9007199254740993",
                                             Deep(999),
                                             Deep(1001)};
  return v;
}

const std::vector<std::string>& Scalars() {
  static const std::vector<std::string> v = {"",
                                             "v",
                                             "0",
                                             "1",
                                             "-1",
                                             "2",
                                             "007",
                                             "-0",
                                             "+1",
                                             " 1",
                                             "1 ",
                                             "1.5",
                                             "1e3",
                                             "inf",
                                             "-inf",
                                             "+inf",
                                             "nan",
                                             "(1",
                                             "[a",
                                             "9223372036854775807",
                                             "9223372036854775808",
                                             "-9223372036854775808",
                                             "-9223372036854775809",
                                             "18446744073709551615",
                                             "x",
                                             std::string("a\0b", 3),
                                             "\xff\xfe",
                                             "caf\xc3\xa9",
                                             std::string(70, 'L'),
                                             "{",
                                             "not json"};
  return v;
}

}  // namespace

std::string ArgDraws::AnyKey() {
  static const std::vector<std::string> all = {"k1",    "k2",     "k3",      "h1",   "h2",
                                               "z1",    "z2",     "zl",      "s1",   "s2",
                                               "st:v1", "st:idx", "a2:meta", "nokey"};
  return Pick(all);
}
std::string ArgDraws::Scalar() { return Pick(Scalars()); }
std::string ArgDraws::Json() { return Pick(JsonValues()); }
std::string ArgDraws::SmallMs() {
  static const std::vector<std::string> v = {
      "1", "2", "3", "5", "10", "100", "1000", "0", "-1", "x", "9223372036854775807"};
  return Pick(v);
}
std::string ArgDraws::Envelope() {
  if (Chance(1, 8))
    return Pick(
        {"{\"deleted\":true}", "{\"version\":\"1\"}", "not json", "{\"value\":1}", "[]", Json()});
  std::string env = "{\"value\":" + Json() + ",\"version\":" + Int(0, 3);
  if (Chance(3, 4)) env += ",\"createdAt\":\"2026-01-01T00:00:0" + Int(0, 9) + ".000Z\"";
  env += ",\"updatedAt\":\"2026-01-01T00:00:00.000Z\"}";
  return env;
}

namespace {

class Gen : public ArgDraws {
 public:
  Gen(uint64_t seed, const std::vector<fidelity::Script>& scripts)
      : ArgDraws(seed), scripts_(scripts) {}

  std::string Key(const std::vector<std::string>& typed) {
    return Chance(1, 8) ? AnyKey() : Pick(typed);
  }
  Arg MaybeGarbage(Arg a) { return Chance(1, 20) ? Lit(Scalar()) : a; }

  // The steps of command i (an optional time advance, the command, a checkpoint every
  // checkpoint_every commands), appended to out; the last command adds the final checkpoint.
  void StepsOf(int64_t i, int64_t commands, int checkpoint_every, std::vector<Step>* out) {
    if (Chance(1, 5)) {
      static const std::vector<int64_t> advances = {0, 1, 1, 1, 2, 3, 5, 10, 50, 100, 1000, 10000};
      Step s;
      s.kind = Step::Kind::kAdvance;
      s.advance_ms = advances[rng_.below(advances.size())];
      out->push_back(s);
    }
    out->push_back(One());
    Step c;
    c.kind = Step::Kind::kCheckpoint;
    if (checkpoint_every > 0 && (i + 1) % checkpoint_every == 0) out->push_back(c);
    if (i + 1 == commands) out->push_back(c);
  }

 private:
  Step Cmd(std::vector<Arg> args) {
    Step s;
    s.args = std::move(args);
    return s;
  }

  Step One() {
    // Now and then the a2 session starts over, so its protocol keeps reaching fresh states
    // (claims, completions, dead letters) instead of answering 'dup' forever.
    if (Chance(1, 150))
      return Cmd({Lit("DEL"), Lit("a2:store"), Lit("a2:counter"), Lit("a2:ids"), Lit("a2:sessions"),
                  Lit("a2:meta"), Lit("a2:pending"), Lit("a2:ready"), Lit("a2:watched")});
    // Scripts get about half of all commands: they are the system under test.
    if (Chance(1, 2)) return Script();
    switch (rng_.below(30)) {
      case 0:
        return Cmd({Lit("GET"), Lit(Key(kStringKeys))});
      case 1: {
        std::vector<Arg> a = {Lit("SET"), Lit(Key(kStringKeys)),
                              Lit(Chance(1, 3) ? Json() : Scalar())};
        const uint64_t form = rng_.below(6);
        if (form == 1 || form == 2) {
          a.push_back(Lit(Chance(1, 2) ? "PX" : "px"));
          a.push_back(Lit(SmallMs()));
        } else if (form == 3 || form == 4) {
          a.push_back(Lit("PXAT"));
          a.push_back(Chance(1, 8) ? Lit(SmallMs()) : Now(Range(-2, 5)));
        } else if (form == 5) {
          a.push_back(Lit(Pick({"PX", "BOGUS", "PXAT"})));
          if (Chance(1, 2)) a.push_back(Lit(SmallMs()));
          if (Chance(1, 2)) a.push_back(Lit("PX"));
        }
        return Cmd(a);
      }
      case 2: {
        std::vector<Arg> a = {Lit("MGET")};
        for (int64_t n = Range(1, 4); n > 0; --n) a.push_back(Lit(AnyKey()));
        return Cmd(a);
      }
      case 3:
        return Cmd({Lit("DEL"), Lit(AnyKey()), Lit(AnyKey())});
      case 4:
        return Cmd({Lit("EXISTS"), Lit(AnyKey()), Lit(AnyKey())});
      case 5: {
        Step s = Cmd({Lit("KEYS"), Lit(Pick({"*", "k*", "st:*", "?1", "[hz]*", "*\\*", "a2:*"}))});
        s.compare = Compare::kSortedArray;
        return s;
      }
      case 6: {
        Step s;
        s.kind = Step::Kind::kScanAll;
        s.args = {Lit("MATCH"), Lit(Pick({"*", "k*", "st:*", "[a-k]?", "\\*x"})), Lit("COUNT"),
                  Lit(Int(1, 5))};
        if (Chance(1, 4)) {
          // Only calls that must fail are compared one by one: a valid SCAN's cursor is an
          // implementation detail (see Kind::kScanAll for the set comparison).
          if (Chance(1, 2)) return Cmd({Lit("SCAN"), Lit(Pick({"abc", " 1", "1x"}))});
          return Cmd(
              {Lit("SCAN"), Lit("0"), Lit(Pick({"COUNT", "BOGUS"})), Lit(Pick({"0", "x", "-1"}))});
        }
        return s;
      }
      case 7:
        return Cmd({Lit("PEXPIRE"), Lit(AnyKey()), Lit(SmallMs())});
      case 8:
        return Cmd({Lit("PTTL"), Lit(AnyKey())});
      case 9:
        return Chance(1, 2) ? Cmd({Lit("PING")}) : Cmd({Lit("TIME")});
      case 10:
        return Cmd({Lit("HGET"), Lit(Key(kHashKeys)), Lit(Field())});
      case 11: {
        std::vector<Arg> a = {Lit("HSET"), Lit(Key(kHashKeys))};
        for (int64_t n = Range(1, 3); n > 0; --n) {
          a.push_back(Lit(Field()));
          a.push_back(Lit(Chance(1, 10) ? std::string(65, 'v') : Scalar()));
        }
        if (Chance(1, 10)) a.pop_back();
        return Cmd(a);
      }
      case 12:
        return Cmd({Lit("HSETNX"), Lit(Key(kHashKeys)), Lit(Field()), Lit(Scalar())});
      case 13:
        return Cmd({Lit("HDEL"), Lit(Key(kHashKeys)), Lit(Field()), Lit(Field())});
      case 14:
        return Cmd({Lit("HEXISTS"), Lit(Key(kHashKeys)), Lit(Field())});
      case 15:
        return Cmd({Lit("HINCRBY"), Lit(Key(kHashKeys)), Lit(Field()),
                    Lit(Chance(1, 4) ? Scalar() : Int(-3, 3))});
      case 16: {
        const std::string key = Key(kHashKeys);
        Step s = Cmd({Lit("HGETALL"), Lit(key)});
        s.compare = Compare::kUnorderedPairs;
        s.hash_key = key;
        return s;
      }
      case 17:
        return Cmd({Lit("HMGET"), Lit(Key(kHashKeys)), Lit(Field()), Lit(Field())});
      case 18: {
        std::vector<Arg> a = {Lit("ZADD"), Lit(Key(kZsetKeys))};
        if (Chance(1, 3)) a.push_back(Lit(Chance(1, 2) ? "NX" : "nx"));
        for (int64_t n = Range(1, 2); n > 0; --n) {
          a.push_back(Chance(1, 3) ? Now(Range(-2, 5)) : Lit(Chance(1, 4) ? Scalar() : Int(-2, 5)));
          a.push_back(Lit(Member()));
        }
        if (Chance(1, 12)) a.pop_back();
        return Cmd(a);
      }
      case 19:
        return Cmd({Lit("ZREM"), Lit(Key(kZsetKeys)), Lit(Member()), Lit(Member())});
      case 20:
        return Cmd({Lit("ZSCORE"), Lit(Key(kZsetKeys)), Lit(Member())});
      case 21:
        return Cmd({Lit("ZCARD"), Lit(Key(kZsetKeys))});
      case 22: {
        std::vector<Arg> a = {Lit("ZRANGE"), Lit(Key(kZsetKeys)), Lit(Int(-3, 3)),
                              Lit(Chance(1, 8) ? Scalar() : Int(-3, 3))};
        if (Chance(1, 4)) a.push_back(Lit(Pick({"WITHSCORES", "LIMIT", "BOGUS"})));
        return Cmd(a);
      }
      case 23: {
        std::vector<Arg> a = {Lit("ZRANGEBYSCORE"), Lit(Key(kZsetKeys)), ScoreBound(),
                              ScoreBound()};
        if (Chance(2, 3)) {
          a.push_back(Lit("LIMIT"));
          a.push_back(Lit(Int(-1, 3)));
          a.push_back(Lit(Chance(1, 8) ? Scalar() : Int(-1, 3)));
        }
        if (Chance(1, 6)) a.push_back(Lit(Pick({"WITHSCORES", "BOGUS"})));
        return Cmd(a);
      }
      case 24: {
        if (Chance(1, 2)) return Cmd({Lit("ZADD"), Lit("zl"), Lit("0"), Lit(Member())});
        std::vector<Arg> a = {Lit("ZRANGEBYLEX"), Lit("zl"), LexBound(), LexBound()};
        if (Chance(1, 2)) {
          a.push_back(Lit("LIMIT"));
          a.push_back(Lit(Int(-1, 2)));
          a.push_back(Lit(Int(-1, 3)));
        }
        return Cmd(a);
      }
      case 25:
        return Cmd({Lit("ZREMRANGEBYSCORE"), Lit(Key(kZsetKeys)), ScoreBound(), ScoreBound()});
      case 26: {
        std::vector<Arg> a = {Lit("XADD"), Lit(Key(kStreamKeys)), Lit(StreamId(true))};
        for (int64_t n = Range(1, 2); n > 0; --n) {
          a.push_back(Lit(Pick({"id", "type", "payload"})));
          a.push_back(Lit(Chance(1, 2) ? Json() : Scalar()));
        }
        if (Chance(1, 12)) a.pop_back();
        return Cmd(a);
      }
      case 27: {
        std::vector<Arg> a = {Lit("XRANGE"), Lit(Key(kStreamKeys)), Lit(StreamId(false)),
                              Lit(StreamId(false))};
        if (Chance(1, 2)) {
          a.push_back(Lit(Chance(1, 8) ? "BOGUS" : "COUNT"));
          a.push_back(Lit(Int(-1, 3)));
        }
        return Cmd(a);
      }
      case 28: {
        // EVAL argument errors and small scripts outside the seeds.
        static const std::vector<std::string> bodies = {
            "return redis.call('GET', KEYS[1])",
            "return {1, 2, nil, 3}",
            "return {1.9, -2.7, false, 'a', {ok='x'}}",
            "return redis.pcall('HINCRBY', KEYS[1], 'f', 1)",
            "return x",
            "x = 1",
            "return redis.call('nosuch')",
            "error({err='tbl'})",
            "error('str')",
            "return redis.error_reply('boom')",
            "return (",
            "return cjson.encode(cjson.decode(ARGV[1]))",
            "return redis.call('SET', KEYS[1], 0.1)",
            "return redis.call('SET', KEYS[1], ARGV[1], 'PX', 0)",
            "return redis.sha1hex(ARGV[1])",
            "return redis.status_reply('FINE')",
            "return tostring(tonumber(ARGV[1]))"};
        std::vector<Arg> a = {Lit("EVAL"), Lit(Pick(bodies))};
        a.push_back(Lit(Pick({"1", "1", "1", "-1", "5", "x"})));
        a.push_back(Lit(AnyKey()));
        a.push_back(Lit(Chance(1, 2) ? Json() : Scalar()));
        return Cmd(a);
      }
      default:
        return Cmd({Lit("EVALSHA"), Lit(Pick({"abc", std::string(40, 'f')})), Lit("0")});
    }
  }

  std::string Field() {
    return Chance(1, 12) ? std::string(66, 'F') : Pick({"f1", "f2", "f3", "n"});
  }
  std::string Member() { return Pick({"m1", "m2", "m3", "a", "b", "st:v1"}); }
  Arg ScoreBound() {
    if (Chance(1, 3)) return Now(Range(-2, 3));
    return Lit(Pick({"-inf", "+inf", "inf", "(1", "1", "0", "(0", "x", "", "(", " 2", "5"}));
  }
  Arg LexBound() { return Lit(Pick({"-", "+", "[a", "(a", "[m2", "(m1", "a", "[", "("})); }
  std::string StreamId(bool for_add) {
    if (for_add && Chance(1, 10)) return Pick({"*", "0-0", "0", "5-*", "abc", "-1", "+"});
    if (!for_add && Chance(1, 4)) return Pick({"-", "+", "(1-0", "(-", "abc", "007"});
    return Int(1, 6) + (Chance(1, 2) ? "-" + Int(0, 2) : "");
  }

  // ---- seed scripts ----
  Step Script() {
    const fidelity::Script& s = scripts_[rng_.below(scripts_.size())];
    ScriptShape shape = s.shape ? s.shape(*this) : ScriptShape{};
    const size_t garbage_limit = std::min(shape.garbage_limit, shape.args.size());
    for (size_t i = 0; i < garbage_limit; ++i) shape.args[i] = MaybeGarbage(shape.args[i]);
    Step step;
    step.script_id = s.id;
    const uint64_t how = rng_.below(10);
    if (how == 0) {
      step.args = {Lit("SCRIPT"), Lit("LOAD"), Lit(s.body)};
      return step;
    }
    const std::string sha = sim::Sha1Hex(s.body);
    step.args = {Lit(how < 5 ? "EVAL" : "EVALSHA"),
                 Lit(how < 5 ? s.body : (how == 9 ? ToUpper(sha) : sha)),
                 Lit(std::to_string(shape.keys.size()))};
    step.args.insert(step.args.end(), shape.keys.begin(), shape.keys.end());
    step.args.insert(step.args.end(), shape.args.begin(), shape.args.end());
    step.compare = shape.compare;
    step.hash_key = shape.hash_key;
    return step;
  }

  const std::vector<fidelity::Script>& scripts_;
};

// ---------------------------------------------------------------------------------------------
// Execution.

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

std::string Step::render() const {
  switch (kind) {
    case Kind::kAdvance:
      return "advance " + std::to_string(advance_ms) + "ms";
    case Kind::kCheckpoint:
      return "checkpoint (compare keyspaces)";
    case Kind::kScanAll: {
      std::string out = "SCAN to the end with";
      for (const Arg& a : args) out += " " + a.text;
      return out;
    }
    case Kind::kCommand:
      break;
  }
  std::string out;
  for (const Arg& a : args) {
    std::string text = a.relative_to_now ? (a.text.empty() ? "now" : a.text) +
                                               (a.offset >= 0 ? "+" : "") + std::to_string(a.offset)
                                         : sim::render_argv({a.text});
    if (text.size() > 80)
      text = text.substr(0, 60) + "...(" + std::to_string(text.size()) + " bytes)";
    out += (out.empty() ? "" : " ") + text;
  }
  if (!script_id.empty()) out += "   # " + script_id;
  return out;
}

struct StepStream::Impl {
  Gen gen;
  int64_t commands, next_command = 0;
  int checkpoint_every;
  std::vector<Step> pending;
  size_t taken = 0;
};

StepStream::StepStream(uint64_t seed, int64_t commands, const std::vector<Script>& scripts,
                       int checkpoint_every)
    : impl_(new Impl{Gen(seed, scripts), commands, 0, checkpoint_every, {}, 0}) {}
StepStream::~StepStream() = default;

bool StepStream::Next(Step* out) {
  Impl& m = *impl_;
  while (m.taken == m.pending.size()) {
    if (m.next_command >= m.commands) return false;
    m.pending.clear();
    m.taken = 0;
    m.gen.StepsOf(m.next_command++, m.commands, m.checkpoint_every, &m.pending);
  }
  *out = std::move(m.pending[m.taken++]);
  return true;
}

std::vector<Step> Generate(uint64_t seed, int64_t commands, const std::vector<Script>& scripts,
                           int checkpoint_every, size_t max_steps) {
  StepStream stream(seed, commands, scripts, checkpoint_every);
  std::vector<Step> steps;
  Step s;
  while (steps.size() < max_steps && stream.Next(&s)) steps.push_back(std::move(s));
  return steps;
}

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
