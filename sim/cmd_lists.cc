// The emulator's list commands (sim/emulator_commands.h), each as t_list.c runs it in Redis 7.0,
// in the same order of checks (arguments, then the key, then its type). An emptied list is
// deleted; every change touches its key for WATCH where Redis signals it. Blocking pops are not
// emulated.
#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "sim/emulator_commands.h"
#include "sim/redis_text.h"

namespace testbed::sim {

using namespace redis_text;

namespace {

constexpr const char* kNoSuchKey = "ERR no such key";
constexpr const char* kIndexOutOfRange = "ERR index out of range";

// addListRangeReply's window over a list of `len`: [start, end] clamped, or empty.
bool ListWindow(int64_t len, int64_t* start, int64_t* end) {
  if (*start < 0) *start = len + *start;
  if (*end < 0) *end = len + *end;
  if (*start < 0) *start = 0;
  if (*start > *end || *start >= len) return false;
  if (*end >= len) *end = len - 1;
  return true;
}

}  // namespace

bool Commands::ListOf(Emulator& em, const std::string& key, ListValue** out, bool create) {
  return ValueOf(em, key, out, create);
}

void Commands::DropIfEmptyList(Emulator& em, const std::string& key, const ListValue& l) {
  if (l.items.empty()) em.erase_key(key);
}

// pushGenericCommand: `head` for LPUSH, `xx` for the X kinds (only onto a list that is there).
Reply Commands::Push(Emulator& em, const Argv& a, bool head, bool xx) {
  ListValue* l;
  if (!ListOf(em, a[1], &l, false)) return WrongType();
  if (!l) {
    if (xx) return Reply::Integer(0);
    ListOf(em, a[1], &l, true);
  }
  for (size_t j = 2; j < a.size(); ++j) head ? l->items.push_front(a[j]) : l->items.push_back(a[j]);
  em.touch(a[1]);
  return Reply::Integer(static_cast<int64_t>(l->items.size()));
}

// popGenericCommand: one element as a bulk, or with a count an array (empty for count 0).
Reply Commands::Pop(Emulator& em, const Argv& a, bool head) {
  if (a.size() > 3) return Reply::Error(WrongArity(ToLower(a[0])));
  const bool has_count = a.size() == 3;
  int64_t count = 0;
  if (has_count) {
    Reply error;
    const auto n = PositiveLong(a[2], &error);
    if (!n) return error;
    count = *n;
  }
  ListValue* l;
  if (!ListOf(em, a[1], &l, false)) return WrongType();
  if (!l) return has_count ? Reply::NilArray() : Reply::Nil();
  if (has_count && count == 0) return Reply::Array({});
  std::vector<Reply> out;
  const int64_t n = has_count ? std::min<int64_t>(count, static_cast<int64_t>(l->items.size())) : 1;
  for (int64_t i = 0; i < n; ++i) {
    out.push_back(Reply::Bulk(head ? l->items.front() : l->items.back()));
    head ? l->items.pop_front() : l->items.pop_back();
  }
  DropIfEmptyList(em, a[1], *l);
  em.touch(a[1]);
  return has_count ? Reply::Array(std::move(out)) : std::move(out.front());
}

Reply Commands::LPush(Emulator& em, const Argv& a) { return Push(em, a, true, false); }
Reply Commands::RPush(Emulator& em, const Argv& a) { return Push(em, a, false, false); }
Reply Commands::LPushX(Emulator& em, const Argv& a) { return Push(em, a, true, true); }
Reply Commands::RPushX(Emulator& em, const Argv& a) { return Push(em, a, false, true); }
Reply Commands::LPop(Emulator& em, const Argv& a) { return Pop(em, a, true); }
Reply Commands::RPop(Emulator& em, const Argv& a) { return Pop(em, a, false); }

Reply Commands::LLen(Emulator& em, const Argv& a) {
  ListValue* l;
  if (!ListOf(em, a[1], &l, false)) return WrongType();
  return Reply::Integer(l ? static_cast<int64_t>(l->items.size()) : 0);
}

Reply Commands::LIndex(Emulator& em, const Argv& a) {
  ListValue* l;
  if (!ListOf(em, a[1], &l, false)) return WrongType();
  if (!l) return Reply::Nil();
  auto index = String2ll(a[2]);
  if (!index) return Reply::Error(kNotInteger);
  const int64_t len = static_cast<int64_t>(l->items.size());
  if (*index < 0) *index += len;
  if (*index < 0 || *index >= len) return Reply::Nil();
  return Reply::Bulk(l->items[static_cast<size_t>(*index)]);
}

Reply Commands::LSet(Emulator& em, const Argv& a) {
  Entry* e = em.lookup(a[1]);
  if (!e) return Reply::Error(kNoSuchKey);
  auto* l = As<ListValue>(e);
  if (!l) return WrongType();
  auto index = String2ll(a[2]);
  if (!index) return Reply::Error(kNotInteger);
  const int64_t len = static_cast<int64_t>(l->items.size());
  if (*index < 0) *index += len;
  if (*index < 0 || *index >= len) return Reply::Error(kIndexOutOfRange);
  l->items[static_cast<size_t>(*index)] = a[3];
  em.touch(a[1]);
  return Reply::Ok();
}

Reply Commands::LRange(Emulator& em, const Argv& a) {
  auto start = String2ll(a[2]);
  auto end = start ? String2ll(a[3]) : std::nullopt;
  if (!start || !end) return Reply::Error(kNotInteger);
  ListValue* l;
  if (!ListOf(em, a[1], &l, false)) return WrongType();
  if (!l || !ListWindow(static_cast<int64_t>(l->items.size()), &*start, &*end))
    return Reply::Array({});
  std::vector<Reply> out;
  for (int64_t i = *start; i <= *end; ++i)
    out.push_back(Reply::Bulk(l->items[static_cast<size_t>(i)]));
  return Reply::Array(std::move(out));
}

Reply Commands::LTrim(Emulator& em, const Argv& a) {
  auto start = String2ll(a[2]);
  auto end = start ? String2ll(a[3]) : std::nullopt;
  if (!start || !end) return Reply::Error(kNotInteger);
  ListValue* l;
  if (!ListOf(em, a[1], &l, false)) return WrongType();
  if (!l) return Reply::Ok();
  const int64_t len = static_cast<int64_t>(l->items.size());
  if (!ListWindow(len, &*start, &*end)) {
    l->items.clear();
  } else {
    l->items.erase(l->items.begin() + (*end + 1), l->items.end());
    l->items.erase(l->items.begin(), l->items.begin() + *start);
  }
  DropIfEmptyList(em, a[1], *l);
  em.touch(a[1]);
  return Reply::Ok();
}

// lremCommand: count > 0 from the head, < 0 from the tail, 0 all.
Reply Commands::LRem(Emulator& em, const Argv& a) {
  auto count = String2ll(a[2]);
  if (!count) return Reply::Error(kNotInteger);
  ListValue* l;
  if (!ListOf(em, a[1], &l, false)) return WrongType();
  if (!l) return Reply::Integer(0);
  const bool from_tail = *count < 0;
  const uint64_t limit =
      from_tail ? 0 - static_cast<uint64_t>(*count) : static_cast<uint64_t>(*count);
  uint64_t removed = 0;
  auto& items = l->items;
  if (!from_tail) {
    for (auto it = items.begin(); it != items.end() && (limit == 0 || removed < limit);)
      if (*it == a[3]) {
        it = items.erase(it);
        ++removed;
      } else {
        ++it;
      }
  } else {
    for (size_t i = items.size(); i-- > 0 && (limit == 0 || removed < limit);)
      if (items[i] == a[3]) {
        items.erase(items.begin() + static_cast<int64_t>(i));
        ++removed;
      }
  }
  if (removed) em.touch(a[1]);
  DropIfEmptyList(em, a[1], *l);
  return Reply::Integer(static_cast<int64_t>(removed));
}

Reply Commands::LInsert(Emulator& em, const Argv& a) {
  bool after;
  if (Is(a[2], "AFTER"))
    after = true;
  else if (Is(a[2], "BEFORE"))
    after = false;
  else
    return Reply::Error(kSyntax);
  ListValue* l;
  if (!ListOf(em, a[1], &l, false)) return WrongType();
  if (!l) return Reply::Integer(0);
  auto it = std::find(l->items.begin(), l->items.end(), a[3]);
  if (it == l->items.end()) return Reply::Integer(-1);
  l->items.insert(after ? it + 1 : it, a[4]);
  em.touch(a[1]);
  return Reply::Integer(static_cast<int64_t>(l->items.size()));
}

// lposCommand: RANK (negative: from the tail), COUNT (0: every match), MAXLEN.
Reply Commands::LPos(Emulator& em, const Argv& a) {
  int64_t rank = 1, count = -1, maxlen = 0;
  Reply error;
  for (size_t j = 3; j < a.size(); ++j) {
    const bool more = j + 1 < a.size();
    if (Is(a[j], "RANK") && more) {
      const auto r = String2ll(a[++j]);
      if (!r) return Reply::Error(kNotInteger);
      if (*r == 0)
        return Reply::Error(
            "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... "
            "or use negative to start from the end of the list");
      rank = *r;
    } else if (Is(a[j], "COUNT") && more) {
      const auto c = PositiveLong(a[++j], &error, "ERR COUNT can't be negative");
      if (!c) return error;
      count = *c;
    } else if (Is(a[j], "MAXLEN") && more) {
      const auto m = PositiveLong(a[++j], &error, "ERR MAXLEN can't be negative");
      if (!m) return error;
      maxlen = *m;
    } else {
      return Reply::Error(kSyntax);
    }
  }
  const bool from_tail = rank < 0;
  if (from_tail) rank = -rank;
  Entry* e = em.lookup(a[1]);
  if (!e) return count != -1 ? Reply::Array({}) : Reply::Nil();
  auto* l = As<ListValue>(e);
  if (!l) return WrongType();
  const int64_t len = static_cast<int64_t>(l->items.size());
  std::vector<Reply> found;
  int64_t matches = 0;
  for (int64_t index = 0; index < len && (maxlen == 0 || index < maxlen); ++index) {
    const int64_t at = from_tail ? len - index - 1 : index;
    if (l->items[static_cast<size_t>(at)] != a[2]) continue;
    if (++matches < rank) continue;
    if (count == -1) return Reply::Integer(at);
    found.push_back(Reply::Integer(at));
    if (count && matches - rank + 1 >= count) break;
  }
  return count == -1 ? Reply::Nil() : Reply::Array(std::move(found));
}

// lmoveGenericCommand: the source's end, pushed onto the destination's.
Reply Commands::MoveElement(Emulator& em, const Argv& a, bool from_head, bool to_head) {
  ListValue* src;
  if (!ListOf(em, a[1], &src, false)) return WrongType();
  if (!src) return Reply::Nil();
  ListValue* dst;
  if (!ListOf(em, a[2], &dst, false)) return WrongType();
  std::string value = from_head ? src->items.front() : src->items.back();
  from_head ? src->items.pop_front() : src->items.pop_back();
  if (!dst) ListOf(em, a[2], &dst, true);
  // the source may be the destination: look it up again after the insert
  em.touch(a[2]);
  to_head ? dst->items.push_front(value) : dst->items.push_back(value);
  ListOf(em, a[1], &src, false);
  if (src) DropIfEmptyList(em, a[1], *src);
  em.touch(a[1]);
  return Reply::Bulk(std::move(value));
}

Reply Commands::RPopLPush(Emulator& em, const Argv& a) { return MoveElement(em, a, false, true); }

Reply Commands::LMove(Emulator& em, const Argv& a) {
  bool where[2];
  for (int i = 0; i < 2; ++i) {
    if (Is(a[3 + i], "LEFT"))
      where[i] = true;
    else if (Is(a[3 + i], "RIGHT"))
      where[i] = false;
    else
      return Reply::Error(kSyntax);
  }
  return MoveElement(em, a, where[0], where[1]);
}

}  // namespace testbed::sim
