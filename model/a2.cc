#include "model/a2.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <set>

namespace testbed::model::a2 {
namespace {

Json Opt(const std::optional<int64_t>& v) { return v ? Json(*v) : Json(); }
Json Opt(const std::optional<std::string>& v) { return v ? Json(*v) : Json(); }

Json Error(const char* code) { return Json{{"error", code}}; }

Json CauseJson(const std::optional<CauseIn>& c) {
  if (!c) return Json();
  Json j = {{"index", c->index}, {"attempt", c->attempt}};
  if (c->batch_size) j["batchSize"] = *c->batch_size;
  return j;
}

}  // namespace

const Model::Session* Model::find(const std::string& session) const {
  auto it = sessions_.find(session);
  return it == sessions_.end() ? nullptr : &it->second;
}

int64_t Model::frontier(const std::string& session) const {
  const Session* s = find(session);
  return s ? static_cast<int64_t>(s->events.size()) : 0;
}

bool Model::has_pending(const std::string& session) const {
  const Session* s = find(session);
  if (!s) return false;
  return std::any_of(s->events.begin(), s->events.end(), [this](const Ev& e) {
    return e.pending() || (weak(kDeadLetterStallsLane) && e.failed_at && !e.processed_at);
  });
}

bool Model::live(const std::string& session, int64_t index, int64_t attempt, int64_t now) const {
  if (index < 1 || index > frontier(session)) return false;
  const Ev& e = sessions_.at(session).events.at(static_cast<size_t>(index - 1));
  return e.attempts == attempt && e.live(now);
}

bool Model::expired(const std::string& session, int64_t index, int64_t attempt, int64_t now) const {
  if (index < 1 || index > frontier(session)) return false;
  const Ev& e = sessions_.at(session).events.at(static_cast<size_t>(index - 1));
  return e.attempts == attempt && e.pending() && e.holder && !e.live(now);
}

Json Model::stored_row(const std::string& session, int64_t index) const {
  const Ev& e = sessions_.at(session).events.at(static_cast<size_t>(index - 1));
  Json j = event_row(session, index);
  j["cause"] = CauseJson(e.cause);
  j["lane"] = Opt(e.lane);
  j["processedAt"] = Opt(e.processed_at);
  j["processedByAttempt"] = Opt(e.processed_by_attempt);
  j["returnedEventIds"] = e.returned_ids ? Json(*e.returned_ids) : Json();
  j["firstClaimedAt"] = Opt(e.first_claimed_at);
  j["lastClaimedAt"] = Opt(e.last_claimed_at);
  j["attemptCount"] = e.attempts;
  // The claim fields name the current claim: a settled event has none.
  j["claimHolder"] = Opt(e.holder);
  j["claimExpiresAt"] = Opt(e.expires_at);
  j["failureCount"] = e.failures;
  j["lastFailedAt"] = Opt(e.last_failed_at);
  j["lastFailedAttempt"] = Opt(e.last_failed_attempt);
  j["lastError"] = Opt(e.last_error);
  j["failedAt"] = Opt(e.failed_at);
  return j;
}

Json Model::event_row(const std::string& session, int64_t index) const {
  const Ev& e = sessions_.at(session).events.at(static_cast<size_t>(index - 1));
  return Json{{"id", e.id},     {"type", e.type},       {"payload", e.payload},
              {"index", index}, {"sessionId", session}, {"createdAt", e.created_at}};
}

void Model::add_event(const std::string& session, Ev e) {
  Session& s = sessions_[session];
  s.events.push_back(std::move(e));
  ids_[s.events.back().id] = {session, static_cast<int64_t>(s.events.size())};
}

Json Model::notified(const std::string& session, int64_t now) const {
  const Session* s = find(session);
  if (!s || now > s->watched_until) return Json();
  return static_cast<int64_t>(s->events.size());
}

Json Model::append(const std::string& session, const std::vector<AppendIn>& events, int64_t now) {
  std::set<std::string> seen;
  for (const AppendIn& e : events)
    if (!seen.insert(e.id).second) return Error("PARTIAL_DUPLICATE_BATCH");
  if (events.empty())
    return Json{
        {"events", Json::array()}, {"hasPending", has_pending(session)}, {"notified", nullptr}};
  size_t dups = 0;
  for (const AppendIn& e : events) {
    auto it = ids_.find(e.id);
    if (it == ids_.end()) continue;
    if (it->second.first != session) return Error("PARTIAL_DUPLICATE_BATCH");
    ++dups;
  }
  if (dups == events.size()) {
    // In index order (rule 2): a true retry's rows were appended together, in its order.
    std::vector<int64_t> indexes;
    for (const AppendIn& e : events) indexes.push_back(ids_.at(e.id).second);
    std::sort(indexes.begin(), indexes.end());
    Json rows = Json::array();
    for (int64_t index : indexes) rows.push_back(stored_row(session, index));
    return Json{{"events", rows}, {"hasPending", has_pending(session)}, {"notified", nullptr}};
  }
  if (dups > 0) return Error("PARTIAL_DUPLICATE_BATCH");
  // Caused appends: the parent must exist, and the cause must be the current attempt of a live
  // claim (contract 4).
  for (const AppendIn& e : events) {
    if (!e.cause) continue;
    if (e.cause->index < 1 || e.cause->index > frontier(session)) return Error("TypeError");
    const Ev& parent = sessions_.at(session).events.at(static_cast<size_t>(e.cause->index - 1));
    const bool fenced = weak(kCausedAppendUnfenced)  ? !parent.failed_at
                        : weak(kExpiredLeaseSettles) ? parent.pending() && parent.holder
                                                     : parent.live(now);
    if (parent.attempts != e.cause->attempt || !fenced) return Error("SUPERSEDED_ATTEMPT");
  }
  Json rows = Json::array();
  for (const AppendIn& in : events) {
    Ev e;
    e.id = in.id;
    e.type = in.type;
    e.payload = in.payload;
    e.cause = in.cause;
    e.lane = in.lane;
    if (weak(kEmptyLaneIsNone) && e.lane == "") e.lane.reset();
    e.created_at = now;
    if (in.settled) e.processed_at = now;
    add_event(session, std::move(e));
    rows.push_back(stored_row(session, frontier(session)));
    if (in.lane) rows.back()["lane"] = *in.lane;  // the answer echoes what was sent
  }
  return Json{
      {"events", rows}, {"hasPending", has_pending(session)}, {"notified", notified(session, now)}};
}

Json Model::read(const std::string& session, int64_t after, std::optional<int64_t> through) const {
  Json rows = Json::array();
  const int64_t last = std::min(through.value_or(frontier(session)), frontier(session));
  for (int64_t i = std::max<int64_t>(after, 0) + 1; i <= last; ++i)
    rows.push_back(stored_row(session, i));
  return rows;
}

Json Model::read_events(const std::string& session, int64_t after) const {
  Json rows = Json::array();
  for (int64_t i = std::max<int64_t>(after, 0) + 1; i <= frontier(session); ++i)
    rows.push_back(event_row(session, i));
  return rows;
}

std::vector<int64_t> Model::claimable(const std::string& session, int64_t now,
                                      const std::vector<int64_t>& exclude) const {
  std::vector<int64_t> out;
  const Session* s = find(session);
  if (!s) return out;
  std::set<std::string> lanes_taken;  // lanes whose first pending event came before
  for (size_t i = 0; i < s->events.size(); ++i) {
    const Ev& e = s->events[i];
    if (weak(kDeadLetterStallsLane) && e.failed_at && e.lane) lanes_taken.insert(*e.lane);
    if (!e.pending()) continue;
    const int64_t index = static_cast<int64_t>(i) + 1;
    if (e.lane && !lanes_taken.insert(*e.lane).second) continue;  // queued behind its lane
    if (std::find(exclude.begin(), exclude.end(), index) != exclude.end()) continue;
    if (e.live(now)) continue;
    out.push_back(index);
  }
  return out;
}

Json Model::claim(const std::string& session, const std::string& holder, int64_t now,
                  int64_t expires_at, const std::vector<int64_t>& exclude) {
  const std::vector<int64_t> grant = claimable(session, now, exclude);
  if (grant.empty()) {
    // Busy: an event not excluded, first of its lane, under a live lease.
    std::optional<int64_t> retry;
    if (const Session* s = find(session)) {
      std::set<std::string> lanes_taken;
      for (size_t i = 0; i < s->events.size(); ++i) {
        const Ev& e = s->events[i];
        if (weak(kDeadLetterStallsLane) && e.failed_at && e.lane) lanes_taken.insert(*e.lane);
        if (!e.pending()) continue;
        const int64_t index = static_cast<int64_t>(i) + 1;
        if (e.lane && !lanes_taken.insert(*e.lane).second) continue;
        if (std::find(exclude.begin(), exclude.end(), index) != exclude.end()) continue;
        if (e.live(now)) retry = std::min(retry.value_or(*e.expires_at), *e.expires_at);
      }
    }
    if (retry) return Json{{"outcome", "busy"}, {"retryAt", *retry}};
    return Json{{"outcome", "settled"}};
  }
  Json rows = Json::array();
  for (int64_t index : grant) {
    Ev& e = sessions_.at(session).events.at(static_cast<size_t>(index - 1));
    ++e.attempts;
    if (!e.first_claimed_at) e.first_claimed_at = now;
    e.last_claimed_at = now;
    e.holder = holder;
    e.expires_at = expires_at;
    rows.push_back(stored_row(session, index));
  }
  return Json{{"outcome", "claimed"}, {"events", rows}};
}

Json Model::renew(const std::string& session, const std::string& holder,
                  const std::vector<std::pair<int64_t, int64_t>>& claims, int64_t now,
                  int64_t expires_at) {
  std::vector<int64_t> renewed, superseded;
  for (const auto& [index, attempt] : claims) {
    if (index < 1 || index > frontier(session)) continue;
    Ev& e = sessions_.at(session).events.at(static_cast<size_t>(index - 1));
    if (e.attempts > attempt) {
      superseded.push_back(index);
    } else if (expires_at > now && e.attempts == attempt && e.live(now) && *e.holder == holder) {
      e.expires_at = expires_at;
      renewed.push_back(index);
    }
  }
  std::sort(renewed.begin(), renewed.end());
  std::sort(superseded.begin(), superseded.end());
  return Json{{"renewed", renewed}, {"superseded", superseded}};
}

Json Model::complete(const std::string& session, int64_t index, int64_t attempt,
                     const std::vector<ChildIn>& children, int64_t now) {
  std::set<std::string> seen;
  for (const ChildIn& c : children)
    if (!seen.insert(c.id).second) return Error("PARTIAL_DUPLICATE_BATCH");
  if (index < 1 || index > frontier(session)) return Error("TypeError");
  Ev& e = sessions_.at(session).events.at(static_cast<size_t>(index - 1));
  if (e.processed_at) {
    if (e.processed_by_attempt.value_or(0) != attempt) return Json{{"outcome", "superseded"}};
    // A retry of this completion: the same child ids, stored as its children.
    if (!e.returned_ids || e.returned_ids->size() != children.size())
      return Error("PARTIAL_DUPLICATE_BATCH");
    Json rows = Json::array();
    for (size_t i = 0; i < children.size(); ++i) {
      if ((*e.returned_ids)[i] != children[i].id) return Error("PARTIAL_DUPLICATE_BATCH");
      rows.push_back(stored_row(session, ids_.at(children[i].id).second));
    }
    return Json{{"outcome", "completed"}, {"events", rows}, {"notified", nullptr}};
  }
  const bool held = weak(kExpiredLeaseSettles) ? e.pending() && e.holder : e.live(now);
  if (e.attempts != attempt || !held) return Json{{"outcome", "superseded"}};
  for (const ChildIn& c : children)
    if (ids_.count(c.id)) return Error("PARTIAL_DUPLICATE_BATCH");
  e.processed_at = now;
  e.processed_by_attempt = attempt;
  std::vector<std::string> ids;
  for (const ChildIn& c : children) ids.push_back(c.id);
  e.returned_ids = ids;
  e.holder.reset();
  e.expires_at.reset();
  Json rows = Json::array();
  for (const ChildIn& c : children) {
    Ev child;
    child.id = c.id;
    child.type = c.type;
    child.payload = c.payload;
    child.cause = CauseIn{index, attempt, std::nullopt};
    child.lane = c.lane;
    child.created_at = now;
    if (c.settled) child.processed_at = now;
    add_event(session, std::move(child));
    rows.push_back(stored_row(session, frontier(session)));
  }
  return Json{{"outcome", "completed"},
              {"events", rows},
              {"notified", children.empty() ? Json() : notified(session, now)}};
}

Json Model::fail(const std::string& session, int64_t index, int64_t attempt,
                 const std::string& error, int64_t max_failures, int64_t now) {
  if (index < 1 || index > frontier(session)) return Error("TypeError");
  Ev& e = sessions_.at(session).events.at(static_cast<size_t>(index - 1));
  auto answer = [&e](const char* outcome) {
    return Json{{"outcome", outcome}, {"failureCount", e.failures}};
  };
  if (e.processed_at || e.attempts != attempt) return answer("superseded");
  if (e.failed_at) return answer("dead_lettered");
  if (!e.holder && e.last_failed_attempt == attempt) return answer("failed");  // a replay
  if (weak(kExpiredLeaseSettles) ? !e.holder : !e.live(now)) return answer("superseded");
  ++e.failures;
  e.last_error = error;
  e.last_failed_at = now;
  e.last_failed_attempt = attempt;
  e.holder.reset();
  e.expires_at.reset();
  if (e.failures >= max_failures) {
    e.failed_at = now;
    return answer("dead_lettered");
  }
  return answer("failed");
}

Json Model::read_state(const std::string& session, const std::string& reducer) const {
  auto it = snaps_.find({session, reducer});
  const int64_t from = it == snaps_.end() ? 0 : it->second.index;
  Json snapshot =
      it == snaps_.end() ? Json() : Json{{"index", it->second.index}, {"state", it->second.state}};
  return Json{{"snapshot", snapshot}, {"events", read_events(session, from)}};
}

Json Model::put_snapshot(const std::string& session, const std::string& reducer, int64_t index,
                         const Json& state, int64_t now) {
  auto it = snaps_.find({session, reducer});
  const bool backward = it != snaps_.end() && it->second.index >= index;
  if (!backward && index >= 0 && (index <= frontier(session) || weak(kSnapshotPastFrontier)))
    snaps_[{session, reducer}] = Snap{index, state, now};
  return Json::object();
}

Json Model::presence_set(const std::string& ns, const std::string& participant,
                         const std::vector<std::pair<std::string, Json>>& values, int64_t seen,
                         int64_t at, int64_t ttl_ms, int64_t now) {
  if (values.empty()) return Json();
  auto& entries = presence_[ns];
  Json applied = Json::object();
  for (const auto& [field, value] : values) {
    auto it = entries.find({participant, field});
    const bool present = it != entries.end() && now < it->second.expires_at;
    if (present && it->second.at > at) continue;  // a strictly newer stamp survives
    if (value.is_null() && weak(kDeleteDropsStamp)) {
      entries.erase({participant, field});
      applied[field] = value;
      continue;
    }
    Presence p;
    if (!value.is_null()) p.value = value;
    p.seen = seen;
    p.at = at;
    p.expires_at = now + ttl_ms;
    entries[{participant, field}] = std::move(p);
    applied[field] = value;
  }
  if (applied.empty()) return Json();
  return Json{{"participant", participant}, {"values", applied}, {"seen", seen}, {"at", at}};
}

Json Model::presence_read(const std::string& ns, int64_t now) const {
  Json rows = Json::array();
  auto it = presence_.find(ns);
  if (it == presence_.end()) return rows;
  for (const auto& [key, p] : it->second) {
    if (!p.value || now >= p.expires_at) continue;
    rows.push_back(Json{{"participant", key.first},
                        {"field", key.second},
                        {"value", *p.value},
                        {"seen", p.seen},
                        {"at", p.at},
                        {"expiresAt", p.expires_at}});
  }
  return rows;
}

Json Model::list_sessions(const std::string& prefix, int64_t limit,
                          const std::optional<std::string>& cursor) const {
  std::vector<std::string> ids;
  for (const auto& [id, s] : sessions_)
    if (!s.events.empty() && id.rfind(prefix, 0) == 0 && (!cursor || id > *cursor))
      ids.push_back(id);
  Json out = {{"sessions", Json::array()}, {"cursor", nullptr}};
  for (size_t i = 0; i < ids.size() && static_cast<int64_t>(i) < limit; ++i) {
    const Session& s = sessions_.at(ids[i]);
    int64_t pending = 0, failed = 0, attempts = 0, failures = 0;
    int64_t updated = s.events.front().created_at;
    for (const Ev& e : s.events) {
      attempts += e.attempts;
      failures += e.failures;
      if (e.pending()) ++pending;
      if (e.failed_at) ++failed;
      for (const std::optional<int64_t>& t :
           {std::optional<int64_t>(e.created_at), e.first_claimed_at, e.last_claimed_at,
            e.last_failed_at, e.processed_at, e.failed_at})
        if (t && *t > updated) updated = *t;
    }
    out["sessions"].push_back(Json{{"sessionId", ids[i]},
                                   {"eventCount", s.events.size()},
                                   {"pendingCount", pending},
                                   {"failedCount", failed},
                                   {"attemptCount", attempts},
                                   {"failureCount", failures},
                                   {"firstEventAt", s.events.front().created_at},
                                   {"updatedAt", updated}});
  }
  if (static_cast<int64_t>(ids.size()) > limit && limit > 0)
    out["cursor"] = ids[static_cast<size_t>(limit) - 1];
  return out;
}

Json Model::list_snapshots(const std::string& session) const {
  Json out = Json::array();
  for (const auto& [key, snap] : snaps_)
    if (key.first == session)
      out.push_back(
          Json{{"reducerName", key.second}, {"index", snap.index}, {"updatedAt", snap.updated_at}});
  return out;
}

void Model::mark_watched(const std::string& session, int64_t ttl_ms, int64_t now) {
  sessions_[session].watched_until = sessions_[session].watched_until_hi = now + ttl_ms;
}

void Model::mark_watched_between(const std::string& session, int64_t until_lo, int64_t until_hi) {
  sessions_[session].watched_until = until_lo;
  sessions_[session].watched_until_hi = until_hi;
}

int Model::watched_between(const std::string& session, int64_t at_lo, int64_t at_hi) const {
  const Session* s = find(session);
  if (!s || s->watched_until_hi == 0 || at_lo > s->watched_until_hi) return -1;
  return at_hi <= s->watched_until ? 1 : 0;
}

namespace {

template <typename T>
void Key(std::string& out, const std::optional<T>& v) {
  if (!v) {
    out += '~';
    return;
  }
  if constexpr (std::is_same_v<T, std::string>) {
    absl::StrAppend(&out, v->size(), ":", *v);
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    absl::StrAppend(&out, "[", v->size());
    for (const std::string& s : *v) absl::StrAppend(&out, ",", s.size(), ":", s);
  } else {
    absl::StrAppend(&out, *v);
  }
  out += ';';
}

}  // namespace

void Model::append_key(std::string& out) const {
  absl::StrAppend(&out, weak_, "|");
  for (const auto& [name, s] : sessions_) {
    absl::StrAppend(&out, "S", name.size(), ":", name, ",", s.watched_until, ",",
                    s.watched_until_hi, ",", s.events.size(), "|");
    for (const Ev& e : s.events) {
      Key(out, e.processed_at);
      Key(out, e.processed_by_attempt);
      Key(out, e.returned_ids);
      Key(out, e.first_claimed_at);
      Key(out, e.last_claimed_at);
      absl::StrAppend(&out, e.attempts, ",", e.failures, ";");
      Key(out, e.holder);
      Key(out, e.expires_at);
      Key(out, e.last_failed_at);
      Key(out, e.last_failed_attempt);
      Key(out, e.last_error);
      Key(out, e.failed_at);
      absl::StrAppend(&out, e.id.size(), ":", e.id, ",", e.type.size(), ":", e.type, ",",
                      e.payload.dump(), ",", e.created_at, ",");
      Key(out, e.lane);
      if (e.cause)
        absl::StrAppend(&out, e.cause->index, ",", e.cause->attempt, ",",
                        e.cause->batch_size.value_or(-1));
      out += '|';
    }
  }
  for (const auto& [key, snap] : snaps_)
    absl::StrAppend(&out, "P", key.first.size(), ":", key.first, key.second.size(), ":", key.second,
                    ",", snap.index, ",", snap.updated_at, ",", snap.state.dump(), "|");
  for (const auto& [ns, fields] : presence_) {
    absl::StrAppend(&out, "N", ns.size(), ":", ns, "|");
    for (const auto& [pf, v] : fields)
      absl::StrAppend(&out, pf.first.size(), ":", pf.first, pf.second.size(), ":", pf.second, ",",
                      v.value ? v.value->dump() : "~", ",", v.seen, ",", v.at, ",", v.expires_at,
                      "|");
  }
}

}  // namespace testbed::model::a2
