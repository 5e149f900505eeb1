// A fresh Lua state with Redis 7.0's script environment (sim/lua_state.h).
#include "sim/lua_state.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>
#include <utility>

extern "C" {
#include <lauxlib.h>
#include <lualib.h>
int luaopen_cjson(lua_State* l);
}

namespace testbed::sim {
namespace {

// Redis 7.0's __redis__err__handler, verbatim in behaviour: string errors get "ERR ", and the
// source/line are those of the caller when the error was raised inside a C function.
constexpr const char* kErrorHandler =
    "local dbg = debug\n"
    "debug = nil\n"
    "function __redis__err__handler(err)\n"
    "  local i = dbg.getinfo(2,'nSl')\n"
    "  if i and i.what == 'C' then\n"
    "    i = dbg.getinfo(3,'nSl')\n"
    "  end\n"
    "  if type(err) ~= 'table' then\n"
    "    err = {err='ERR ' .. tostring(err)}"
    "  end"
    "  if i then\n"
    "    err['source'] = i.source\n"
    "    err['line'] = i.currentline\n"
    "  end"
    "  return err\n"
    "end\n";

// Lua's allocator, as luaL_newstate's l_alloc (realloc and free) behaves, through the C++
// allocator's sized entry points: Lua always passes the block's size, and a sized delete finds
// the block's size class from it instead of looking the pointer up. (realloc(NULL, n) and free
// also took the slower general paths.) A failed allocation returns NULL, as Lua expects.
void* LuaAlloc(void*, void* ptr, size_t osize, size_t nsize) {
  if (nsize == 0) {
    if (ptr) ::operator delete(ptr, osize);
    return nullptr;
  }
  void* block = ::operator new(nsize, std::nothrow);
  if (ptr && block) {
    std::memcpy(block, ptr, std::min(osize, nsize));
    ::operator delete(ptr, osize);
  }
  return block;
}

// luaL_newstate's panic function: the error message to stderr, then Lua aborts.
int LuaPanic(lua_State* L) {
  std::fprintf(stderr, "PANIC: unprotected error in call to Lua API (%s)\n", lua_tostring(L, -1));
  return 0;
}

}  // namespace

lua_State* NewLuaState(bool cjson_fault, const LuaGlueFunctions& glue) {
  lua_State* L = lua_newstate(LuaAlloc, nullptr);
  lua_atpanic(L, LuaPanic);
  // Collect when the heap has grown to 8x what the last collection left (Lua's default: 2x).
  // A state holds a few hundred kilobytes, and a check runs thousands of short scripts in it:
  // the default pause made the collector a tenth of a run's instructions. Scripts cannot
  // observe it (the seeds keep no weak tables or finalizers; collectgarbage is theirs to call).
  lua_gc(L, LUA_GCSETPAUSE, 800);
  const lua_CFunction libs[] = {luaopen_base, luaopen_table, luaopen_string, luaopen_math,
                                luaopen_debug};
  for (lua_CFunction open : libs) {
    lua_pushcfunction(L, open);
    lua_call(L, 0, 0);
  }
  lua_pushcfunction(L, luaopen_cjson);
  lua_call(L, 0, 1);
  if (cjson_fault) {
    // Negative-test deviation only: an encoder that writes empty tables as arrays.
    lua_getfield(L, -1, "encode");
    lua_pushcclosure(
        L,
        [](lua_State* S) -> int {
          lua_pushvalue(S, lua_upvalueindex(1));
          lua_insert(S, 1);
          lua_call(S, lua_gettop(S) - 1, 1);
          luaL_gsub(S, lua_tostring(S, -1), "{}", "[]");
          return 1;
        },
        1);
    lua_setfield(L, -2, "encode");
  }
  lua_setglobal(L, "cjson");
  lua_getglobal(L, "tonumber");
  lua_pushcclosure(L, glue.to_number, 1);
  lua_setglobal(L, "tonumber");
  lua_pushcfunction(L, glue.pcall_guard);
  lua_setglobal(L, "pcall");
  lua_pushcfunction(L, glue.xpcall_guard);
  lua_setglobal(L, "xpcall");
  lua_pushnil(L);
  lua_setglobal(L, "loadfile");
  lua_pushnil(L);
  lua_setglobal(L, "dofile");

  lua_newtable(L);
  const luaL_Reg redis_fns[] = {{"call", glue.call},
                                {"pcall", glue.pcall},
                                {"error_reply", glue.error_reply},
                                {"status_reply", glue.status_reply},
                                {"sha1hex", glue.sha1hex},
                                {"log", glue.log},
                                {nullptr, nullptr}};
  for (const luaL_Reg* r = redis_fns; r->name; ++r) {
    lua_pushcfunction(L, r->func);
    lua_setfield(L, -2, r->name);
  }
  const std::pair<const char*, int> levels[] = {
      {"LOG_DEBUG", 0}, {"LOG_VERBOSE", 1}, {"LOG_NOTICE", 2}, {"LOG_WARNING", 3}};
  for (auto [name, v] : levels) {
    lua_pushnumber(L, v);
    lua_setfield(L, -2, name);
  }
  lua_setglobal(L, "redis");

  luaL_dostring(L, kErrorHandler);
  // Base-library functions redis-server 7.0.15 does not offer scripts (measured: reading any
  // of them is "Script attempted to access nonexistent global variable").
  for (const char* absent : {"getfenv", "setfenv", "newproxy", "print"}) {
    lua_pushnil(L);
    lua_setglobal(L, absent);
  }

  // Read-only globals, as Redis 7.0's readonly tables: a script whose bytecode can neither
  // write a global nor reach the globals table (sim/lua_chunk.h) runs in the real globals,
  // whose metatable refuses new names; any other script runs in a proxy environment whose
  // reads fall through to the real globals and whose writes fail (LuaScripting::Compile).
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  lua_setfield(L, LUA_REGISTRYINDEX, kGlobalsKey);
  // Reads go through a table __index (Lua follows it natively, no C call per global); only a
  // name missing from the real globals reaches GlobalIndex, through their own metatable.
  lua_newtable(L);  // the real globals' metatable
  lua_pushcfunction(L, glue.global_index);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, glue.read_only_new_index);
  lua_setfield(L, -2, "__newindex");
  lua_setmetatable(L, LUA_GLOBALSINDEX);
  lua_newtable(L);  // proxy
  lua_newtable(L);  // its metatable
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, glue.read_only_new_index);
  lua_setfield(L, -2, "__newindex");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, "testbed.proxy_env");
  return L;
}

}  // namespace testbed::sim
