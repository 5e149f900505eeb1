// The state store's scripts as `testbed fidelity` calls them: KEYS and ARGV as each script of
// seeds 000 and 001 reads them (beta.23, beta.24 and beta.30), drawn to reach every branch:
// expiries at and around now, TTLs that are zero or negative, envelopes that are and are not
// JSON, and beta.24's legacy key and tombstone.
#include <string>
#include <vector>

#include "properties/state/state_system.h"

namespace testbed::props::state {

sim::fidelity::ScriptShape StateScriptShape(const real::ScriptFile& s, sim::fidelity::ArgDraws& d) {
  using sim::fidelity::Arg;
  static const std::vector<std::string> kValueKeys = {"st:v1", "st:v2"};
  static const std::vector<std::string> kLegacyKeys = {"st:l1", "st:l2"};
  const std::string& c = s.constant;
  const bool b24 = s.version == "2.2.0-beta.24";
  const std::string vkey = d.Pick(kValueKeys), lkey = d.Pick(kLegacyKeys);
  auto expires = [&] {
    return d.Chance(1, 6) ? d.Lit(d.SmallMs()) : d.Now(d.PickInt({-1, 0, 1, 2, 5, 100, 10000}));
  };
  auto ttl = [&] { return d.Lit(d.Pick({"1", "2", "5", "100", "10000", "0", "-1"})); };
  auto now = [&] { return d.Now(d.Chance(1, 8) ? d.Range(-3, 3) : 0); };
  sim::fidelity::ScriptShape shape;
  std::vector<Arg>& keys = shape.keys;
  std::vector<Arg>& args = shape.args;
  if (c == "SET_WITH_QUOTA_SCRIPT") {
    keys = {d.Lit(vkey), d.Lit("st:idx")};
    if (b24) keys.push_back(d.Lit(lkey));
    args = {now(), d.Lit(d.Int(0, 3)), expires(), ttl(), d.Lit(d.Envelope())};
    if (b24) {
      args.push_back(d.Lit(d.Pick({"0", "1"})));
      args.push_back(d.Lit("{\"deleted\":true}"));
    }
  } else if (c == "COMPARE_AND_SET_WITH_QUOTA_SCRIPT") {
    keys = {d.Lit(vkey), d.Lit("st:idx")};
    if (b24) keys.push_back(d.Lit(lkey));
    args = {d.Lit(d.Int(0, 3)), now(), d.Lit(d.Int(0, 3)), expires(), ttl(), d.Lit(d.Envelope())};
    if (b24) {
      args.push_back(d.Lit(d.Pick({"0", "1"})));
      args.push_back(d.Lit("{\"deleted\":true}"));
    }
  } else if (c == "DELETE_WITH_INDEX_SCRIPT") {
    keys = {d.Lit(vkey), d.Lit("st:idx")};
    if (b24) keys.push_back(d.Lit(lkey));
    if (s.version != "2.2.0-beta.23") {
      args = {d.Lit("{\"deleted\":true}"), ttl()};
      if (b24) args.push_back(d.Lit(d.Pick({"0", "1"})));
    }
  } else if (c == "BACKFILL_LEGACY_INDEX_SCRIPT") {
    keys = {d.Lit("st:idx"), d.Lit("st:cursor")};
    args = {now(), ttl(), d.Lit(d.Int(0, 300))};
    for (int64_t n = d.Range(0, 2); n > 0; --n) {
      args.push_back(d.Lit(d.Pick({"st:v1", "st:v2", "st:l1", "k1"})));
      args.push_back(d.Lit(d.Envelope()));
      args.push_back(expires());
    }
  } else if (c == "CLAIM_LEGACY_SCRIPT") {
    keys = {d.Lit(vkey), d.Lit("st:idx"), d.Lit(lkey)};
    args = {now(), d.Lit(d.Int(0, 3)), ttl(), d.Lit("{\"deleted\":true}")};
  }
  return shape;
}

}  // namespace testbed::props::state
