#include "sim/trace.h"

#include <absl/strings/str_cat.h>
#include <xxhash.h>

#include "sim/digest.h"

namespace testbed::sim {

std::string ShortArgv(const Argv& argv, const ScriptNames* names) {
  if (argv.size() >= 2 && (argv[0] == "EVAL" || argv[0] == "eval")) {
    Argv named = argv;
    const std::string sha = CachedSha1(argv[1]).substr(0, 12);
    named[1] = absl::StrCat("<script ", sha, ">");
    // Cut to length with the SHA1 placeholder, so that a name's length moves no cut; then the
    // placeholder (after `"EVAL" "<`) becomes the name.
    std::string out = render_argv_short(named, 1200, 1190);
    if (names)
      if (auto it = names->find(sha); it != names->end()) out.replace(9, 19, it->second);
    return out;
  }
  return render_argv_short(argv, 160, 150);
}

const std::string& Trace::actor_of(const TraceEvent& e) const {
  static const std::string kWorld = "world";
  return e.thread < 0 ? kWorld : thread_actor.at(static_cast<size_t>(e.thread));
}

EventTextRewrite& EventTextRewriteForTests() {
  static EventTextRewrite rewrite = nullptr;
  return rewrite;
}

const std::string& Trace::concerns(const TraceEvent& e) const {
  if (e.thread < 0 && e.actor >= 0) return actor_names.at(static_cast<size_t>(e.actor));
  return actor_of(e);
}

std::string Trace::Render(const TraceEvent& e, const ScriptNames* names) const {
  const std::string& who =
      e.thread < 0 ? actor_of(e) : thread_names.at(static_cast<size_t>(e.thread));
  std::string out = absl::StrCat("+", e.at_ms, "ms ", who, " ");
  switch (e.kind) {
    case EventKind::kCall:
      absl::StrAppend(&out, "call ", ShortArgv(e.argv, names));
      break;
    case EventKind::kReply:
      absl::StrAppend(&out, "exec ", ShortArgv(argv_of(e), names), " -> ", e.reply.debug());
      break;
    case EventKind::kFault:
    case EventKind::kClock:
    case EventKind::kNote:
      absl::StrAppend(&out, e.text);
      break;
  }
  return out;
}

std::vector<std::string> Trace::Lines() const {
  std::vector<std::string> out;
  out.reserve(events.size());
  for (const auto& e : events) out.push_back(Render(e));
  return out;
}

TraceHasher::TraceHasher() : ctx_(XXH3_createState()) {
  XXH3_128bits_reset(static_cast<XXH3_state_t*>(ctx_));
}
TraceHasher::~TraceHasher() { XXH3_freeState(static_cast<XXH3_state_t*>(ctx_)); }

void TraceHasher::large(const void* p, size_t n) {
  flush();
  XXH3_128bits_update(static_cast<XXH3_state_t*>(ctx_), p, n);
}

void TraceHasher::flush() {
  if (used_ == 0) return;
  XXH3_128bits_update(static_cast<XXH3_state_t*>(ctx_), buffer_, used_);
  used_ = 0;
}

void TraceHasher::str(const std::string& s) {
  const uint64_t n = s.size();
  bytes(&n, sizeof n);
  bytes(s.data(), s.size());
}

void TraceHasher::reply(const Reply& r) {
  // type (1), then the string (length 8, bytes), then integer (8) and element count (8).
  const uint8_t type = static_cast<uint8_t>(r.type);
  bytes(&type, 1);
  str(r.str);
  char tail[16];
  const uint64_t n = r.elements.size();
  std::memcpy(tail, &r.integer, 8);
  std::memcpy(tail + 8, &n, 8);
  bytes(tail, sizeof tail);
  for (const Reply& e : r.elements) reply(e);
}

void TraceHasher::add(const TraceEvent& e) {
  // The fixed fields in one copy, laid out byte for byte as they were hashed one by one:
  // kind (1), at_ms (8), thread (4), argc (8).
  char head[21];
  const uint8_t kind = static_cast<uint8_t>(e.kind);
  const int32_t thread = e.thread;
  const uint64_t n = e.argv.size();
  std::memcpy(head, &kind, 1);
  std::memcpy(head + 1, &e.at_ms, 8);
  std::memcpy(head + 9, &thread, 4);
  std::memcpy(head + 13, &n, 8);
  bytes(head, sizeof head);
  for (const std::string& arg : e.argv) str(arg);  // script bodies too: XXH3 reads them fast
  bytes(&e.call, sizeof e.call);
  if (e.kind == EventKind::kReply) reply(e.reply);
  str(e.text);
}

std::string TraceHasher::hex() {
  flush();
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH3_128bits_digest(static_cast<XXH3_state_t*>(ctx_)));
  return HexOf(c.digest, sizeof c.digest);
}

std::string Trace::Hash() const {
  TraceHasher hasher;
  for (const TraceEvent& e : events) hasher.add(e);
  for (const std::string& name : thread_names) {
    TraceEvent e;
    e.text = name;
    hasher.add(e);
  }
  return hasher.hex();
}

}  // namespace testbed::sim
