// Recorded traces of the a2 event store (issue 29, items 3 and 4): the calls each client of a
// capture made, read back as the store's operations (append, claim, renew, complete, fail, the
// reads, snapshots, presence, inspection), judged as calls-linearizable judges a run; and the same
// operations made again through the port, each client its own in order, for testbed explore.
//
// How calls become operations. An operation starts with a call only it starts with (the ARGV of
// each script: docs/traces.md):
//   APPEND_LUA            append (session, the events: id, type, payload, cause, lane, settled)
//   CLAIM_AVAILABLE_LUA   claim (holder, now, lease = expiresAt - now, excluded indexes)
//   RENEW_CLAIMS_LUA      renew (holder, now, ttl = expiresAt - now, (index, attempt) pairs)
//   COMPLETE_ATTEMPT_LUA  complete (now, index, attempt, the children)
//   FAIL_ATTEMPT_LUA      fail (index, attempt, error, maxFailures, now)
//   PUT_SNAPSHOT_LUA      putSnapshot (the reducer from KEYS[1]; index, state, now = updatedAt)
//   PRESENCE_SET_LUA      presenceSet (at, ttl, the fields; seen and now = e - ttl from a value)
//   PRESENCE_READ_LUA     presenceRead (now)
//   READ_STATE_LUA        readState (session and reducer from KEYS[1])
//   GET <p>:<s>:count     read (after and through from the XRANGE that follows)
//   XRANGE <p>:<s>:log <after+1>-0 +            readEvents
//   ZRANGEBYLEX <p>:sessions [<prefix> + LIMIT  listSessions
//   SCAN 0 MATCH <p>:<s>:snap:* COUNT 100       listSnapshots
//   SET <p>:<s>:watched 1 PX <ttl>              markWatched
// Where the operation ends, and what its caller was answered, the port itself decides: the
// rebuilt operation runs through real/a2/store.cc against the client's recorded calls, each
// call answered with its recorded reply (the emulator's, in the recorded order). Every call the
// port makes must be the client's next recorded call (EVAL of the catalog's body for an EVAL or
// EVALSHA of it), so an operation whose arguments the calls do not show exactly cannot pass.
//
// What the calls do not show, and how it is read:
//   - a read whose range ends before it starts (GET of the frontier, no XRANGE): its `after`;
//     and a listSessions page after a cursor: its prefix. Such reads are left out of the judged
//     history (a read left out cannot make a history violate).
//   - a lane "" and no lane are one argument (the port writes none as ""): read as no lane, the
//     weaker claim (model/a2.h judges "" as a lane of its own, promise 4's empty-lane case).
//   - presence.set of deletes only carries no `now`: the capture's instant is taken.
//   - a payload, state or value is JSON.parse of its text; the port writes it back with sorted
//     keys (nlohmann), so a capture from a client that orders keys otherwise does not pass.
//   - the key prefix: from KEYS[3] of an append or completion (<prefix>:ids), else the first
//     ':'-part of the first script's first key.
// A write that cannot be rebuilt makes the trace unjudgeable (its effect would be missing from
// the history): testbed replay says why and judges nothing; check --trace and explore exit 2.
//
// Times: each operation's window runs from its client's previous call to its client's next call
// (properties/shared/recorded_windows.h). The model's answers depend on the caller's clock (`now`,
// from the arguments), not on the window.
#include <absl/strings/ascii.h>
#include <absl/strings/match.h>
#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>

#include "model/json_text.h"
#include "properties/a2/a2_calls.h"
#include "properties/a2/a2_system.h"
#include "properties/shared/recorded_replies.h"
#include "properties/shared/recorded_windows.h"
#include "sim/strategies.h"

