// A fresh Lua state with Redis 7.0's script environment (sim/lua_state.h).
#include "sim/lua_state.h"

#include "sim/lua_chunk.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <utility>

extern "C" {
#include <lauxlib.h>
#include <lualib.h>
int luaopen_cjson(lua_State* l);
int luaopen_bit(lua_State* l);
int luaopen_cmsgpack(lua_State* l);  // sim/third_party: Redis's own, byte for byte
int luaopen_struct(lua_State* l);
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

// Redis 7.0's readonly tables (its Lua is patched: a table flagged readonly refuses every write,
// rawset and setmetatable with "Attempt to modify a readonly table", and every table reachable
// from the globals, their metatables and the basic types' metatables are flagged). Stock Lua 5.1
// has no such flag. A script whose bytecode can reach no library table as a value
// (sim/lua_chunk.h) runs with the real ones; any other runs behind the read-only proxy
// environment, where each library is a proxy: an empty table whose metatable reads through to
// the library and refuses new names. rawset, setmetatable, getmetatable, rawget, next and pairs
// know the proxies (kBehind maps each to its table) and act on the table behind, or refuse; and
// what rawget and next return is never a real library table or the real globals (kProxyOf).
constexpr const char* kBehind = "testbed.readonly";
constexpr const char* kProxyOf = "testbed.proxy_of";
constexpr const char* kView = "testbed.protected_view";

// A write to a readonly table (a library, the globals): Redis 7.0's error.
int RefuseWrite(lua_State* L) { return luaL_error(L, "Attempt to modify a readonly table"); }

// The table behind the proxy at `index` is pushed (true), or nothing (false: not a proxy).
bool PushBehind(lua_State* L, int index) {
  if (lua_type(L, index) != LUA_TTABLE) return false;
  lua_getfield(L, LUA_REGISTRYINDEX, kBehind);
  lua_pushvalue(L, index);
  lua_rawget(L, -2);
  lua_remove(L, -2);
  if (lua_istable(L, -1)) return true;
  lua_pop(L, 1);
  return false;
}

// Records `proxy` (at proxy_index) as the read-only face of `table` (at table_index).
void Register(lua_State* L, int proxy_index, int table_index) {
  proxy_index = proxy_index < 0 ? lua_gettop(L) + 1 + proxy_index : proxy_index;
  table_index = table_index < 0 ? lua_gettop(L) + 1 + table_index : table_index;
  lua_getfield(L, LUA_REGISTRYINDEX, kBehind);
  lua_pushvalue(L, proxy_index);
  lua_pushvalue(L, table_index);
  lua_rawset(L, -3);
  lua_pop(L, 1);
  lua_getfield(L, LUA_REGISTRYINDEX, kProxyOf);
  lua_pushvalue(L, table_index);
  lua_pushvalue(L, proxy_index);
  lua_rawset(L, -3);
  lua_pop(L, 1);
}

// Pushes a read-only proxy of the table on the top of the stack (which stays).
void PushProxy(lua_State* L) {
  lua_newtable(L);  // the proxy
  lua_newtable(L);  // its metatable
  lua_pushvalue(L, -3);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, RefuseWrite);
  lua_setfield(L, -2, "__newindex");
  lua_setmetatable(L, -2);
  Register(L, -1, -2);
}

