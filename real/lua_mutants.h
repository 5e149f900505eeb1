// One-line mutants of a Lua script, for mutation analysis (`testbed mutate`): each mutant
// changes one token, or drops one statement, of one line of a shipped script, the way a slip in
// review would. A property suite is worth the mutants it kills: a mutant that no property
// notices is a promise nobody checks (or an equivalent mutant, which a person must argue).
//
// The operators (after mutation-testing practice: relational boundary and negation, arithmetic,
// logical connectives, constants, statement deletion):
//   rel      <  <=  >  >=  ==  ~=   each to its boundary twin (< <=, > >=) or its negation (== ~=)
//   arith    binary + -  to each other, * / to each other
//   logic    and <-> or;  `not ` dropped
//   bool     true <-> false
//   int      an integer literal n to n+1 and n-1 (KEYS[n] and ARGV[n] included: a wrong argument)
//   drop     a line that is a whole statement (a redis.call, an assignment, a return) removed
// Strings and comments are never changed. A mutant that does not compile is "stillborn": it is
// left out of the counts by the caller, which compiles it.
#pragma once

#include <string>
#include <vector>

namespace testbed::real {

struct LuaMutant {
  std::string id;      // "<line>.<k>": the k-th mutant of that line (1-based), stable per body
  int line = 0;        // 1-based
  std::string op;      // "rel", "arith", "logic", "bool", "int", "drop"
  std::string before;  // the line as shipped (without its newline)
  std::string after;   // the line as mutated ("" for drop)
  std::string body;    // the whole mutated script
};

// Every mutant of `body`, in line order, then operator position order.
std::vector<LuaMutant> MutantsOf(const std::string& body);

}  // namespace testbed::real