namespace testbed::props::a2 {
namespace {

bool SameCall(const sim::Argv& argv, const RecordedCall& c) {
  if (argv.size() != c.argv.size() || argv.empty()) return false;
  if (absl::AsciiStrToUpper(argv[0]) == "EVAL") {
    const std::string cmd = absl::AsciiStrToUpper(c.argv[0]);
    if (cmd != "EVAL" && cmd != "EVALSHA") return false;
    if (!std::equal(argv.begin() + 2, argv.end(), c.argv.begin() + 2)) return false;
    return RecordedBody(c) == argv[1];
  }
  return absl::AsciiStrToUpper(argv[0]) == absl::AsciiStrToUpper(c.argv[0]) &&
         std::equal(argv.begin() + 1, argv.end(), c.argv.begin() + 1);
}

// A backend that answers one client's calls with their recorded replies: the port's k-th call
// of an operation must be one of the client's calls from `from` on, not yet answered.
class RecordedReplies : public sim::Backend {
 public:
  RecordedReplies(const RecordedCalls& calls, const std::vector<size_t>& mine, size_t from)
      : calls_(calls), mine_(mine), from_(from), used_(mine.size(), false) {}
  sim::Reply execute(const sim::Argv& argv, int64_t, int) override {
    for (size_t k = from_; k < mine_.size(); ++k)
      if (!used_[k] && SameCall(argv, calls_[mine_[k]])) {
        used_[k] = true;
        return calls_[mine_[k]].reply;
      }
    if (unmatched_.empty()) unmatched_ = argv;
    return sim::Reply::Error("ERR not in the capture");
  }
  void rebuild(const std::vector<sim::LoggedCommand>&, int64_t) override {}
  std::string describe_state(int64_t) override { return ""; }
  std::string name() const override { return "recorded replies"; }
  // How many of the client's calls from `from` on the operation made, when they are exactly the
  // next ones; else -1.
  int64_t consumed() const {
    if (!unmatched_.empty()) return -1;
    size_t n = 0;
    while (from_ + n < mine_.size() && used_[from_ + n]) ++n;
    for (size_t k = from_ + n; k < mine_.size(); ++k)
      if (used_[k]) return -1;
    return static_cast<int64_t>(n);
  }
  const sim::Argv& unmatched() const { return unmatched_; }

 private:
  const RecordedCalls& calls_;
  const std::vector<size_t>& mine_;
  size_t from_;
  std::vector<bool> used_;
  sim::Argv unmatched_;
};

sim::Task<void> PerformOne(sim::Ctx& ctx, const real::a2::Scripts* scripts, std::string prefix,
                           Plan plan, Json* answer, bool* transport) {
  real::a2::Store store(ctx, *scripts, prefix, [] { return std::string("not-in-the-capture"); });
  Json a = co_await PerformCall(store, plan, transport);
  *answer = std::move(a);
}

// One operation of a recorded client.
struct TraceOp {
  Plan plan;
  int64_t now = 0;             // the caller's clock, as the store got it
  size_t first = 0, last = 0;  // its calls (indices into the trace)
  Json answer;
  bool ambiguous = false;
  bool judged = true;  // false: a read whose arguments the calls do not show (left out)
};

struct Rebuilt {
  std::vector<std::vector<TraceOp>> clients;  // by client, in the order they first appear
};

int64_t Int(const std::string& s) {
  int64_t v = 0;
  if (!absl::SimpleAtoi(s, &v)) throw std::invalid_argument("\"" + s + "\" is not an integer");
  return v;
}

Json ParseJson(const std::string& s) {
  Json j = model::JsonParse(s);
  if (j.is_discarded()) throw std::invalid_argument("\"" + s + "\" is not JSON");
  return j;
}

class Reader {
 public:
  explicit Reader(const RecordedCalls& calls) : calls_(calls) {
    for (const RecordedCall& c : calls) {
      const std::vector<std::string> keys = Keys(c);
      if (keys.size() > 2 && absl::EndsWith(keys[2], ":ids") &&
          (Is(c, "APPEND_LUA") || Is(c, "COMPLETE_ATTEMPT_LUA"))) {
        prefix_ = keys[2].substr(0, keys[2].size() - 4);
        break;
      }
    }
    if (prefix_.empty())
      for (const RecordedCall& c : calls)
        if (const std::vector<std::string> keys = Keys(c); !keys.empty()) {
          prefix_ = keys[0].substr(0, keys[0].find(':'));
          break;
        }
    if (prefix_.empty()) prefix_ = kPrefix;
  }
  const std::string& prefix() const { return prefix_; }

