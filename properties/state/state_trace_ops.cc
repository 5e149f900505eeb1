// Recorded traces of the state store (issue 29, items 3 and 4): the SDK operations each client of
// a capture made, rebuilt from its calls, judged as cas-versions-linearizable judges a run; and
// the same operations made again through the port, each client its own in order, for testbed
// explore.
//
// How calls become operations (the ports of real/state/v2.cc, beta.24 and beta.30, and
// real/state/v1.cc, beta.23):
//   get            beta.24: CLAIM_LEGACY_SCRIPT (readRaw, s000:441-464); beta.23 and beta.30: GET
//                  of the entry's key (readRaw, 330-333). Its reply is the envelope, a tombstone
//                  or nil.
//   set            that read, then SET_WITH_QUOTA_SCRIPT on the same key from the same client
//                  (set, 395-427: the version is computed from the read); the written envelope
//                  is the script's ARGV[5], the expiry ARGV[3], the caller's clock ARGV[1].
//   compareAndSet  COMPARE_AND_SET_WITH_QUOTA_SCRIPT: expected version ARGV[1], envelope ARGV[6].
//   delete         DELETE_WITH_INDEX_SCRIPT.
// list()'s calls (the index's ZRANGEBYSCORE, MGET), beta.23's backfill before each call (the
// cursor's GET, SCAN, MGET, BACKFILL_LEGACY_INDEX_SCRIPT) and anything else are not the
// register's, and are left out. beta.23's compareAndSet reads first and fails on the client when
// the version differs (s000:458-509, old side): such a call shows only its read, and is judged
// as the get it was on the server; one that goes on to its script is that read (a get) and the
// compareAndSet. An entry's namespace and scope is its key's prefix, which every script call
// names exactly (the index key is "...:index:" + base64url(prefix), s000 indexKey).
//
// Times: each operation's window runs from its client's previous call to its client's next call
// (properties/shared/recorded_windows.h).
//
// beta.3 (real/state/v1.cc, Beta3) has no scripts: a set is KEYS <prefix>:* (its quota), a GET
// and SET <key> <envelope> PX <ttl> (s001:388-421); its compareAndSet reads, compares on the
// client and then sets (s001:438-450), so it shows as that read (a get) and, when it went on, a
// set whose version comes from its own read, which is what a compareAndSet that succeeded wrote;
// delete is DEL. Its namespaces are the KEYS patterns. A KEYS followed by MGET is list's.
// What cannot be judged here: a call the capture records without the port's shape (an EVAL of
// another body).
#include <absl/strings/ascii.h>
#include <absl/strings/escaping.h>
#include <absl/strings/match.h>
#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>

#include <algorithm>

#include "properties/shared/recorded_windows.h"
#include "properties/state/state_workload.h"
#include "real/state/redis_common.h"
#include "real/state/state_api.h"

