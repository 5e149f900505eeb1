// The emulator's set commands (sim/emulator_commands.h), each as t_set.c runs it in Redis 7.0, in
// the same order of checks. An emptied set is deleted; every change touches its key for WATCH
// where Redis signals it. Members come out in byte order, or in numeric order when every member
// is an integer (Redis's intset); Redis's hash-table order is not reproduced (a deviation that
// tests which sort the reply do not see). SPOP and SRANDMEMBER draw from the emulator's own
// PRNG, so a run repeats.
#include <algorithm>
#include <climits>
#include <set>
#include <string>
#include <vector>

#include "sim/emulator_commands.h"
#include "sim/redis_text.h"

namespace testbed::sim {

using namespace redis_text;

bool Commands::SetOf(Emulator& em, const std::string& key, SetValue** out, bool create) {
  return ValueOf(em, key, out, create);
}

// setTypeAdd: an intset stays one while every member is an integer (string2ll) and there are no
// more than set-max-intset-entries.
bool Commands::SetInsert(const Emulator& em, SetValue& s, const std::string& m) {
  if (!s.members.insert(m).second) return false;
  if (s.intset && (!String2ll(m) || static_cast<int64_t>(s.members.size()) >
                                        ConfigInt(em, "set-max-intset-entries")))
    s.intset = false;
  return true;
}

// The members as SMEMBERS lists them (see the file's comment).
std::vector<std::string> Commands::Members(const SetValue& s) {
  std::vector<std::string> out(s.members.begin(), s.members.end());
  if (std::all_of(out.begin(), out.end(), [](const std::string& m) { return String2ll(m); }))
    std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
      return *String2ll(a) < *String2ll(b);
    });
  return out;
}

Reply Commands::SAdd(Emulator& em, const Argv& a) {
  SetValue* s;
  if (!SetOf(em, a[1], &s, true)) return WrongType();
  int64_t added = 0;
  for (size_t j = 2; j < a.size(); ++j) added += SetInsert(em, *s, a[j]) ? 1 : 0;
  if (added) em.touch(a[1]);
  return Reply::Integer(added);
}

Reply Commands::SRem(Emulator& em, const Argv& a) {
  SetValue* s;
  if (!SetOf(em, a[1], &s, false)) return WrongType();
  if (!s) return Reply::Integer(0);
  int64_t removed = 0;
  for (size_t j = 2; j < a.size(); ++j) removed += static_cast<int64_t>(s->members.erase(a[j]));
  if (removed) {
    if (s->members.empty()) em.erase_key(a[1]);
    em.touch(a[1]);
  }
  return Reply::Integer(removed);
}

Reply Commands::SCard(Emulator& em, const Argv& a) {
  SetValue* s;
  if (!SetOf(em, a[1], &s, false)) return WrongType();
  return Reply::Integer(s ? static_cast<int64_t>(s->members.size()) : 0);
}

Reply Commands::SIsMember(Emulator& em, const Argv& a) {
  SetValue* s;
  if (!SetOf(em, a[1], &s, false)) return WrongType();
  return Reply::Integer(s && s->members.contains(a[2]) ? 1 : 0);
}

Reply Commands::SMIsMember(Emulator& em, const Argv& a) {
  SetValue* s;
  if (!SetOf(em, a[1], &s, false)) return WrongType();
  std::vector<Reply> out;
  for (size_t j = 2; j < a.size(); ++j)
    out.push_back(Reply::Integer(s && s->members.contains(a[j]) ? 1 : 0));
  return Reply::Array(std::move(out));
}

Reply Commands::SMove(Emulator& em, const Argv& a) {
  SetValue *src, *dst;
  const bool src_ok = SetOf(em, a[1], &src, false);
  Entry* src_entry = em.lookup(a[1]);
  if (!src_entry) return Reply::Integer(0);
  const bool dst_ok = SetOf(em, a[2], &dst, false);
  if (!src_ok || !dst_ok) return WrongType();
  if (src == dst) return Reply::Integer(src->members.contains(a[3]) ? 1 : 0);
  if (!src->members.erase(a[3])) return Reply::Integer(0);
  if (src->members.empty()) em.erase_key(a[1]);
  if (!dst) SetOf(em, a[2], &dst, true);
  em.touch(a[1]);
  if (SetInsert(em, *dst, a[3])) em.touch(a[2]);
  return Reply::Integer(1);
}

// sinterGenericCommand, sunionDiffGenericCommand: `keys` from a[first] on; a missing key is the
// empty set. `store`: the result goes to a[1] (deleted when empty), and its size is the reply.
Reply Commands::SetAlgebra(Emulator& em, const Argv& a, size_t first, size_t last, SetOp op,
                           bool store, int64_t limit) {
  std::vector<const SetValue*> sets;
  bool any_missing = false;
  for (size_t j = first; j < last; ++j) {
    SetValue* s;
    if (!SetOf(em, a[j], &s, false)) return WrongType();
    sets.push_back(s);
    // Every key is checked for its type, a missing one included (Redis 7.0's
    // sinterGenericCommand; 6.2 stopped at the first missing key).
    any_missing = any_missing || !s;
  }
  std::set<std::string> result;
  if (op == SetOp::kInter) {
    if (!any_missing && !sets.empty())
      for (const std::string& m : sets[0]->members)
        if (std::all_of(sets.begin() + 1, sets.end(),
                        [&](const SetValue* s) { return s->members.contains(m); })) {
          result.insert(m);
          if (limit > 0 && static_cast<int64_t>(result.size()) >= limit) break;
        }
  } else if (op == SetOp::kUnion) {
    for (const SetValue* s : sets)
      if (s) result.insert(s->members.begin(), s->members.end());
  } else if (sets[0]) {
    result = sets[0]->members;
    for (size_t i = 1; i < sets.size(); ++i)
      if (sets[i])
        for (const std::string& m : sets[i]->members) result.erase(m);
  }
  if (limit >= 0) return Reply::Integer(static_cast<int64_t>(result.size()));  // SINTERCARD
  if (!store) {
    std::vector<Reply> out;
    for (const std::string& m : Members(SetValue{std::move(result)})) out.push_back(Reply::Bulk(m));
    return Reply::Array(std::move(out));
  }
  if (result.empty()) return StoreOrDelete(em, a[1], std::nullopt, 0);
  SetValue stored;  // createIntsetObject, then setTypeAdd of each member
  for (const std::string& m : result) SetInsert(em, stored, m);
  return StoreOrDelete(em, a[1], Value(std::move(stored)), static_cast<int64_t>(result.size()));
}

