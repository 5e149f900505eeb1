// Replay of a recorded trace (testbed import's files, harness/trace_import.h): every call in
// the recorded order, at its recorded time, on the emulator and on a spawned redis-server. The
// two worlds' replies are compared call by call, and so are the commands each script ran on the
// emulator with the capture's `[0 lua]` lines: a capture records no replies, but it does record
// what every script did, so a script that took another path shows up.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "real/redis_server.h"
#include "real/script_catalog.h"
#include "sim/reply.h"

namespace testbed::harness {

bool IsRecordedTrace(const nlohmann::json& file);

// Throws std::invalid_argument naming what is wrong in a file that is not a recorded trace.
void ValidateTrace(const nlohmann::json& trace);

struct TraceReplay {
  int64_t calls = 0;            // run in both worlds
  int64_t foreign = 0;          // of those, other applications' calls (not judged)
  int64_t opaque = 0;           // calls not run: an EVALSHA of a body nobody knows
  int64_t other_db = 0;         // calls not run: another application's, in another database
  int64_t difference_line = 0;  // the capture's line of the first difference (0: none)
  std::string difference;       // what differs there
  // The emulator's replies to the system's calls (not the foreign ones), as far as the replay
  // ran: the i-th is props::ReadRecordedCalls' i-th call's.
  std::vector<sim::Reply> replies;
};

TraceReplay ReplayTrace(const nlohmann::json& trace, real::RedisServer& server,
                        const real::ScriptCatalog& catalog);

}  // namespace testbed::harness
