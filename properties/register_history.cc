#include "properties/register_history.h"

#include <map>
#include <sstream>
#include <stdexcept>

namespace testbed::lin {
namespace {

int64_t Num(const std::string& s, const std::string& line) {
  if (s == "?") return kNever;
  try {
    size_t used = 0;
    const int64_t v = std::stoll(s, &used);
    if (used != s.size()) throw std::invalid_argument(s);
    return v;
  } catch (const std::exception&) {
    throw std::invalid_argument("not a number '" + s + "' in: " + line);
  }
}

}  // namespace

RegisterHistory ParseRegisterHistory(const std::string& text) {
  RegisterHistory out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::vector<std::string> t;
    for (std::string w; ls >> w;) t.push_back(w);
    if (t.size() < 7) throw std::invalid_argument("too few fields in: " + line);
    Operation<model::RegisterOp> o;
    o.partition = "k";
    o.actor = static_cast<int>(Num(t[0], line));
    o.invoke = Num(t[1], line);
    o.ret = Num(t[2], line);
    o.invoke_ms = Num(t[3], line);
    o.ret_ms = Num(t[4], line);
    o.ambiguous = o.ret == kNever;
    const std::string& kind = t[5];
    using K = model::RegisterOp::Kind;
    if (kind == "get")
      o.op.kind = K::kGet;
    else if (kind == "set")
      o.op.kind = K::kSet;
    else if (kind == "cas")
      o.op.kind = K::kCas;
    else if (kind == "delete")
      o.op.kind = K::kDelete;
    else
      throw std::invalid_argument("unknown operation '" + kind + "' in: " + line);
    size_t i = 6;
    std::map<std::string, std::string> in_args, out_args;
    for (; i < t.size() && t[i] != "->"; ++i) {
      const size_t eq = t[i].find('=');
      if (eq == std::string::npos)
        throw std::invalid_argument("expected k=v, got '" + t[i] + "' in: " + line);
      in_args[t[i].substr(0, eq)] = t[i].substr(eq + 1);
    }
    if (i == t.size()) throw std::invalid_argument("missing '->' in: " + line);
    std::vector<std::string> result(t.begin() + static_cast<long>(i) + 1, t.end());
    if (in_args.count("key")) o.partition = in_args["key"];
    o.op.value = in_args["value"];
    if (in_args.count("expected")) o.op.expected = Num(in_args["expected"], line);
    if (in_args.count("exp")) o.op.expires_at_ms = Num(in_args["exp"], line);
    if (in_args.count("exphi")) o.op.expires_hi_ms = Num(in_args["exphi"], line);
    if (!o.ambiguous) {
      if (result.empty()) throw std::invalid_argument("missing result in: " + line);
      size_t r = 0;
      if (result[0] == "null") {
        o.op.ok = false;
        r = 1;
      } else if (result[0] == "ok") {
        o.op.ok = true;
        r = 1;
      } else if (result[0] == "fail") {
        o.op.ok = false;
        r = 1;
      }
      for (; r < result.size(); ++r) {
        const size_t eq = result[r].find('=');
        if (eq == std::string::npos)
          throw std::invalid_argument("bad result '" + result[r] + "' in: " + line);
        const std::string k = result[r].substr(0, eq), v = result[r].substr(eq + 1);
        if (k == "value")
          o.op.out_value = v;
        else if (k == "version")
          o.op.out_version = Num(v, line);
        else
          throw std::invalid_argument("unknown result field '" + k + "' in: " + line);
      }
    }
    out.push_back(o);
  }
  return out;
}

std::string FormatRegisterOperation(const Operation<model::RegisterOp>& o) {
  auto n = [](int64_t v) { return v == kNever ? std::string("?") : std::to_string(v); };
  std::string s = std::to_string(o.actor) + " " + n(o.invoke) + " " + n(o.ret) + " " +
                  n(o.invoke_ms) + " " + n(o.ret_ms) + " ";
  using K = model::RegisterOp::Kind;
  const auto& op = o.op;
  const std::string key = o.partition == "k" ? "" : " key=" + o.partition;
  switch (op.kind) {
    case K::kGet:
      s += "get" + key;
      break;
    case K::kSet:
      s += "set" + key + " value=" + op.value + " exp=" + std::to_string(op.expires_at_ms);
      break;
    case K::kCas:
      s += "cas" + key + " expected=" + std::to_string(op.expected) + " value=" + op.value +
           " exp=" + std::to_string(op.expires_at_ms);
      break;
    case K::kDelete:
      s += "delete" + key;
      break;
  }
  if (op.expires_hi_ms > op.expires_at_ms) s += " exphi=" + std::to_string(op.expires_hi_ms);
  s += " ->";
  if (o.ambiguous) return s + " ?";
  switch (op.kind) {
    case K::kGet:
      return s + (op.ok ? " value=" + op.out_value + " version=" + std::to_string(op.out_version)
                        : " null");
    case K::kSet:
      return s + " version=" + std::to_string(op.out_version);
    case K::kCas:
      return s + (op.ok ? " ok version=" + std::to_string(op.out_version)
                        : " fail version=" + std::to_string(op.out_version) +
                              (op.out_value.empty() ? "" : " value=" + op.out_value));
    case K::kDelete:
      return s + " ok";
  }
  return s;
}

}  // namespace testbed::lin
