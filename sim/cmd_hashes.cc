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
#include <optional>

#include "sim/emulator_commands.h"
#include "sim/lua_scripting.h"
#include "sim/redis_text.h"

namespace testbed::sim {

using namespace redis_text;

bool Commands::HashOf(Emulator& em, const std::string& key, HashValue** out, bool create) {
  return ValueOf(em, key, out, create);
}

void Commands::HashSet(const Emulator& em, HashValue& h, const std::string& f,
                       const std::string& v) {
  const auto max_value = static_cast<size_t>(ConfigInt(em, "hash-max-listpack-value"));
  if (f.size() > max_value || v.size() > max_value) h.listpack = false;
  auto it = h.fields.find(f);
  if (it != h.fields.end()) {
    it->second.second = v;
  } else {
    h.fields[f] = {h.next_seq++, v};
  }
  if (h.fields.size() > static_cast<size_t>(ConfigInt(em, "hash-max-listpack-entries")))
    h.listpack = false;
}

void Commands::DropIfEmpty(Emulator& em, const std::string& key, size_t size) {
  if (size == 0) em.erase_key(key);
}

// setKey (the value replaces whatever was there, TTL and all), or dbDelete when there is no
// value: a touch when something is written or deleted. The reply is `size`.
Reply Commands::StoreOrDelete(Emulator& em, const std::string& key, std::optional<Value> value,
                              int64_t size) {
  const bool existed = em.lookup(key) != nullptr;
  if (existed) em.erase_key(key);
  if (value) em.keys_[key] = Entry{std::move(*value), -1};
  if (existed || value) em.touch(key);
  return Reply::Integer(size);
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
    HashSet(em, *h, a[i], a[i + 1]);
  }
  em.touch(a[1]);
  return Reply::Integer(created);
}

Reply Commands::HSetNx(Emulator& em, const Argv& a) {
  HashValue* h;
  if (!HashOf(em, a[1], &h, true)) return WrongType();
  if (h->fields.count(a[2])) return Reply::Integer(0);
  HashSet(em, *h, a[2], a[3]);
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
  HashSet(em, *h, a[2], std::to_string(old + *incr));
  em.touch(a[1]);
  return Reply::Integer(old + *incr);
}

// hincrbyfloatCommand: the increment first (no NaN or infinity), then the key, then its value.
Reply Commands::HIncrByFloat(Emulator& em, const Argv& a) {
  long double incr = 0, value = 0;
  if (!ReadLongDouble(a[3], &incr)) return Reply::Error("ERR value is not a valid float");
  if (std::isnan(incr) || std::isinf(incr)) return Reply::Error("ERR value is NaN or Infinity");
  HashValue* h;
  if (!HashOf(em, a[1], &h, true)) return WrongType();
  if (auto it = h->fields.find(a[2]); it != h->fields.end())
    if (!ReadLongDouble(it->second.second, &value))
      return Reply::Error("ERR hash value is not a float");
  value += incr;
  if (std::isnan(value) || std::isinf(value))
    return Reply::Error("ERR increment would produce NaN or Infinity");
  const std::optional<std::string> out = FormatLongDouble(value);
  if (!out) return Reply::Error("ERR value is not a valid float");
  HashSet(em, *h, a[2], *out);
  em.touch(a[1]);
  return Reply::Bulk(*out);
}

Reply Commands::HMSet(Emulator& em, const Argv& a) {
  if (a.size() % 2 == 1) return Reply::Error(WrongArity("hmset"));
  const Reply r = HSet(em, a);
  return r.type == Reply::Type::kError ? r : Reply::Ok();
}

Reply Commands::HLen(Emulator& em, const Argv& a) {
  HashValue* h;
  if (!HashOf(em, a[1], &h, false)) return WrongType();
  return Reply::Integer(h ? static_cast<int64_t>(h->fields.size()) : 0);
}

Reply Commands::HStrLen(Emulator& em, const Argv& a) {
  HashValue* h;
  if (!HashOf(em, a[1], &h, false)) return WrongType();
  const auto it = h ? h->fields.find(a[2]) : decltype(h->fields.find(a[2])){};
  return Reply::Integer(h && it != h->fields.end() ? static_cast<int64_t>(it->second.second.size())
                                                   : 0);
}

// HKEYS (`keys`), HVALS (`values`) and HGETALL (both), in the hash's order.
Reply Commands::HashListing(Emulator& em, const Argv& a, bool keys, bool values) {
  HashValue* h;
  if (!HashOf(em, a[1], &h, false)) return WrongType();
  std::vector<Reply> out;
  if (h)
    for (auto& [f, v] : HashInOrder(*h)) {
      if (keys) out.push_back(Reply::Bulk(f));
      if (values) out.push_back(Reply::Bulk(v));
    }
  return Reply::Array(std::move(out));
}

// hrandfieldCommand / zrandmemberCommand and their WithCount kinds, drawn from the emulator's
// PRNG: a negative count may repeat, a positive one does not; a count at least the size is all
// of it. `pairs` reads the key: false for another type, else (field, value) pairs in the value's
// order, none when the key is missing.
Reply Commands::RandomPairs(Emulator& em, const Argv& a, const char* with,
                            absl::FunctionRef<bool(Pairs*, bool*)> pairs) {
  Pairs all;
  bool exists = false;
  if (a.size() >= 3) {
    const auto l = String2ll(a[2]);
    if (!l) return Reply::Error(kNotInteger);
    if (*l < -LLONG_MAX)
      return Reply::Error(
          "ERR value is out of range, value must between -9223372036854775807 and "
          "9223372036854775807");
    if (a.size() > 4 || (a.size() == 4 && !absl::EqualsIgnoreCase(a[3], with)))
      return Reply::Error(kSyntax);
    const bool withvalues = a.size() == 4;
    if (withvalues && (*l < -LLONG_MAX / 2 || *l > LLONG_MAX / 2))
      return Reply::Error("ERR value is out of range");
    if (!pairs(&all, &exists)) return WrongType();
    if (!exists || *l == 0) return Reply::Array({});
    std::vector<size_t> picked;
    if (*l < 0) {
      for (int64_t i = 0; i < -*l; ++i) picked.push_back(em.random_below(all.size()));
    } else if (*l >= static_cast<int64_t>(all.size())) {
      for (size_t i = 0; i < all.size(); ++i) picked.push_back(i);
    } else {
      std::vector<size_t> left(all.size());
      for (size_t i = 0; i < left.size(); ++i) left[i] = i;
      while (static_cast<int64_t>(picked.size()) < *l) {
        const size_t k = em.random_below(left.size());
        picked.push_back(left[k]);
        left.erase(left.begin() + static_cast<int64_t>(k));
      }
    }
    std::vector<Reply> out;
    for (const size_t i : picked) {
      out.push_back(Reply::Bulk(all[i].first));
      if (withvalues) out.push_back(Reply::Bulk(all[i].second));
    }
    return Reply::Array(std::move(out));
  }
  if (!pairs(&all, &exists)) return WrongType();
  if (!exists) return Reply::Nil();
  return Reply::Bulk(all[em.random_below(all.size())].first);
}

Reply Commands::HRandField(Emulator& em, const Argv& a) {
  return RandomPairs(em, a, "WITHVALUES", [&](Pairs* all, bool* exists) {
    HashValue* h;
    if (!HashOf(em, a[1], &h, false)) return false;
    *exists = h != nullptr;
    if (h) *all = HashInOrder(*h);
    return true;
  });
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

Reply Commands::HGetAll(Emulator& em, const Argv& a) { return HashListing(em, a, true, true); }

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
