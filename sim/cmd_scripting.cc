// The emulator's scripting commands (sim/emulator_commands.h).
#include <absl/container/inlined_vector.h>
#include <absl/strings/ascii.h>
#include <absl/strings/match.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstring>
#include <functional>

#include "sim/emulator_commands.h"
#include "sim/lua_scripting.h"
#include "sim/redis_text.h"

namespace testbed::sim {

using namespace redis_text;

Reply Commands::ParseNumKeys(const Argv& a, int64_t* numkeys) {
  auto n = String2ll(a[2]);
  if (!n) return Reply::Error(kNotInteger);
  if (*n > static_cast<int64_t>(a.size()) - 3) return Reply::Error(kNumKeysTooMany);
  if (*n < 0) return Reply::Error(kNumKeysNegative);
  *numkeys = *n;
  return Reply::Ok();
}

// A script runs in its caller's database; a SELECT it makes lasts until it ends.
Reply Commands::InScript(Emulator& em, absl::FunctionRef<Reply()> run) {
  const int db = em.db_;
  em.in_script_ = true;
  Reply r = run();
  em.in_script_ = false;
  em.select(db);
  return r;
}

Reply Commands::Eval(Emulator& em, const Argv& a) {
  int64_t numkeys = 0;
  if (Reply r = ParseNumKeys(a, &numkeys); r.is_error()) return r;
  const auto args = absl::MakeConstSpan(a);
  return InScript(
      em, [&] { return em.lua_->Eval(a[1], args.subspan(3, numkeys), args.subspan(3 + numkeys)); });
}

Reply Commands::EvalSha(Emulator& em, const Argv& a) {
  int64_t numkeys = 0;
  if (Reply r = ParseNumKeys(a, &numkeys); r.is_error()) return r;
  const auto args = absl::MakeConstSpan(a);
  return InScript(em, [&] {
    return em.lua_->EvalSha(a[1], args.subspan(3, numkeys), args.subspan(3 + numkeys));
  });
}

// EVAL_RO, EVALSHA_RO: the script runs as by EVAL, and a write command it calls is refused.
Reply Commands::EvalRo(Emulator& em, const Argv& a) {
  em.read_only_script_ = true;
  Reply r = Eval(em, a);
  em.read_only_script_ = false;
  return r;
}

Reply Commands::EvalShaRo(Emulator& em, const Argv& a) {
  em.read_only_script_ = true;
  Reply r = EvalSha(em, a);
  em.read_only_script_ = false;
  return r;
}

Reply Commands::Script(Emulator& em, const Argv& a) {
  const std::string sub = ToUpper(a[1]);
  if (sub == "LOAD") {
    if (a.size() != 3) return Reply::Error(WrongArity("script|load"));
    return em.lua_->Load(a[2]);
  }
  if (sub == "EXISTS") {
    if (a.size() < 3) return Reply::Error(WrongArity("script|exists"));
    std::vector<Reply> out;
    for (size_t i = 2; i < a.size(); ++i)
      out.push_back(Reply::Integer(em.lua_->Exists(a[i]) ? 1 : 0));
    return Reply::Array(std::move(out));
  }
  if (sub == "FLUSH") {  // every script is forgotten (SYNC and ASYNC alike: nothing is freed late)
    if (a.size() > 3) return Reply::Error(WrongArity("script|flush"));
    if (a.size() == 3 && ToUpper(a[2]) != "SYNC" && ToUpper(a[2]) != "ASYNC")
      return Reply::Error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
    em.lua_->Flush();
    return Reply::Ok();
  }
  return Unsupported("SCRIPT " + a[1]);
}

}  // namespace testbed::sim
