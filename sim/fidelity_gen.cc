// testbed fidelity's generation: the steps of a campaign from its seed (sim/fidelity.h).
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
    // The rest by family: pick is drawn once from [0, 30) and names one command.
    const uint64_t pick = rng_.below(30);
    if (pick < 10) return StringCommand(pick);
    if (pick < 18) return HashCommand(pick);
    if (pick < 26) return ZsetCommand(pick);
    if (pick < 28) return StreamCommand(pick);
    return EvalCommand(pick);
  }

  // GET, SET (with PX or PXAT), MGET, DEL, EXISTS, KEYS, SCAN, PEXPIRE, PTTL, PING or TIME.
  Step StringCommand(uint64_t pick) {
    switch (pick) {
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
      default:
        return Chance(1, 2) ? Cmd({Lit("PING")}) : Cmd({Lit("TIME")});
    }
  }

  // HGET, HSET, HSETNX, HDEL, HEXISTS, HINCRBY, HGETALL or HMGET.
  Step HashCommand(uint64_t pick) {
    switch (pick) {
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
      default:
        return Cmd({Lit("HMGET"), Lit(Key(kHashKeys)), Lit(Field()), Lit(Field())});
    }
  }

  // ZADD, ZREM, ZSCORE, ZCARD, ZRANGE, ZRANGEBYSCORE, ZRANGEBYLEX or ZREMRANGEBYSCORE.
  Step ZsetCommand(uint64_t pick) {
    switch (pick) {
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
      default:
        return Cmd({Lit("ZREMRANGEBYSCORE"), Lit(Key(kZsetKeys)), ScoreBound(), ScoreBound()});
    }
  }

  // XADD or XRANGE.
  Step StreamCommand(uint64_t pick) {
    switch (pick) {
      case 26: {
        std::vector<Arg> a = {Lit("XADD"), Lit(Key(kStreamKeys)), Lit(StreamId(true))};
        for (int64_t n = Range(1, 2); n > 0; --n) {
          a.push_back(Lit(Pick({"id", "type", "payload"})));
          a.push_back(Lit(Chance(1, 2) ? Json() : Scalar()));
        }
        if (Chance(1, 12)) a.pop_back();
        return Cmd(a);
      }
      default: {
        std::vector<Arg> a = {Lit("XRANGE"), Lit(Key(kStreamKeys)), Lit(StreamId(false)),
                              Lit(StreamId(false))};
        if (Chance(1, 2)) {
          a.push_back(Lit(Chance(1, 8) ? "BOGUS" : "COUNT"));
          a.push_back(Lit(Int(-1, 3)));
        }
        return Cmd(a);
      }
    }
  }

  // EVAL of a small script outside the seeds, or EVALSHA of an unknown digest.
  Step EvalCommand(uint64_t pick) {
    switch (pick) {
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

}  // namespace testbed::sim::fidelity
