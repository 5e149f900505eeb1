// The trace of a run: a list of typed events (time, thread, kind, argv, reply, text), hashed as
// events and rendered to text only for people. Consumers filter by kind; nothing parses a
// rendered line.
//
// Kinds:
//   kCall   a client submitted a Redis call (argv)
//   kReply  Redis ran a call (argv) and answered (reply): the "exec" lines
//   kFault  a fault happened or was planned (text; argv when it hit one call)
//   kClock  a clock was skewed or jumped (text)
//   kNote   the runtime's bookkeeping: spawn, sleep, choose, finished, seed, end (text)
//
// The trace hash is XXH3-128 (xxHash: fast, unsalted, the same on every machine) over the
// events' fields, length-prefixed. It proves that two runs traced alike, nothing cryptographic.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/faults.h"
#include "sim/lua_scripting.h"
#include "sim/reply.h"

namespace testbed::sim {

enum class EventKind : uint8_t { kCall, kReply, kFault, kClock, kNote };

// What a kNote is about, for consumers that mark some of them (the timeline).
enum class Note : uint8_t { kOther, kSleep, kError };

struct TraceEvent {
  int64_t at_ms = 0;  // virtual time since the run's start
  int thread = -1;    // -1: the world
  EventKind kind = EventKind::kNote;
  Argv argv;          // kCall: the call (the only copy the world keeps)
  int64_t call = -1;  // kReply, and kFault when the fault hit one call: its kCall event
  Reply reply;        // kReply
  std::string text;   // kFault, kClock, kNote: what happened, as printed ("fault crash client1")
  // kFault, kClock: the fault kind (the sim/faults.h table), whether the event is its plan
  // (made when the run starts, for a time or an actor) rather than the fault happening, and
  // the actor it concerns (-1: none, or the world as a whole). Consumers read these; the text
  // says the same for people. (Not hashed: they follow from what the text holds.)
  std::optional<Fault> fault;
  bool planned = false;
  int actor = -1;
  Note note = Note::kOther;  // kNote
};

// Script bodies by the first 12 digits of their SHA1: the catalog id each one is shown as
// ("state/beta30/SET_WITH_QUOTA_SCRIPT").
using ScriptNames = std::map<std::string, std::string>;

struct Trace {
  std::vector<TraceEvent> events;
  std::vector<std::string> thread_names;  // "client0/main#0", by thread id
  std::vector<std::string> thread_actor;  // "client0", by thread id
  std::vector<std::string> actor_names;   // "client0", by actor id (TraceEvent::actor)

  const std::string& actor_of(const TraceEvent& e) const;  // "world" for thread -1
  // The actor an event concerns: its thread's, else the one a world event names (a crash, a
  // pause, a clock's skew or jump), else "world".
  const std::string& concerns(const TraceEvent& e) const;
  // The call an event is about: its own argv (kCall) or its kCall event's (kReply, kFault).
  const Argv& argv_of(const TraceEvent& e) const {
    return e.call >= 0 ? events[static_cast<size_t>(e.call)].argv : e.argv;
  }
  // "+12ms client0/main#0 exec "GET" "k" -> (nil)": the line a person reads.
  std::string Render(const TraceEvent& e, const ScriptNames* names = nullptr) const;
  std::vector<std::string> Lines() const;
  // The trace hash: every event, then every thread's name.
  std::string Hash() const;
};

// How the world writes an event's text (tests only): nullptr, as it is; else this rewrite of
// it. Consumers read the typed fields, so no verdict, class or timeline mark may depend on the
// text: tests/typed_events_test.cc rewrites every text and compares.
using EventTextRewrite = std::string (*)(std::string text);
EventTextRewrite& EventTextRewriteForTests();

// A call as the trace shows it: a script body is named by its catalog id when `names` knows it,
// else by its SHA1 (the first 12 digits), so that the keys and arguments fit.
std::string ShortArgv(const Argv& argv, const ScriptNames* names = nullptr);

// Incremental XXH3-128 of a run's events; hex() gives 32 hex digits.
class TraceHasher {
 public:
  TraceHasher();
  ~TraceHasher();
  TraceHasher(const TraceHasher&) = delete;
  TraceHasher& operator=(const TraceHasher&) = delete;
  void add(const TraceEvent& e);
  std::string hex();  // finishes; call once

 private:
  // Small fields gather in a buffer and reach XXH3 in large blocks (the hash of a stream does
  // not depend on how it is cut); large ones (script bodies, values) go straight through.
  void bytes(const void* p, size_t n) {
    if (n >= 512) return large(p, n);
    if (used_ + n > sizeof buffer_) flush();
    std::memcpy(buffer_ + used_, p, n);
    used_ += n;
  }
  void large(const void* p, size_t n);
  void flush();
  void str(const std::string& s);
  void reply(const Reply& r);
  void* ctx_;
  size_t used_ = 0;  // bytes of buffer_ not yet hashed
  char buffer_[8192];
};

}  // namespace testbed::sim
