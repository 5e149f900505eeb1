// Recorded traces (issue 29): a `redis-cli MONITOR` capture from Redis 7.0 (sim/monitor_text.h)
// read as a stream and written as one trace file per system and segment.
//
// - Each client command becomes a call: its line number, its time in microseconds since the
//   segment's first line, its client (an actor, numbered in the order clients first appear in
//   the segment) and its argv. A script's own commands (the `[0 lua]` lines Redis writes right
//   after the EVAL or EVALSHA that ran them) are kept with that call.
// - Scripts: an EVAL's body, or a body from SCRIPT LOAD, is known by its SHA1 from then on; an
//   EVALSHA may also run a shipped script (real/scripts/manifest.json). A shipped script is
//   recognized as deployed, too: the same body modulo leading and trailing whitespace and line
//   endings (an EVAL's body compared in that normal form; an EVALSHA by the SHA1 of the body
//   trimmed at either end or both, with LF or CRLF endings); the file then keeps the body as
//   sent and says "deployed". A body the catalog holds is named by its id, any other is kept
//   in the file.
// - Systems: every registered system's TraceRecognizer bids for each call; the highest bid takes
//   it. The version is the one whose scripts the calls ran (two or more: a rolling deploy, the
//   newest is the version and the others old versions); with no scripts, the one version that
//   has none. When that names none (a capture cut short holds no script that tells), the version
//   is null and "versions_fitting" lists every version the calls do not rule out: replay judges
//   the trace as each.
// - Other applications: a call no system claims (any command, or a script of no system) is kept
//   as a "foreign" call of its connection ("app"), in every trace of its segment at its place
//   (a trace that begins later gets the segment's earlier ones from a temporary file): replay
//   runs it in both worlds, as it changes keys the systems may share, and no property judges
//   it. An EVALSHA of a body nobody knows is kept "opaque", with a note, and not replayed.
// - Segments: FLUSHALL and FLUSHDB end one; the calls after them are the next segment's.
// - Errors (a malformed or truncated line, an unknown escape, a `[lua]` line without a script
//   call before it) throw std::invalid_argument naming the line; nothing is left in the output
//   directory then. Memory does not grow with the capture's length: one call is held at a
//   time, and the files are written as the capture is read.
//
// The file (JSON; "calls" first, so that it can be written as it is read):
//   {"kind": "recorded-trace", "calls": [{"line", "at_us", "client", "argv", "script"?,
//    "lua"?} or {"line", "at_us", "foreign": true, "app", "argv", "script"?, "lua"?,
//    "opaque"?}, ...], "system", "version", "old_versions", "source", "segment", "clients",
//    "foreign_calls", "db", "versions_fitting", "scripts": {sha1: {"id", "body"?, "deployed"?} or
//    {"body"}}}
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
  int64_t foreign = 0;             // calls no system claimed: kept, replayed, never judged
  int64_t opaque = 0;              // of those, EVALSHAs of a body nobody knows: not replayed
};

ImportSummary ImportCapture(const std::string& capture, const std::string& out_dir,
                            const real::ScriptCatalog& catalog);

}  // namespace testbed::harness
