// Recorded traces of handles (issue 29, item 3): what a capture's calls show of each draft's
// commit claims, judged as work-at-most-once judges a run. A handle's record is the value of a
// state entry (seed 002 on the state store of seed 000), and every write of it is
// COMPARE_AND_SET_WITH_QUOTA_SCRIPT (the handle runtime's storage CAS) whose envelope, ARGV[6],
// holds the record; the reply's first element says whether it landed. Per draft (the entry's
// key), in the capture's order, a landed write of
//   status "committing" with a claim_id no live claim has   is a claim (active -> committing,
//                                                            js 625): the claimant's work runs
//   status "committing" with the live claim's claim_id      a heartbeat renewal (js 670-726)
//   status "committed"                                      the finalize: the claim is released
//   status "active" from the claimant's own client          the restore after failed work
//                                                            (js 735): released
// A claim that lands while another is live (neither finalized nor restored) is a second holder;
// when both claimants then send a finalize (landed or not: the port sends it only after its work
// returned a result, js 770), work() ran twice: work-ran-twice. work-at-most-once counts work
// that returned (its upstream side effect); a failed work is restored and may run again, by
// design (js 735). A claimant that sent no finalize may have crashed, or its work failed, so
// such a pair is not a finding. A capture holds no upstream side
// effects, and a replay whose Redis lost a claim differs from the emulator's and is not judged,
// so work-ran-twice-after-lost-claim is not a class of a trace.
//
// What cannot be judged: the other properties need the callers' answers and clocks (a read's
// expiry is judged by a clock the capture does not hold), the upstream work's effects and
// results, a second backend, or the model beside each call.
//
// testbed explore (item 4) makes each client's handle operations again through the port, in a
// drafts-workload run judged by the property's own judge (the upstream work's side effects). How
// a client's calls become operations (the port's storage calls, real/handles/handle.cc; a read is
// beta.30's GET of the handle's key or beta.24's CLAIM_LEGACY_SCRIPT, a write the CAS script):
//   create    a write at version 0 of an active record (js 548); up to 5 of them while none
//             lands (a collision retries with fresh words). Its data is the record's.
//   read      a read, and the touch: a write of the active record with the data it read (js 577)
//   update    a read and a write of the active record with other data; up to 3 times while the
//             write does not land (js 590-613). Made again, it writes the data the last one wrote.
//   commit    a read and the claim (a write of status committing), then, while the work runs,
//             the renewal loop's writes with the claim's claim_id and its re-reads, then the
//             finalize (status committed, up to 3 attempts) or the restore after failed work
//             (status active). Its work runs from the claim to the finalize or restore, and fails
//             when it was restored; when neither came, to the client's next call, or (the capture
//             ended first) a lease past the capture's end. A commit whose claim did not land ran
//             no work here; made again, its work runs as long as the trace's longest.
//   discard   a read and a write of status discarded (the tombstone), up to 3 times
//   a read and nothing else: an operation that stopped at its load (not found, expired, busy,
//             or a cursor read); which operation it was the calls do not show, so it is made
//             again as a read, the one that writes least.
// The kinds come from the records the creates wrote (idle and hard TTLs from their deadlines, a
// cursor's TTL; the result TTL from a finalize's record, else the hard TTL), maxEntries from the
// CAS's ARGV[3], the lease from a renewal's TTL (else the shortest claim's TTL, which is at
// least the lease; else the SDK's 5 minutes), the connections from the keys' scopes (a
// connection's name is not in the capture: session-N when its digest is session-N's, else
// connection-N), and the provider from the keys.
#include <absl/strings/match.h>
#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>

#include <absl/strings/ascii.h>

#include <algorithm>
#include <map>
#include <memory>
#include <stdexcept>
#include <optional>
#include <tuple>
#include <utility>

#include "properties/handles/handles_system.h"
#include "properties/shared/recorded_replies.h"
#include "real/state/redis_common.h"
#include "sim/digest.h"

