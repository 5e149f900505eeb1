#include "sim/trace.h"

#include <absl/strings/str_cat.h>
#include <xxhash.h>

#include "sim/digest.h"

namespace testbed::sim {

std::string ShortArgv(const Argv& argv) {
  if (argv.size() >= 2 && (argv[0] == "EVAL" || argv[0] == "eval")) {
    Argv named = argv;
    named[1] = absl::StrCat("<script ", CachedSha1(argv[1]).substr(0, 12), ">");
    return render_argv_short(named, 1200, 1190);
  }
  return render_argv_short(argv, 160, 150);
}

const std::string& Trace::actor_of(const TraceEvent& e) const {
  static const std::string kWorld = "world";
  return e.thread < 0 ? kWorld : thread_actor.at(static_cast<size_t>(e.thread));
}

std::string Trace::Render(const TraceEvent& e) const {
  const std::string& who =
      e.thread < 0 ? actor_of(e) : thread_names.at(static_cast<size_t>(e.thread));
  std::string out = absl::StrCat("+", e.at_ms, "ms ", who, " ");
  switch (e.kind) {
    case EventKind::kCall:
      absl::StrAppend(&out, "call ", ShortArgv(e.argv));
      break;
    case EventKind::kReply:
      absl::StrAppend(&out, "exec ", ShortArgv(argv_of(e)), " -> ", e.reply.debug());
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
  const uint8_t type = static_cast<uint8_t>(r.type);
  bytes(&type, 1);
  str(r.str);
  bytes(&r.integer, sizeof r.integer);
  const uint64_t n = r.elements.size();
  bytes(&n, sizeof n);
  for (const Reply& e : r.elements) reply(e);
}

void TraceHasher::add(const TraceEvent& e) {
  const uint8_t kind = static_cast<uint8_t>(e.kind);
  bytes(&kind, 1);
  bytes(&e.at_ms, sizeof e.at_ms);
  const int32_t thread = e.thread;
  bytes(&thread, sizeof thread);
  const uint64_t n = e.argv.size();
  bytes(&n, sizeof n);
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

}  // namespace testbed::sim
