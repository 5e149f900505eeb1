#include "sim/lua_scripting.h"

#include <absl/container/flat_hash_map.h>
#include <absl/strings/str_split.h>

#include <openssl/sha.h>

#include <algorithm>
#include <optional>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <new>
#include <set>
#include <string_view>

extern "C" {
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
int luaopen_cjson(lua_State* l);
}

#include "sim/digest.h"
#include "sim/lua_coverage.h"
#include "sim/lua_state.h"
#include "sim/emulator.h"
#include "sim/lua_chunk.h"
#include "sim/redis_text.h"

namespace testbed::sim {

const std::string& CachedSha1(const std::string& body) {
  thread_local absl::flat_hash_map<std::string, std::string> cache;
  auto it = cache.find(body);
  if (it == cache.end()) {
    if (cache.size() > 4096) cache.clear();  // scripts are few; generated bodies must not pile up
    it = cache.emplace(body, Sha1Hex(body)).first;
  }
  return it->second;
}

std::string Sha1Hex(const std::string& data) {
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return HexOf(digest, SHA_DIGEST_LENGTH);
}

namespace {

// The LuaScripting whose script this thread is running: redis.call, the pcall guards and the
// budget hook run only inside Run's lua_pcall, and a script cannot run a script (Run saves and
// restores it all the same).
thread_local LuaScripting* running = nullptr;
constexpr int kHookEvery = 1000;

}  // namespace

struct LuaGlue {
  static LuaScripting* Self(lua_State*) { return running; }
  static int OkName(lua_State* L);  // the registry reference to the interned "ok"

  // Reply -> Lua, as redisProtocolToLuaType does.
  static void Push(lua_State* L, const Reply& r) {
    lua_checkstack(L, 5);
    switch (r.type) {
      case Reply::Type::kStatus:  // {ok = text}: the interned "ok" (see PooledState)
        lua_createtable(L, 0, 1);
        lua_rawgeti(L, LUA_REGISTRYINDEX, OkName(L));
        lua_pushlstring(L, r.str.data(), r.str.size());
        lua_rawset(L, -3);
        return;
      case Reply::Type::kError: {
        lua_newtable(L);
        lua_pushstring(L, "err");
        std::string msg = r.str;
        while (!msg.empty() && (msg.back() == '\r' || msg.back() == '\n')) msg.pop_back();
        lua_pushlstring(L, msg.data(), msg.size());
        lua_settable(L, -3);
        return;
      }
      case Reply::Type::kInteger:
        lua_pushnumber(L, static_cast<lua_Number>(r.integer));
        return;
      case Reply::Type::kBulk:
        lua_pushlstring(L, r.str.data(), r.str.size());
        return;
      case Reply::Type::kNil:
      case Reply::Type::kNilArray:
        lua_pushboolean(L, 0);
        return;
      case Reply::Type::kArray:
        // redisProtocolToLuaType: t[i] = element i, in order; sized once, as the same table.
        lua_createtable(L, static_cast<int>(r.elements.size()), 0);
        for (size_t i = 0; i < r.elements.size(); ++i) {
          Push(L, r.elements[i]);
          lua_rawseti(L, -2, static_cast<int>(i + 1));
        }
        return;
    }
  }

  // {err = "CODE msg"} as luaPushErrorBuff builds it from "-CODE msg" or "msg".
  static void PushError(lua_State* L, std::string err) {
    std::string code = "ERR", msg = err;
    if (!err.empty() && err[0] == '-') {
      const size_t sp = err.find(' ');
      if (sp == std::string::npos) {
        msg = err.substr(1);
      } else {
        code = err.substr(1, sp - 1);
        msg = err.substr(sp + 1);
      }
    }
    while (!msg.empty() && (msg.back() == '\r' || msg.back() == '\n')) msg.pop_back();
    while (!msg.empty() && (msg.front() == '\r' || msg.front() == '\n')) msg.erase(0, 1);
    const std::string final_msg = code + " " + msg;
    lua_newtable(L);
    lua_pushstring(L, "err");
    lua_pushlstring(L, final_msg.data(), final_msg.size());
    lua_settable(L, -3);
  }

