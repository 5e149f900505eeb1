// The a2 store core of seed 003, its reads: ranges of a session's events, the state of a reducer,
// presence, and the listings of sessions and snapshots (the writes are store.cc).
#include "real/a2/store.h"

#include "real/a2/js_store.h"
#include "real/a2/store_internal.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "model/json_text.h"

namespace testbed::real::a2 {

using namespace internal;

namespace {
// escapeGlob (ts 582-588).
std::string EscapeGlob(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '*' || c == '?' || c == '[' || c == ']') out += '\\';
    out += c;
  }
  return out;
}
}  // namespace

// readFrontier (ts 710-719).
sim::Task<int64_t> Store::read_frontier(const std::string& session_id) {
  const sim::Reply r = co_await call(V("GET", count_key(session_id)));
  const std::string text = StrOr(r, "0");
  // Number(x): a non-numeric text is NaN, which fails isSafeInteger.
  bool numeric = !text.empty();
  for (char c : text) numeric = numeric && ((c >= '0' && c <= '9') || c == '-');
  const int64_t frontier = Num(text);
  if (!numeric || frontier < 0)
    throw Unavailable("redis event count for session '" + session_id + "' is invalid");
  co_return frontier;
}

// readRangePage (ts 721-799).
sim::Task<std::vector<StoredEvent>> Store::read_range_page(const std::string& session_id,
                                                           int64_t after_index,
                                                           int64_t through_index, int64_t limit) {
  std::vector<StoredEvent> rows;
  if (through_index <= after_index) co_return rows;
  const sim::Reply entries =
      co_await call(V("XRANGE", store_key(session_id), absl::StrCat(after_index + 1, "-0"),
                      absl::StrCat(through_index, "-0"), "COUNT", std::to_string(limit)));
  if (entries.elements.empty()) co_return rows;
  sim::Argv hmget = {"HMGET", meta_key(session_id)};
  for (const sim::Reply& entry : entries.elements) {
    const int64_t index = EntryIndex(StrOr(entry.elements.at(0)));
    for (const char* suffix : kMetaSuffixes) hmget.push_back(absl::StrCat(index, ":", suffix));
  }
  const sim::Reply values = co_await call(hmget);
  std::map<std::string, std::string> meta;
  for (size_t i = 2; i < hmget.size(); ++i) {
    const size_t at = i - 2;
    if (at < values.elements.size())
      if (std::optional<std::string> v = Str(values.elements[at])) meta[hmget[i]] = *v;
  }
  auto get = [&meta](int64_t idx, const char* suffix) -> std::optional<std::string> {
    auto it = meta.find(absl::StrCat(idx, ":", suffix));
    if (it == meta.end()) return std::nullopt;
    return it->second;
  };
  auto num = [&get](int64_t idx, const char* suffix) -> std::optional<int64_t> {
    std::optional<std::string> v = get(idx, suffix);
    if (!v) return std::nullopt;
    return Num(*v);
  };
  for (const sim::Reply& entry : entries.elements) {
    StoredEvent e;
    static_cast<Event&>(e) = ToEvent(session_id, entry);
    const int64_t idx = e.index;
    const std::map<std::string, std::string> f = FieldMap(entry.elements[1]);
    auto cause = f.find("cause");
    e.cause = ToCause(cause == f.end() ? std::nullopt : std::optional<std::string>(cause->second));
    e.lane = Lane(f);
    e.processed_at = num(idx, "p");
    e.processed_by_attempt = num(idx, "pa");
    if (std::optional<std::string> ri = get(idx, "ri"))
      e.returned_event_ids = DecodeReturnedEventIds(*ri);
    e.first_claimed_at = num(idx, "fc");
    e.last_claimed_at = num(idx, "lc");
    e.attempt_count = num(idx, "d").value_or(0);
    e.claim_holder = get(idx, "ch");
    e.claim_expires_at = num(idx, "ce");
    e.failure_count = num(idx, "a").value_or(0);
    e.last_failed_at = num(idx, "lf");
    e.last_failed_attempt = num(idx, "lfa");
    e.last_error = get(idx, "e");
    e.failed_at = num(idx, "f");
    rows.push_back(std::move(e));
  }
  co_return rows;
}