namespace testbed::props::state {
namespace {

using model::RegisterOp;
using K = RegisterOp::Kind;

// An index key: "<store prefix>:index:" + base64url(the entries' prefix) (s000 indexKey; beta.23's
// under the v1 prefix, beta.24's and beta.30's under v2).
constexpr const char* kIndexMark = ":index:";

// One operation of a recorded client.
struct TraceOp {
  K kind = K::kGet;
  int space = 0;         // which namespace and scope (prefix) of the trace
  std::string key;       // the SDK key, after the prefix
  std::string data_key;  // the entry's Redis key (the history's partition)
  std::string value;     // set, compareAndSet: the value's JSON
  std::optional<int64_t> ttl;
  int64_t expected = 0;
  size_t first = 0, last = 0;  // its calls (indices into the trace)
  // From the replies (judge only):
  bool ambiguous = false, rejected = false, ok = false;
  int64_t out_version = 0, expires_at_ms = 0;
  std::string out_value;
};

struct Rebuilt {
  std::vector<std::vector<TraceOp>> clients;  // by client, in the order they first appear
  std::vector<std::string> prefixes;          // by space
  real::state::NamespaceOptions ns{.default_ttl_ms = 2000, .max_ttl_ms = 10000, .max_entries = 100};
};

bool Script(const RecordedCall& c, const char* name) {
  return absl::EndsWith(c.script, std::string("/") + name);
}

// The script's KEYS and ARGV ({} when the call is not an EVAL / EVALSHA of the shape).
bool KeysAndArgs(const RecordedCall& c, std::vector<std::string>& keys,
                 std::vector<std::string>& args) {
  int64_t n = 0;
  if (c.argv.size() < 3 || !absl::SimpleAtoi(c.argv[2], &n) || n < 2 ||
      static_cast<size_t>(3 + n) > c.argv.size())
    return false;
  keys.assign(c.argv.begin() + 3, c.argv.begin() + 3 + n);
  args.assign(c.argv.begin() + 3 + n, c.argv.end());
  return true;
}

int64_t Int(const std::vector<std::string>& args, size_t i) {
  int64_t v = 0;
  return i < args.size() && absl::SimpleAtoi(args[i], &v) ? v : 0;
}

// The envelope's value (as the port's history writes it) and version.
bool Envelope(const std::string& key, const std::optional<std::string>& raw, std::string& value,
              int64_t& version) {
  if (!raw || real::state::IsStateTombstone(raw)) return false;
  std::optional<real::state::StateValue> v = real::state::EnvelopeFromJson(key, raw);
  if (!v) return false;
  value = real::state::Stringify(v->value);
  version = v->version;
  return true;
}

// Reads a trace's calls back as the register's operations, client by client, in one pass:
// each call is a read, a set, a compareAndSet or a delete of one entry (a set's own read and a
// beta.3 set's quota check join the set), or is not an operation.
class Rebuilder {
 public:
  Rebuilt Run(const RecordedCalls& calls) {
    Spaces(calls);
    for (size_t i = 0; i < calls.size(); ++i) Call(calls[i], i);
    for (auto& [client, op] : std::map<int, TraceOp>(pending_read_)) Add(client, std::move(op));
    // Without a claim's maxTtl (beta.3, beta.23, beta.30 read with a plain GET), the namespace's
    // is at least the longest TTL a write asked for: explore's port refuses a longer one.
    if (!max_ttl_shown_) out_.ns.max_ttl_ms = std::max(out_.ns.max_ttl_ms, longest_ttl_);
    return std::move(out_);
  }

 private:
  int SpaceOf(const std::string& prefix) {
    auto it = std::find(out_.prefixes.begin(), out_.prefixes.end(), prefix);
    if (it != out_.prefixes.end()) return static_cast<int>(it - out_.prefixes.begin());
    out_.prefixes.push_back(prefix);
    return static_cast<int>(out_.prefixes.size()) - 1;
  }

  // Every prefix a script call names (its index key), so that a plain GET finds its own; and
  // beta.3's namespaces: the KEYS pattern of a set's quota (or of a list) names one.
  void Spaces(const RecordedCalls& calls) {
    for (const RecordedCall& c : calls) {
      std::vector<std::string> keys, args;
      if (c.script.empty() || !KeysAndArgs(c, keys, args)) continue;
      const size_t mark = keys[1].find(kIndexMark);
      std::string prefix;
      if (mark != std::string::npos &&
          absl::WebSafeBase64Unescape(keys[1].substr(mark + std::string(kIndexMark).size()),
                                      &prefix) &&
          absl::StartsWith(keys[0], prefix + ":"))
        SpaceOf(prefix);
    }
    for (const RecordedCall& c : calls)
      if (c.script.empty() && c.argv.size() == 2 && absl::AsciiStrToUpper(c.argv[0]) == "KEYS" &&
          absl::EndsWith(c.argv[1], ":*"))
        SpaceOf(c.argv[1].substr(0, c.argv[1].size() - 2));
  }

  void Add(int client, TraceOp op) {
    auto [it, added] = client_index_.emplace(client, static_cast<int>(out_.clients.size()));
    if (added) out_.clients.emplace_back();
    out_.clients[static_cast<size_t>(it->second)].push_back(std::move(op));
  }

  void Flush(int client) {
    auto it = pending_read_.find(client);
    if (it == pending_read_.end()) return;
    Add(client, std::move(it->second));
    pending_read_.erase(it);
  }

  // The entry's namespace and scope: the longest known prefix of its key.
  bool Locate(const std::string& data_key, TraceOp& op) const {
    size_t best = 0;
    for (size_t s = 0; s < out_.prefixes.size(); ++s)
      if (absl::StartsWith(data_key, out_.prefixes[s] + ":") &&
          out_.prefixes[s].size() + 1 > best) {
        best = out_.prefixes[s].size() + 1;
        op.space = static_cast<int>(s);
      }
    op.key = data_key.substr(best);
    op.data_key = data_key;
    return best > 0;
  }

