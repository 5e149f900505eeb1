#include "checker/jepsen_history.h"

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <deque>
#include <optional>
#include <map>
#include <set>
#include <tuple>
#include <stdexcept>
#include <vector>

#include "checker/greedy_order.h"
#include "checker/linearizability.h"
#include "checker/nearest_order.h"
#include "checker/draws.h"

namespace testbed::checker {
namespace {

using Json = nlohmann::json;

// One operation: its invoke and its completion (positions in the history).
struct RegisterCall {
  std::string f;  // read, write, cas
  Json value;     // write: the value; cas: [old, new]; read: the value read (ok)
  int64_t process = 0;
  int64_t invoke = 0, ret = kNever;  // entry positions; kNever: no completion
  bool ambiguous = false;            // info, or no completion
};

// Knossos's cas-register: a read sees the value, a write sets it, a cas sets new when the value is
// old (an ok cas swapped; a failed one is not an operation).
struct CasRegister {
  using State = Json;
  using Op = const RegisterCall*;
  using Answer = Json;  // the register's value where the operation is tried
  State init() const { return Json(); }
  bool read_only(Op c) const { return c->f == "read"; }
  void append_key(const State& s, std::string& out) const { out += s.dump(); }
  Json explain(const State& s, Op c, bool ambiguous, std::vector<State>& next) const {
    if (c->f == "read") {
      if (ambiguous || c->value == s) next.push_back(s);
    } else if (c->f == "write") {
      next.push_back(c->value);
    } else if (c->value[0] == s) {
      next.push_back(c->value[1]);
    }
    return s;
  }
  std::vector<std::pair<State, int64_t>> step(const State& s, Op c, int64_t lo, int64_t,
                                              bool ambiguous) const {
    std::vector<State> next;
    explain(s, c, ambiguous, next);
    std::vector<std::pair<State, int64_t>> out;
    for (State& n : next) out.emplace_back(std::move(n), lo);
    return out;
  }
};

// Knossos's mutex: an acquire takes a free lock, a release frees a held one (a failed acquire or
// release is not an operation).
struct Mutex {
  using State = bool;  // held
  using Op = const RegisterCall*;
  using Answer = Json;  // the lock where the operation is tried
  State init() const { return false; }
  bool read_only(Op) const { return false; }
  void append_key(const State& s, std::string& out) const { out += s ? '1' : '0'; }
  Json explain(const State& s, Op c, bool, std::vector<State>& next) const {
    if ((c->f == "acquire") != s) next.push_back(!s);
    return Json(s ? "held" : "free");
  }
  std::vector<std::pair<State, int64_t>> step(const State& s, Op c, int64_t lo, int64_t,
                                              bool ambiguous) const {
    std::vector<State> next;
    explain(s, c, ambiguous, next);
    std::vector<std::pair<State, int64_t>> out;
    for (State n : next) out.emplace_back(n, lo);
    return out;
  }
};

std::string Word(const Json& entry, const char* key, size_t at) {
  if (!entry.contains(key) || !entry[key].is_string())
    throw std::invalid_argument(
        absl::StrCat("entry ", at, ": \"", key, "\" is missing or not a string"));
  std::string w = entry[key].get<std::string>();
  if (!w.empty() && w[0] == ':') w.erase(0, 1);
  return w;
}

// The operations of a history of `model`, whose operations are `fs`.
std::vector<RegisterCall> Calls(const Json& history, int64_t* failed, const std::string& model,
                                const std::vector<std::string>& fs) {
  if (!history.is_array()) throw std::invalid_argument("the history is not a JSON array");
  std::vector<RegisterCall> calls;
  std::map<int64_t, size_t> open;  // process -> its call without a completion yet
  for (size_t at = 0; at < history.size(); ++at) {
    const Json& e = history[at];
    if (!e.is_object()) throw std::invalid_argument(absl::StrCat("entry ", at, ": not an object"));
    if (!e.contains("process"))
      throw std::invalid_argument(absl::StrCat("entry ", at, ": \"process\" is missing"));
    const Json& who = e["process"];
    if (who.is_string() && (who == "nemesis" || who == ":nemesis")) continue;  // not an operation
    if (!who.is_number_integer())
      throw std::invalid_argument(absl::StrCat("entry ", at, ": \"process\" is ", who.dump(),
                                               ": an integer, or \"nemesis\""));
    const int64_t process = e["process"].get<int64_t>();
    const std::string type = Word(e, "type", at), f = Word(e, "f", at);
    if (type != "invoke" && type != "ok" && type != "fail" && type != "info")
      throw std::invalid_argument(
          absl::StrCat("entry ", at, ": type \"", type, "\" is not invoke, ok, fail or info"));
    if (std::find(fs.begin(), fs.end(), f) == fs.end())
      throw std::invalid_argument(absl::StrCat("entry ", at, ": f \"", f, "\" is not ",
                                               absl::StrJoin(fs, ", "), " (", model, ")"));
    const Json value = e.value("value", Json());
    if (f == "cas" && !(value.is_array() && value.size() == 2))
      throw std::invalid_argument(absl::StrCat("entry ", at, ": a cas's value is not [old, new]"));
    if (type == "invoke") {
      if (open.count(process))
        throw std::invalid_argument(absl::StrCat("entry ", at, ": process ", process,
                                                 " invokes again before its last operation "
                                                 "completed"));
      RegisterCall c;
      c.f = f;
      c.value = value;
      c.process = process;
      c.invoke = static_cast<int64_t>(at);
      c.ambiguous = true;  // until it completes
      open[process] = calls.size();
      calls.push_back(c);
      continue;
    }
    auto it = open.find(process);
    if (it == open.end())
      throw std::invalid_argument(absl::StrCat("entry ", at, ": a completion (", type,
                                               ") of process ", process, " without an invoke"));
    RegisterCall& c = calls[it->second];
    open.erase(it);
    if (c.f != f)
      throw std::invalid_argument(absl::StrCat("entry ", at, ": completes a ", c.f, " as a ", f));
    if (type == "fail") {
      c.f.clear();  // did not happen
      ++*failed;
      continue;
    }
    if (type == "info") continue;  // may or may not have happened, at any point after its invoke
    c.ambiguous = false;
    c.ret = static_cast<int64_t>(at);
    if (f == "read") c.value = value;
  }
  std::erase_if(calls, [](const RegisterCall& c) { return c.f.empty(); });
  return calls;
}

// The value an operation left (a read: the one it saw) and the one it found (a cas: its old).
const Json& Left(const RegisterCall& c) { return c.f == "cas" ? c.value[1] : c.value; }
const Json& Found(const RegisterCall& c) { return c.f == "cas" ? c.value[0] : c.value; }

std::string CallText(const RegisterCall& c) {
  std::string what = c.f == "read"       ? absl::StrCat("read -> ", c.value.dump())
                     : c.value.is_null() ? c.f
                                         : absl::StrCat(c.f, " ", c.value.dump());
  return absl::StrCat("process ", c.process, " ", what, " (entries ", c.invoke, "..",
                      c.ret == kNever ? std::string("") : absl::StrCat(c.ret),
                      c.ambiguous ? ", info: it may or may not have happened)" : ")");
}

// The inference (HistoryCheckOptions): a reader S that found b, and F, completed before S was
// invoked, that left a != b. Some write of b must lie between them; a write P can only if it did
// not return before F was invoked and was not invoked after S returned.
struct Conflict {
  std::vector<const RegisterCall*> core;  // F (if any), S, then every write of b
  std::string why;
};

std::optional<Conflict> InferConflict(const std::vector<RegisterCall>& calls, bool broken) {
  absl::flat_hash_map<std::string, int> ids;  // value -> its id (null is 0: the initial value)
  ids[Json().dump()] = 0;
  auto id = [&ids](const Json& v) { return ids.try_emplace(v.dump(), ids.size()).first->second; };
  struct Producer {
    const RegisterCall* call;  // nullptr: the initial null, before everything
    int64_t invoke, ret;
  };
  struct Sight {
    const RegisterCall* call;
    int value;
  };
  std::vector<std::vector<Producer>> producers(1, {{nullptr, -1, -1}});
  std::vector<Sight> finds, leaves;
  for (const RegisterCall& c : calls) {
    if (c.f != "read") {
      const int v = id(Left(c));
      producers.resize(ids.size());
      producers[v].push_back({&c, c.invoke, c.ret});
    }
    if (c.ambiguous) continue;
    if (c.f != "write") finds.push_back({&c, id(Found(c))});
    leaves.push_back({&c, id(Left(c))});
  }
  producers.resize(ids.size());
  auto conflict = [&](const Sight& s, const RegisterCall* f) {
    Conflict out;
    if (f) out.core.push_back(f);
    out.core.push_back(s.call);
    for (const Producer& p : producers[s.value])
      if (p.call && p.call != s.call) out.core.push_back(p.call);
    const std::string b = Found(*s.call).dump();
    const bool initial = s.value == 0;
    if (!f) {
      out.why = absl::StrCat("process ", s.call->process, " found ", b,
                             ", which no operation invoked before it "
                             "returned wrote",
                             out.core.size() == 1 ? " (nobody wrote it at all)" : "");
    } else {
      out.why = absl::StrCat(
          "process ", f->process, " left ", Left(*f).dump(), " before process ", s.call->process,
          " was invoked, which then found ", b, "; every write of ", b,
          initial ? " (and the register's initial null)" : "",
          " returned before the first was invoked or was invoked after the second returned, so "
          "none can lie between them");
    }
    return out;
  };
  // Sweep the readers by invoke; the operations that returned before, by return.
  std::sort(finds.begin(), finds.end(),
            [](const Sight& a, const Sight& b) { return a.call->invoke < b.call->invoke; });
  std::sort(leaves.begin(), leaves.end(),
            [](const Sight& a, const Sight& b) { return a.call->ret < b.call->ret; });
  std::optional<Sight> best, second;  // latest invoked; latest invoked with another value
  size_t next_leaf = 0;
  for (const Sight& s : finds) {
    for (; next_leaf < leaves.size() && leaves[next_leaf].call->ret < s.call->invoke; ++next_leaf) {
      const Sight& l = leaves[next_leaf];
      if (!best || l.call->invoke > best->call->invoke) {
        if (best && best->value != l.value) second = best;
        best = l;
      } else if (l.value != best->value && (!second || l.call->invoke > second->call->invoke)) {
        second = l;
      }
    }
    // The latest return of a write of b that may lie before the reader (invoked before it
    // returned). The broken variant takes the earliest: one early write of b excuses everything.
    std::optional<int64_t> last;
    for (const Producer& p : producers[s.value]) {
      if (p.call == s.call || p.invoke > s.call->ret) continue;
      const int64_t r = p.ret;
      last = !last ? r : broken ? std::min(*last, r) : std::max(*last, r);
    }
    if (!last) return conflict(s, nullptr);
    if (*last == kNever) continue;  // a write of b that may still take effect
    const std::optional<Sight>& f = best && best->value != s.value ? best : second;
    if (f && f->call->invoke > *last) return conflict(s, f->call);
  }
  return std::nullopt;
}

}  // namespace

namespace {

CallHistory<CasRegister> AsHistory(const std::vector<RegisterCall>& calls, HistoryVerdict& v) {
  CallHistory<CasRegister> h;
  for (const RegisterCall& c : calls) {
    Operation<const RegisterCall*> o;
    o.actor = static_cast<int>(c.process);
    o.invoke = c.invoke;
    o.ret = c.ret;
    o.invoke_ms = 0;  // the models do not depend on the linearization point
    o.ret_ms = 0;
    o.ambiguous = c.ambiguous;
    o.op = &c;
    h.push_back(o);
    v.operations++;
    v.ambiguous += c.ambiguous;
  }
  return h;
}

// The witness and the search, then a rejected history's core and the nearest order's stop.
// `explained`: what an order must explain ("read"); `holds`: how the nearest order's stop names
// the model's state ("the register holds").
template <class M>
void Decide(const M& model, const CallHistory<M>& h, const std::string& counts,
            const HistoryCheckOptions& options, const char* explained, const char* holds,
            HistoryVerdict& v) {
  if (!options.search_only && GreedyOrder(model, h)) {
    v.decided_by = "witness";
    v.text = absl::StrCat("linearizable: ", counts, "\n");
    return;
  }
  const Verdict verdict = Checker<M>(model, options.max_states).check(h);
  v.states = verdict.states_explored;
  if (verdict.ok && verdict.complete) {
    v.decided_by = "search";
    v.text = absl::StrCat("linearizable: ", counts, "\n");
    return;
  }
  if (!verdict.complete) {
    v.decided = false;
    v.text = absl::StrCat("no verdict: the search ran out of its budget (", options.max_states,
                          " states) on ", counts, ", up to ", MostPending(h),
                          " pending at once; this is not a pass\n");
    return;
  }
  v.linearizable = false;
  v.decided_by = "search";
  const CallHistory<M> core = Shrink(model, h, std::max<int64_t>(1, options.max_states / 10));
  NearestOrder<M> nearest(model, core, std::max<int64_t>(1, options.max_states / 10));
  nearest.Run();
  const Stuck<M>& s = nearest.stuck();
  v.text = absl::StrCat("not linearizable: ", counts, ". No order of these ", core.size(),
                        " explains every ", explained);
  if (s.op) {
    absl::StrAppend(&v.text, "; the nearest order explains ", s.explained,
                    " of them, then stops at ", CallText(*s.op->op), ", where ", holds, " ",
                    s.model_answer.dump());
  }
  absl::StrAppend(&v.text, ":\n");
  for (const auto& o : core) absl::StrAppend(&v.text, "  ", CallText(*o.op), "\n");
}

}  // namespace

HistoryVerdict CheckCasRegisterHistory(const Json& history, const HistoryCheckOptions& options) {
  HistoryVerdict v;
  const std::vector<RegisterCall> calls =
      Calls(history, &v.failed, "cas-register", {"read", "write", "cas"});
  const CallHistory<CasRegister> h = AsHistory(calls, v);
  const std::string counts = absl::StrCat(v.operations, " operations (", v.ambiguous, " info, ",
                                          v.failed, " failed and left out) on one cas-register");
  if (!options.search_only) {
    if (std::optional<Conflict> c = InferConflict(calls, options.broken_inference)) {
      v.linearizable = false;
      v.decided_by = "inference";
      v.text = absl::StrCat("not linearizable: ", counts, ". ", c->why, ":\n");
      for (const RegisterCall* o : c->core) absl::StrAppend(&v.text, "  ", CallText(*o), "\n");
      return v;
    }
  }
  Decide(CasRegister(), h, counts, options, "read", "the register holds", v);
  return v;
}

HistoryVerdict CheckMutexHistory(const Json& history, const HistoryCheckOptions& options) {
  HistoryVerdict v;
  const std::vector<RegisterCall> calls =
      Calls(history, &v.failed, "mutex", {"acquire", "release"});
  const CallHistory<Mutex> h = AsHistory(calls, v);  // the same operations as the register's
  const std::string counts = absl::StrCat(v.operations, " operations (", v.ambiguous, " info, ",
                                          v.failed, " failed and left out) on one mutex");
  Decide(Mutex(), h, counts, options, "acquire and release", "the lock is", v);
  return v;
}

std::vector<std::pair<Json, Json>> SplitIndependentKeys(const Json& history) {
  if (!history.is_array()) throw std::invalid_argument("the history is not a JSON array");
  std::map<std::string, Json> keys;  // key's JSON -> the key
  for (size_t at = 0; at < history.size(); ++at) {
    const Json& e = history[at];
    if (!e.is_object()) throw std::invalid_argument(absl::StrCat("entry ", at, ": not a map"));
    const Json who = e.value("process", Json());
    if (who.is_string() && (who == "nemesis" || who == ":nemesis")) continue;
    const Json value = e.value("value", Json());
    if (!value.is_array() || value.size() != 2)
      throw std::invalid_argument(absl::StrCat(
          "entry ", at, ": the value is not an independent [key value] tuple: ", value.dump()));
    keys.emplace(value[0].dump(), value[0]);
  }
  std::vector<std::pair<Json, Json>> out;
  for (const auto& [text, key] : keys) {
    Json h = Json::array();
    for (const Json& e : history) {
      const Json who = e.value("process", Json());
      if (who.is_string() && (who == "nemesis" || who == ":nemesis")) {
        h.push_back(e);
      } else if (e["value"][0] == key) {
        Json mine = e;
        mine["value"] = e["value"][1];
        h.push_back(std::move(mine));
      } else {
        h.push_back({{"process", "nemesis"}, {"type", "info"}, {"f", "another-key"}});
      }
    }
    out.emplace_back(key, std::move(h));
  }
  return out;
}

const std::vector<HistoryModel>& HistoryModels() {
  static const std::vector<HistoryModel> kModels = {
      {"cas-register", "Knossos's cas-register: read, write, cas [old, new]; starts as null",
       CheckCasRegisterHistory},
      {"mutex", "Knossos's mutex: acquire takes a free lock, release frees a held one; starts free",
       CheckMutexHistory}};
  return kModels;
}

const HistoryModel* FindHistoryModel(const std::string& name) {
  for (const HistoryModel& m : HistoryModels())
    if (m.name == name) return &m;
  return nullptr;
}

Json GenerateCasRegisterHistory(Draws& rng, const CasRegisterShape& shape) {
  struct Op {
    int64_t process;
    std::string f;
    Json value;  // write: the value; cas: [old, new]
    Json out;    // read: what it read
    std::string type = "ok";
    int64_t invoke_us, ret_us, point_us;
    bool lands = true;
  };
  std::vector<Op> ops;
  int64_t fresh = 0;  // the next value when every write has a new one
  auto value = [&] {
    return shape.values > 0 ? Json(rng.below(static_cast<uint64_t>(shape.values))) : Json(fresh++);
  };
  const int per_process = std::max(1, shape.operations / std::max(1, shape.processes));
  for (int p = 0; p < shape.processes; ++p) {
    int64_t process = p, t = static_cast<int64_t>(rng.below(1000));
    for (int k = 0; k < per_process; ++k) {
      Op o;
      o.process = process;
      o.invoke_us = t + 1 + static_cast<int64_t>(rng.below(500));
      o.ret_us = o.invoke_us + 2 + static_cast<int64_t>(rng.below(2000));
      // Strictly inside: an operation that returns when another is invoked precedes it.
      o.point_us =
          o.invoke_us + 1 +
          static_cast<int64_t>(rng.below(static_cast<uint64_t>(o.ret_us - o.invoke_us - 1)));
      const uint64_t f = rng.below(3);
      o.f = f == 0 ? "read" : f == 1 ? "write" : "cas";
      if (o.f == "write") o.value = value();
      if (o.f == "cas") o.value = Json::array({Json(), value()});
      if (rng.chance({static_cast<uint64_t>(shape.info_per_mille), 1000})) {
        o.type = "info";
        o.lands = rng.chance({1, 2});
        process += shape.processes;  // Jepsen retires a process whose outcome is unknown
      }
      t = o.ret_us;
      ops.push_back(std::move(o));
    }
  }
  std::vector<Op*> by_point;
  for (Op& o : ops) by_point.push_back(&o);
  std::sort(by_point.begin(), by_point.end(),
            [](const Op* a, const Op* b) { return a->point_us < b->point_us; });
  Json reg;
  std::vector<Json> written;
  for (Op* o : by_point) {
    if (o->f == "read") o->out = reg;
    if (o->f == "write" && o->lands) reg = o->value;
    if (o->f == "cas") {
      // Half of them expect what the register holds; the rest a value that may be stale.
      o->value[0] = rng.chance({1, 2}) ? reg
                    : shape.values > 0 ? Json(rng.below(static_cast<uint64_t>(shape.values)))
                    : fresh > 0        ? Json(rng.below(static_cast<uint64_t>(fresh)))
                                       : Json();
      if (o->value[0] != reg) {
        if (o->type != "info") o->type = "fail";
      } else if (o->lands) {
        reg = o->value[1];
      }
    }
    if (o->f != "read") written.push_back(o->f == "cas" ? o->value[1] : o->value);
  }
  if (shape.corrupt) {
    std::vector<Op*> reads;
    for (Op& o : ops)
      if (o.f == "read" && o.type == "ok") reads.push_back(&o);
    if (!reads.empty() && !written.empty()) {
      Op* r = reads[rng.below(reads.size())];
      const Json other = written[rng.below(written.size())];
      r->out = other != r->out ? other : Json();
    }
  }
  struct Event {
    int64_t us;
    bool invoke;
    const Op* op;
  };
  std::vector<Event> events;
  for (const Op& o : ops) {
    events.push_back({o.invoke_us, true, &o});
    events.push_back({o.ret_us, false, &o});
  }
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return std::make_pair(a.us, a.invoke) < std::make_pair(b.us, b.invoke);  // returns first
  });
  Json h = Json::array();
  for (const Event& e : events) {
    const Op& o = *e.op;
    Json entry = {{"process", o.process}, {"type", e.invoke ? "invoke" : o.type}, {"f", o.f}};
    entry["value"] = o.f != "read" ? o.value : e.invoke || o.type != "ok" ? Json() : o.out;
    entry["time"] = e.us * 1000;
    entry["index"] = h.size();
    h.push_back(std::move(entry));
  }
  return h;
}

}  // namespace testbed::checker
