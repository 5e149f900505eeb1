// Internal to sim/lua_scripting.cc: a fresh Lua state with Redis 7.0's script environment (the
// libraries it opens, cjson, the redis table, the error handler, read-only globals and the proxy
// environment), its C functions supplied by the caller.
#pragma once

extern "C" {
#include <lua.h>
}

namespace testbed::sim {

// Where the real globals are kept in the registry (scripts run in them or in a proxy).
inline constexpr const char* kGlobalsKey = "testbed.real_globals";

// The C functions a script's environment calls.
struct LuaGlueFunctions {
  lua_CFunction call, pcall, error_reply, status_reply, sha1hex, log;  // redis.*
  lua_CFunction to_number;                                             // tonumber's wrapper
  lua_CFunction pcall_guard, xpcall_guard;  // pcall, xpcall: no catching the budget's error
  lua_CFunction global_index;               // a read of a name missing from the globals
};

// A Lua state with Redis 7.0's script environment; `cjson_fault`: the negative-test encoder
// (empty tables as arrays).
lua_State* NewLuaState(bool cjson_fault, const LuaGlueFunctions& glue);

}  // namespace testbed::sim
