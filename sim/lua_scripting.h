// EVAL / EVALSHA / SCRIPT LOAD for the emulator, on Debian's Lua 5.1 and lua-cjson 2.1.0 (the
// versions redis-server 7.0 bundles), reproducing Redis 7.0's script environment:
//   - libraries base, table, string, math and cjson; no debug, io, os, loadfile, dofile;
//   - globals read-only ("Attempt to modify a readonly table"; reading an unknown global is
//     "Script attempted to access nonexistent global variable 'x'");
//   - redis.call / pcall / error_reply / status_reply / sha1hex / log;
//   - Redis's conversions both ways and its error handler, so that error replies carry the
//     "script: <sha>, on @user_script:N." suffix exactly as redis-server writes it.
#pragma once

#include <absl/types/span.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/reply.h"

struct lua_State;

namespace testbed::sim {

class Emulator;

std::string Sha1Hex(const std::string& data);
// The SHA1 of a script body, computed once per distinct body (per thread): EVAL and traces.
const std::string& CachedSha1(const std::string& body);

class LuaScripting {
 public:
  explicit LuaScripting(Emulator& emulator);
  ~LuaScripting();
  LuaScripting(const LuaScripting&) = delete;
  LuaScripting& operator=(const LuaScripting&) = delete;

  // keys and args are views of the command's argv (no copies).
  using Args = absl::Span<const std::string>;
  Reply Eval(const std::string& body, Args keys, Args args);
  Reply EvalSha(const std::string& sha, Args keys, Args args);
  Reply Load(const std::string& body);  // bulk sha or a compile error
  bool Exists(const std::string& sha) const;
  void Flush();  // SCRIPT FLUSH: no script is loaded any more

  struct PooledState;

 private:
  Reply Compile(const std::string& body, std::string* sha);
  static Reply Shebang(const std::string& body, size_t* length, bool* no_writes);
  Reply Run(const std::string& sha, Args keys, Args args);

  Emulator& emulator_;
  std::unique_ptr<PooledState> state_;  // the Lua state (reused across emulators of a thread)
  bool poolable_ = false;
  lua_State* L_ = nullptr;
  std::set<std::string> loaded_;  // the scripts this emulator's server has loaded
  // The bodies EVAL ran here, with their SHA1 (all of them in loaded_, which only grows): a
  // run sends the same few bodies over and over, and comparing one, sizes first, costs less
  // than hashing it to find its SHA1.
  std::vector<std::pair<std::string, std::string>> evaluated_;
  int64_t instructions_left_ = 0;
  // The running script's lines in the thread's line coverage (nullptr: none is recorded).
  std::map<int, int64_t>* covered_ = nullptr;
  bool budget_exceeded_ = false;
  // redis.call's arguments, reused from call to call: its strings keep their capacity, so a
  // call allocates only for an argument longer than any before (a script cannot call a script,
  // so one call at a time uses it).
  std::vector<std::string> call_argv_;
  // Strings a shorter call took off call_argv_, kept with their buffers for a longer one.
  std::vector<std::string> spare_args_;
  friend struct LuaGlue;
};

}  // namespace testbed::sim