  static bool Is(const RecordedCall& c, const std::string& constant) {
    return absl::StartsWith(c.script, "a2/") && absl::EndsWith(c.script, "/" + constant);
  }
  static std::vector<std::string> Keys(const RecordedCall& c) {
    int64_t n = 0;
    if (c.script.empty() || c.argv.size() < 3 || !absl::SimpleAtoi(c.argv[2], &n) || n < 0 ||
        static_cast<size_t>(3 + n) > c.argv.size())
      return {};
    return {c.argv.begin() + 3, c.argv.begin() + 3 + n};
  }
  static std::vector<std::string> Args(const RecordedCall& c) {
    const size_t from = 3 + Keys(c).size();
    return from <= c.argv.size() ? std::vector<std::string>(c.argv.begin() + from, c.argv.end())
                                 : std::vector<std::string>();
  }
  // The session (or namespace) a key names: <prefix>:<session><suffix>.
  std::string Session(const std::string& key, const std::string& suffix) const {
    const std::string head = prefix_ + ":";
    if (!absl::StartsWith(key, head) || !absl::EndsWith(key, suffix) ||
        key.size() < head.size() + suffix.size())
      throw std::invalid_argument("key " + key + " is not " + head + "<session>" + suffix);
    return key.substr(head.size(), key.size() - head.size() - suffix.size());
  }

  // The operation call k of the client whose calls are `mine` starts (call mine[k]): its plan
  // and the caller's clock; `judged` false for a read whose arguments are not shown. Throws
  // std::invalid_argument when no operation starts with the call.
  TraceOp Start(const std::vector<size_t>& mine, size_t k) {
    const RecordedCall& c = calls_[mine[k]];
    const std::vector<std::string> keys = Keys(c);
    const ArgAt arg{Args(c)};
    TraceOp op;
    op.now = c.at_ms;
    if (Is(c, "APPEND_LUA")) {
      Append(arg, op);
    } else if (Is(c, "CLAIM_AVAILABLE_LUA") || Is(c, "RENEW_CLAIMS_LUA")) {
      ClaimOrRenew(c, keys, arg, op);
    } else if (Is(c, "COMPLETE_ATTEMPT_LUA")) {
      Complete(arg, op);
    } else if (Is(c, "FAIL_ATTEMPT_LUA")) {
      Fail(keys, arg, op);
    } else if (Is(c, "PUT_SNAPSHOT_LUA") || Is(c, "READ_STATE_LUA")) {
      Snapshot(c, keys, arg, op);
    } else if (Is(c, "PRESENCE_SET_LUA")) {
      PresenceSet(keys, arg, op);
    } else if (Is(c, "PRESENCE_READ_LUA")) {
      op.plan.op = "presenceRead";
      op.plan.ns = Session(keys.at(0), ":presence");
      op.now = Int(arg(0));
    } else if (!c.script.empty()) {
      throw std::invalid_argument("no a2 operation starts with " + c.script);
    } else {
      PlainCommand(mine, k, op);
    }
    return op;
  }

 private:
  // A script's arguments, each by its index; too few is bad input.
  struct ArgAt {
    std::vector<std::string> a;
    const std::string& operator()(size_t i) const {
      if (i >= a.size()) throw std::invalid_argument("too few arguments");
      return a[i];
    }
  };

  void Append(const ArgAt& arg, TraceOp& op) const {
    Plan& p = op.plan;
    p.op = "append";
    p.session = arg(0);
    op.now = Int(arg(1));
    const int64_t n = Int(arg(2));
    for (int64_t e = 0; e < n; ++e) {
      const size_t at = 3 + 6 * static_cast<size_t>(e);
      real::a2::NewEvent ev;
      ev.id = arg(at);
      ev.type = arg(at + 1);
      ev.payload = ParseJson(arg(at + 2));
      if (!arg(at + 3).empty()) {
        const Json cause = ParseJson(arg(at + 3));
        real::a2::Cause cs{cause.value("index", int64_t{0}), cause.value("attempt", int64_t{0}),
                           std::nullopt};
        if (cause.contains("batchSize")) cs.batch_size = cause["batchSize"].get<int64_t>();
        ev.cause = cs;
      }
      if (!arg(at + 4).empty()) ev.lane = arg(at + 4);
      ev.settled = arg(at + 5) == "1";
      p.events.push_back(std::move(ev));
    }
  }

  void ClaimOrRenew(const RecordedCall& c, const std::vector<std::string>& keys, const ArgAt& arg,
                    TraceOp& op) const {
    Plan& p = op.plan;
    const bool claim = Is(c, "CLAIM_AVAILABLE_LUA");
    p.op = claim ? "claim" : "renew";
    p.session = claim ? Session(keys.at(0), ":log") : Session(keys.at(0), ":count");
    p.holder = arg(0);
    op.now = Int(arg(1));
    const int64_t span = Int(arg(2)) - op.now, n = Int(arg(3));
    for (int64_t e = 0; e < n; ++e) {
      if (claim)
        p.exclude.push_back(Int(arg(4 + static_cast<size_t>(e))));
      else
        p.refs.push_back(
            {Int(arg(4 + 2 * static_cast<size_t>(e))), Int(arg(5 + 2 * static_cast<size_t>(e)))});
    }
    (claim ? p.lease : p.ttl) = span;
  }