// readEventRange (ts 801-839).
sim::Task<std::vector<Event>> Store::read_event_range(const std::string& session_id,
                                                      int64_t after_index, int64_t through_index) {
  std::vector<Event> events;
  if (through_index <= after_index) co_return events;
  int64_t next_index = after_index + 1;
  while (next_index <= through_index) {
    const sim::Reply entries =
        co_await call(V("XRANGE", store_key(session_id), absl::StrCat(next_index, "-0"),
                        absl::StrCat(through_index, "-0"), "COUNT", std::to_string(kReadPageSize)));
    if (entries.elements.empty())
      throw Unavailable(absl::StrCat("redis event range for session '", session_id,
                                     "' ended before index ", through_index));
    for (size_t position = 0; position < entries.elements.size(); ++position) {
      const int64_t index = EntryIndex(StrOr(entries.elements[position].elements.at(0)));
      if (index != next_index + static_cast<int64_t>(position) || index > through_index)
        throw Unavailable("redis event range for session '" + session_id + "' is not contiguous");
    }
    for (const sim::Reply& entry : entries.elements) events.push_back(ToEvent(session_id, entry));
    next_index = events.back().index + 1;
  }
  co_return events;
}

// readRange (ts 841-887).
sim::Task<std::vector<StoredEvent>> Store::read_range(const std::string& session_id,
                                                      int64_t after_index,
                                                      std::optional<int64_t> through_index) {
  std::vector<StoredEvent> rows;
  if (through_index && *through_index <= after_index) co_return rows;
  const int64_t current_frontier = co_await read_frontier(session_id);
  const int64_t frontier = std::min(through_index.value_or(current_frontier), current_frontier);
  if (frontier <= after_index) co_return rows;
  int64_t next_index = after_index + 1;
  while (next_index <= frontier) {
    std::vector<StoredEvent> page =
        co_await read_range_page(session_id, next_index - 1, frontier, kReadPageSize);
    if (page.empty())
      throw Unavailable(absl::StrCat("redis event range for session '", session_id,
                                     "' ended before index ", frontier));
    for (size_t position = 0; position < page.size(); ++position)
      if (page[position].index != next_index + static_cast<int64_t>(position))
        throw Unavailable("redis event range for session '" + session_id + "' is not contiguous");
    const int64_t last_index = page.back().index;
    if (last_index < next_index || last_index > frontier)
      throw Unavailable("redis event range for session '" + session_id + "' did not advance");
    for (StoredEvent& row : page) rows.push_back(std::move(row));
    next_index = last_index + 1;
  }
  co_return rows;
}

// read (ts 1007-1016).
sim::Task<std::vector<StoredEvent>> Store::read(std::string session_id, int64_t after_index,
                                                std::optional<int64_t> through_index) {
  if (js_)
    co_return FromJs<std::vector<StoredEvent>>(
        co_await js_->Run("readRows", JsArgs(session_id, after_index, through_index)));
  co_return co_await read_range(session_id, after_index, through_index);
}

// readState (ts 1197-1233).
sim::Task<StateRead> Store::read_state(std::string session_id, std::string reducer_name) {
  if (js_)
    co_return FromJs<StateRead>(co_await js_->Run("readState", JsArgs(session_id, reducer_name)));
  const sim::Reply reply =
      co_await eval("READ_STATE_LUA", V(snap_key(session_id, reducer_name), count_key(session_id)),
                    std::vector<std::string>());
  const std::string raw = reply.elements.empty() ? "" : StrOr(reply.elements[0]);
  std::optional<Json> parsed;
  if (!raw.empty()) parsed = Parse(raw);
  const std::string frontier_text = reply.elements.size() > 1 ? StrOr(reply.elements[1]) : "";
  const int64_t frontier = Num(frontier_text);
  bool bad = frontier_text.empty() || frontier < 0;
  int64_t snap_index = 0;
  if (parsed) {
    const Json idx = parsed->is_object() && parsed->contains("index") ? (*parsed)["index"] : Json();
    bad = bad || !IsInteger(idx) || idx.get<double>() < 0;
    if (!bad) snap_index = static_cast<int64_t>(idx.get<double>());
  }
  if (bad) throw Unavailable("redis state frontier for session '" + session_id + "' is invalid");
  StateRead out;
  out.events = co_await read_event_range(session_id, snap_index, frontier);
  if (parsed) {
    const Json state = parsed->contains("state") ? (*parsed)["state"] : Json();
    out.snapshot = Snapshot{snap_index, state};
  }
  co_return out;
}

// presence.read (ts 1295-1327).
sim::Task<std::vector<PresenceRow>> Store::presence_read(std::string ns) {
  if (js_)
    co_return FromJs<std::vector<PresenceRow>>(co_await js_->Run("presenceRead", JsArgs(ns)));
  const sim::Reply reply =
      co_await eval("PRESENCE_READ_LUA", V(presence_key(ns)), V(std::to_string(ctx_.now_ms())));
  std::vector<PresenceRow> rows;
  for (size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
    const Json key = Parse(StrOr(reply.elements[i]));
    const Json entry = Parse(StrOr(reply.elements[i + 1]));
    PresenceRow row;
    // The script wrote both: a [participant, field] array and a {v, s, a, e} object. Anything
    // else (undefined fields in JavaScript) reads as empty here.
    auto text = [&key](size_t k) {
      return key.is_array() && key.size() > k && key[k].is_string() ? key[k].get<std::string>()
                                                                    : std::string();
    };
    auto num = [&entry](const char* k) {
      return entry.is_object() && entry.contains(k) && entry[k].is_number()
                 ? entry[k].get<int64_t>()
                 : int64_t{0};
    };
    row.participant = text(0);
    row.field = text(1);
    row.value = entry.is_object() && entry.contains("v") ? entry["v"] : Json();
    row.seen = num("s");
    row.at = num("a");
    row.expires_at = num("e");
    rows.push_back(std::move(row));
  }
  co_return rows;
}