  // Builds the argv, runs the command and pushes the reply (or an {err=...} table). Returns 1,
  // or kRaise when the value on top must be raised as an error: GenericCall raises it only
  // after this frame is gone, because lua_error longjmps over C++ frames and their
  // destructors (the argv, the reply) would never run.
  static constexpr int kRaise = -1;
  static int CallBody(lua_State* L, bool raise) {
    LuaScripting* self = Self(L);
    const int argc = lua_gettop(L);
    if (argc == 0) {
      PushError(L, "Please specify at least one argument for this redis lib call");
      return raise ? kRaise : 1;
    }
    Argv& argv = self->call_argv_;
    std::vector<std::string>& spare = self->spare_args_;
    for (; argv.size() > static_cast<size_t>(argc); argv.pop_back())
      spare.push_back(std::move(argv.back()));
    for (; argv.size() < static_cast<size_t>(argc); spare.pop_back()) {
      if (spare.empty()) spare.emplace_back();
      argv.push_back(std::move(spare.back()));
    }
    for (int j = 1; j <= argc; ++j) {
      const int type = lua_type(L, j);
      // Into the strings the last call left (their buffers are reused): clear + append copies
      // straight in, where assign goes through the general replace.
      if (type == LUA_TNUMBER) {
        redis_text::FormatLuaArgNumberTo(lua_tonumber(L, j), argv[j - 1]);
      } else if (type == LUA_TSTRING) {
        size_t len;
        const char* s = lua_tolstring(L, j, &len);
        argv[j - 1].clear();
        argv[j - 1].append(s, len);
      } else {
        PushError(L, "Lua redis lib command arguments must be strings or integers");
        return raise ? kRaise : 1;
      }
    }
    bool known, arity_ok;
    Reply reply = self->emulator_.execute_from_script(argv, &known, &arity_ok);
    if (!known) {
      PushError(L, "Unknown Redis command called from script");
      return raise ? kRaise : 1;
    }
    if (!arity_ok) {
      PushError(L, "Wrong number of args calling Redis command from script");
      return raise ? kRaise : 1;
    }
    Push(L, reply);
    if (raise && reply.is_error()) return kRaise;
    return 1;
  }
  static int GenericCall(lua_State* L, bool raise) {
    const int pushed = CallBody(L, raise);  // every C++ object of the call is gone here
    return pushed == kRaise ? lua_error(L) : pushed;
  }
  static int Call(lua_State* L) { return GenericCall(L, true); }
  static int PCall(lua_State* L) { return GenericCall(L, false); }

  static int ErrorReply(lua_State* L) {
    if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
      PushError(L, "wrong number or type of arguments");
      return 1;
    }
    size_t len;
    const char* s = lua_tolstring(L, 1, &len);
    std::string err(s, len);
    if (err.empty() || err[0] != '-') err = "-" + err;
    PushError(L, err);
    return 1;
  }