  void Complete(const ArgAt& arg, TraceOp& op) const {
    Plan& p = op.plan;
    p.op = "complete";
    p.session = arg(0);
    op.now = Int(arg(1));
    p.index = Int(arg(2));
    p.attempt = Int(arg(3));
    const int64_t n = Int(arg(4));
    for (int64_t e = 0; e < n; ++e) {
      const size_t at = 5 + 5 * static_cast<size_t>(e);
      real::a2::ChildEvent ch;
      ch.id = arg(at);
      ch.type = arg(at + 1);
      ch.payload = ParseJson(arg(at + 2));
      if (!arg(at + 3).empty()) ch.lane = arg(at + 3);
      ch.settled = arg(at + 4) == "1";
      p.children.push_back(std::move(ch));
    }
  }

  void Fail(const std::vector<std::string>& keys, const ArgAt& arg, TraceOp& op) const {
    Plan& p = op.plan;
    p.op = "fail";
    p.session = Session(keys.at(0), ":count");
    p.index = Int(arg(0));
    p.attempt = Int(arg(1));
    p.error = arg(2);
    p.max_failures = Int(arg(3));
    op.now = Int(arg(4));
  }

  void Snapshot(const RecordedCall& c, const std::vector<std::string>& keys, const ArgAt& arg,
                TraceOp& op) const {
    Plan& p = op.plan;
    const std::string rest = Session(keys.at(0), "");
    const size_t snap = rest.find(":snap:");
    if (snap == std::string::npos) throw std::invalid_argument(keys[0] + " is no snapshot key");
    p.session = rest.substr(0, snap);
    p.reducer = rest.substr(snap + 6);
    if (Is(c, "READ_STATE_LUA")) {
      p.op = "readState";
    } else {
      p.op = "putSnapshot";
      p.index = Int(arg(0));
      const Json j = ParseJson(arg(1));
      p.state = j.value("state", Json());
      op.now = j.value("updatedAt", op.now);
    }
  }

  void PresenceSet(const std::vector<std::string>& keys, const ArgAt& arg, TraceOp& op) const {
    Plan& p = op.plan;
    p.op = "presenceSet";
    p.ns = Session(keys.at(0), ":presence");
    p.at = Int(arg(0));
    p.ttl = Int(arg(1));
    const int64_t n = Int(arg(2));
    for (int64_t e = 0; e < n; ++e) {
      const Json key = ParseJson(arg(3 + 2 * static_cast<size_t>(e)));
      const std::string& value = arg(4 + 2 * static_cast<size_t>(e));
      if (!key.is_array() || key.size() != 2 || !key[0].is_string() || !key[1].is_string())
        throw std::invalid_argument("presence field " + key.dump() +
                                    " is not [participant, "
                                    "field]");
      p.participant = key[0].get<std::string>();
      if (value.empty()) {
        p.values.emplace_back(key[1].get<std::string>(), Json());
        continue;
      }
      const Json j = ParseJson(value);
      p.values.emplace_back(key[1].get<std::string>(), j.value("v", Json()));
      p.seen = j.value("s", int64_t{0});
      op.now = j.value("e", int64_t{0}) - p.ttl;
    }
  }

