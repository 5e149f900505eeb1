#include "sim/lua_chunk.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace testbed::sim {
namespace {

// Lua 5.1's lundump.c / ldump.c layout, and lopcodes.h's instruction fields.
constexpr uint32_t kOpMask = 0x3F;
constexpr uint32_t kOpGetGlobal = 5;
constexpr uint32_t kOpGetTable = 6;
constexpr uint32_t kOpSetGlobal = 7;
constexpr int kAShift = 6, kBShift = 23;
constexpr uint32_t kAMask = 0xFF, kBMask = 0x1FF;
constexpr int kBxShift = 14;
constexpr int kTypeNil = 0, kTypeBoolean = 1, kTypeNumber = 3, kTypeString = 4;

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool ok() const { return ok_; }

  bool header() {
    const std::string_view h = take(12);
    if (!ok_ || h.substr(0, 6) != std::string_view("\033Lua\x51\x00", 6) || h[6] != 1) return false;
    int_size_ = static_cast<unsigned char>(h[7]);
    size_t_size_ = static_cast<unsigned char>(h[8]);
    instruction_size_ = static_cast<unsigned char>(h[9]);
    number_size_ = static_cast<unsigned char>(h[10]);
    return int_size_ == 4 && (size_t_size_ == 4 || size_t_size_ == 8) && instruction_size_ == 4;
  }

  // One function prototype and, recursively, the ones it defines.
  bool function(ChunkGlobals* out) {
    string();             // source
    take(2 * int_size_);  // linedefined, lastlinedefined
    take(4);              // nups, numparams, is_vararg, maxstacksize
    const uint64_t code_size = integer();
    std::vector<uint32_t> code;
    for (uint64_t i = 0; ok_ && i < code_size; ++i) code.push_back(u32());
    const uint64_t constants = integer();
    std::vector<std::optional<std::string>> k;
    for (uint64_t i = 0; ok_ && i < constants; ++i) {
      const std::string_view type = take(1);
      if (!ok_) break;
      switch (type[0]) {
        case kTypeNil:
          k.emplace_back();
          break;
        case kTypeBoolean:
          take(1);
          k.emplace_back();
          break;
        case kTypeNumber:
          take(number_size_);
          k.emplace_back();
          break;
        case kTypeString:
          k.emplace_back(std::string(string()));
          break;
        default:
          ok_ = false;
      }
    }
    for (size_t at = 0; at < code.size(); ++at) {
      const uint32_t i = code[at];
      const uint32_t op = i & kOpMask;
      if (op == kOpSetGlobal) out->writes = true;
      if (op != kOpGetGlobal) continue;
      const uint32_t bx = i >> kBxShift;
      if (bx >= k.size() || !k[bx]) return ok_ = false;
      out->reads.insert(*k[bx]);
      if (std::find(std::begin(kLibraries), std::end(kLibraries), *k[bx]) == std::end(kLibraries))
        continue;
      // Safe only when the next instruction reads a field of it into the same register.
      const uint32_t a = i >> kAShift & kAMask;
      const uint32_t next = at + 1 < code.size() ? code[at + 1] : 0;
      if (at + 1 >= code.size() || (next & kOpMask) != kOpGetTable ||
          (next >> kAShift & kAMask) != a || (next >> kBShift & kBMask) != a)
        out->libraries_escape = true;
    }
    const uint64_t protos = integer();
    for (uint64_t i = 0; ok_ && i < protos; ++i)
      if (!function(out)) return false;
    const uint64_t lines = integer();  // debug information: each instruction's source line
    for (uint64_t i = 0; ok_ && i < lines; ++i) out->lines.insert(static_cast<int>(u32()));
    const uint64_t locals = integer();
    for (uint64_t i = 0; ok_ && i < locals; ++i) {
      string();
      take(2 * int_size_);
    }
    const uint64_t upvalues = integer();
    for (uint64_t i = 0; ok_ && i < upvalues; ++i) string();
    return ok_;
  }

  bool at_end() const { return ok_ && at_ == in_.size(); }

 private:
  std::string_view take(uint64_t n) {
    if (!ok_ || n > in_.size() - at_) {
      ok_ = false;
      return {};
    }
    const std::string_view s = in_.substr(at_, n);
    at_ += n;
    return s;
  }
  uint64_t unsigned_of(std::string_view bytes) const {  // little-endian (the header says so)
    uint64_t v = 0;
    for (size_t i = bytes.size(); i-- > 0;) v = v << 8 | static_cast<unsigned char>(bytes[i]);
    return v;
  }
  uint32_t u32() { return static_cast<uint32_t>(unsigned_of(take(4))); }
  uint64_t integer() { return unsigned_of(take(int_size_)); }
  std::string_view string() {  // size_t length counting a trailing NUL; 0: no string
    const uint64_t n = unsigned_of(take(size_t_size_));
    if (n == 0) return {};
    const std::string_view s = take(n);
    return s.empty() ? s : s.substr(0, s.size() - 1);
  }

  std::string_view in_;
  size_t at_ = 0;
  bool ok_ = true;
  int int_size_ = 4, size_t_size_ = 8, instruction_size_ = 4, number_size_ = 8;
};

}  // namespace

std::optional<ChunkGlobals> GlobalsOfChunk(std::string_view dump) {
  Reader r(dump);
  ChunkGlobals g;
  if (!r.header() || !r.function(&g) || !r.at_end()) return std::nullopt;
  return g;
}

bool MayRunInGlobals(const ChunkGlobals& g) {
  if (g.writes || g.libraries_escape) return false;
  return std::none_of(std::begin(kEnvReaching), std::end(kEnvReaching),
                      [&](std::string_view name) { return g.reads.count(std::string(name)); });
}

}  // namespace testbed::sim