  static int StatusReply(lua_State* L) {
    if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
      PushError(L, "wrong number or type of arguments");
      return 1;
    }
    lua_newtable(L);
    lua_pushstring(L, "ok");
    lua_pushvalue(L, 1);
    lua_settable(L, -3);
    return 1;
  }

  static int Sha1(lua_State* L) {
    if (lua_gettop(L) != 1) {
      PushError(L, "wrong number of arguments");
      return lua_error(L);
    }
    size_t len;
    const char* s = lua_tolstring(L, 1, &len);
    const std::string hex = Sha1Hex(s ? std::string(s, len) : std::string());
    lua_pushstring(L, hex.c_str());
    return 1;
  }

  static int Log(lua_State*) { return 0; }

  // luaB_pcall / luaB_xpcall, step for step, except that an exhausted instruction budget is
  // raised again: a script must not be able to catch its own stop and loop forever.
  static int PCallGuard(lua_State* L) {
    luaL_checkany(L, 1);
    const int status = lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0);
    if (status != 0 && Self(L)->budget_exceeded_) return lua_error(L);
    lua_pushboolean(L, status == 0);
    lua_insert(L, 1);
    return lua_gettop(L);
  }
  static int XPCallGuard(lua_State* L) {
    luaL_checkany(L, 2);
    lua_settop(L, 2);
    lua_insert(L, 1);
    const int status = lua_pcall(L, 0, LUA_MULTRET, 1);
    if (status != 0 && Self(L)->budget_exceeded_) return lua_error(L);
    lua_pushboolean(L, status == 0);
    lua_replace(L, 1);
    return lua_gettop(L);
  }

  // Lua 5.1's tonumber (luaB_tonumber, upvalue 1) with a fast path for one plain decimal
  // integer string, whose value strtod would give exactly (luaB_tonumber converts it twice).
  // Anything else goes to the original in this same frame, so its errors read the same.
  static int ToNumber(lua_State* L) {
    if (lua_gettop(L) == 1 && lua_type(L, 1) == LUA_TSTRING) {
      size_t n;
      const char* s = lua_tolstring(L, 1, &n);
      if (const std::optional<double> v = redis_text::PlainInteger(s, n)) {
        lua_pushnumber(L, *v);
        return 1;
      }
    }
    return lua_tocfunction(L, lua_upvalueindex(1))(L);
  }

  static int GlobalIndex(lua_State* L) {
    lua_getfield(L, LUA_REGISTRYINDEX, kGlobalsKey);
    lua_pushvalue(L, 2);
    lua_rawget(L, -2);
    if (!lua_isnil(L, -1)) return 1;
    const char* name = lua_tostring(L, 2);
    return luaL_error(L, "Script attempted to access nonexistent global variable '%s'",
                      name ? name : "?");
  }

  static void Hook(lua_State* L, lua_Debug* ar) {
    LuaScripting* self = Self(L);
    if (ar->event == LUA_HOOKLINE) {  // only while line coverage is recorded
      // Only the script's own lines: the error handler is Lua too, and is no line of it.
      if (lua_getinfo(L, "S", ar) && std::strcmp(ar->source, "@user_script") == 0)
        ++(*self->covered_)[ar->currentline];
      return;
    }
    self->instructions_left_ -= kHookEvery;
    if (self->instructions_left_ < 0) {
      self->budget_exceeded_ = true;
      luaL_error(L, "script exceeded the emulator's instruction budget");
    }
  }

  // Lua -> Reply, as luaReplyToRedisReply does. `names`: registry references to the interned
  // strings "err" and "ok" (pushing a C string hashes and interns it again each time).
  struct ReplyNames {
    int err, ok;
  };
  // The value on the top of the stack (left there). Arrays are walked with a stack of their
  // own, not by recursion: a reply can be nested 7,995 deep (past that Lua's stack ends it), and
  // as many C++ frames overflowed a sanitized build's stack.
  static Reply ToReply(lua_State* L, ReplyNames names) {
    struct Open {  // an array being read: its elements so far and the next index
      std::vector<Reply> elements;
      int next = 1;
    };
    std::vector<Open> open;
    for (;;) {
      // The value on the top: a leaf, or an array to open.
      std::optional<Reply> leaf = Leaf(L, names);
      if (!leaf) {
        open.emplace_back();
        // A hint only (the walk still stops at the first nil), and capped: a sparse table's
        // border can be far beyond its first nil.
        open.back().elements.reserve(std::min<size_t>(lua_objlen(L, -1), 1024));
      } else if (open.empty()) {
        return std::move(*leaf);
      } else {
        lua_pop(L, 1);
        open.back().elements.push_back(std::move(*leaf));
      }
      // The next element of the innermost open array (lua_rawgeti: push j and rawget in one
      // call), closing each array that has no more.
      for (;;) {
        lua_rawgeti(L, -1, open.back().next++);
        if (!lua_isnil(L, -1)) break;
        lua_pop(L, 1);
        Reply array = Reply::Array(std::move(open.back().elements));
        open.pop_back();
        if (open.empty()) return array;
        lua_pop(L, 1);
        open.back().elements.push_back(std::move(array));
      }
    }
  }

  // Lua -> Reply for one value, as luaReplyToRedisReply: nullopt for a table that is an array.
  // The value that would take the stack past Lua's limit (8,000 slots: a table nested about as
  // deep, or one that holds itself) is the stack limit's error, in place.
  static std::optional<Reply> Leaf(lua_State* L, ReplyNames names) {
    if (!lua_checkstack(L, 4)) return Reply::Error("ERR reached lua stack limit");
    switch (lua_type(L, -1)) {
      case LUA_TSTRING: {
        size_t len;
        const char* s = lua_tolstring(L, -1, &len);
        return Reply::Bulk(std::string(s, len));
      }
      case LUA_TBOOLEAN:
        return lua_toboolean(L, -1) ? Reply::Integer(1) : Reply::Nil();
      case LUA_TNUMBER:
        return Reply::Integer(static_cast<long long>(lua_tonumber(L, -1)));
      case LUA_TTABLE: {
        lua_rawgeti(L, LUA_REGISTRYINDEX, names.err);
        lua_rawget(L, -2);
        if (lua_type(L, -1) == LUA_TSTRING) {
          std::string msg = lua_tostring(L, -1);
          lua_pop(L, 1);
          return Reply::Error(Sanitize(msg));
        }
        lua_pop(L, 1);
        lua_rawgeti(L, LUA_REGISTRYINDEX, names.ok);
        lua_rawget(L, -2);
        if (lua_type(L, -1) == LUA_TSTRING) {
          std::string msg = lua_tostring(L, -1);
          lua_pop(L, 1);
          return Reply::Status(Sanitize(msg));
        }
        lua_pop(L, 1);
        return std::nullopt;
      }
      default:
        return Reply::Nil();
    }
  }

  static std::string Sanitize(std::string s) {
    for (char& c : s)
      if (c == '\r' || c == '\n') c = ' ';
    return s;
  }
};