  // A plain command that starts an operation: the frontier's GET of read (with the XRANGE
  // after it), readEvents' XRANGE, listSessions' ZRANGEBYLEX, listSnapshots' SCAN, or
  // markWatched's SET.
  void PlainCommand(const std::vector<size_t>& mine, size_t k, TraceOp& op) {
    Plan& p = op.plan;
    const RecordedCall& c = calls_[mine[k]];
    const std::vector<std::string>& v = c.argv;
    const std::string cmd = absl::AsciiStrToUpper(v[0]);
    if (cmd == "GET" && v.size() == 2) {
      p.op = "read";
      p.session = Session(v[1], ":count");
      // The range the port read: the XRANGE after the frontier's GET (readRangePage).
      const int64_t frontier = c.reply.type == sim::Reply::Type::kBulk ? Int(c.reply.str) : 0;
      const RecordedCall* next = k + 1 < mine.size() ? &calls_[mine[k + 1]] : nullptr;
      if (next && next->argv.size() == 6 && absl::AsciiStrToUpper(next->argv[0]) == "XRANGE" &&
          next->argv[1] == prefix_ + ":" + p.session + ":log" &&
          absl::EndsWith(next->argv[2], "-0") && absl::EndsWith(next->argv[3], "-0")) {
        p.after = Int(next->argv[2].substr(0, next->argv[2].size() - 2)) - 1;
        const int64_t end = Int(next->argv[3].substr(0, next->argv[3].size() - 2));
        if (end < frontier) p.through = end;
      } else {
        p.after = frontier;  // an empty range: where it began is not in the calls
        op.judged = false;
      }
    } else if (cmd == "XRANGE" && v.size() == 4 && v[3] == "+" && absl::EndsWith(v[2], "-0")) {
      p.op = "readEvents";
      p.session = Session(v[1], ":log");
      p.after = Int(v[2].substr(0, v[2].size() - 2)) - 1;
    } else if (cmd == "ZRANGEBYLEX" && v.size() == 7 && v[1] == prefix_ + ":sessions" &&
               !v[2].empty()) {
      p.op = "listSessions";
      p.limit = Int(v[6]) - 1;
      if (v[2][0] == '[') {
        p.session = v[2].substr(1);
        last_list_prefix_ = p.session;
      } else {
        p.cursor = v[2].substr(1);
        p.session = last_list_prefix_;  // the prefix is not in the calls
        op.judged = false;
      }
    } else if (cmd == "SCAN" && v.size() == 6 && v[1] == "0") {
      p.op = "listSnapshots";
      std::string glob;
      for (size_t i = 0; i + 1 < v[3].size(); ++i) {
        if (v[3][i] == '\\') ++i;
        glob += v[3][i];
      }
      p.session = Session(glob, ":snap:");
    } else if (cmd == "SET" && v.size() == 5 && absl::AsciiStrToUpper(v[3]) == "PX") {
      p.op = "markWatched";
      p.session = Session(v[1], ":watched");
      p.ttl = Int(v[4]);
    } else {
      throw std::invalid_argument("no a2 operation starts with " + v[0]);
    }
  }