  // A set takes on its own read of the same key, made just before it (its version comes from
  // it; a beta.3 set's read follows its quota check).
  void JoinRead(int client, const std::string& data_key, TraceOp& op) {
    auto read = pending_read_.find(client);
    if (read != pending_read_.end() && read->second.data_key == data_key) {
      op.first = read->second.first;
      op.ambiguous = read->second.ambiguous;
      pending_read_.erase(read);
    }
  }

  void Call(const RecordedCall& c, size_t i) {
    std::vector<std::string> keys, args;
    TraceOp op;
    op.first = op.last = i;
    const bool script = !c.script.empty() && KeysAndArgs(c, keys, args);
    const std::string cmd =
        c.script.empty() && !c.argv.empty() ? absl::AsciiStrToUpper(c.argv[0]) : std::string();
    const bool plain_get = cmd == "GET" && c.argv.size() == 2;
    // beta.3 writes with plain commands (s001:388-455): SET key envelope PX ttl, DEL key.
    const bool plain_set =
        cmd == "SET" && c.argv.size() == 5 && absl::AsciiStrToUpper(c.argv[3]) == "PX";
    const bool plain_del = cmd == "DEL" && c.argv.size() == 2;
    if (cmd == "KEYS") {
      Flush(c.client);
      pending_keys_[c.client] = i;
      return;
    }
    const auto keys_before = pending_keys_.find(c.client);
    std::optional<size_t> quota_check;
    if (keys_before != pending_keys_.end()) {
      if (plain_get) quota_check = keys_before->second;
      pending_keys_.erase(keys_before);
    }
    const std::string data_key = script                                ? keys[0]
                                 : plain_get || plain_set || plain_del ? c.argv[1]
                                                                       : "";
    if (data_key.empty() || !Locate(data_key, op)) return;
    if (quota_check) op.first = *quota_check;  // beta.3's set: its quota check, then its read
    if (plain_get || (script && Script(c, "CLAIM_LEGACY_SCRIPT"))) {
      Flush(c.client);
      Read(c, script, args, op);
      pending_read_[c.client] = std::move(op);
      return;
    }
    if (plain_set) {  // beta.3's set: its read, then SET ... PX (s001:388-421)
      JoinRead(c.client, data_key, op);
      Flush(c.client);
      PlainSet(c, op);
    } else if (plain_del || (script && Script(c, "DELETE_WITH_INDEX_SCRIPT"))) {
      // beta.3's delete (s001:452-455), or the script's
      Flush(c.client);
      op.kind = K::kDelete;
      op.ambiguous = c.has_reply && c.reply.is_error();
    } else if (script && Script(c, "SET_WITH_QUOTA_SCRIPT")) {
      JoinRead(c.client, data_key, op);
      Flush(c.client);
      ScriptSet(c, args, op);
    } else if (script && Script(c, "COMPARE_AND_SET_WITH_QUOTA_SCRIPT")) {
      Flush(c.client);
      CompareAndSet(c, args, op);
    } else {
      return;
    }
    Add(c.client, std::move(op));
  }

  // A read: a plain GET, or the legacy claim's script.
  void Read(const RecordedCall& c, bool script, const std::vector<std::string>& args, TraceOp& op) {
    op.kind = K::kGet;
    if (script) {
      out_.ns.max_entries = std::max(out_.ns.max_entries, Int(args, 1));
      out_.ns.max_ttl_ms = std::max<int64_t>(1, Int(args, 2));
      max_ttl_shown_ = true;
    }
    if (!c.has_reply) return;
    const sim::Reply& r = c.reply;
    std::optional<std::string> raw;
    if (r.is_error()) {
      op.ambiguous = true;
    } else if (script) {
      const bool array = r.type == sim::Reply::Type::kArray && !r.elements.empty();
      if (array && r.elements[0].integer == 0) op.rejected = true;  // a quota error
      if (array && r.elements.size() > 1) raw = real::state::BulkOrNull(r.elements[1]);
    } else {
      raw = real::state::BulkOrNull(r);
    }
    op.ok = Envelope(op.key, raw, op.out_value, op.out_version);
  }

  void PlainSet(const RecordedCall& c, TraceOp& op) {
    op.kind = K::kSet;
    const std::optional<real::state::StateValue> v =
        real::state::EnvelopeFromJson(op.key, std::optional<std::string>(c.argv[2]));
    if (v) {
      op.value = real::state::Stringify(v->value);
      op.out_version = v->version;
      op.expires_at_ms = real::state::ParseIsoTime(v->expires_at).value_or(0);
    }
    int64_t ttl = 0;
    if (absl::SimpleAtoi(c.argv[4], &ttl)) op.ttl = ttl;
    longest_ttl_ = std::max(longest_ttl_, ttl);
    op.ambiguous = op.ambiguous || (c.has_reply && c.reply.is_error());
  }

