#include "sim/lua_coverage.h"

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

#include <memory>
#include <optional>

#include "sim/lua_chunk.h"

namespace testbed::sim {
namespace {
thread_local LineCoverage* current = nullptr;
}  // namespace

void LineCoverage::Add(const LineCoverage& other) {
  for (const auto& [sha, counts] : other.lines) {
    std::map<int, int64_t>& mine = lines[sha];
    for (const auto& [line, n] : counts) mine[line] += n;
  }
}

ScopedLineCoverage::ScopedLineCoverage(LineCoverage* into) : outer_(current) { current = into; }
ScopedLineCoverage::~ScopedLineCoverage() { current = outer_; }

LineCoverage* CurrentLineCoverage() { return current; }

std::vector<int> LinesWithCode(const std::string& body) {
  const std::unique_ptr<lua_State, void (*)(lua_State*)> L(luaL_newstate(), lua_close);
  if (!L || luaL_loadbuffer(L.get(), body.data(), body.size(), "@user_script") != 0) return {};
  std::string dump;
  lua_dump(
      L.get(),
      [](lua_State*, const void* p, size_t n, void* out) {
        static_cast<std::string*>(out)->append(static_cast<const char*>(p), n);
        return 0;
      },
      &dump);
  const std::optional<ChunkGlobals> chunk = GlobalsOfChunk(dump);
  if (!chunk) return {};
  return {chunk->lines.begin(), chunk->lines.end()};
}

}  // namespace testbed::sim