  const RecordedCalls& calls_;
  std::string prefix_;
  std::string last_list_prefix_;
};

// Throws std::invalid_argument naming the capture's line of the first call that no operation
// of the port makes as recorded.
Rebuilt Rebuild(const RecordedCalls& recorded) {
  const RepliedCalls replied(recorded);
  const RecordedCalls& calls = *replied;
  Reader reader(calls);
  const real::a2::Scripts scripts(ShippedCatalog(), "0.5.0");
  Rebuilt out;
  for (const auto& [client, mine] : CallsByClient(calls)) {
    out.clients.emplace_back();
    for (size_t k = 0; k < mine.size();) {
      const RecordedCall& c = calls[mine[k]];
      const std::string where = absl::StrCat("line ", c.line, " of the capture: ");
      TraceOp op;
      try {
        op = reader.Start(mine, k);
      } catch (const std::exception& e) {
        throw std::invalid_argument(where + e.what());
      }
      RecordedReplies backend(calls, mine, k);
      sim::RandomWalk walk;
      sim::WorldOptions o;
      o.start_ms = op.now;
      o.hash_trace = false;
      sim::World world(o, backend, walk);
      bool transport = false;
      world.add_actor("client0", [&scripts, &reader, &op, &transport](sim::Ctx& ctx) {
        return PerformOne(ctx, &scripts, reader.prefix(), op.plan, &op.answer, &transport);
      });
      const sim::RunResult r = world.run();
      const int64_t n = backend.consumed();
      if (!r.error.empty() || n <= 0)
        throw std::invalid_argument(
            where + "the port's " + Describe(op.plan) + " does not make the calls recorded" +
            (backend.unmatched().empty() ? std::string()
                                         : " (it sends " + backend.unmatched()[0] + " next)") +
            (r.error.empty() ? "" : ": " + r.error));
      op.first = mine[k];
      op.last = mine[k + static_cast<size_t>(n) - 1];
      op.ambiguous = transport;
      Normalize(op.plan.op, op.answer);
      if (op.answer.is_object()) op.answer.erase("notified");
      out.clients.back().push_back(std::move(op));
      k += static_cast<size_t>(n);
    }
  }
  return out;
}

// Whether a client lists sessions: its pages span every session, so the history is one
// partition (as an inspecting run's is).
bool ListsSessions(const Rebuilt& r) {
  for (const auto& mine : r.clients)
    for (const TraceOp& t : mine)
      if (t.plan.op == "listSessions") return true;
  return false;
}

void JudgeA2TraceOps(const std::string&, const RecordedCalls& calls, int64_t, RunOutcome& out) {
  Rebuilt r;
  try {
    r = Rebuild(calls);
  } catch (const std::invalid_argument& e) {
    out.incomplete = true;
    out.undecided.push_back(e.what());
    return;
  }
  const RecordedWindows windows(calls);
  if (windows.empty()) return;
  const bool all_sessions = ListsSessions(r);
  std::vector<Call> judged;
  for (size_t c = 0; c < r.clients.size(); ++c)
    for (const TraceOp& t : r.clients[c]) {
      if (!t.judged) continue;
      const RecordedWindows::Window w = windows.of(t.first, t.last);
      Call call;
      call.actor = static_cast<int>(c);
      call.plan = t.plan;
      call.line = Describe(t.plan);
      call.now = t.now;
      call.storage_now = windows.instant(t.first);
      call.ahead = t.now - windows.instant(t.first);
      call.invoke = w.invoke;
      call.inv_ms = w.invoke_ms - windows.first_ms();
      call.ambiguous = t.ambiguous;
      if (!t.ambiguous) {
        call.ret = w.ret;
        call.ret_ms = w.ret_ms - windows.first_ms();
      }
      call.answer = t.answer;
      call.all_sessions = all_sessions;
      judged.push_back(std::move(call));
    }
  std::sort(judged.begin(), judged.end(),
            [](const Call& a, const Call& b) { return a.invoke < b.invoke; });
  JudgeCalls(judged, out);
}

std::unique_ptr<PropertyRun> Explore(const std::string&, const RecordedCalls& calls,
                                     const RunSpec& spec, const sim::FaultOptions&,
                                     const real::ScriptCatalog& scripts) {
  const std::shared_ptr<const Rebuilt> r = OncePerTrace<Rebuilt>(calls, Rebuild);
  auto plans = std::make_shared<TracePlans>();
  const int64_t start = calls.empty() ? 0 : calls.front().at_ms;
  for (const std::vector<TraceOp>& mine : r->clients) {
    plans->clients.emplace_back();
    int64_t last = start;
    for (const TraceOp& t : mine) {
      plans->clients.back().push_back(
          {t.plan, std::max<int64_t>(0, calls[t.first].at_ms - last), t.answer});
      last = calls[t.last].at_ms;
    }
  }
  plans->all_sessions = ListsSessions(*r);
  RunSpec s = spec;
  s.clients = std::min<int>(spec.clients, static_cast<int>(r->clients.size()));
  // The env lives as long as the run.
  struct Owned : CallsRun {
    Owned(std::unique_ptr<A2Env> env, std::shared_ptr<const TracePlans> plans)
        : CallsRun(*env, JudgeCalls, /*inspect=*/false, std::move(plans)), env_(std::move(env)) {}
    std::unique_ptr<A2Env> env_;
  };
  return std::make_unique<Owned>(std::make_unique<A2Env>(s, scripts), std::move(plans));
}

std::vector<int> OpsPerClient(const RecordedCalls& calls) {
  std::vector<int> n;
  for (const auto& mine : Rebuild(calls).clients) n.push_back(static_cast<int>(mine.size()));
  return n;
}

}  // namespace

const TraceSupport* A2TraceSupport(const std::string& version) {
  static const TraceSupport kSupport = {
      {"calls-linearizable"},
      "they judge what a capture does not hold: the workers' own records of their leases, work "
      "and clocks (attempts-increase, single-holder, fencing, lane-order, appends-readable, "
      "presence-lww), the model beside each call of one client, or a second key prefix "
      "(model-matches-implementation, snapshots, isolation, valid-calls-never-script-error), or "
      "the whole store read after the run (durability, drain)",
      OpsPerClient,
      JudgeA2TraceOps,
      Explore,
      nullptr};
  return version == "0.5.0" ? &kSupport : nullptr;
}

}  // namespace testbed::props::a2