namespace testbed::props::handles {
namespace {

struct Claim {
  int client = -1;
  std::string claim_id;
  int64_t line = 0;
  std::vector<int64_t> versions;  // the versions its claim and its renewals wrote
  bool worked = false;  // its claimant sent a finalize after it (the work ran and returned)
  bool holds(int64_t expected) const {
    return std::find(versions.begin(), versions.end(), expected) != versions.end();
  }
};

// A handle's Redis key: "apifuse:provider-state:v2:<provider>:handle.<kind>:<scope>:<handle>"
// (real/state/v2.cc's state prefix, js 25's namespace).
struct HandleKey {
  std::string provider, kind, scope, handle;
};

std::optional<HandleKey> ParseKey(const std::string& key) {
  const std::string prefix = "apifuse:provider-state:v2:";
  const std::string ns = std::string(":") + real::handles::kNamespacePrefix;
  if (!absl::StartsWith(key, prefix)) return std::nullopt;
  const size_t kind = key.find(ns, prefix.size());
  const size_t scope = key.find(":scope:", kind == std::string::npos ? key.size() : kind);
  const size_t last = key.rfind(':');
  if (kind == std::string::npos || scope == std::string::npos || last <= scope) return std::nullopt;
  return HandleKey{key.substr(prefix.size(), kind - prefix.size()),
                   key.substr(kind + ns.size(), scope - kind - ns.size()),
                   key.substr(scope + 1, last - scope - 1), key.substr(last + 1)};
}

// One call of a recorded client, as the handle runtime's storage made it.
struct Seen {
  enum What { kOther, kRead, kWrite } what = kOther;
  std::string key;  // the Redis key
  HandleKey handle;
  std::optional<Json> record;  // read: the record it returned; write: the record it wrote
  int64_t expected = 0, ttl_ms = 0, max_entries = 0;
  int64_t version = 0;  // write: the version its envelope writes
  size_t bytes = 0;     // write: the envelope's length
  // write: landed; a conflict (its version moved: the port loads and writes again); what it
  // found when it did not land. Any call: failed (an error reply, the outcome unknown).
  bool landed = false, conflict = false, failed = false;
  std::optional<Json> current;
  std::string status() const { return record ? record->value("status", "") : ""; }
  std::string claim_id() const { return record ? record->value("claim_id", "") : ""; }
  bool writes(const std::string& k, const char* s) const {
    return what == kWrite && key == k && status() == s;
  }
};

std::optional<Json> RecordOf(const std::string& key, const std::optional<std::string>& raw,
                             int64_t* version = nullptr) {
  if (!raw || real::state::IsStateTombstone(raw)) return std::nullopt;
  const std::optional<real::state::StateValue> v = real::state::EnvelopeFromJson(key, raw);
  if (!v || !v->value.is_object()) return std::nullopt;
  if (version) *version = v->version;
  return v->value;
}

Seen Parse(const RecordedCall& c) {
  Seen s;
  std::vector<std::string> keys, args;
  int64_t n = 0;
  if (!c.script.empty() && c.argv.size() > 3 && absl::SimpleAtoi(c.argv[2], &n) && n >= 1 &&
      static_cast<size_t>(3 + n) <= c.argv.size()) {
    keys.assign(c.argv.begin() + 3, c.argv.begin() + 3 + n);
    args.assign(c.argv.begin() + 3 + n, c.argv.end());
  }
  const sim::Reply& r = c.reply;
  const bool array = r.type == sim::Reply::Type::kArray && !r.elements.empty();
  auto arg = [&args](size_t i) {
    int64_t v = 0;
    return i < args.size() && absl::SimpleAtoi(args[i], &v) ? v : int64_t{0};
  };
  if (c.script.empty() && c.argv.size() == 2 && absl::AsciiStrToUpper(c.argv[0]) == "GET") {
    s.what = Seen::kRead;
    s.key = c.argv[1];
    s.record = RecordOf(s.key, real::state::BulkOrNull(r));
  } else if (!keys.empty() && absl::EndsWith(c.script, "/CLAIM_LEGACY_SCRIPT")) {
    s.what = Seen::kRead;
    s.key = keys[0];
    if (array && r.elements.size() > 1)
      s.record = RecordOf(s.key, real::state::BulkOrNull(r.elements[1]));
  } else if (!keys.empty() && args.size() > 5 &&
             absl::EndsWith(c.script, "/COMPARE_AND_SET_WITH_QUOTA_SCRIPT")) {
    s.what = Seen::kWrite;
    s.key = keys[0];
    s.expected = arg(0);
    s.max_entries = arg(2);
    s.ttl_ms = arg(3) - arg(1);  // expires_at - now
    s.bytes = args[5].size();
    s.record = RecordOf(s.key, args[5], &s.version);
    s.landed = array && r.elements[0].integer == 1;
    s.conflict = array && !s.landed && r.elements[0].integer != 0;  // 0: the quota refused it
    if (s.conflict && r.elements.size() > 1)
      s.current = RecordOf(s.key, real::state::BulkOrNull(r.elements[1]));
  }
  s.failed = r.is_error();
  const std::optional<HandleKey> k = ParseKey(s.key);
  if (!k) s.what = Seen::kOther;
  if (k) s.handle = *k;
  return s;
}

void JudgeHandlesTraceOps(const std::string&, const RecordedCalls& calls, int64_t,
                          RunOutcome& out) {
  std::map<std::string, std::vector<Claim>> claims;  // per draft: every claim, in order
  std::map<std::string, std::vector<size_t>> live;   // per draft: the claims not released
  std::vector<std::tuple<std::string, size_t, size_t>> holders;  // a claim landed over another
  for (const RecordedCall& c : calls) {
    const Seen seen = Parse(c);
    if (seen.what != Seen::kWrite || seen.status().empty()) continue;
    const std::string& key = seen.key;
    const bool landed = seen.landed;
    const std::optional<Json>& record = seen.record;
    std::vector<Claim>& mine = claims[key];
    std::vector<size_t>& held = live[key];
    const std::string status = record->value("status", "");
    const std::string claim_id = record->value("claim_id", "");
    // A claimant's finalize, landed or not, shows that its work ran and returned a result: the
    // port sends it only then, expecting the version its claim or its last renewal wrote (js
    // 770-790). The version links it to its claim whatever connection carried it: a client
    // library's pool, or a connection per call, is as one connection.
    if (status == "committed")
      for (Claim& k : mine)
        if (k.holds(seen.expected)) k.worked = true;
    if (!landed) continue;
    if (status == "committing") {
      const auto renewed = std::find_if(
          mine.begin(), mine.end(), [&claim_id](const Claim& k) { return k.claim_id == claim_id; });
      if (renewed != mine.end()) {
        renewed->versions.push_back(seen.version);
        continue;
      }
      mine.push_back({c.client, claim_id, c.line, {seen.version}});
      for (const size_t other : held) holders.emplace_back(key, other, mine.size() - 1);
      held.push_back(mine.size() - 1);
    } else if (status == "committed" || status == "active") {
      // The finalize, or the claimant's restore after failed work (from the version it holds,
      // js 735), releases its claim; a committed record ends every claim.
      std::erase_if(
          held, [&](size_t k) { return status == "committed" || mine[k].holds(seen.expected); });
    }
  }
  for (const auto& [key, first, second] : holders) {
    const Claim& a = claims[key][first];
    const Claim& b = claims[key][second];
    if (!a.worked || !b.worked) continue;
    const std::string draft = key.substr(key.rfind(':') + 1);
    out.findings.push_back(
        {"work-ran-twice",
         absl::StrCat("work() ran twice for ", draft, ": client ", a.client, "'s claim (line ",
                      a.line,
                      " of the capture) was still live, neither finalized nor restored, when "
                      "client ",
                      b.client, "'s claim landed (line ", b.line,
                      "); both then sent a finalize, which the port sends only once its work "
                      "returned")});
  }
}

// One handle operation of a recorded client.
struct TraceOp {
  TracePlans::Op plan;
  std::string kind, scope;     // as the keys name them
  size_t first = 0, last = 0;  // its calls (indices into its client's calls)
  size_t at = 0;               // its first call (index into the trace)
  // commit: whether its claim was its own (its work ran), and the calls of its claim and of the
  // work's end (the finalize or restore; -1: none came)
  bool worked = false;
  bool open = false;  // its work had not returned when the capture ended
  // A write whose load its connection did not carry: the operation's calls went on several
  // connections, so which operation it was cannot be read here; it is judged, not made again.
  bool lone_write = false;
  int64_t claim = -1, work_end = -1;
};

struct Rebuilt {
  std::vector<std::vector<TraceOp>> clients;  // by client, in the order they first appear
  TracePlans plans;                           // without clients' operations
};

// The kind named `name`, from what the trace's records show of it.
real::handles::HandleKind KindOf(const std::string& name, const std::vector<Seen>& all) {
  real::handles::HandleKind k;
  k.name = name;
  k.field_name = "handle";
  k.max_entries = 0;
  int64_t idle = -1, hard = -1, result = -1;
  for (const Seen& s : all) {
    if (s.what != Seen::kWrite || s.handle.kind != name || !s.record) continue;
    const Json& r = *s.record;
    k.max_entries = std::max(k.max_entries, s.max_entries);
    k.max_value_bytes = std::max<int64_t>(k.max_value_bytes, static_cast<int64_t>(s.bytes));
    if (s.handle.scope == "scope:provider") k.access = "public";
    const int64_t created = r.value("created_at_ms", int64_t{0});
    if (s.expected == 0 && s.status() == "active" && idle < 0) {
      k.type = r.value("type", std::string("draft"));
      idle = r.value("expires_at_ms", created) - created;
      hard = r.value("max_expires_at_ms", created) - created;
      const std::string words = s.handle.handle.substr(s.handle.handle.find('_') + 1);
      k.word_count = static_cast<int>(std::count(words.begin(), words.end(), '-')) + 1;
    }
    if (s.status() == "committed" && result < 0 && r.contains("committed_at_ms"))
      result = r.value("expires_at_ms", int64_t{0}) - r["committed_at_ms"].get<int64_t>();
  }
  if (k.max_entries == 0) k.max_entries = 100;
  if (real::handles::IsDraftKind(k)) {
    k.max_ttl_ms = std::max<int64_t>(1, hard);
    k.idle_ttl_ms = std::max<int64_t>(1, idle);
    k.result_ttl_ms = result >= 0 ? result : k.max_ttl_ms;
  } else {
    k.ttl_ms = std::max<int64_t>(1, idle);
  }
  return k;
}

// The connection a scope names (nullopt: provider scope, or the connection id missing).
std::optional<std::string> ConnectionOf(const std::string& scope, size_t n) {
  const std::string digest = "scope:connection:sha256:";
  if (!absl::StartsWith(scope, digest)) return std::nullopt;
  for (int i = 1; i <= 9; ++i)
    if (sim::Sha256Hex(absl::StrCat("session-", i)) == scope.substr(digest.size()))
      return absl::StrCat("session-", i);
  return absl::StrCat("connection-", n + 1);
}

// The calls of one client from mine[k] on that make one handle operation. Throws
// std::invalid_argument when no operation of the port makes them.
TraceOp ReadOp(const std::vector<Seen>& seen, size_t& k) {
  const size_t n = seen.size();
  const Seen& s = seen[k];
  TraceOp op;
  op.first = k;
  op.kind = s.handle.kind;
  op.scope = s.handle.scope;
  TracePlans::Op& p = op.plan;
  auto is_read = [&seen, n](size_t i, const std::string& key) {
    return i < n && seen[i].what == Seen::kRead && seen[i].key == key;
  };
  if (s.what == Seen::kWrite && s.expected == 0 && s.status() == "active") {
    p.op = "create";
    p.data = s.record->value("data", Json());
    int attempts = 0;
    for (; k < n && attempts < real::handles::kCreateAttempts && seen[k].what == Seen::kWrite &&
           seen[k].expected == 0 && seen[k].status() == "active";
         ++k, ++attempts) {
      if (seen[k].landed) p.draft = seen[k].handle.handle;
      if (!seen[k].conflict) {  // landed, refused by the quota, or failed: no other attempt
        ++k;
        break;
      }
    }
    op.last = k - 1;
    return op;
  }
  if (s.what != Seen::kRead) {  // its load went on another connection (a pool, or one per call)
    op.lone_write = true;
    p.draft = s.handle.handle;
    op.last = k++;
    return op;
  }
  const std::string key = s.key;
  p.draft = s.handle.handle;
  p.op = "read";
  ++k;
  const Seen* w = k < n && seen[k].what == Seen::kWrite && seen[k].key == key ? &seen[k] : nullptr;
  if (!w) {  // stopped at its load
    op.last = k - 1;
    return op;
  }
  const std::string status = w->status();
  if (status == "committing") {
    p.op = "commit";
    const std::string claim_id = w->claim_id();
    bool ours = w->landed;
    op.claim = static_cast<int64_t>(k);
    ++k;
    if (w->failed && is_read(k, key)) {  // the re-read after an ambiguous claim (js 643)
      ours = seen[k].status() == "committing" && seen[k].claim_id() == claim_id;
      ++k;
    }
    op.worked = ours;
    if (ours) {
      while (k < n && seen[k].key == key) {
        const Seen& t = seen[k];
        if (t.what == Seen::kRead ||
            (t.what == Seen::kWrite && t.status() == "committing" && t.claim_id() == claim_id)) {
          ++k;  // the renewal loop's writes and re-reads (js 670-726)
          continue;
        }
        if (t.writes(key, "active")) {  // the restore after failed work (js 735)
          p.work_fails = true;
          op.work_end = static_cast<int64_t>(k++);
        } else if (t.writes(key, "committed")) {  // the finalize, up to 3 attempts (js 788)
          op.work_end = static_cast<int64_t>(k);
          // (Every attempt the client sent: one that landed may still have failed for it, its
          // reply lost, and the next attempt then finds the draft committed.)
          for (int a = 0; a < real::handles::kCommitFinalizeAttempts && k < n &&
                          seen[k].writes(key, "committed");
               ++a)
            ++k;
        } else {
          throw std::invalid_argument("a write of " + t.handle.handle + " (status " + t.status() +
                                      ") while its commit's work ran");
        }
        break;
      }
    }
  } else if (status == "active" || status == "discarded") {
    const bool discard = status == "discarded";
    if (discard)
      p.op = "discard";
    else if (!s.record || w->record->value("data", Json()) != s.record->value("data", Json()))
      p.op = "update";
    const int attempts = p.op == "read" ? 1
                         : discard      ? real::handles::kDiscardAttempts
                                        : real::handles::kUpdateAttempts;
    size_t written = k++;  // the last write
    // A write whose version moved is tried again, its load and then its write (js 590-613); a
    // discard's only while the record it found is there and not committing (js 849-866).
    auto again = [&seen, discard](const Seen& w) {
      return w.conflict &&
             (!discard || (w.current && w.current->value("status", "") != "committing"));
    };
    for (int a = 1; a < attempts && again(seen[written]) && is_read(k, key); ++a) {
      // (A read whose write writes another status starts the next operation: the write that did
      // not land reached Redis late, after its client had given up on it.)
      if (k + 1 < n && seen[k + 1].what == Seen::kWrite && seen[k + 1].key == key &&
          !seen[k + 1].writes(key, status.c_str()))
        break;
      ++k;
      if (k >= n || !seen[k].writes(key, status.c_str())) break;
      written = k++;
    }
    if (p.op == "update") p.data = seen[written].record->value("data", Json());
  } else {
    throw std::invalid_argument("a write of " + w->handle.handle + " with status \"" + status +
                                "\", which no handle operation writes after its load");
  }
  op.last = k - 1;
  return op;
}

// Throws std::invalid_argument naming the capture's line of the first call that no handle
// operation of the port makes as recorded.
Rebuilt Rebuild(const RecordedCalls& recorded) {
  const RepliedCalls replied(recorded);
  const RecordedCalls& calls = *replied;
  std::vector<Seen> all;
  all.reserve(calls.size());
  for (const RecordedCall& c : calls) all.push_back(Parse(c));
  Rebuilt out;
  TracePlans& plans = out.plans;
  std::map<std::string, size_t> kinds, connections;
  const int64_t start = calls.empty() ? 0 : calls.front().at_ms;
  const int64_t end = calls.empty() ? 0 : calls.back().at_ms;
  int64_t longest = 0, lease = -1, shortest_claim = -1;
  for (const auto& [client, sent] : CallsByClient(calls)) {
    // A write just like its client's next call is the client library sending it again after a
    // reconnect (ioredis's autoResendUnfulfilledCommands): Redis ran it twice, and the client got
    // the second reply, so the operation made one call, answered as the second was. (No
    // operation sends one write twice: each begins with a read, or a create with a new name. Two
    // like reads may be two operations, and stay two: a re-sent read is read twice.)
    std::vector<size_t> mine;
    for (size_t j = 0; j < sent.size(); ++j)
      if (j + 1 == sent.size() || all[sent[j]].what != Seen::kWrite ||
          calls[sent[j]].argv != calls[sent[j + 1]].argv)
        mine.push_back(sent[j]);
    std::vector<Seen> seen;
    for (size_t i : mine) seen.push_back(all[i]);
    out.clients.emplace_back();
    int64_t last = start;
    for (size_t k = 0; k < seen.size();) {
      const RecordedCall& c = calls[mine[k]];
      if (seen[k].what == Seen::kOther)
        throw std::invalid_argument(absl::StrCat("line ", c.line, " of the capture: ", c.argv[0],
                                                 c.script.empty() ? "" : " of " + c.script,
                                                 " is no call of a handle operation's storage"));
      TraceOp op;
      try {
        op = ReadOp(seen, k);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(absl::StrCat("line ", c.line, " of the capture: ", e.what()));
      }
      op.at = mine[op.first];
      if (plans.provider_id.empty()) plans.provider_id = seen[op.first].handle.provider;
      const auto kind = kinds.try_emplace(op.kind, kinds.size()).first;
      if (kind->second == plans.kinds.size()) plans.kinds.push_back(KindOf(op.kind, all));
      const std::string scope = absl::StartsWith(op.scope, "scope:connection:sha256:")
                                    ? op.scope
                                    : std::string("scope:none");
      const auto conn = connections.try_emplace(scope, connections.size()).first;
      if (conn->second == plans.connections.size())
        plans.connections.push_back(ConnectionOf(op.scope, plans.connections.size()));
      op.plan.kind = kind->second;
      op.plan.connection = conn->second;
      op.plan.gap_ms = std::max<int64_t>(0, c.at_ms - last);
      if (op.last > op.first)
        op.plan.latency_ms = std::max<int64_t>(0, calls[mine[op.first + 1]].at_ms - c.at_ms);
      last = calls[mine[op.last]].at_ms;
      if (op.worked) {
        const Seen& claim = seen[static_cast<size_t>(op.claim)];
        const int64_t from = calls[mine[static_cast<size_t>(op.claim)]].at_ms;
        const int64_t to = op.work_end >= 0 ? calls[mine[static_cast<size_t>(op.work_end)]].at_ms
                           : op.last + 1 < seen.size() ? calls[mine[op.last + 1]].at_ms
                                                       : end;
        op.plan.work_ms = std::max<int64_t>(0, to - from);
        op.open = op.work_end < 0 && op.last + 1 >= seen.size();
        longest = std::max(longest, op.plan.work_ms);
        if (claim.ttl_ms > 0)
          shortest_claim =
              shortest_claim < 0 ? claim.ttl_ms : std::min(shortest_claim, claim.ttl_ms);
        for (size_t r = static_cast<size_t>(op.claim) + 1; r <= op.last; ++r)
          if (seen[r].what == Seen::kWrite && seen[r].status() == "committing" &&
              seen[r].claim_id() == claim.claim_id() && seen[r].ttl_ms > 0)
            lease = lease < 0 ? seen[r].ttl_ms : std::min(lease, seen[r].ttl_ms);
      }
      out.clients.back().push_back(std::move(op));
    }
  }
  plans.lease_ms = lease > 0            ? lease
                   : shortest_claim > 0 ? shortest_claim
                                        : real::handles::kCommitLeaseMs;
  // A commit whose claim did not land ran no work: made again, it works as long as the longest.
  // One whose work had not returned when the capture ended runs a lease past the capture's end
  // (any longer would do as well: the capture shows only that it outlasted it).
  for (auto& mine : out.clients)
    for (TraceOp& op : mine)
      if (op.plan.op == "commit" && !op.worked)
        op.plan.work_ms = longest;
      else if (op.open)
        op.plan.work_ms += plans.lease_ms;
  if (plans.provider_id.empty()) plans.provider_id = "provider-under-test";
  return out;
}

// Throws std::invalid_argument naming the first write that explore cannot make again: one
// whose load its connection did not carry (the port loads a handle before it writes it).
void CheckMadeAgain(const RecordedCalls& calls, const Rebuilt& r) {
  for (const auto& mine : r.clients)
    for (const TraceOp& op : mine)
      if (op.lone_write) {
        const RecordedCall& c = calls[op.at];
        throw std::invalid_argument(absl::StrCat(
            "line ", c.line, " of the capture: a write of ", op.plan.draft,
            " that no read of it on its connection came before (the port loads a handle before "
            "it writes it; an operation whose calls went on several connections is judged, not "
            "made again)"));
      }
}

void CheckMadeAgain(const RecordedCalls& calls) { CheckMadeAgain(calls, Rebuild(calls)); }

// The operations made again: each client's, and what they run on.
TracePlans PlansOf(const RecordedCalls& calls) {
  Rebuilt r = Rebuild(calls);
  CheckMadeAgain(calls, r);
  for (const auto& mine : r.clients) {
    r.plans.clients.emplace_back();
    for (const TraceOp& op : mine) r.plans.clients.back().push_back(op.plan);
  }
  return std::move(r.plans);
}

std::unique_ptr<PropertyRun> Explore(const std::string&, const RecordedCalls& calls,
                                     const RunSpec& spec, const sim::FaultOptions&,
                                     const real::ScriptCatalog& scripts) {
  std::shared_ptr<const TracePlans> plans = OncePerTrace<TracePlans>(calls, PlansOf);
  RunSpec s = spec;
  s.clients = std::min<int>(spec.clients, static_cast<int>(plans->clients.size()));
  return TraceRun(s, scripts, std::move(plans));
}

std::vector<int> OpsPerClient(const RecordedCalls& calls) {
  std::vector<int> n;
  for (const auto& mine : Rebuild(calls).clients) n.push_back(static_cast<int>(mine.size()));
  return n;
}

}  // namespace

const TraceSupport* HandlesTraceSupport(const std::string& version) {
  static const TraceSupport kSupport = {
      {"work-at-most-once"},
      "they judge what a capture does not hold: the callers' answers and clocks (a read's expiry "
      "is judged by the caller's clock), the upstream work's effects and results, the memory "
      "backend, or the model beside each call",
      OpsPerClient,
      JudgeHandlesTraceOps,
      Explore,
      static_cast<void (*)(const RecordedCalls&)>(CheckMadeAgain)};
  return version == "beta24" || version == "beta30" ? &kSupport : nullptr;
}

}  // namespace testbed::props::handles