// inspect.listSessions (ts 1329-1399). Promise.all of the per-session reads runs them one
// after another here (the order of their Redis calls is then fixed; each is a read).
// Promise.all (ts 1348, 1452): each branch on a thread of the actor's own, through a Store on
// that thread, so the scheduler interleaves the branches' calls as Node's event loop can (all
// the GETs, then the XRANGEs, ..., where the branches are alike: one connection, in the order
// sent). The call fails with the first branch to fail in time, as Promise.all rejects.
namespace {

// A Promise.all's branches, shared with their threads (which may outlive its caller).
struct AllState {
  std::function<sim::Task<void>(Store&, size_t)> branch;
  std::exception_ptr first_error;  // the first branch to fail, in time
};

// One branch on its own thread, with a store of its own (ts: the same store object).
sim::Task<void> RunBranch(sim::Ctx& ctx, const Scripts* scripts, std::string prefix,
                          Store::IdSource ids, Store::Notify notify,
                          std::shared_ptr<AllState> state, size_t i) {
  Store store(ctx, *scripts, std::move(prefix), std::move(ids), std::move(notify));
  try {
    co_await state->branch(store, i);
  } catch (...) {
    if (!state->first_error) state->first_error = std::current_exception();
  }
}

}  // namespace

sim::Task<void> Store::all(size_t n, std::function<sim::Task<void>(Store&, size_t)> branch) {
  auto state = std::make_shared<AllState>();
  state->branch = std::move(branch);
  std::vector<sim::ThreadId> threads;
  for (size_t i = 0; i < n; ++i)
    threads.push_back(ctx_.spawn(
        absl::StrCat("all#", i),
        [scripts = &scripts_, prefix = prefix_, ids = ids_, notify = notify_, state,
         i](sim::Ctx& c) { return RunBranch(c, scripts, prefix, ids, notify, state, i); }));
  // It settles when every branch has, or rejects at the first failure while the others go on.
  for (;;) {
    if (state->first_error) std::rethrow_exception(state->first_error);
    std::vector<sim::ThreadId> running;
    for (const sim::ThreadId t : threads)
      if (t >= 0 && !ctx_.finished(t)) running.push_back(t);
    if (running.empty()) co_return;
    co_await ctx_.join_any(std::move(running));
  }
}

// One session of listSessions (ts 1349-1351): its readRange, and `rows[0]!.createdAt` of an
// empty one, which throws inside the branch.
sim::Task<void> Store::read_session(std::string session_id, std::vector<StoredEvent>* rows) {
  *rows = co_await read_range(session_id, 0, std::nullopt);
  if (rows->empty()) throw TypeError("Cannot read properties of undefined (reading 'createdAt')");
}

// One key of listSnapshots (ts 1453-1465).
sim::Task<void> Store::read_snapshot(std::string key, std::string start,
                                     std::optional<SnapshotInfo>* out) {
  const sim::Reply raw = co_await call(V("GET", key));
  if (raw.type == sim::Reply::Type::kNil) co_return;
  const Json parsed = Parse(raw.str);
  // parsed.index of JSON null throws (a TypeError); of a number, string or array it is
  // undefined, as are its fields.
  if (parsed.is_null()) throw TypeError("Cannot read properties of null (reading 'index')");
  SnapshotInfo s;
  s.reducer_name = key.substr(start.size());
  if (parsed.is_object() && parsed.contains("index") && parsed["index"].is_number())
    s.index = parsed["index"].get<int64_t>();
  if (parsed.is_object() && parsed.contains("updatedAt") && parsed["updatedAt"].is_number())
    s.updated_at = parsed["updatedAt"].get<int64_t>();
  *out = std::move(s);
}

