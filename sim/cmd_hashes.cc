// The emulator's hash commands (sim/emulator_commands.h).
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

bool Commands::HashOf(Emulator& em, const std::string& key, HashValue** out, bool create) {
  Entry* e = em.lookup(key);
  if (!e) {
    if (!create) {
      *out = nullptr;
      return true;
    }
    e = &(em.keys_[key] = Entry{HashValue{}, -1});
  }
  *out = As<HashValue>(e);
  return *out != nullptr;
}

void Commands::HashSet(HashValue& h, const std::string& f, const std::string& v) {
  if (f.size() > kHashMaxListpackValue || v.size() > kHashMaxListpackValue) h.listpack = false;
  auto it = h.fields.find(f);
  if (it != h.fields.end()) {
    it->second.second = v;
  } else {
    h.fields[f] = {h.next_seq++, v};
  }
  if (h.fields.size() > kHashMaxListpackEntries) h.listpack = false;
}

void Commands::DropIfEmpty(Emulator& em, const std::string& key, size_t size) {
  if (size == 0) em.erase_key(key);
}

Reply Commands::HGet(Emulator& em, const Argv& a) {
  HashValue* h;
  if (!HashOf(em, a[1], &h, false)) return WrongType();
  if (!h) return Reply::Nil();
  auto it = h->fields.find(a[2]);
  return it == h->fields.end() ? Reply::Nil() : Reply::Bulk(it->second.second);
}

Reply Commands::HSet(Emulator& em, const Argv& a) {
  if (a.size() % 2 == 1) return Reply::Error(WrongArity("hset"));
  HashValue* h;
  if (!HashOf(em, a[1], &h, true)) return WrongType();
  int64_t created = 0;
  for (size_t i = 2; i < a.size(); i += 2) {
    created += h->fields.count(a[i]) ? 0 : 1;
    HashSet(*h, a[i], a[i + 1]);
  }
  em.touch(a[1]);
  return Reply::Integer(created);
}

Reply Commands::HSetNx(Emulator& em, const Argv& a) {
  HashValue* h;
  if (!HashOf(em, a[1], &h, true)) return WrongType();
  if (h->fields.count(a[2])) return Reply::Integer(0);
  HashSet(*h, a[2], a[3]);
  em.touch(a[1]);
  return Reply::Integer(1);
}

Reply Commands::HDel(Emulator& em, const Argv& a) {
  HashValue* h;
  if (!HashOf(em, a[1], &h, false)) return WrongType();
  if (!h) return Reply::Integer(0);
  int64_t n = 0;
  for (size_t i = 2; i < a.size(); ++i) n += static_cast<int64_t>(h->fields.erase(a[i]));
  if (n > 0) em.touch(a[1]);
  DropIfEmpty(em, a[1], h->fields.size());
  return Reply::Integer(n);
}

Reply Commands::HExists(Emulator& em, const Argv& a) {
  HashValue* h;
  if (!HashOf(em, a[1], &h, false)) return WrongType();
  return Reply::Integer(h && h->fields.count(a[2]) ? 1 : 0);
}

Reply Commands::HIncrBy(Emulator& em, const Argv& a) {
  auto incr = String2ll(a[3]);
  if (!incr) return Reply::Error(kNotInteger);
  HashValue* h;
  if (!HashOf(em, a[1], &h, true)) return WrongType();
  int64_t old = 0;
  if (auto it = h->fields.find(a[2]); it != h->fields.end()) {
    auto v = String2ll(it->second.second);
    if (!v) return Reply::Error(kHashNotInteger);
    old = *v;
  }
  if ((*incr < 0 && old < 0 && *incr < LLONG_MIN - old) ||
      (*incr > 0 && old > 0 && *incr > LLONG_MAX - old))
    return Reply::Error(kOverflow);
  HashSet(*h, a[2], std::to_string(old + *incr));
  em.touch(a[1]);
  return Reply::Integer(old + *incr);
}

std::vector<std::pair<std::string, std::string>> Commands::HashInOrder(const HashValue& h) {
  std::vector<
      std::pair<uint64_t, const std::pair<const std::string, std::pair<uint64_t, std::string>>*>>
      order;
  for (const auto& kv : h.fields) order.push_back({kv.second.first, &kv});
  std::sort(order.begin(), order.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [seq, kv] : order) out.push_back({kv->first, kv->second.second});
  return out;
}

Reply Commands::HGetAll(Emulator& em, const Argv& a) {
  HashValue* h;
  if (!HashOf(em, a[1], &h, false)) return WrongType();
  std::vector<Reply> out;
  if (h)
    for (auto& [f, v] : HashInOrder(*h)) {
      out.push_back(Reply::Bulk(f));
      out.push_back(Reply::Bulk(v));
    }
  return Reply::Array(std::move(out));
}

Reply Commands::HMGet(Emulator& em, const Argv& a) {
  HashValue* h;
  if (!HashOf(em, a[1], &h, false)) return WrongType();
  std::vector<Reply> out;
  for (size_t i = 2; i < a.size(); ++i) {
    auto it = h ? h->fields.find(a[i]) : decltype(h->fields.end()){};
    out.push_back(h && it != h->fields.end() ? Reply::Bulk(it->second.second) : Reply::Nil());
  }
  return Reply::Array(std::move(out));
}

}  // namespace testbed::sim
