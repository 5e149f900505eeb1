// Redis 7.0 behaviours the seeds rely on, as executable expectations over any RedisConnection.
// The emulator test and the real-server test run this same list: the values below were
// measured on redis-server 7.0.15, and the real-server run keeps them honest.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "sim/lua_scripting.h"
#include "sim/redis_text.h"
#include "sim/reply.h"

namespace testbed {
inline void PrintTo(const sim::Reply& r, std::ostream* os) { *os << r.debug(); }
}  // namespace testbed

namespace testbed::expectations {

inline sim::Reply Call(sim::RedisConnection& c, const sim::Argv& a) {
  sim::CallResult r = c.call(a);
  if (auto* reply = std::get_if<sim::Reply>(&r)) return *reply;
  ADD_FAILURE() << "transport error on " << sim::render_argv(a);
  return sim::Reply::Error("transport");
}

inline std::string ScriptSuffix(const std::string& body, int line) {
  return " script: " + sim::Sha1Hex(body) + ", on @user_script:" + std::to_string(line) + ".";
}

// The expectations' helpers: a call and its wanted reply, and the replies' spellings.
struct Expect {
  sim::RedisConnection& c;
  void operator()(const sim::Argv& a, const sim::Reply& want) const {
    const sim::Reply got = Call(c, a);
    EXPECT_EQ(got, want) << sim::render_argv(a) << "\n got:  " << got.debug()
                         << "\n want: " << want.debug();
  }
};
inline sim::Reply err(const std::string& s) { return sim::Reply::Error(s); }
inline sim::Reply bulk(const std::string& s) { return sim::Reply::Bulk(s); }
inline sim::Reply num(int64_t v) { return sim::Reply::Integer(v); }

inline void Expiry(const Expect& expect, const std::function<void(int64_t)>& set_time, int64_t t0) {
  // 1. Expiry: alive while now <= T, PTTL 0 at T, gone at T + 1.
  expect({"SET", "e", "v", "PX", "10"}, sim::Reply::Ok());
  set_time(t0 + 10);
  expect({"PTTL", "e"}, num(0));
  expect({"GET", "e"}, bulk("v"));
  set_time(t0 + 11);
  expect({"GET", "e"}, sim::Reply::Nil());
  expect({"PTTL", "e"}, num(-2));
  expect({"SET", "p", "v", "PXAT", std::to_string(t0 + 10)}, sim::Reply::Ok());
  expect({"EXISTS", "p"}, num(0));
  expect({"SET", "p", "v", "PX", "0"}, err("ERR invalid expire time in 'set' command"));
  expect({"SET", "p", "v", "PXAT", "0"}, err("ERR invalid expire time in 'set' command"));
  expect({"SET", "p", "v", "PX", "x"}, err("ERR value is not an integer or out of range"));
  expect({"SET", "p", "v"}, sim::Reply::Ok());
  expect({"PTTL", "p"}, num(-1));
  expect({"PEXPIRE", "p", "0"}, num(1));
  expect({"EXISTS", "p"}, num(0));
  expect({"PEXPIRE", "nokey", "10"}, num(0));
  expect({"PEXPIRE", "p", "9223372036854775807"},
         err("ERR invalid expire time in 'pexpire' command"));
}

inline void Scripts(const Expect& expect) {
  // 2. Scripts: writes before an error are kept; time is frozen; error suffixes.
  const std::string partial =
      "redis.call('SET', KEYS[1], 'a') return redis.call('HGET', KEYS[1], 'f')";
  expect({"EVAL", partial, "1", "w"},
         err("WRONGTYPE Operation against a key holding the wrong kind of value" +
             ScriptSuffix(partial, 1)));
  expect({"GET", "w"}, bulk("a"));
  expect({"EVAL", "return x", "0"},
         err("ERR user_script:1: Script attempted to access nonexistent global variable 'x'" +
             ScriptSuffix("return x", 1)));
  expect({"EVAL", "x = 1", "0"},
         err("ERR user_script:1: Attempt to modify a readonly table" + ScriptSuffix("x = 1", 1)));
  // Globals are read-only however a script reaches them: an existing name, a write in a nested
  // function, a write through _G. (The emulator runs scripts that cannot write a global in the
  // globals table itself, and the others behind its read-only proxy: both must refuse.)
  for (const std::string body : {"redis = 1", "tonumber = nil return 1",
                                 "local function f() redis = 2 end f() return 1", "_G.x = 1"})
    expect({"EVAL", body, "0"},
           err("ERR user_script:1: Attempt to modify a readonly table" + ScriptSuffix(body, 1)));
  expect({"EVAL", "return type(_G) .. type(rawget(_G, 'redis')) .. KEYS[1]", "1", "k"},
         bulk("tabletablek"));
  // Every global a script sees, by name and type: redis-server 7.0.15's list.
  const std::string list_globals =
      "local t = {} for k, v in pairs(_G) do t[#t + 1] = k .. ':' .. type(v) end "
      "table.sort(t) return table.concat(t, ' ')";
  expect({"EVAL", list_globals, "0"},
         bulk("ARGV:table KEYS:table _G:table _VERSION:string __redis__err__handler:function "
              "assert:function bit:table cjson:table cmsgpack:table collectgarbage:function "
              "coroutine:table "
              "error:function gcinfo:function getmetatable:function ipairs:function "
              "load:function loadstring:function math:table next:function pairs:function "
              "pcall:function rawequal:function rawget:function rawset:function redis:table "
              "select:function setmetatable:function string:table struct:table table:table "
              "tonumber:function tostring:function type:function unpack:function "
              "xpcall:function"));
  expect({"EVAL", "return getfenv(1)", "0"},
         err("ERR user_script:1: Script attempted to access nonexistent global variable "
             "'getfenv'" +
             ScriptSuffix("return getfenv(1)", 1)));
  // A script without writes reads every global it names, KEYS and ARGV of its own call.
  expect({"EVAL", "return {KEYS[1], ARGV[1], type(cjson), tostring(tonumber('7'))}", "1", "a", "b"},
         sim::Reply::Array({bulk("a"), bulk("b"), bulk("table"), bulk("7")}));
  expect({"EVAL", "return {KEYS[1], ARGV[1]}", "1", "c", "d"},
         sim::Reply::Array({bulk("c"), bulk("d")}));
  expect({"EVAL", "\nreturn redis.call('GET')", "0"},
         err("ERR Wrong number of args calling Redis command from script" +
             ScriptSuffix("\nreturn redis.call('GET')", 2)));
  expect({"EVAL", "error({err='tbl'})", "0"}, err("tbl" + ScriptSuffix("error({err='tbl'})", 1)));
  expect({"EVAL", "return redis.error_reply('boom')", "0"}, err("ERR boom"));
  expect({"EVAL", "return {err='a\\nb'}", "0"}, err("a b"));
  expect({"EVAL", "return redis.status_reply('FINE')", "0"}, sim::Reply::Status("FINE"));
  expect({"EVAL", "return redis.pcall('HINCRBY', 'w', 'f', 1)", "0"},
         err("WRONGTYPE Operation against a key holding the wrong kind of value"));
  expect({"EVAL", "return (", "0"},
         err("ERR Error compiling script (new function): user_script:1: unexpected symbol near "
             "'<eof>'"));
  expect({"EVALSHA", "abc", "0"}, err("NOSCRIPT No matching script. Please use EVAL."));
  expect({"EVAL", "return 1", "-1"}, err("ERR Number of keys can't be negative"));
  expect({"EVAL", "return 1", "2", "a"},
         err("ERR Number of keys can't be greater than number of args"));
}

inline void Replies(const Expect& expect) {
  // 3. Reply conversion.
  expect({"EVAL", "return {1, 2, nil, 3}", "0"}, sim::Reply::Array({num(1), num(2)}));
  // A table whose length (#t, a border) is 64 with a hole after its first element: the reply
  // still stops at the first nil.
  expect({"EVAL",
          "local t = {} for i = 1, 64 do t[i] = 1 end for i = 2, 63 do t[i] = nil end "
          "return {#t, t}",
          "0"},
         sim::Reply::Array({num(64), sim::Reply::Array({num(1)})}));
  expect(
      {"EVAL", "return {1.9, -2.7, false, 'a', {ok='x'}}", "0"},
      sim::Reply::Array({num(1), num(-2), sim::Reply::Nil(), bulk("a"), sim::Reply::Status("x")}));
  expect(
      {"EVAL", "return redis.call('SET', KEYS[1], 0.1) and redis.call('GET', KEYS[1])", "1", "n"},
      bulk("0.10000000000000001"));
  expect({"EVAL", "redis.call('SET', KEYS[1], 1e14) return redis.call('GET', KEYS[1])", "1", "n"},
         bulk("100000000000000"));

  // 3b. tonumber: plain integers (the emulator's fast path) and everything strtod alone decides.
  auto tonumber = [&](const std::string& in, const std::string& want) {
    expect({"EVAL", "return tostring(tonumber(ARGV[1]))", "0", in}, bulk(want));
  };
  tonumber("42", "42");
  tonumber("-0", "-0");
  tonumber("007", "7");
  tonumber("999999999999999", "1e+15");
  tonumber("123456789012345678", "1.2345678901235e+17");
  tonumber(" 7", "7");
  tonumber("7 ", "7");
  tonumber("+7", "7");
  tonumber("0x10", "16");
  tonumber("1e3", "1000");
  tonumber(std::string("12\0ab", 5), "12");
  tonumber("", "nil");
  tonumber("-", "nil");
  tonumber("12a", "nil");
  expect({"EVAL", "return tostring(tonumber('11', 2))", "0"}, bulk("3"));
  expect({"EVAL", "return tonumber()", "0"},
         err("ERR user_script:1: bad argument #1 to 'tonumber' (value expected)" +
             ScriptSuffix("return tonumber()", 1)));
}

inline void Cjson(const Expect& expect) {
  // 4. cjson as Redis bundles it.
  auto reencode = [&](const std::string& in, const sim::Reply& want) {
    expect({"EVAL", "return cjson.encode(cjson.decode(ARGV[1]))", "0", in}, want);
  };
  reencode("{\"a\":[]}", bulk("{\"a\":{}}"));
  reencode("12345678901234567", bulk("1.2345678901235e+16"));
  reencode("\"a/b\"", bulk("\"a\\/b\""));
  reencode("[1,2,3]", bulk("[1,2,3]"));
  reencode("\"\\ud83d\\ude00\"", bulk("\"\xf0\x9f\x98\x80\""));
  const sim::Reply lone =
      Call(expect.c, {"EVAL", "return cjson.decode(ARGV[1])", "0", "\"\\ud800\""});
  EXPECT_NE(lone.str.find("invalid unicode escape code"), std::string::npos) << lone.debug();
  const std::string deep = std::string(1001, '[') + std::string(1001, ']');
  const sim::Reply too_deep = Call(expect.c, {"EVAL", "return cjson.decode(ARGV[1])", "0", deep});
  EXPECT_NE(too_deep.str.find("Found too many nested data structures (1001)"), std::string::npos)
      << too_deep.debug();
}

inline void Types(const Expect& expect, const std::function<void(int64_t)>& set_time, int64_t t0) {
  // 5. Types, sorted sets, hashes, streams.
  expect({"ZADD", "z", "1", "b", "1", "a", "0", "c"}, num(3));
  expect({"ZRANGE", "z", "0", "-1"}, sim::Reply::Array({bulk("c"), bulk("a"), bulk("b")}));
  expect({"ZADD", "z", "NX", "5", "a"}, num(0));
  expect({"ZSCORE", "z", "a"}, bulk("1"));
  expect({"ZADD", "z", "0.1", "d"}, num(1));
  expect({"ZSCORE", "z", "d"}, bulk("0.10000000000000001"));
  expect({"ZRANGEBYSCORE", "z", "(0", "+inf", "LIMIT", "1", "1"}, sim::Reply::Array({bulk("a")}));
  // Infinite bounds as strtod reads them: signed or not, open or closed, in any case.
  expect({"ZRANGEBYSCORE", "z", "-INF", "(inf"},
         sim::Reply::Array({bulk("c"), bulk("d"), bulk("a"), bulk("b")}));
  expect({"ZRANGEBYSCORE", "z", "(-inf", "Infinity"},
         sim::Reply::Array({bulk("c"), bulk("d"), bulk("a"), bulk("b")}));
  expect({"ZRANGEBYSCORE", "z", "inf", "+inf"}, sim::Reply::Array({}));
  expect({"ZRANGEBYSCORE", "z", "-inf", "-inf"}, sim::Reply::Array({}));
  expect({"ZRANGEBYSCORE", "z", "x", "1"}, err("ERR min or max is not a float"));
  expect(
      {"ZRANGE", "z", "0", "-1", "LIMIT", "0", "1"},
      err("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"));
  expect({"ZREMRANGEBYSCORE", "z", "-inf", "(1"}, num(2));
  expect({"ZCARD", "z"}, num(2));
  expect({"ZRANGEBYLEX", "z", "[b", "+"}, sim::Reply::Array({bulk("b")}));
  // Mixed scores: zzlIsInLexRange looks at the last member ("a", score 1) first, so nothing.
  expect({"ZADD", "zl", "1", "a", "0", "m2"}, num(2));
  expect({"ZRANGEBYLEX", "zl", "[m2", "+"}, sim::Reply::Array({}));
  expect({"ZREMRANGEBYSCORE", "z", "-inf", "1"}, num(2));
  expect({"EXISTS", "z"}, num(0));
  expect({"ZADD", "z", "1", "m"}, num(1));
  expect({"GET", "z"}, err("WRONGTYPE Operation against a key holding the wrong kind of value"));
  expect({"HSET", "h", "a"}, err("ERR wrong number of arguments for 'hset' command"));
  expect({"HSET", "h", "a", "1", "b", "x"}, num(2));
  expect({"HINCRBY", "h", "a", "2"}, num(3));
  expect({"HINCRBY", "h", "b", "1"}, err("ERR hash value is not an integer"));
  expect({"HGETALL", "h"}, sim::Reply::Array({bulk("a"), bulk("3"), bulk("b"), bulk("x")}));
  expect({"XADD", "s", "5", "f", "v"}, bulk("5-0"));
  expect({"XADD", "s", "5-*", "f", "v"}, bulk("5-1"));
  expect({"XADD", "s", "0-0", "f", "v"},
         err("ERR The ID specified in XADD must be greater than 0-0"));
  expect({"XADD", "s", "4", "f", "v"},
         err("ERR The ID specified in XADD is equal or smaller than the target stream top item"));
  expect({"XADD", "s", "abc", "f", "v"},
         err("ERR Invalid stream ID specified as stream command argument"));
  expect({"XRANGE", "s", "5-0", "5-0"},
         sim::Reply::Array(
             {sim::Reply::Array({bulk("5-0"), sim::Reply::Array({bulk("f"), bulk("v")})})}));
  expect({"XRANGE", "s", "-", "+", "COUNT", "0"}, sim::Reply::NilArray());
  // The key-loss fault's commands: TYPE, and XDEL, which keeps an emptied stream.
  expect({"TYPE", "s"}, sim::Reply::Status("stream"));
  expect({"TYPE", "h"}, sim::Reply::Status("hash"));
  expect({"TYPE", "nothing"}, sim::Reply::Status("none"));
  expect({"XDEL", "s", "5-0", "9-9", "5-1"}, num(2));
  expect({"XDEL", "s", "abc"}, err("ERR Invalid stream ID specified as stream command argument"));
  expect({"XRANGE", "s", "-", "+"}, sim::Reply::Array({}));
  expect({"TYPE", "s"}, sim::Reply::Status("stream"));
  expect({"XADD", "s", "5-1", "f", "v"},
         err("ERR The ID specified in XADD is equal or smaller than the target stream top item"));
  expect({"XDEL", "h", "1-0"},
         err("WRONGTYPE Operation against a key holding the wrong kind of value"));
  expect({"PING", "a", "b"}, err("ERR wrong number of arguments for 'ping' command"));
  expect({"SCAN", "0", "COUNT", "0"}, err("ERR syntax error"));
  expect({"TIME"}, sim::Reply::Array({bulk(std::to_string((t0 + 11) / 1000)),
                                      bulk(std::to_string(((t0 + 11) % 1000) * 1000))}));
}

inline void KeysGoneAndBack(const Expect& expect, const std::function<void(int64_t)>& set_time,
                            int64_t t0) {
  // 6. One key read, erased and written again in a row, by every way a key goes away (the
  // emulator remembers the last key it looked up): DEL, PEXPIRE in the past, expiry, an
  // emptied sorted set; then a write of another type under the same name.
  expect({"SET", "r", "1"}, sim::Reply::Ok());
  expect({"GET", "r"}, bulk("1"));
  expect({"DEL", "r"}, num(1));
  expect({"GET", "r"}, sim::Reply::Nil());
  expect({"SET", "r", "2"}, sim::Reply::Ok());
  expect({"GET", "r"}, bulk("2"));
  expect({"PEXPIRE", "r", "-1"}, num(1));
  expect({"EXISTS", "r"}, num(0));
  expect({"SET", "r", "3", "PX", "5"}, sim::Reply::Ok());
  expect({"GET", "r"}, bulk("3"));
  set_time(t0 + 17);
  expect({"GET", "r"}, sim::Reply::Nil());
  expect({"ZADD", "r", "1", "m"}, num(1));
  expect({"ZREM", "r", "m"}, num(1));
  expect({"TYPE", "r"}, sim::Reply::Status("none"));
  expect({"SET", "r", "4"}, sim::Reply::Ok());
  expect({"EVAL",
          "redis.call('GET', KEYS[1]) redis.call('DEL', KEYS[1]) "
          "redis.call('HSET', KEYS[1], 'f', 'v') return redis.call('HGET', KEYS[1], 'f')",
          "1", "r"},
         bulk("v"));
  expect({"GET", "r"}, err("WRONGTYPE Operation against a key holding the wrong kind of value"));
}

inline void Counters(const Expect& expect, const std::function<void(int64_t)>& set_time,
                     int64_t t0) {
  // 7. Counters, expiry in seconds and the small string commands another application's calls
  // use (issue 61: a capture's foreign traffic replays in both worlds).
  expect({"INCR", "cnt:c"}, num(1));
  expect({"INCRBY", "cnt:c", "41"}, num(42));
  expect({"DECR", "cnt:c"}, num(41));
  expect({"DECRBY", "cnt:c", "-9"}, num(50));
  expect({"INCRBY", "cnt:c", "x"}, err("ERR value is not an integer or out of range"));
  expect({"INCRBY", "cnt:c", " 1"}, err("ERR value is not an integer or out of range"));
  expect({"DECRBY", "cnt:c", "-9223372036854775808"}, err("ERR decrement would overflow"));
  expect({"SET", "cnt:c", "9223372036854775807"}, sim::Reply::Ok());
  expect({"INCR", "cnt:c"}, err("ERR increment or decrement would overflow"));
  expect({"SET", "cnt:c", "1.5"}, sim::Reply::Ok());
  expect({"INCR", "cnt:c"}, err("ERR value is not an integer or out of range"));
  expect({"SET", "cnt:c", "7", "PX", "100000"}, sim::Reply::Ok());
  expect({"INCR", "cnt:c"}, num(8));
  expect({"PTTL", "cnt:c"}, num(100000));  // an increment keeps the time to live
  expect({"TTL", "cnt:c"}, num(100));
  expect({"HSET", "cnt:h", "f", "v"}, num(1));
  expect({"INCR", "cnt:h"},
         err("WRONGTYPE Operation against a key holding the wrong kind of value"));
  expect({"APPEND", "cnt:h", "x"},
         err("WRONGTYPE Operation against a key holding the wrong kind of value"));
  expect({"APPEND", "cnt:s", "ab"}, num(2));
  expect({"APPEND", "cnt:s", "cd"}, num(4));
  expect({"STRLEN", "cnt:s"}, num(4));
  expect({"STRLEN", "cnt:missing"}, num(0));
  expect({"GETDEL", "cnt:s"}, bulk("abcd"));
  expect({"GETDEL", "cnt:s"}, sim::Reply::Nil());
  expect({"SETNX", "cnt:n", "1"}, num(1));
  expect({"SETNX", "cnt:n", "2"}, num(0));
  expect({"GET", "cnt:n"}, bulk("1"));
  expect({"SETEX", "cnt:x", "10", "v"}, sim::Reply::Ok());
  expect({"PTTL", "cnt:x"}, num(10000));
  expect({"SETEX", "cnt:x", "0", "v"}, err("ERR invalid expire time in 'setex' command"));
  expect({"PSETEX", "cnt:x", "-5", "v"}, err("ERR invalid expire time in 'psetex' command"));
  expect({"SETEX", "cnt:x", "y", "v"}, err("ERR value is not an integer or out of range"));
  expect({"PSETEX", "cnt:y", "1500", "w"}, sim::Reply::Ok());
  expect({"TTL", "cnt:y"}, num(2));  // 1.5 s rounds to 2
  expect({"EXPIRE", "cnt:n", "5"}, num(1));
  expect({"PTTL", "cnt:n"}, num(5000));
  expect({"EXPIRE", "cnt:missing", "5"}, num(0));
  expect({"EXPIRE", "cnt:n", "9223372036854775807"},
         err("ERR invalid expire time in 'expire' command"));
  expect({"PERSIST", "cnt:n"}, num(1));
  expect({"PERSIST", "cnt:n"}, num(0));
  expect({"TTL", "cnt:n"}, num(-1));
  expect({"TTL", "cnt:missing"}, num(-2));
  expect({"PEXPIREAT", "cnt:n", std::to_string(t0 + 2500)}, num(1));
  expect({"TTL", "cnt:n"}, num(3));
  expect({"EXPIREAT", "cnt:y", std::to_string(t0 / 1000 - 1)}, num(1));  // in the past: deleted
  expect({"EXISTS", "cnt:y"}, num(0));
  set_time(t0 + 2501);
  expect({"GET", "cnt:n"}, sim::Reply::Nil());
  expect({"DEL", "cnt:c", "cnt:h", "cnt:x"}, num(3));
}

inline void Sandbox(const Expect& expect) {
  // 8. The sandbox (Redis 7.0's readonly tables): every library table refuses a write, whether
  // it names a field or goes through rawset or setmetatable (which raise it with no place), and
  // the strings' metatable is readonly too (Debian's 7.0.15, CVE-2025-46818); afterwards every
  // library still works. Bytecode is no function: Redis's Lua parses every chunk as text.
  for (const std::string body :
       {"redis.call = function() return 1 end", "string.rep = nil", "cjson.decode = nil",
        "math.floor = nil", "table.concat = nil", "coroutine.wrap = nil",
        "getmetatable('').__index = nil", "_G.redis = nil", "rawget(_G, 'string').rep = nil",
        "for k, v in pairs(_G) do if k == 'redis' then v.call = nil end end"})
    expect({"EVAL", body, "0"},
           err("ERR user_script:1: Attempt to modify a readonly table" + ScriptSuffix(body, 1)));
  for (const std::string body : {"setmetatable(_G, {})", "rawset(redis, 'call', 1)",
                                 "rawset(_G, 'x', 1)", "setmetatable(string, {})"})
    expect({"EVAL", body, "0"},
           err("ERR Attempt to modify a readonly table" + ScriptSuffix(body, 1)));
  expect({"EVAL",
          "return string.rep('a', 2) .. table.concat({'b'}) .. cjson.encode({1}) .. "
          "math.floor(2.5) .. ('c'):upper() .. redis.call('PING')['ok']",
          "0"},
         bulk("aab[1]2CPONG"));
  // bit: LuaBitOp, as Redis bundles it (tohex of a count of -2^31 as Debian's fix answers).
  expect({"EVAL",
          "return {bit.band(5, 3), bit.bor(5, 3), bit.bxor(5, 3), bit.lshift(1, 31), "
          "bit.rshift(-1, 28), bit.arshift(-16, 2), bit.tobit(2^32 + 1), bit.bnot(0), "
          "bit.tohex(255), bit.tohex(-1, -4), bit.tohex(65535, -2147483648), "
          "bit.tohex(65535, 2147483648), bit.rol(1, 33), bit.bswap(1)}",
          "0"},
         sim::Reply::Array({num(1), num(7), num(6), num(-2147483648), num(15), num(-4), num(1),
                            num(-1), bulk("000000ff"), bulk("FFFF"), bulk("0000FFFF"),
                            bulk("0000FFFF"), num(2), num(16777216)}));
  // cmsgpack and struct: Redis's own copies (sim/third_party), byte for byte.
  expect({"EVAL",
          "local packed = cmsgpack.pack({1, 'a', {x = 2.5}}, true, -1, 2^40) "
          "local a, b, c, d = cmsgpack.unpack(packed) "
          "return {packed, #a, a[2], a[3].x * 2, tostring(b), c, d, "
          "struct.pack('>I2i4s', 258, -2, 'ab'), struct.unpack('<h', '\\255\\255'), "
          "struct.size('>I4d')}",
          "0"},
         sim::Reply::Array({bulk(std::string("\x93\x01\xa1"
                                             "a\x81\xa1"
                                             "x\xca\x40\x20\x00\x00\xc3\xff\xcf\x00\x00\x01"
                                             "\x00\x00\x00\x00\x00",
                                             23)),
                            num(3), bulk("a"), num(5), bulk("true"), num(-1), num(1099511627776),
                            bulk(std::string("\x01\x02\xff\xff\xff\xfe"
                                             "ab\x00",
                                             9)),
                            num(-1), num(12)}));
  expect({"EVAL", "bit.band = nil", "0"},
         err("ERR user_script:1: Attempt to modify a readonly table" +
             ScriptSuffix("bit.band = nil", 1)));
  expect({"EVAL", "return tostring(getmetatable(redis)) .. rawget(redis, 'LOG_NOTICE')", "0"},
         bulk("nil2"));
  expect({"EVAL", "local f, e = loadstring(string.dump(function() return 1 end)) return e", "0"},
         bulk("[string \"\x1bLuaQ\"]:1: unexpected symbol near 'char(27)'"));
  expect({"EVAL", "\x1bLuaQ", "0"},
         err("ERR Error compiling script (new function): user_script:1: unexpected symbol near "
             "'char(27)'"));
  // A reply past Lua's stack (8,000 slots): the element that would take it there is the error,
  // in place, 7,995 arrays down, for a table that holds itself as for one nested 40,000 deep.
  for (const std::string body : {"local a = {} a[1] = a return a",
                                 "local t = {} for i = 1, 40000 do t = {t} end return t"}) {
    sim::Reply r = Call(expect.c, {"EVAL", body, "0"});
    int depth = 0;
    for (; r.type == sim::Reply::Type::kArray && r.elements.size() == 1; ++depth) {
      sim::Reply inner = std::move(r.elements[0]);
      r = std::move(inner);
    }
    EXPECT_EQ(depth, 7995) << body;
    EXPECT_EQ(r, err("ERR reached lua stack limit")) << body;
  }
}

inline void ScriptCommands(const Expect& expect) {
  // 9. EVAL_RO and EVALSHA_RO refuse a write command (after its name and arity); SCRIPT FLUSH
  // forgets every script; a shebang's flags=no-writes refuses writes too.
  const std::string read = "return redis.call('GET', KEYS[1])";
  const std::string write = "return redis.call('SET', KEYS[1], 'x')";
  expect({"SET", "ro:k", "v"}, sim::Reply::Ok());
  expect({"EVAL_RO", read, "1", "ro:k"}, bulk("v"));
  expect(
      {"EVAL_RO", write, "1", "ro:k"},
      err("ERR Write commands are not allowed from read-only scripts." + ScriptSuffix(write, 1)));
  expect({"EVAL_RO", "return redis.call('SET', KEYS[1])", "1", "ro:k"},
         err("ERR Wrong number of args calling Redis command from script" +
             ScriptSuffix("return redis.call('SET', KEYS[1])", 1)));
  expect({"SCRIPT", "LOAD", write}, bulk(sim::Sha1Hex(write)));
  expect(
      {"EVALSHA_RO", sim::Sha1Hex(write), "1", "ro:k"},
      err("ERR Write commands are not allowed from read-only scripts." + ScriptSuffix(write, 1)));
  expect({"EVALSHA", sim::Sha1Hex(write), "1", "ro:k"}, sim::Reply::Ok());
  expect({"GET", "ro:k"}, bulk("x"));
  expect({"SCRIPT", "FLUSH", "LAZY"}, err("ERR SCRIPT FLUSH only support SYNC|ASYNC option"));
  expect({"SCRIPT", "FLUSH"}, sim::Reply::Ok());
  expect({"SCRIPT", "EXISTS", sim::Sha1Hex(write), sim::Sha1Hex(read)},
         sim::Reply::Array({num(0), num(0)}));
  expect({"EVALSHA", sim::Sha1Hex(write), "1", "ro:k"},
         err("NOSCRIPT No matching script. Please use EVAL."));
  expect({"EVAL", read, "1", "ro:k"}, bulk("x"));
  expect({"SCRIPT", "FLUSH", "async"}, sim::Reply::Ok());
  // The shebang: "#!lua" and its flags on the first line, which is skipped but still counts
  // (line numbers stay the body's); flags=no-writes makes the script read-only.
  expect({"EVAL", "#!lua\nreturn redis.call('GET', KEYS[1])", "1", "ro:k"}, bulk("x"));
  const std::string no_writes =
      "#!lua flags=no-writes,allow-oom\nreturn redis.call('SET', KEYS[1], 'y')";
  expect({"EVAL", no_writes, "1", "ro:k"},
         err("ERR Write commands are not allowed from read-only scripts." +
             ScriptSuffix(no_writes, 2)));
  expect({"EVAL", "#!lua\nreturn x", "0"},
         err("ERR user_script:2: Script attempted to access nonexistent global variable 'x'" +
             ScriptSuffix("#!lua\nreturn x", 2)));
  expect({"EVAL", "#!lua", "0"}, err("ERR Invalid script shebang"));
  expect({"EVAL", "#!python\nreturn 1", "0"},
         err("ERR Unexpected engine in script shebang: #!python"));
  expect({"EVAL", "#!lua flags=no-writes,bogus\nreturn 1", "0"},
         err("ERR Unexpected flag in script shebang: bogus"));
  expect({"SCRIPT", "LOAD", "#!lua name=f\nreturn 1"},
         err("ERR Unknown lua shebang option: name=f"));
  expect({"GET", "ro:k"}, bulk("x"));
  expect({"DEL", "ro:k"}, num(1));
}

inline void Transactions(const Expect& a, const Expect& b,
                         const std::function<void(int64_t)>& set_time, int64_t t0) {
  // 10. MULTI/EXEC/DISCARD/WATCH (multi.c) and numbered databases, with two clients: `a` and
  // `b` are two connections to one server.
  const sim::Reply ok = sim::Reply::Ok(), queued = sim::Reply::Status("QUEUED");
  auto array = [](std::vector<sim::Reply> e) { return sim::Reply::Array(std::move(e)); };
  a({"MULTI"}, ok);
  a({"SET", "tx:k", "1"}, queued);
  a({"INCR", "tx:k"}, queued);
  a({"MULTI"}, err("ERR MULTI calls can not be nested"));
  a({"WATCH", "tx:k"}, err("ERR WATCH inside MULTI is not allowed"));
  b({"GET", "tx:k"}, sim::Reply::Nil());  // nothing ran yet
  a({"EXEC"}, array({ok, num(2)}));
  a({"EXEC"}, err("ERR EXEC without MULTI"));
  a({"DISCARD"}, err("ERR DISCARD without MULTI"));
  // An error while running is that command's reply; the others run.
  a({"MULTI"}, ok);
  a({"HSET", "tx:k", "f", "v"}, queued);
  a({"INCR", "tx:k"}, queued);
  a({"EXEC"}, array({err(sim::redis_text::kWrongType), num(3)}));
  // An error while queueing (arity; neither MULTI nor WATCH inside count) fails the EXEC.
  a({"MULTI"}, ok);
  a({"SET", "tx:k"}, err("ERR wrong number of arguments for 'set' command"));
  a({"INCR", "tx:k"}, queued);
  a({"EXEC"}, err("EXECABORT Transaction discarded because of previous errors."));
  a({"GET", "tx:k"}, bulk("3"));
  a({"MULTI"}, ok);
  a({"INCR", "tx:k"}, queued);
  a({"DISCARD"}, ok);
  a({"GET", "tx:k"}, bulk("3"));
  // A script inside a transaction; a transaction's SELECT stays the client's.
  a({"MULTI"}, ok);
  a({"EVAL", "return redis.call('INCR', KEYS[1])", "1", "tx:k"}, queued);
  a({"SELECT", "1"}, queued);
  a({"EXISTS", "tx:k"}, queued);
  a({"EXEC"}, array({num(4), ok, num(0)}));
  a({"SELECT", "0"}, ok);
  // WATCH: another client's write, even of the same value, fails the EXEC with a nil array;
  // after an EXEC, failed or not, nothing is watched.
  a({"WATCH", "tx:k"}, ok);
  b({"SET", "tx:k", "4"}, ok);
  a({"MULTI"}, ok);
  a({"INCR", "tx:k"}, queued);
  a({"EXEC"}, sim::Reply::NilArray());
  a({"MULTI"}, ok);
  a({"INCR", "tx:k"}, queued);
  a({"EXEC"}, array({num(5)}));
  a({"WATCH", "tx:k", "tx:k", "tx:other"}, ok);
  a({"MULTI"}, ok);
  a({"INCR", "tx:k"}, queued);
  a({"EXEC"}, array({num(6)}));
  b({"SET", "tx:k", "1"}, ok);  // watched no more
  a({"WATCH", "tx:k"}, ok);
  a({"SET", "tx:k", "2"}, ok);  // the watcher's own write touches too
  a({"MULTI"}, ok);
  a({"EXEC"}, sim::Reply::NilArray());
  a({"WATCH", "tx:k"}, ok);
  b({"SET", "tx:k", "3"}, ok);
  a({"UNWATCH"}, ok);
  a({"MULTI"}, ok);
  a({"GET", "tx:k"}, queued);
  a({"EXEC"}, array({bulk("3")}));
  // What changes nothing touches nothing: a DEL of a missing key, a ZADD of the same score, an
  // HDEL of a missing field, a PERSIST of a key without expiry.
  a({"ZADD", "tx:z", "1", "m"}, num(1));
  a({"HSET", "tx:h", "f", "v"}, num(1));
  a({"WATCH", "tx:none", "tx:z", "tx:h", "tx:k"}, ok);
  b({"DEL", "tx:none"}, num(0));
  b({"ZADD", "tx:z", "1", "m"}, num(0));
  b({"HDEL", "tx:h", "g"}, num(0));
  b({"PERSIST", "tx:k"}, num(0));
  a({"MULTI"}, ok);
  a({"PING"}, queued);
  a({"EXEC"}, array({sim::Reply::Status("PONG")}));
  // ... and a script's write touches; so does the same key name in another database not.
  a({"WATCH", "tx:k"}, ok);
  b({"SELECT", "1"}, ok);
  b({"SET", "tx:k", "db1"}, ok);
  a({"MULTI"}, ok);
  a({"PING"}, queued);
  a({"EXEC"}, array({sim::Reply::Status("PONG")}));
  a({"WATCH", "tx:k"}, ok);
  b({"SELECT", "0"}, ok);
  b({"EVAL", "return redis.call('SET', KEYS[1], 'lua')", "1", "tx:k"}, ok);
  a({"MULTI"}, ok);
  a({"PING"}, queued);
  a({"EXEC"}, sim::Reply::NilArray());
  // A watched key that expires before the EXEC fails it; one that had already expired when
  // watched does not (multi.c's watchedKey.expired), nor its deletion.
  a({"SET", "tx:e", "v", "PX", "10"}, ok);
  a({"WATCH", "tx:e"}, ok);
  set_time(t0 + 11);
  a({"MULTI"}, ok);
  a({"PING"}, queued);
  a({"EXEC"}, sim::Reply::NilArray());
  a({"WATCH", "tx:e"}, ok);
  b({"DEL", "tx:e"}, num(0));
  a({"MULTI"}, ok);
  a({"PING"}, queued);
  a({"EXEC"}, array({sim::Reply::Status("PONG")}));
  // FLUSHDB touches the watched keys that held a value, in its database only.
  a({"SELECT", "2"}, ok);
  a({"SET", "tx:f", "v"}, ok);
  a({"WATCH", "tx:f", "tx:none"}, ok);
  b({"SELECT", "3"}, ok);
  b({"FLUSHDB"}, ok);
  a({"MULTI"}, ok);
  a({"PING"}, queued);
  a({"EXEC"}, array({sim::Reply::Status("PONG")}));
  a({"WATCH", "tx:f"}, ok);
  b({"SELECT", "2"}, ok);
  b({"FLUSHDB"}, ok);
  a({"MULTI"}, ok);
  a({"PING"}, queued);
  a({"EXEC"}, sim::Reply::NilArray());
  a({"DBSIZE"}, num(0));
  // Databases: a client's SELECT is its own; MOVE, SWAPDB, DBSIZE; a script's SELECT lasts
  // until the script ends.
  a({"SELECT", "1"}, ok);
  a({"GET", "tx:k"}, bulk("db1"));
  b({"SELECT", "0"}, ok);
  b({"GET", "tx:k"}, bulk("lua"));
  a({"DBSIZE"}, num(1));
  a({"MOVE", "tx:k", "0"}, num(0));
  a({"MOVE", "tx:k", "1"}, err("ERR source and destination objects are the same"));
  a({"MOVE", "tx:k", "16"}, err("ERR DB index is out of range"));
  a({"MOVE", "tx:k", "x"}, err("ERR value is not an integer or out of range"));
  a({"MOVE", "tx:k", "2"}, num(1));
  a({"DBSIZE"}, num(0));
  a({"SWAPDB", "0", "2"}, ok);
  b({"GET", "tx:k"}, bulk("db1"));  // b still has database 0 selected, which now holds db 2's
  a({"SELECT", "2"}, ok);
  a({"GET", "tx:k"}, bulk("lua"));
  a({"SWAPDB", "0", "2"}, ok);
  a({"SWAPDB", "x", "2"}, err("ERR invalid first DB index"));
  a({"SWAPDB", "99", "y"}, err("ERR invalid second DB index"));
  a({"SWAPDB", "0", "99"}, err("ERR DB index is out of range"));
  a({"EVAL", "redis.call('SELECT', 3) redis.call('SET', 'tx:s', 'x') return redis.call('DBSIZE')",
     "0"},
    num(1));
  a({"EXISTS", "tx:s"}, num(0));
  a({"SELECT", "3"}, ok);
  a({"GET", "tx:s"}, bulk("x"));
  a({"FLUSHDB"}, ok);
  a({"SELECT", "2"}, ok);
  a({"FLUSHDB"}, ok);
  a({"SELECT", "0"}, ok);
  b({"DEL", "tx:k", "tx:z", "tx:h"}, num(3));
}

inline void ListsAndSets(const Expect& expect) {
  // 11. Lists and sets (t_list.c, t_set.c): the replies, the errors, an emptied key deleted.
  const sim::Reply nil = sim::Reply::Nil();
  auto array = [](std::vector<sim::Reply> e) { return sim::Reply::Array(std::move(e)); };
  expect({"RPUSH", "ls:l", "a", "b", "c"}, num(3));
  expect({"LPUSH", "ls:l", "z"}, num(4));
  expect({"LRANGE", "ls:l", "0", "-1"}, array({bulk("z"), bulk("a"), bulk("b"), bulk("c")}));
  expect({"LRANGE", "ls:l", "-2", "100"}, array({bulk("b"), bulk("c")}));
  expect({"LRANGE", "ls:l", "5", "1"}, array({}));
  expect({"LRANGE", "ls:l", "x", "1"}, err("ERR value is not an integer or out of range"));
  expect({"LLEN", "ls:l"}, num(4));
  expect({"LINDEX", "ls:l", "-1"}, bulk("c"));
  expect({"LINDEX", "ls:l", "9"}, nil);
  expect({"LSET", "ls:l", "1", "A"}, sim::Reply::Ok());
  expect({"LSET", "ls:l", "9", "A"}, err("ERR index out of range"));
  expect({"LSET", "ls:nolist", "0", "A"}, err("ERR no such key"));
  expect({"LINSERT", "ls:l", "BEFORE", "b", "y"}, num(5));
  expect({"LINSERT", "ls:l", "after", "nope", "y"}, num(-1));
  expect({"LINSERT", "ls:l", "middle", "b", "y"}, err("ERR syntax error"));
  expect({"RPUSH", "ls:l", "b", "b"}, num(7));
  expect({"LPOS", "ls:l", "b"}, num(3));
  expect({"LPOS", "ls:l", "b", "RANK", "-1"}, num(6));
  expect({"LPOS", "ls:l", "b", "COUNT", "0"}, array({num(3), num(5), num(6)}));
  expect({"LPOS", "ls:l", "b", "RANK", "2", "COUNT", "1"}, array({num(5)}));
  expect({"LPOS", "ls:l", "b", "MAXLEN", "3"}, nil);
  expect({"LPOS", "ls:l", "b", "RANK", "0"},
         err("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... "
             "or use negative to start from the end of the list"));
  expect({"LPOS", "ls:l", "b", "COUNT", "-1"}, err("ERR COUNT can't be negative"));
  expect({"LREM", "ls:l", "-1", "b"}, num(1));
  expect({"LREM", "ls:l", "0", "b"}, num(2));
  expect({"LRANGE", "ls:l", "0", "-1"}, array({bulk("z"), bulk("A"), bulk("y"), bulk("c")}));
  expect({"LTRIM", "ls:l", "1", "-2"}, sim::Reply::Ok());
  expect({"RPOPLPUSH", "ls:l", "ls:l2"}, bulk("y"));
  expect({"LMOVE", "ls:l", "ls:l2", "LEFT", "RIGHT"}, bulk("A"));
  expect({"LMOVE", "ls:l2", "ls:l2", "left", "up"}, err("ERR syntax error"));
  expect({"EXISTS", "ls:l"}, num(0));  // emptied: deleted
  expect({"LPOP", "ls:l2", "5"}, array({bulk("y"), bulk("A")}));
  expect({"LPOP", "ls:l2"}, nil);
  expect({"LPOP", "ls:l2", "1"}, sim::Reply::NilArray());
  expect({"LPOP", "ls:l2", "-1"}, err("ERR value is out of range, must be positive"));
  expect({"LPUSHX", "ls:l2", "a"}, num(0));
  expect({"RPUSH", "ls:l2", "1", "2"}, num(2));
  expect({"RPOP", "ls:l2", "0"}, array({}));
  expect({"RPOP", "ls:l2"}, bulk("2"));
  expect({"TYPE", "ls:l2"}, sim::Reply::Status("list"));
  expect({"SADD", "ls:l2", "x"}, err(sim::redis_text::kWrongType));
  expect({"DEL", "ls:l2"}, num(1));
  expect({"SADD", "ls:s", "3", "1", "2", "1"}, num(3));
  expect({"SMEMBERS", "ls:s"}, array({bulk("1"), bulk("2"), bulk("3")}));  // an intset: in order
  expect({"SADD", "ls:t", "2", "3", "4"}, num(3));
  expect({"SINTER", "ls:s", "ls:t"}, array({bulk("2"), bulk("3")}));
  expect({"SINTER", "ls:s", "ls:missing", "ls:l"}, array({}));
  expect({"SUNION", "ls:s", "ls:missing", "ls:t"},
         array({bulk("1"), bulk("2"), bulk("3"), bulk("4")}));
  expect({"SDIFF", "ls:s", "ls:t"}, array({bulk("1")}));
  expect({"SINTERSTORE", "ls:u", "ls:s", "ls:t"}, num(2));
  expect({"SDIFFSTORE", "ls:u", "ls:s", "ls:s"}, num(0));
  expect({"EXISTS", "ls:u"}, num(0));
  expect({"SINTERCARD", "2", "ls:s", "ls:t"}, num(2));
  expect({"SINTERCARD", "2", "ls:s", "ls:t", "LIMIT", "1"}, num(1));
  expect({"SINTERCARD", "0", "ls:s"}, err("ERR numkeys should be greater than 0"));
  expect({"SINTERCARD", "3", "ls:s"},
         err("ERR Number of keys can't be greater than number of args"));
  expect({"SINTERCARD", "1", "ls:s", "LIMIT", "-1"}, err("ERR LIMIT can't be negative"));
  expect({"SISMEMBER", "ls:s", "1"}, num(1));
  expect({"SMISMEMBER", "ls:s", "1", "9"}, array({num(1), num(0)}));
  expect({"SMOVE", "ls:s", "ls:t", "1"}, num(1));
  expect({"SMOVE", "ls:s", "ls:t", "1"}, num(0));
  expect({"SREM", "ls:s", "2", "3", "9"}, num(2));
  expect({"EXISTS", "ls:s"}, num(0));
  expect({"SCARD", "ls:t"}, num(4));
  expect({"SPOP", "ls:t", "-1"}, err("ERR value is out of range, must be positive"));
  expect({"SPOP", "ls:t", "0"}, array({}));
  expect({"SRANDMEMBER", "ls:t", "0"}, array({}));
  expect({"SRANDMEMBER", "ls:missing", "3"}, array({}));
  expect({"SPOP", "ls:missing"}, nil);
  expect({"TYPE", "ls:t"}, sim::Reply::Status("set"));
  expect({"LPUSH", "ls:t", "x"}, err(sim::redis_text::kWrongType));
  expect({"DEL", "ls:t"}, num(1));
}

// set_time moves the virtual clock of the world under test; t0 is its current time. `c` and
// `other` are two connections to it.
inline void RunAll(sim::RedisConnection& c, sim::RedisConnection& other,
                   const std::function<void(int64_t)>& set_time, int64_t t0) {
  const Expect expect{c};
  set_time(t0);
  Expiry(expect, set_time, t0);
  Scripts(expect);
  Replies(expect);
  Cjson(expect);
  Types(expect, set_time, t0);
  KeysGoneAndBack(expect, set_time, t0);
  set_time(t0 + 100);
  Counters(expect, set_time, t0 + 100);
  Sandbox(expect);
  ScriptCommands(expect);
  ListsAndSets(expect);
  set_time(t0 + 200);
  Transactions(expect, Expect{other}, set_time, t0 + 200);
}

}  // namespace testbed::expectations
