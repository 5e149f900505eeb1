#include "properties/jepsen_history.h"

#include <absl/strings/str_cat.h>

#include <deque>
#include <map>
#include <stdexcept>
#include <vector>

#include "properties/linearizability.h"
#include "properties/nearest_order.h"

namespace testbed::props {
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

std::string Word(const Json& entry, const char* key, size_t at) {
  if (!entry.contains(key) || !entry[key].is_string())
    throw std::invalid_argument(
        absl::StrCat("entry ", at, ": \"", key, "\" is missing or not a string"));
  std::string w = entry[key].get<std::string>();
  if (!w.empty() && w[0] == ':') w.erase(0, 1);
  return w;
}

std::vector<RegisterCall> Calls(const Json& history, int64_t* failed) {
  if (!history.is_array()) throw std::invalid_argument("the history is not a JSON array");
  std::vector<RegisterCall> calls;
  std::map<int64_t, size_t> open;  // process -> its call without a completion yet
  for (size_t at = 0; at < history.size(); ++at) {
    const Json& e = history[at];
    if (!e.is_object()) throw std::invalid_argument(absl::StrCat("entry ", at, ": not an object"));
    if (!e.contains("process"))
      throw std::invalid_argument(absl::StrCat("entry ", at, ": \"process\" is missing"));
    if (!e["process"].is_number_integer()) continue;  // the nemesis: not a register operation
    const int64_t process = e["process"].get<int64_t>();
    const std::string type = Word(e, "type", at), f = Word(e, "f", at);
    if (type != "invoke" && type != "ok" && type != "fail" && type != "info")
      throw std::invalid_argument(
          absl::StrCat("entry ", at, ": type \"", type, "\" is not invoke, ok, fail or info"));
    if (f != "read" && f != "write" && f != "cas")
      throw std::invalid_argument(
          absl::StrCat("entry ", at, ": f \"", f, "\" is not read, write or cas (cas-register)"));
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

std::string CallText(const RegisterCall& c) {
  std::string what = c.f == "read" ? absl::StrCat("read -> ", c.value.dump())
                                   : absl::StrCat(c.f, " ", c.value.dump());
  return absl::StrCat("process ", c.process, " ", what, " (entries ", c.invoke, "..",
                      c.ret == kNever ? std::string("") : absl::StrCat(c.ret),
                      c.ambiguous ? ", info: it may or may not have happened)" : ")");
}

}  // namespace

HistoryVerdict CheckCasRegisterHistory(const Json& history, int64_t max_states) {
  HistoryVerdict v;
  const std::vector<RegisterCall> calls = Calls(history, &v.failed);
  CallHistory<CasRegister> h;
  for (const RegisterCall& c : calls) {
    Operation<const RegisterCall*> o;
    o.actor = static_cast<int>(c.process);
    o.invoke = c.invoke;
    o.ret = c.ret;
    o.invoke_ms = 0;  // the model does not depend on the linearization point
    o.ret_ms = 0;
    o.ambiguous = c.ambiguous;
    o.op = &c;
    h.push_back(o);
    v.operations++;
    v.ambiguous += c.ambiguous;
  }
  const CasRegister model;
  const Verdict verdict = Checker<CasRegister>(model, max_states).check(h);
  v.states = verdict.states_explored;
  const std::string counts = absl::StrCat(v.operations, " operations (", v.ambiguous, " info, ",
                                          v.failed, " failed and left out) on one cas-register");
  if (verdict.ok && verdict.complete) {
    v.text = absl::StrCat("linearizable: ", counts, "\n");
    return v;
  }
  if (!verdict.complete) {
    v.decided = false;
    v.text = absl::StrCat("no verdict: the search ran out of its budget (", max_states,
                          " states) on ", counts, "; this is not a pass\n");
    return v;
  }
  v.linearizable = false;
  const CallHistory<CasRegister> core = Shrink(model, h, max_states / 10);
  NearestOrder<CasRegister> nearest(model, core, max_states / 10);
  nearest.Run();
  const Stuck<CasRegister>& s = nearest.stuck();
  v.text = absl::StrCat("not linearizable: ", counts, ". No order of these ", core.size(),
                        " explains every read");
  if (s.op) {
    absl::StrAppend(&v.text, "; the nearest order explains ", s.explained,
                    " of them, then stops at ", CallText(*s.op->op), ", where the register holds ",
                    s.model_answer.dump());
  }
  absl::StrAppend(&v.text, ":\n");
  for (const auto& o : core) absl::StrAppend(&v.text, "  ", CallText(*o.op), "\n");
  return v;
}

}  // namespace testbed::props