// The base library's functions that write a table or read its metatable, made to know the
// proxies; each wraps the original (upvalue 1).
int CallOriginal(lua_State* L) {
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}
int RawSetOrSetMetatable(lua_State* L) {
  if (PushBehind(L, 1)) {  // raised inside the C function, as Redis's lua_rawset does: no place
    lua_pushliteral(L, "Attempt to modify a readonly table");
    return lua_error(L);
  }
  return CallOriginal(L);
}
int GetMetatable(lua_State* L) {
  if (PushBehind(L, 1)) {
    lua_pushnil(L);  // a library table has no metatable of its own
    return 1;
  }
  if (lua_type(L, 1) == LUA_TSTRING) {  // the strings' metatable, readonly
    lua_getfield(L, LUA_REGISTRYINDEX, "testbed.string_mt");
    return 1;
  }
  return CallOriginal(L);
}
int RawGetOrNext(lua_State* L) {
  if (PushBehind(L, 1)) lua_replace(L, 1);
  const int n = CallOriginal(L);
  lua_getfield(L, LUA_REGISTRYINDEX, kProxyOf);
  for (int i = 1; i <= n; ++i) {
    if (!lua_istable(L, i)) continue;
    lua_pushvalue(L, i);
    lua_rawget(L, -2);
    if (lua_istable(L, -1))
      lua_replace(L, i);
    else
      lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return n;
}
int Pairs(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_getglobal(L, "next");  // the proxies' next
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

// loadstring of a precompiled chunk: Redis's Lua parses every chunk as text (its f_parser has no
// undump), so bytecode is a syntax error, not a function. The same error comes from parsing it
// as text after a space (which changes no line), under the name loadstring gives it.
int LoadString(lua_State* L) {
  size_t n = 0;
  const char* s = luaL_checklstring(L, 1, &n);
  if (n == 0 || s[0] != LUA_SIGNATURE[0]) return CallOriginal(L);
  const char* name = luaL_optstring(L, 2, s);
  const std::string text = " " + std::string(s, n);
  if (luaL_loadbuffer(L, text.data(), text.size(), name) == 0) return 1;
  lua_pushnil(L);
  lua_insert(L, -2);
  return 2;
}

void Wrap(lua_State* L, const char* name, lua_CFunction f) {
  lua_getglobal(L, name);
  lua_pushcclosure(L, f, 1);
  lua_setglobal(L, name);
}

// The protected view (kView): the libraries' proxies, read before the real globals by a script
// behind the proxy environment; the strings' metatable as scripts see it; the wrapped functions.
void ProtectTables(lua_State* L) {
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kBehind);
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kProxyOf);
  lua_newtable(L);  // the view
  for (const std::string_view lib : kLibraries) {
    const std::string name(lib);
    lua_getglobal(L, name.c_str());
    PushProxy(L);
    lua_setfield(L, -3, name.c_str());
    lua_pop(L, 1);
  }
  // getmetatable('') gives a readonly table whose __index is the string library's proxy (as
  // Debian's 7.0.15 protects the basic types' metatables, CVE-2025-46818).
  lua_newtable(L);
  lua_getfield(L, -2, "string");
  lua_setfield(L, -2, "__index");
  PushProxy(L);
  lua_setfield(L, LUA_REGISTRYINDEX, "testbed.string_mt");
  lua_pop(L, 1);
  lua_setfield(L, LUA_REGISTRYINDEX, kView);
  Wrap(L, "rawset", RawSetOrSetMetatable);
  Wrap(L, "setmetatable", RawSetOrSetMetatable);
  Wrap(L, "getmetatable", GetMetatable);
  Wrap(L, "rawget", RawGetOrNext);
  Wrap(L, "next", RawGetOrNext);
  Wrap(L, "loadstring", LoadString);
  lua_pushcfunction(L, Pairs);
  lua_setglobal(L, "pairs");
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
  // bit (LuaBitOp, as Redis bundles it), with Debian 7.0.15's fix of bit.tohex(x, -2^31), whose
  // negation overflowed (CVE-2024-31449): the count is then -2^31 + 1.
  lua_pushcfunction(L, luaopen_bit);
  lua_call(L, 0, 1);
  lua_getfield(L, -1, "tohex");
  lua_pushcclosure(
      L,
      [](lua_State* S) -> int {
        if (lua_gettop(S) >= 2 && lua_isnumber(S, 2)) {
          // The count as LuaBitOp's barg reads it: rounded, then its low 32 bits.
          const double shifted = lua_tonumber(S, 2) + 6755399441055744.0;  // 2^52 + 2^51
          uint64_t bits = 0;
          std::memcpy(&bits, &shifted, sizeof bits);
          if (static_cast<uint32_t>(bits) == 0x80000000u) {
            lua_pushnumber(S, -2147483647.0);
            lua_replace(S, 2);
          }
        }
        lua_pushvalue(S, lua_upvalueindex(1));
        lua_insert(S, 1);
        lua_call(S, lua_gettop(S) - 1, 1);
        return 1;
      },
      1);
  lua_setfield(L, -2, "tohex");
  lua_pop(L, 1);  // luaopen_bit set the global `bit` itself
  for (lua_CFunction open : {luaopen_struct, luaopen_cmsgpack}) {  // each sets its global
    lua_pushcfunction(L, open);
    lua_call(L, 0, 0);
  }
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
  ProtectTables(L);
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
  lua_pushcfunction(L, RefuseWrite);
  lua_setfield(L, -2, "__newindex");
  lua_setmetatable(L, LUA_GLOBALSINDEX);
  // The proxy environment: reads go to the protected view (the libraries' proxies, _G), then to
  // the real globals; every write fails. _G is the proxy environment everywhere, and the real
  // globals are its table behind.
  lua_newtable(L);  // proxy
  lua_getfield(L, LUA_REGISTRYINDEX, kView);
  lua_pushvalue(L, -2);
  lua_setfield(L, -2, "_G");
  lua_newtable(L);  // the view's metatable
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
  lua_newtable(L);  // the proxy's metatable
  lua_insert(L, -2);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, RefuseWrite);
  lua_setfield(L, -2, "__newindex");
  lua_setmetatable(L, -2);
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  Register(L, -2, -1);
  lua_pop(L, 1);
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_GLOBALSINDEX, "_G");
  lua_setfield(L, LUA_REGISTRYINDEX, "testbed.proxy_env");
  return L;
}

}  // namespace testbed::sim