// Lua states are reused across emulators of a thread (every run builds a fresh emulator): a
// state and the functions compiled in it outlive the emulator, and what a script can see of
// them is reset. Scripts cannot write globals (the proxy environment), KEYS and ARGV are set
// before every call, and which scripts are loaded is the emulator's own (`loaded_`), so
// EVALSHA and SCRIPT EXISTS answer as a fresh server does. Only default states are pooled.
struct LuaScripting::PooledState {
  lua_State* L = nullptr;
  std::map<std::string, int> compiled;  // sha -> registry reference of the function
  std::set<std::string> no_writes;      // the scripts whose shebang says flags=no-writes
  int gc_count = 0;                     // scripts since the last GC step
  // Registry references to what every EVAL pushes: the error handler and the interned names
  // "KEYS", "ARGV", "err" and "ok" (pushing a C string interns it again each time).
  int handler = LUA_NOREF, keys_name = LUA_NOREF, argv_name = LUA_NOREF;
  int err_name = LUA_NOREF, ok_name = LUA_NOREF;
  ~PooledState() {
    if (L) lua_close(L);
  }
};

int LuaGlue::OkName(lua_State* L) { return Self(L)->state_->ok_name; }

namespace {
constexpr size_t kPoolPerThread = 4;
constexpr size_t kMaxCompiledPerState = 256;
std::vector<std::unique_ptr<LuaScripting::PooledState>>& Pool() {
  thread_local std::vector<std::unique_ptr<LuaScripting::PooledState>> pool;
  return pool;
}
}  // namespace