Reply Commands::SMembers(Emulator& em, const Argv& a) {
  return SetAlgebra(em, a, 1, 2, SetOp::kInter, false);
}
Reply Commands::SInter(Emulator& em, const Argv& a) {
  return SetAlgebra(em, a, 1, a.size(), SetOp::kInter, false);
}
Reply Commands::SUnion(Emulator& em, const Argv& a) {
  return SetAlgebra(em, a, 1, a.size(), SetOp::kUnion, false);
}
Reply Commands::SDiff(Emulator& em, const Argv& a) {
  return SetAlgebra(em, a, 1, a.size(), SetOp::kDiff, false);
}
Reply Commands::SInterStore(Emulator& em, const Argv& a) {
  return SetAlgebra(em, a, 2, a.size(), SetOp::kInter, true);
}
Reply Commands::SUnionStore(Emulator& em, const Argv& a) {
  return SetAlgebra(em, a, 2, a.size(), SetOp::kUnion, true);
}
Reply Commands::SDiffStore(Emulator& em, const Argv& a) {
  return SetAlgebra(em, a, 2, a.size(), SetOp::kDiff, true);
}

Reply Commands::SInterCard(Emulator& em, const Argv& a) {
  const auto numkeys = String2ll(a[1]);
  if (!numkeys || *numkeys < 1) return Reply::Error("ERR numkeys should be greater than 0");
  if (*numkeys > static_cast<int64_t>(a.size()) - 2)
    return Reply::Error("ERR Number of keys can't be greater than number of args");
  int64_t limit = 0;
  Reply error;
  for (size_t j = 2 + static_cast<size_t>(*numkeys); j < a.size(); ++j) {
    if (Is(a[j], "LIMIT") && j + 1 < a.size()) {
      const auto l = PositiveLong(a[++j], &error, "ERR LIMIT can't be negative");
      if (!l) return error;
      limit = *l;
    } else {
      return Reply::Error(kSyntax);
    }
  }
  return SetAlgebra(em, a, 2, 2 + static_cast<size_t>(*numkeys), SetOp::kInter, false, limit);
}

// A member drawn from the emulator's PRNG.
static std::set<std::string>::iterator Draw(Emulator& em, SetValue& s) {
  auto it = s.members.begin();
  std::advance(it, static_cast<int64_t>(em.random_below(s.members.size())));
  return it;
}

// spopCommand / spopWithCountCommand.
Reply Commands::SPop(Emulator& em, const Argv& a) {
  if (a.size() > 3) return Reply::Error(kSyntax);
  if (a.size() == 3) {
    Reply error;
    const auto count = PositiveLong(a[2], &error);
    if (!count) return error;
    SetValue* s;
    if (!SetOf(em, a[1], &s, false)) return WrongType();
    if (!s) return Reply::Array({});
    if (*count == 0) return Reply::Array({});
    std::vector<Reply> out;
    while (!s->members.empty() && static_cast<int64_t>(out.size()) < *count) {
      auto it = Draw(em, *s);
      out.push_back(Reply::Bulk(*it));
      s->members.erase(it);
    }
    if (s->members.empty()) em.erase_key(a[1]);
    em.touch(a[1]);
    return Reply::Array(std::move(out));
  }
  SetValue* s;
  if (!SetOf(em, a[1], &s, false)) return WrongType();
  if (!s) return Reply::Nil();
  auto it = Draw(em, *s);
  Reply out = Reply::Bulk(*it);
  s->members.erase(it);
  if (s->members.empty()) em.erase_key(a[1]);
  em.touch(a[1]);
  return out;
}

// srandmemberCommand / srandmemberWithCountCommand: a negative count may repeat members.
Reply Commands::SRandMember(Emulator& em, const Argv& a) {
  if (a.size() > 3) return Reply::Error(kSyntax);
  if (a.size() == 3) {
    const auto l = String2ll(a[2]);
    if (!l) return Reply::Error(kNotInteger);
    if (*l < -LONG_MAX)
      return Reply::Error(
          "ERR value is out of range, value must between -9223372036854775807 and "
          "9223372036854775807");
    SetValue* s;
    if (!SetOf(em, a[1], &s, false)) return WrongType();
    if (!s || *l == 0) return Reply::Array({});
    std::vector<Reply> out;
    if (*l < 0) {
      for (int64_t i = 0; i < -*l; ++i) out.push_back(Reply::Bulk(*Draw(em, *s)));
      return Reply::Array(std::move(out));
    }
    SetValue left = *s;
    while (!left.members.empty() && static_cast<int64_t>(out.size()) < *l) {
      auto it = Draw(em, left);
      out.push_back(Reply::Bulk(*it));
      left.members.erase(it);
    }
    return Reply::Array(std::move(out));
  }
  SetValue* s;
  if (!SetOf(em, a[1], &s, false)) return WrongType();
  if (!s) return Reply::Nil();
  return Reply::Bulk(*Draw(em, *s));
}

}  // namespace testbed::sim