sim::Task<SessionPage> Store::list_sessions(std::string prefix, int64_t limit,
                                            std::optional<std::string> cursor) {
  if (js_)
    co_return FromJs<SessionPage>(co_await js_->Run("listSessions", JsArgs(prefix, limit, cursor)));
  const std::string minimum = cursor ? "(" + *cursor : "[" + prefix;
  const sim::Reply candidates = co_await call(
      V("ZRANGEBYLEX", sessions_key_, minimum, "+", "LIMIT", "0", std::to_string(limit + 1)));
  std::vector<std::string> session_ids;
  for (const sim::Reply& c : candidates.elements) {
    const std::string id = StrOr(c);
    if (id.rfind(prefix, 0) == 0 && static_cast<int64_t>(session_ids.size()) < limit)
      session_ids.push_back(id);
  }
  auto ids = std::make_shared<const std::vector<std::string>>(session_ids);
  auto read = std::make_shared<std::vector<std::vector<StoredEvent>>>(session_ids.size());
  std::function<sim::Task<void>(Store&, size_t)> branch = [ids, read](Store& store, size_t i) {
    return store.read_session((*ids)[i], &(*read)[i]);
  };
  co_await all(session_ids.size(), std::move(branch));
  const std::vector<std::vector<StoredEvent>>& branches = *read;
  SessionPage page;
  for (size_t i = 0; i < session_ids.size(); ++i) {
    const std::vector<StoredEvent>& rows = branches[i];
    SessionSummary s;
    s.session_id = session_ids[i];
    s.event_count = static_cast<int64_t>(rows.size());
    s.first_event_at = rows[0].created_at;
    s.updated_at = rows[0].created_at;
    for (const StoredEvent& row : rows) {
      s.attempt_count += row.attempt_count;
      s.failure_count += row.failure_count;
      if (!row.processed_at && !row.failed_at) ++s.pending_count;
      if (row.failed_at) ++s.failed_count;
      const std::optional<int64_t> stamps[] = {row.created_at,      row.first_claimed_at,
                                               row.last_claimed_at, row.last_failed_at,
                                               row.processed_at,    row.failed_at};
      for (const std::optional<int64_t>& t : stamps)
        if (t && *t > s.updated_at) s.updated_at = *t;
    }
    page.sessions.push_back(std::move(s));
  }
  // localeCompare: by code units here (the names the workloads use are ASCII).
  std::sort(
      page.sessions.begin(), page.sessions.end(),
      [](const SessionSummary& a, const SessionSummary& b) { return a.session_id < b.session_id; });
  if (static_cast<int64_t>(candidates.elements.size()) > limit &&
      StrOr(candidates.elements[static_cast<size_t>(limit)]).rfind(prefix, 0) == 0 &&
      !session_ids.empty())
    page.cursor = session_ids.back();
  co_return page;
}

// inspect.listSnapshots (ts 1434-1472).
sim::Task<std::vector<SnapshotInfo>> Store::list_snapshots(std::string session_id) {
  if (js_)
    co_return FromJs<std::vector<SnapshotInfo>>(
        co_await js_->Run("listSnapshots", JsArgs(session_id)));
  const std::string start = prefix_ + ":" + session_id + ":snap:";
  std::string cursor = "0";
  std::vector<std::string> keys;
  do {
    const sim::Reply reply =
        co_await call(V("SCAN", cursor, "MATCH", EscapeGlob(start) + "*", "COUNT", "100"));
    cursor = StrOr(reply.elements.at(0));
    for (const sim::Reply& k : reply.elements.at(1).elements) {
      const std::string key = StrOr(k);
      if (key.rfind(start, 0) == 0) keys.push_back(key);
    }
  } while (cursor != "0");
  auto shared_keys = std::make_shared<const std::vector<std::string>>(keys);
  auto found = std::make_shared<std::vector<std::optional<SnapshotInfo>>>(keys.size());
  // (A named local: g++ 12 destroys a capturing lambda inside a co_await expression twice.)
  std::function<sim::Task<void>(Store&, size_t)> branch = [shared_keys, start, found](Store& store,
                                                                                      size_t i) {
    return store.read_snapshot((*shared_keys)[i], start, &(*found)[i]);
  };
  co_await all(keys.size(), std::move(branch));
  std::vector<SnapshotInfo> snapshots;
  for (std::optional<SnapshotInfo>& s : *found)
    if (s) snapshots.push_back(std::move(*s));
  std::sort(snapshots.begin(), snapshots.end(), [](const SnapshotInfo& a, const SnapshotInfo& b) {
    return a.reducer_name < b.reducer_name;
  });
  co_return snapshots;
}

// readEvents (ts 1478-1488).
sim::Task<std::vector<Event>> Store::read_events(std::string session_id, int64_t after_index) {
  if (js_)
    co_return FromJs<std::vector<Event>>(
        co_await js_->Run("readEvents", JsArgs(session_id, after_index)));
  const sim::Reply entries =
      co_await call(V("XRANGE", store_key(session_id), absl::StrCat(after_index + 1, "-0"), "+"));
  std::vector<Event> events;
  for (const sim::Reply& entry : entries.elements) events.push_back(ToEvent(session_id, entry));
  co_return events;
}

}  // namespace testbed::real::a2
