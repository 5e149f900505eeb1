// Recorded traces (issue 29): a `redis-cli MONITOR` capture from Redis 7.0 (sim/monitor_text.h)
// read as a stream and written as one trace file per system and segment.
//
// - Each client command becomes a call: its line number, its time in microseconds since the
//   segment's first line, its client (an actor, numbered in the order clients first appear in
//   the segment) and its argv. A script's own commands (the `[0 lua]` lines Redis writes right
//   after the EVAL or EVALSHA that ran them) are kept with that call.
// - Scripts: an EVAL's body, or a body from SCRIPT LOAD, is known by its SHA1 from then on; an
//   EVALSHA may also run a shipped script (real/scripts/manifest.json). A body the catalog holds
//   is named by its id, any other is kept in the file.
// - Systems: every registered system's TraceRecognizer bids for each call; the highest bid takes
//   it. The version is the one whose scripts the calls ran (two or more: a rolling deploy, the
//   newest is the version and the others old versions); with no scripts, the one version that
//   has none.
// - Segments: FLUSHALL and FLUSHDB end one; the calls after them are the next segment's.
// - Errors (a malformed or truncated line, an unknown escape, a `[lua]` line without a script
//   call before it, an EVALSHA whose body is unknown) throw std::invalid_argument naming the
//   line; nothing is left in the output directory then. Memory does not grow with the capture's
//   length: one call is held at a time, and the files are written as the capture is read.
//
// The file (JSON; "calls" first, so that it can be written as it is read):
//   {"kind": "recorded-trace", "calls": [{"line", "at_us", "client", "argv", "script"?,
//    "lua"?}, ...], "system", "version", "old_versions", "source", "segment", "clients",
//    "scripts": {sha1: {"id"} or {"body"}}, "ignored": n}
// An argument that is not UTF-8 is written as {"repr": "<Redis's escaped form>"}.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "real/script_catalog.h"

namespace testbed::harness {

struct ImportSummary {
  std::vector<std::string> files;  // written, in the order their segments and systems began
  int64_t lines = 0;               // lines read
  int64_t calls = 0;               // calls written (a script's own commands not counted)
  int64_t ignored = 0;             // connection housekeeping: PING, SELECT, CLIENT, INFO, ...
  int64_t unrecognized = 0;        // client commands no system claimed
};

ImportSummary ImportCapture(const std::string& capture, const std::string& out_dir,
                            const real::ScriptCatalog& catalog);

}  // namespace testbed::harness
