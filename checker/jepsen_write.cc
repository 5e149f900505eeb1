// Jepsen's forms written out (checker/jepsen_history.h): a history of operations as the JSON
// elle-cli reads, a register history projected onto Jepsen's cas-register, and a history as EDN.
#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "checker/jepsen_history.h"

namespace testbed::checker {

using Json = nlohmann::json;

Json JepsenHistoryOf(const std::vector<JepsenOp>& ops) {
  int64_t first_ms = INT64_MAX, last_ms = 0;
  int actors = 0;
  for (const JepsenOp& o : ops) {
    first_ms = std::min(first_ms, o.invoke_ms);
    last_ms = std::max(last_ms, o.ret_ms == kNever ? o.invoke_ms : o.ret_ms);
    actors = std::max(actors, o.actor + 1);
  }
  // Each actor's calls in order: a call without a reply retires its process (Jepsen's :info).
  std::map<int, std::vector<const JepsenOp*>> by_actor;
  for (const JepsenOp& o : ops) by_actor[o.actor].push_back(&o);
  struct Event {
    int64_t order;
    int64_t tie;
    Json entry;
  };
  std::vector<Event> events;
  const auto ns = [&](int64_t ms) { return (ms - first_ms) * 1'000'000; };
  for (auto& [actor, calls] : by_actor) {
    std::sort(calls.begin(), calls.end(),
              [](const auto* a, const auto* b) { return a->invoke < b->invoke; });
    int64_t generation = 0;
    for (const JepsenOp* o : calls) {
      const int64_t process = actor + generation * actors;
      events.push_back({o->invoke, 0,
                        Json{{"type", "invoke"},
                             {"f", o->f},
                             {"value", o->value},
                             {"process", process},
                             {"time", ns(o->invoke_ms)}}});
      events.push_back({o->ret == kNever ? INT64_MAX : o->ret, 1,
                        Json{{"type", o->type},
                             {"f", o->f},
                             {"value", o->done},
                             {"process", process},
                             {"time", ns(o->ret_ms == kNever ? last_ms : o->ret_ms)}}});
      if (o->type == "info") ++generation;
    }
  }
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return std::tie(a.order, a.tie) < std::tie(b.order, b.tie);
  });
  Json history = Json::array();
  for (Event& e : events) {
    e.entry["index"] = history.size();
    history.push_back(std::move(e.entry));
  }
  return history;
}

JepsenProjection ProjectCasRegister(const RegisterHistory& ops) {
  using Kind = model::RegisterOp::Kind;
  JepsenProjection p;
  // The values each version was seen with: acknowledged writes, and reads (a get, a failed
  // compareAndSet) that returned a version with its value.
  std::map<int64_t, std::set<std::string>> at_version;
  int64_t first_ms = INT64_MAX, last_ms = 0;
  for (const auto& o : ops) {
    first_ms = std::min(first_ms, o.invoke_ms);
    last_ms = std::max(last_ms, o.ret_ms == kNever ? o.invoke_ms : o.ret_ms);
    if (o.ambiguous) continue;
    const model::RegisterOp& r = o.op;
    if (r.kind == Kind::kSet || (r.kind == Kind::kCas && r.ok))
      at_version[r.out_version].insert(r.value);
    else if ((r.kind == Kind::kGet && r.ok) || (r.kind == Kind::kCas && !r.ok && r.out_version))
      at_version[r.out_version].insert(r.out_value);
  }
  std::vector<JepsenOp> calls;
  for (const auto& o : ops) {
    const model::RegisterOp& r = o.op;
    JepsenOp j{o.actor, o.invoke, o.ret, o.invoke_ms, o.ret_ms};
    Json value, done;
    if (r.kind == Kind::kGet) {
      j.f = "read";
      done = r.ok ? Json(r.out_value) : Json();
    } else if (r.kind == Kind::kSet || r.kind == Kind::kDelete) {
      j.f = "write";
      value = done = r.kind == Kind::kSet ? Json(r.value) : Json();
    } else {
      j.f = "cas";
      Json old;
      if (r.expected != 0) {
        const auto seen = at_version.find(r.expected);
        if (seen == at_version.end() || seen->second.size() != 1)
          p.unfit.push_back(absl::StrCat(
              "a compareAndSet expected version ", r.expected, ", which ",
              seen == at_version.end() ? "no acknowledged write or read of the key shows"
                                       : "calls of the key show with more than one value",
              ": the register has no value to compare with"));
        else
          old = *seen->second.begin();
      }
      value = done = Json::array({old, Json(r.value)});
    }
    if ((r.kind == Kind::kSet || r.kind == Kind::kCas) && r.expires_at_ms > 0 &&
        r.expires_at_ms < last_ms)
      p.unfit.push_back(absl::StrCat("a write's TTL ran out at +", r.expires_at_ms - first_ms,
                                     " ms, before the history's last call (+", last_ms - first_ms,
                                     " ms): expiry removes a value without an operation"));
    const bool failed = r.kind == Kind::kCas && !r.ok;
    j.type = o.ambiguous ? "info" : failed ? "fail" : "ok";
    j.value = j.f == "read" ? Json() : value;
    j.done = o.ambiguous && j.f == "read" ? Json() : done;
    calls.push_back(std::move(j));
  }
  p.history = JepsenHistoryOf(calls);
  std::sort(p.unfit.begin(), p.unfit.end());
  p.unfit.erase(std::unique(p.unfit.begin(), p.unfit.end()), p.unfit.end());
  p.fits = p.unfit.empty();
  return p;
}

namespace {

void AppendEdn(const Json& v, std::string& out) {
  if (v.is_null()) {
    out += "nil";
  } else if (v.is_string()) {
    out += '"';
    for (char c : v.get_ref<const std::string&>()) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        default:
          out += c;
      }
    }
    out += '"';
  } else if (v.is_array()) {
    out += '[';
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) out += ' ';
      AppendEdn(v[i], out);
    }
    out += ']';
  } else {
    out += v.dump();
  }
}

}  // namespace

std::string JepsenEdn(const Json& history) {
  std::string out;
  for (const Json& e : history) {
    out += '{';
    bool first = true;
    for (const char* key : {"type", "f", "value", "process", "time", "index"}) {
      if (!e.contains(key)) continue;
      if (!first) out += ", ";
      first = false;
      absl::StrAppend(&out, ":", key, " ");
      if (std::string(key) == "type" || std::string(key) == "f")
        absl::StrAppend(&out, ":", e[key].get<std::string>());
      else
        AppendEdn(e[key], out);
    }
    out += "}\n";
  }
  return out;
}

}  // namespace testbed::checker