  void ScriptSet(const RecordedCall& c, const std::vector<std::string>& args, TraceOp& op) {
    op.kind = K::kSet;
    int64_t version = 0;
    if (Envelope(op.key, args.size() > 4 ? std::optional<std::string>(args[4]) : std::nullopt,
                 op.value, version))
      op.out_version = version;
    op.ttl = Int(args, 2) - Int(args, 0);
    longest_ttl_ = std::max(longest_ttl_, *op.ttl);
    op.expires_at_ms = Int(args, 2);
    out_.ns.max_entries = std::max(out_.ns.max_entries, Int(args, 1));
    if (!c.has_reply) return;
    const sim::Reply& r = c.reply;
    op.ambiguous = op.ambiguous || r.is_error();
    op.rejected = !r.is_error() && (r.type != sim::Reply::Type::kArray || r.elements.empty() ||
                                    r.elements[0].integer != 1);
  }

  void CompareAndSet(const RecordedCall& c, const std::vector<std::string>& args, TraceOp& op) {
    op.kind = K::kCas;
    op.expected = Int(args, 0);
    int64_t version = 0;
    Envelope(op.key, args.size() > 5 ? std::optional<std::string>(args[5]) : std::nullopt, op.value,
             version);
    op.ttl = Int(args, 3) - Int(args, 1);
    longest_ttl_ = std::max(longest_ttl_, *op.ttl);
    op.expires_at_ms = Int(args, 3);
    out_.ns.max_entries = std::max(out_.ns.max_entries, Int(args, 2));
    if (!c.has_reply) return;
    const sim::Reply& r = c.reply;
    const bool array = r.type == sim::Reply::Type::kArray && !r.elements.empty();
    op.ambiguous = r.is_error();
    op.rejected = array && r.elements[0].integer == 0;
    op.ok = array && r.elements[0].integer == 1;
    std::optional<std::string> raw;
    if (array && r.elements.size() > 1) raw = real::state::BulkOrNull(r.elements[1]);
    Envelope(op.key, raw, op.out_value, op.out_version);
    if (op.ok) op.out_value.clear();
  }

  Rebuilt out_;
  bool max_ttl_shown_ = false;       // a claim's ARGV[3] named the namespace's maxTtl
  int64_t longest_ttl_ = 0;          // the longest TTL a write asked for
  std::map<int, int> client_index_;  // trace client -> rebuilt client
  // A read each client made last, which its set's script may follow.
  std::map<int, TraceOp> pending_read_;
  // beta.3: the KEYS a client sent last (a set's quota check, before its read).
  std::map<int, size_t> pending_keys_;
};

Rebuilt Rebuild(const RecordedCalls& calls) { return Rebuilder().Run(calls); }

void JudgeStateTraceOps(const std::string&, const RecordedCalls& calls, int64_t, RunOutcome& out) {
  const Rebuilt r = Rebuild(calls);
  const RecordedWindows windows(calls);
  if (windows.empty()) return;
  checker::RegisterHistory history;
  for (size_t c = 0; c < r.clients.size(); ++c)
    for (const TraceOp& t : r.clients[c]) {
      if (t.rejected) continue;  // a quota error writes nothing
      const RecordedWindows::Window w = windows.of(t.first, t.last);
      checker::Operation<RegisterOp> o;
      o.partition = absl::StrCat(t.space, ":", t.key);  // as explore names it
      o.actor = static_cast<int>(c);
      o.invoke = w.invoke;
      o.invoke_ms = w.invoke_ms;
      o.ambiguous = t.ambiguous;
      if (!t.ambiguous) {
        o.ret = w.ret;
        o.ret_ms = w.ret_ms;
      }
      o.op.kind = t.kind;
      o.op.value = t.value;
      o.op.expected = t.expected;
      o.op.ok = t.ok;
      o.op.out_value = t.out_value;
      o.op.out_version = t.out_version;
      o.op.expires_at_ms = t.expires_at_ms;
      history.push_back(std::move(o));
    }
  StateWorkload w;
  w.clients = static_cast<int>(r.clients.size());
  JudgeHistory(history, w, windows.first_ms(), /*hot_key=*/false, out);
}

// testbed explore: each client makes its recorded operations through the port, in order, after
// the pause the capture shows before each (so the strategies and faults vary what is
// concurrent, and the port computes every argument from what this run's replies say).
class TraceRun : public StateRun {
 public:
  TraceRun(const StateEnv& env, Rebuilt ops, std::vector<std::vector<int64_t>> gaps)
      : StateRun(env), ops_(std::move(ops)), gaps_(std::move(gaps)) {}
  void Check(sim::World& world, RunOutcome& out) override {
    JudgeHistory(history_, w, world.start_ms(), /*hot_key=*/false, out);
    out.findings.insert(out.findings.end(), rec.findings.begin(), rec.findings.end());
  }

