// What a compiled Lua 5.1 chunk does with globals, read off its bytecode (lua_dump's binary
// chunk: every function prototype, nested ones included).
//
// The emulator runs a script straight in the globals table when the script can neither write a
// global (no SETGLOBAL instruction), nor reach the globals table itself (no global named in
// `kEnvReaching` is read), nor hold a library table as a value (only `lib.name` reads): such a
// script cannot tell those tables from Redis 7.0's read-only ones. Any other script runs behind
// the read-only proxy, whose every read takes one more table lookup, and where each library is
// a read-only proxy too. See LuaScripting::Compile and sim/lua_state.cc.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace testbed::sim {

struct ChunkGlobals {
  bool writes = false;  // some function assigns a global (SETGLOBAL)
  // Some library table (kLibraries) is read as a value that could escape: anything but a read
  // of one of its fields straight into the register that held it (`redis.call(...)`'s GETGLOBAL
  // then GETTABLE A A K). A script where none escapes cannot write a library table.
  bool libraries_escape = false;
  std::set<std::string> reads;  // every global name read (GETGLOBAL)
  std::set<int> lines;          // every source line that holds an instruction (line coverage)
};

// nullopt when `dump` is not a Lua 5.1 binary chunk this parser understands (the caller then
// takes the safe path).
std::optional<ChunkGlobals> GlobalsOfChunk(std::string_view dump);

// The globals through which a script could reach, change or replace the globals table (or its
// metatable), or compile code that runs in it.
inline constexpr std::string_view kEnvReaching[] = {
    "_G",     "getfenv",  "setfenv",      "rawset",       "debug",  "loadstring", "load",
    "dofile", "loadfile", "setmetatable", "getmetatable", "module", "require"};

// The library tables Redis 7.0 makes readonly that the emulator loads: a script that reads one
// as a value runs behind the read-only proxy, where each is a read-only proxy too.
inline constexpr std::string_view kLibraries[] = {
    "redis", "string", "math", "table", "cjson", "coroutine", "bit", "cmsgpack", "struct"};

// True when a chunk may run directly in the globals table (see the top of this file).
bool MayRunInGlobals(const ChunkGlobals& g);

}  // namespace testbed::sim