LuaScripting::LuaScripting(Emulator& emulator) : emulator_(emulator) {
  const bool poolable = !emulator_.options().fault_cjson_empty_table_as_array;
  if (poolable && !Pool().empty()) {
    state_ = std::move(Pool().back());
    Pool().pop_back();
  } else {
    state_ = std::make_unique<PooledState>();
    state_->L = NewLuaState(!poolable, {.call = LuaGlue::Call,
                                        .pcall = LuaGlue::PCall,
                                        .error_reply = LuaGlue::ErrorReply,
                                        .status_reply = LuaGlue::StatusReply,
                                        .sha1hex = LuaGlue::Sha1,
                                        .log = LuaGlue::Log,
                                        .to_number = LuaGlue::ToNumber,
                                        .pcall_guard = LuaGlue::PCallGuard,
                                        .xpcall_guard = LuaGlue::XPCallGuard,
                                        .global_index = LuaGlue::GlobalIndex});
    lua_State* L = state_->L;
    lua_getglobal(L, "__redis__err__handler");
    state_->handler = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushliteral(L, "KEYS");
    state_->keys_name = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushliteral(L, "ARGV");
    state_->argv_name = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushliteral(L, "err");
    state_->err_name = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushliteral(L, "ok");
    state_->ok_name = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  poolable_ = poolable;
  L_ = state_->L;
}

LuaScripting::~LuaScripting() {
  lua_settop(L_, 0);
  if (poolable_ && Pool().size() < kPoolPerThread && state_->compiled.size() < kMaxCompiledPerState)
    Pool().push_back(std::move(state_));
}

bool LuaScripting::Exists(const std::string& sha) const {
  return loaded_.count(redis_text::ToLower(sha)) > 0;
}

// evalExtractShebangFlags: "#!lua [flags=f1,f2,...]" on the first line of an EVAL's body
// (Redis 7.0's flags: no-writes, allow-oom, allow-stale, no-cluster, allow-cross-slot-keys; only
// no-writes changes what a script on one server without memory limits can do). The words are
// split at white space (sdssplitargs also reads quotes, which no flag needs).
Reply LuaScripting::Shebang(const std::string& body, size_t* length, bool* no_writes) {
  if (body.compare(0, 2, "#!") != 0) return Reply::Ok();
  const size_t end = body.find('\n');
  if (end == std::string::npos) return Reply::Error("ERR Invalid script shebang");
  *length = end;
  std::vector<std::string> words = absl::StrSplit(absl::string_view(body).substr(0, end),
                                                  absl::ByAnyChar(" \t\r\v\f"), absl::SkipEmpty());
  if (words.empty()) return Reply::Error("ERR Invalid engine in script shebang");
  if (words[0] != "#!lua")
    return Reply::Error("ERR Unexpected engine in script shebang: " + words[0]);
  static const std::set<std::string> kFlags = {"no-writes", "allow-oom", "allow-stale",
                                               "no-cluster", "allow-cross-slot-keys"};
  for (size_t i = 1; i < words.size(); ++i) {
    if (words[i].compare(0, 6, "flags=") != 0)
      return Reply::Error("ERR Unknown lua shebang option: " + words[i]);
    for (const absl::string_view part : absl::StrSplit(words[i].substr(6), ',')) {
      const std::string flag(part);
      if (!kFlags.count(flag))
        return Reply::Error("ERR Unexpected flag in script shebang: " + flag);
      *no_writes = *no_writes || flag == "no-writes";
    }
  }
  return Reply::Ok();
}

Reply LuaScripting::Compile(const std::string& body, std::string* sha) {
  *sha = CachedSha1(body);
  if (loaded_.count(*sha)) return Reply::Ok();
  if (state_->compiled.count(*sha)) {
    loaded_.insert(*sha);
    return Reply::Ok();
  }
  lua_State* L = L_;
  bool no_writes = false;
  size_t shebang = 0;  // the shebang line's length: skipped, its line feed kept (line numbers)
  if (Reply r = Shebang(body, &shebang, &no_writes); r.is_error()) return r;
  // Redis's Lua parses every chunk as text (its f_parser has no undump): a precompiled chunk is
  // the syntax error its first byte makes, which parsing it after a space gives (same line).
  const bool bytecode = !body.empty() && body[0] == LUA_SIGNATURE[0];
  const std::string as_text = bytecode ? " " + body : std::string();
  const std::string_view source =
      bytecode ? std::string_view(as_text) : std::string_view(body).substr(shebang);
  if (luaL_loadbuffer(L, source.data(), source.size(), "@user_script") != 0) {
    std::string err = lua_tostring(L, -1);
    lua_pop(L, 1);
    return Reply::Error(LuaGlue::Sanitize("ERR Error compiling script (new function): " + err));
  }
  // The proxy's extra lookup on every global read was 2.5% of a check; the seed scripts never
  // need it. A script the chunk reader does not understand takes the proxy.
  std::string dump;
  lua_dump(
      L,
      [](lua_State*, const void* p, size_t n, void* out) {
        static_cast<std::string*>(out)->append(static_cast<const char*>(p), n);
        return 0;
      },
      &dump);
  const std::optional<ChunkGlobals> globals = GlobalsOfChunk(dump);
  if (!globals || !MayRunInGlobals(*globals)) {
    lua_getfield(L, LUA_REGISTRYINDEX, "testbed.proxy_env");
    lua_setfenv(L, -2);
  }
  state_->compiled[*sha] = luaL_ref(L, LUA_REGISTRYINDEX);
  if (no_writes) state_->no_writes.insert(*sha);
  loaded_.insert(*sha);
  return Reply::Ok();
}

void LuaScripting::Flush() {
  loaded_.clear();
  evaluated_.clear();
}

Reply LuaScripting::Load(const std::string& body) {
  std::string sha;
  if (Reply r = Compile(body, &sha); r.is_error()) return r;
  return Reply::Bulk(sha);
}

Reply LuaScripting::Eval(const std::string& body, Args keys, Args args) {
  for (const auto& [seen, seen_sha] : evaluated_)
    if (seen.size() == body.size() && seen == body) return Run(seen_sha, keys, args);
  std::string sha;
  if (Reply r = Compile(body, &sha); r.is_error()) return r;
  if (evaluated_.size() < 16) evaluated_.emplace_back(body, sha);
  return Run(sha, keys, args);
}

Reply LuaScripting::EvalSha(const std::string& sha, Args keys, Args args) {
  const std::string lower = redis_text::ToLower(sha);
  if (sha.size() != 40 || !loaded_.count(lower)) return Reply::Error(redis_text::kNoScript);
  return Run(lower, keys, args);
}

Reply LuaScripting::Run(const std::string& sha, Args keys, Args args) {
  lua_State* L = L_;
  // KEYS and ARGV are set as globals with rawset: the globals' metatable has no __newindex.
  auto set_array = [L](int name_ref, Args items) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, name_ref);
    lua_createtable(L, static_cast<int>(items.size()), 0);  // sized once: no rehash per item
    for (size_t i = 0; i < items.size(); ++i) {
      lua_pushlstring(L, items[i].data(), items[i].size());
      lua_rawseti(L, -2, static_cast<int>(i + 1));
    }
    lua_rawset(L, LUA_GLOBALSINDEX);
  };
  set_array(state_->keys_name, keys);
  set_array(state_->argv_name, args);

  lua_rawgeti(L, LUA_REGISTRYINDEX, state_->handler);
  const int handler = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, state_->compiled.at(sha));
  instructions_left_ = emulator_.options().script_instruction_budget;
  budget_exceeded_ = false;
  LineCoverage* const coverage = CurrentLineCoverage();
  covered_ = coverage ? &coverage->lines[sha] : nullptr;
  lua_sethook(L, LuaGlue::Hook, coverage ? LUA_MASKCOUNT | LUA_MASKLINE : LUA_MASKCOUNT,
              kHookEvery);
  LuaScripting* const outer = running;
  running = this;
  const bool was_read_only = emulator_.read_only_script_;
  emulator_.read_only_script_ = was_read_only || state_->no_writes.count(sha) > 0;
  const int status = lua_pcall(L, 0, 1, handler);
  emulator_.read_only_script_ = was_read_only;
  running = outer;
  lua_sethook(L, nullptr, 0, 0);

  Reply reply;
  if (budget_exceeded_) {
    reply = Reply::Error("ERR script exceeded the emulator's instruction budget of " +
                         std::to_string(emulator_.options().script_instruction_budget) +
                         " (deviation: redis-server would keep running it) script: " + sha);
  } else if (status != 0) {
    // luaCallFunction: the handler turned the error into {err, source, line}.
    std::string msg, source, line;
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      if (lua_isstring(L, -1)) msg = lua_tostring(L, -1);
      lua_pop(L, 1);
      lua_getfield(L, -1, "source");
      if (lua_isstring(L, -1)) source = lua_tostring(L, -1);
      lua_pop(L, 1);
      lua_getfield(L, -1, "line");
      if (lua_isstring(L, -1)) line = lua_tostring(L, -1);
      lua_pop(L, 1);
    } else if (lua_isstring(L, -1)) {
      msg = std::string("ERR ") + lua_tostring(L, -1);
    }
    std::string full = msg;
    if (!source.empty() && !line.empty())
      full += " script: " + sha + ", on " + source + ":" + line + ".";
    reply = Reply::Error(LuaGlue::Sanitize(full));
  } else {
    reply = LuaGlue::ToReply(L, {state_->err_name, state_->ok_name});
  }
  lua_settop(L, 0);
  // evalGenericCommand: a GC step of LUA_GC_CYCLE_PERIOD (50) every 50 scripts, not one per
  // script ("calling it for every command uses too much CPU"). Not observable by scripts.
  // Without it the collector does 1% fewer instructions, but the larger heap costs as much in
  // time (measured: no difference between the two in 12 alternated checks).
  if (++state_->gc_count == 50) {
    lua_gc(L, LUA_GCSTEP, 50);
    state_->gc_count = 0;
  }
  return reply;
}

}  // namespace testbed::sim