 private:
  sim::Task<void> Client(sim::Ctx& ctx, int id) override {
    const std::vector<TraceOp>& mine = ops_.clients[static_cast<size_t>(id)];
    std::vector<std::unique_ptr<real::state::StateNamespace>> spaces;
    for (size_t s = 0; s < ops_.prefixes.size(); ++s)
      spaces.push_back(Namespace(ctx, "conn-" + std::to_string(s)));
    std::map<std::string, int64_t> seen_version;
    for (int i = 0; i < w.ops && i < static_cast<int>(mine.size()); ++i) {
      if (w.skip.count({id, i})) continue;
      const TraceOp& t = mine[static_cast<size_t>(i)];
      const int64_t gap = gaps_[static_cast<size_t>(id)][static_cast<size_t>(i)];
      co_await ctx.sleep(gap);
      RegisterCall call;
      call.kind = t.kind;
      call.key = t.key;
      call.partition = absl::StrCat(t.space, ":", t.key);
      call.value = t.value.empty() ? real::state::Json() : real::state::Json::parse(t.value);
      call.ttl = t.ttl;
      call.expected = t.expected;
      call.quota_error_is_finding = false;
      real::state::StateNamespace& ns = *spaces[static_cast<size_t>(t.space)];
      co_await MakeRegisterCall(ctx, ns, w, id, call, seen_version, &history_, &rec);
    }
  }
  Rebuilt ops_;
  std::vector<std::vector<int64_t>> gaps_;  // ms before each operation, as the capture shows
  checker::RegisterHistory history_;
};

std::unique_ptr<PropertyRun> Explore(const std::string&, const RecordedCalls& calls,
                                     const RunSpec& spec, const sim::FaultOptions& faults,
                                     const real::ScriptCatalog& scripts) {
  Rebuilt r = Rebuild(calls);
  std::vector<std::vector<int64_t>> gaps;
  const int64_t start = calls.empty() ? 0 : calls.front().at_ms;
  for (const auto& mine : r.clients) {
    gaps.emplace_back();
    int64_t last = start;
    for (const TraceOp& t : mine) {
      gaps.back().push_back(std::max<int64_t>(0, calls[t.first].at_ms - last));
      last = calls[t.last].at_ms;
    }
  }
  StateWorkload w;
  w.seed = spec.seed;
  w.clients = std::min<int>(spec.clients, static_cast<int>(r.clients.size()));
  w.ops = spec.ops;
  w.version = spec.version;
  w.skip = spec.skip;
  w.faults = faults;
  w.ns = r.ns;
  // The env lives as long as the run: it is kept by the run's own copy below.
  struct Owned : TraceRun {
    Owned(std::unique_ptr<StateEnv> env, Rebuilt ops, std::vector<std::vector<int64_t>> gaps)
        : TraceRun(*env, std::move(ops), std::move(gaps)), env_(std::move(env)) {}
    std::unique_ptr<StateEnv> env_;
  };
  return std::make_unique<Owned>(std::make_unique<StateEnv>(w, scripts), std::move(r),
                                 std::move(gaps));
}

std::vector<int> OpsPerClient(const RecordedCalls& calls) {
  std::vector<int> n;
  for (const auto& mine : Rebuild(calls).clients) n.push_back(static_cast<int>(mine.size()));
  return n;
}

}  // namespace

const TraceSupport* StateTraceSupport(const std::string& version) {
  static const TraceSupport kSupport = {
      {"cas-versions-linearizable"},
      "they judge what a capture does not hold: probes with their own keys, "
      "values and instants (expiry boundaries, quotas, read-back, foreign values), a second "
      "backend (memory-matches-redis), old pods' versions, or the server's keys after the run",
      OpsPerClient,
      JudgeStateTraceOps,
      Explore,
      nullptr};
  return version == "beta3" || version == "beta23" || version == "beta24" || version == "beta30"
             ? &kSupport
             : nullptr;
}

}  // namespace testbed::props::state
