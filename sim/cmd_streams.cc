// The emulator's stream commands (sim/emulator_commands.h).
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

std::optional<uint64_t> Commands::String2ull(const std::string& s) {
  if (auto ll = String2ll(s)) {
    if (*ll < 0) return std::nullopt;
    return static_cast<uint64_t>(*ll);
  }
  if (s.empty() || s.find('\0') != std::string::npos) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (errno == EINVAL || errno == ERANGE || *end != '\0' || end == s.c_str()) return std::nullopt;
  return v;
}

std::optional<StreamId> Commands::ParseStreamId(const std::string& s, uint64_t missing_seq,
                                                bool strict, bool* seq_given) {
  if (s.size() > 127) return std::nullopt;
  const std::string buf = s.substr(0, s.find('\0'));
  if (strict && (buf == "-" || buf == "+")) return std::nullopt;
  if (seq_given) *seq_given = true;
  if (buf == "-") return StreamId{0, 0};
  if (buf == "+") return StreamId{UINT64_MAX, UINT64_MAX};
  const size_t dash = buf.find('-');
  auto ms = String2ull(buf.substr(0, dash));
  if (!ms) return std::nullopt;
  uint64_t seq = missing_seq;
  if (dash != std::string::npos) {
    const std::string rest = buf.substr(dash + 1);
    if (seq_given && rest == "*") {
      seq = 0;
      *seq_given = false;
    } else {
      auto sq = String2ull(rest);
      if (!sq) return std::nullopt;
      seq = *sq;
    }
  }
  return StreamId{*ms, seq};
}

Reply Commands::XAdd(Emulator& em, const Argv& a) {
  const std::string& idarg = a[2];
  const std::string opt = ToUpper(idarg);
  if (opt == "NOMKSTREAM" || opt == "MAXLEN" || opt == "MINID")
    return Unsupported("XADD option '" + idarg + "'");
  bool auto_id = idarg == "*";
  bool seq_given = true;
  StreamId id;
  if (!auto_id) {
    auto parsed = ParseStreamId(idarg, 0, true, &seq_given);
    if (!parsed) return Reply::Error(kInvalidStreamId);
    id = *parsed;
  }
  const size_t field_pos = 3;
  if (a.size() - field_pos < 2 || (a.size() - field_pos) % 2 == 1)
    return Reply::Error(WrongArity("xadd"));
  if (!auto_id && seq_given && id.ms == 0 && id.seq == 0) return Reply::Error(kXaddZero);
  Entry* e = em.lookup(a[1]);
  if (e && !As<StreamValue>(e)) return WrongType();
  if (!e) e = &(em.keys_[a[1]] = Entry{StreamValue{}, -1});
  auto& s = std::get<StreamValue>(e->value);
  if (s.last_id.ms == UINT64_MAX && s.last_id.seq == UINT64_MAX)
    return Reply::Error(
        "ERR The stream has exhausted the last possible ID, unable to add more items");
  if (auto_id) {
    const uint64_t now = static_cast<uint64_t>(em.now_);
    id = now > s.last_id.ms ? StreamId{now, 0} : StreamId{s.last_id.ms, s.last_id.seq + 1};
  } else if (!seq_given) {
    if (s.last_id.ms == id.ms) {
      if (s.last_id.seq == UINT64_MAX) return Reply::Error(kXaddSmaller);
      id = StreamId{s.last_id.ms, s.last_id.seq + 1};
    }
  }
  if (id <= s.last_id) return Reply::Error(kXaddSmaller);
  s.entries[id] = std::vector<std::string>(a.begin() + field_pos, a.end());
  s.last_id = id;
  em.touch(a[1]);
  return Reply::Bulk(id.str());
}

Reply Commands::XDel(Emulator& em, const Argv& a) {
  std::vector<StreamId> ids;
  for (size_t i = 2; i < a.size(); ++i) {
    auto id = ParseStreamId(a[i], 0, true, nullptr);
    if (!id) return Reply::Error(kInvalidStreamId);
    ids.push_back(*id);
  }
  Entry* e = em.lookup(a[1]);
  if (!e) return Reply::Integer(0);
  auto* s = As<StreamValue>(e);
  if (!s) return WrongType();
  int64_t n = 0;
  for (const StreamId& id : ids) n += static_cast<int64_t>(s->entries.erase(id));
  if (n > 0) em.touch(a[1]);
  return Reply::Integer(n);
}

Reply Commands::XRange(Emulator& em, const Argv& a) {
  auto interval = [](const std::string& s, uint64_t missing, bool* ex) {
    *ex = s.size() > 1 && s[0] == '(';
    return *ex ? ParseStreamId(s.substr(1), missing, true, nullptr)
               : ParseStreamId(s, missing, false, nullptr);
  };
  bool startex, endex;
  auto start = interval(a[2], 0, &startex);
  if (!start) return Reply::Error(kInvalidStreamId);
  if (startex) {
    if (start->seq == UINT64_MAX) {
      if (start->ms == UINT64_MAX) return Reply::Error("ERR invalid start ID for the interval");
      *start = StreamId{start->ms + 1, 0};
    } else {
      start->seq++;
    }
  }
  auto end = interval(a[3], UINT64_MAX, &endex);
  if (!end) return Reply::Error(kInvalidStreamId);
  if (endex) {
    if (end->seq == 0) {
      if (end->ms == 0) return Reply::Error("ERR invalid end ID for the interval");
      *end = StreamId{end->ms - 1, UINT64_MAX};
    } else {
      end->seq--;
    }
  }
  int64_t count = -1;
  for (size_t j = 4; j < a.size(); ++j) {
    if (Is(a[j], "COUNT") && a.size() - j - 1 >= 1) {
      auto c = String2ll(a[j + 1]);
      if (!c) return Reply::Error(kNotInteger);
      count = *c < 0 ? 0 : *c;
      ++j;
    } else {
      return Reply::Error(kSyntax);
    }
  }
  Entry* e = em.lookup(a[1]);
  if (!e) return Reply::Array({});
  auto* s = As<StreamValue>(e);
  if (!s) return WrongType();
  if (count == 0) return Reply::NilArray();
  std::vector<Reply> out;
  if (*start <= *end) {
    for (auto it = s->entries.lower_bound(*start); it != s->entries.end() && it->first <= *end;
         ++it) {
      if (count > 0 && static_cast<int64_t>(out.size()) >= count) break;
      std::vector<Reply> fields;
      for (const auto& f : it->second) fields.push_back(Reply::Bulk(f));
      out.push_back(Reply::Array({Reply::Bulk(it->first.str()), Reply::Array(fields)}));
    }
  }
  return Reply::Array(std::move(out));
}

}  // namespace testbed::sim
