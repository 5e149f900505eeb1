// a2's scripts as `testbed fidelity` calls them: KEYS and ARGV as each script's doc comment in
// seed 003 describes them, drawn to reach every branch: sessions and lanes that exist and do not,
// leases at and around now, batches of zero to two events, payloads that are not JSON.
#include <string>
#include <vector>

#include "properties/a2/a2_system.h"

namespace testbed::props::a2 {

sim::fidelity::ScriptShape A2ScriptShape(const real::ScriptFile& s, sim::fidelity::ArgDraws& d) {
  using sim::fidelity::Arg;
  const std::string& c = s.constant;
  auto ttl = [&] { return d.Lit(d.Pick({"1", "2", "5", "100", "10000", "0", "-1"})); };
  auto now = [&] { return d.Now(d.Chance(1, 8) ? d.Range(-3, 3) : 0); };
  sim::fidelity::ScriptShape shape;
  std::vector<Arg>& keys = shape.keys;
  std::vector<Arg>& args = shape.args;
  const Arg store = d.Lit("a2:store"), counter = d.Lit("a2:counter"), ids = d.Lit("a2:ids"),
            sessions = d.Lit("a2:sessions"), meta = d.Lit("a2:meta"), pending = d.Lit("a2:pending"),
            ready = d.Lit("a2:ready"), watched = d.Lit("a2:watched");
  auto session = [&] { return d.Lit(d.Pick({"sess1", "sess2"})); };
  auto index = [&] { return d.Lit(d.Int(0, 8)); };
  auto lane = [&] { return d.Lit(d.Pick({"", "", "L1", "L2"})); };
  auto payload = [&] { return d.Lit(d.Chance(1, 4) ? d.Json() : "{\"n\":" + d.Int(0, 9) + "}"); };
  if (c == "APPEND_LUA") {
    keys = {store, counter, ids, sessions, meta, pending, ready, watched};
    const int64_t n = d.Range(0, 2);
    args = {session(), now(), d.Lit(std::to_string(n))};
    for (int64_t i = 0; i < n; ++i) {
      args.push_back(d.Lit("e" + d.Int(1, 40)));
      args.push_back(d.Lit("t"));
      args.push_back(payload());
      args.push_back(d.Lit(d.Chance(2, 3) ? std::string()
                                          : "{\"index\":" + d.Int(0, 4) +
                                                ",\"attempt\":" + d.Int(0, 2) + "}"));
      args.push_back(lane());
      args.push_back(d.Lit(d.Pick({"0", "1"})));
    }
  } else if (c == "FAIL_ATTEMPT_LUA") {
    keys = {counter, meta, pending, ready};
    args = {index(), d.Lit(d.Int(0, 2)), d.Lit("boom"), d.Lit(d.Int(1, 3)), now()};
  } else if (c == "CLAIM_AVAILABLE_LUA") {
    keys = {store, counter, meta, pending, ready};
    args = {d.Lit(d.Pick({"w1", "w2"})), now(), d.Now(d.PickInt({-1, 0, 1, 100})),
            d.Lit(d.Int(0, 1))};
    if (args.back().text == "1") args.push_back(index());
  } else if (c == "RENEW_CLAIMS_LUA") {
    keys = {counter, meta};
    const int64_t n = d.Range(0, 2);
    args = {d.Lit(d.Pick({"w1", "w2"})), now(), d.Now(d.PickInt({-1, 0, 1, 100})),
            d.Lit(std::to_string(n))};
    for (int64_t i = 0; i < n; ++i) {
      args.push_back(index());
      args.push_back(d.Lit(d.Int(0, 2)));
    }
  } else if (c == "COMPLETE_ATTEMPT_LUA") {
    keys = {store, counter, ids, sessions, meta, pending, ready, watched};
    const int64_t n = d.Range(0, 2);
    args = {session(), now(), index(), d.Lit(d.Int(0, 2)), d.Lit(std::to_string(n))};
    for (int64_t i = 0; i < n; ++i) {
      args.push_back(d.Lit("c" + d.Int(1, 40)));
      args.push_back(d.Lit("t"));
      args.push_back(payload());
      args.push_back(lane());
      args.push_back(d.Lit(d.Pick({"0", "1"})));
    }
  } else if (c == "PUT_SNAPSHOT_LUA") {
    keys = {d.Lit("a2:snap")};
    const std::string up = d.Int(0, 5);
    args = {d.Lit(up), d.Lit(d.Chance(1, 5) ? d.Json() : "{\"index\":" + up + "}")};
  } else if (c == "PRESENCE_SET_LUA") {
    keys = {d.Lit("a2:presence")};
    const int64_t n = d.Range(0, 2);
    args = {d.Now(d.Range(-2, 2)), ttl(), d.Lit(std::to_string(n))};
    for (int64_t i = 0; i < n; ++i) {
      args.push_back(d.Lit(d.Pick({"p1", "p2", "p3", std::string(70, 'P')})));
      // Well-formed values or '' only: PRESENCE_READ stops at the first malformed value, and
      // which one it meets first depends on hash-table order, which redis-server randomizes per
      // process (siphash seed). No emulator can match that; the generator steers clear of it.
      args.push_back(d.Chance(1, 5) ? d.Lit("") : d.Lit("PRESENCE_VALUE"));  // resolved below
    }
    // Values carry the sender stamp 'a' and the fine expiry 'e', relative to now.
    for (size_t i = 4; i < args.size(); i += 2) {
      if (args[i].text != "PRESENCE_VALUE") continue;
      args[i] = Arg{
          "{\"a\":@,\"e\":@" +
              std::string(d.Chance(1, 5) ? ",\"pad\":\"" + std::string(60, 'x') + "\"" : "") + "}",
          true, d.Range(-1, 3)};
    }
  } else if (c == "PRESENCE_READ_LUA") {
    keys = {d.Lit("a2:presence")};
    args = {now()};
  } else if (c == "READ_STATE_LUA") {
    keys = {d.Lit("a2:snap"), counter};
  }

  // Presence values stay well-formed (see PRESENCE_SET_LUA above): garbage only before them.
  if (c == "PRESENCE_SET_LUA") shape.garbage_limit = 3;
  // PRESENCE_READ returns the hash's fields in the order Redis keeps them.
  if (c == "PRESENCE_READ_LUA") {
    shape.compare = sim::fidelity::Compare::kUnorderedPairs;
    shape.hash_key = "a2:presence";
  }
  return shape;
}

}  // namespace testbed::props::a2
