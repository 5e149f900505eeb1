#include "sim/runtime.h"

#include "sim/lua_scripting.h"
#include "sim/world_internal.h"

#include "sim/digest.h"

#include <absl/strings/match.h>
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <stdexcept>

namespace testbed::sim {

namespace {

using enum FaultKind;

}  // namespace

// ---- backends ----

EmulatorBackend::EmulatorBackend(EmulatorOptions options)
    : options_(options), emulator_(std::make_unique<Emulator>(clock_, options)) {}

Reply EmulatorBackend::execute(const Argv& argv, int64_t now_ms, int) {
  clock_.set(now_ms);
  return emulator_->execute(argv);
}

void EmulatorBackend::rebuild(const std::vector<LoggedCommand>& prefix, int64_t now_ms) {
  auto fresh = std::make_unique<Emulator>(clock_, options_);
  for (const auto& c : prefix) {
    clock_.set(c.at_ms);
    fresh->execute(c.argv);
  }
  // A restarted server has an empty script cache: keep the data, drop the scripts.
  auto keys = fresh->snapshot();
  emulator_ = std::make_unique<Emulator>(clock_, options_);
  emulator_->restore(std::move(keys));
  clock_.set(now_ms);
}

std::string EmulatorBackend::describe_state(int64_t now_ms) {
  clock_.set(now_ms);
  return emulator_->dump_keyspace();
}

// ---- world ----

// The events the largest run of this thread recorded (at least 768, at most 4096).
static size_t& TraceCapacityHint() {
  thread_local size_t hint = 768;
  return hint;
}

World::World(WorldOptions options, Backend& backend, Strategy& strategy)
    : options_(options),
      backend_(backend),
      strategy_(strategy),
      prng_(options.seed),
      fault_prng_(options.seed ^ 0x5eedfa017ULL),
      now_(options.start_ms) {
  strategy_.world = this;
  // Room for as many events as the largest run this thread has made (430 on average, up to
  // 4096 reserved): no moves of them as they come.
  trace_.events.reserve(TraceCapacityHint());
}

World::~World() = default;

ActorId World::add_actor(std::string name, std::function<Task<void>(Ctx&)> body) {
  auto a = std::make_unique<Actor>();
  a->name = std::move(name);
  a->clock.world = this;
  a->clock.id = static_cast<ActorId>(actors_.size());
  actors_.push_back(std::move(a));
  const ActorId id = static_cast<ActorId>(actors_.size() - 1);
  Ctx root(*this, id, -1);
  root.spawn("main", std::move(body));
  return id;
}

ThreadId Ctx::spawn(std::string name, std::function<Task<void>(Ctx&)> body) {
  World& w = world_;
  if (w.actors_[actor_]->crashed) return -1;
  auto t = std::make_unique<World::Thread>();
  t->id = static_cast<ThreadId>(w.threads_.size());
  t->actor = actor_;
  t->name = std::move(name);
  t->body = std::make_unique<std::function<Task<void>(Ctx&)>>(std::move(body));
  t->ctx = std::make_unique<Ctx>(w, actor_, t->id);
  const ThreadId id = t->id;
  w.threads_.push_back(std::move(t));
  w.record(id, EventKind::kNote, "spawn");
  w.add_wakeup(id, w.now_, nullptr);
  return id;
}

void Ctx::cancel(ThreadId t) {
  World& w = world_;
  World::Thread& th = *w.threads_.at(t);
  if (th.finished || th.cancelled) return;
  th.cancelled = true;
  w.record(t, EventKind::kNote, "cancelled");
  w.finish_thread(th);
}

bool Ctx::finished(ThreadId t) const { return world_.threads_.at(t)->finished; }

int64_t Ctx::now_ms() const { return world_.actor_time(actor_); }
int64_t Ctx::resent_calls() const { return world_.threads_[thread_]->resent; }
void Ctx::set_reply_latency(int64_t ms) { world_.threads_[thread_]->reply_latency = ms; }
const Clock& Ctx::clock() const { return world_.actors_[actor_]->clock; }

void Ctx::CallAwaiter::await_suspend(std::coroutine_handle<> h) {
  ctx->world_.submit_call(this, h);
}
void Ctx::SleepAwaiter::await_suspend(std::coroutine_handle<> h) {
  const size_t ev =
      ctx->world_.record(ctx->thread_, EventKind::kNote, absl::StrCat("sleep ", ms, "ms"));
  ctx->world_.trace_.events[ev].note = Note::kSleep;
  ctx->world_.add_wakeup(ctx->thread_, ctx->world_.now_ + std::max<int64_t>(0, ms), h);
}
bool Ctx::JoinAwaiter::await_ready() const {
  const auto& t = *ctx->world_.threads_.at(target);
  return t.finished;
}
void Ctx::JoinAwaiter::await_suspend(std::coroutine_handle<> h) {
  ctx->world_.threads_.at(target)->joiners.push_back({ctx->thread_, h});
}

bool Ctx::JoinAnyAwaiter::await_ready() const {
  for (ThreadId t : targets)
    if (ctx->world_.threads_.at(t)->finished) return true;
  return targets.empty();
}
void Ctx::JoinAnyAwaiter::await_suspend(std::coroutine_handle<> h) {
  for (ThreadId t : targets) ctx->world_.threads_.at(t)->joiners.push_back({ctx->thread_, h});
}

int64_t World::actor_time(ActorId a) const {
  const Actor& actor = *actors_[a];
  return now_ + actor.skew + actor.jumped;
}

bool World::paused(ActorId a) const { return actors_[a]->paused_until > now_; }

const std::string& World::actor_name(ActorId a) const { return actors_.at(a)->name; }

std::string World::who(ThreadId t) const {
  if (t < 0) return "world";
  const Thread& th = *threads_[t];
  return actors_[th.actor]->name + "/" + th.name + "#" + std::to_string(t);
}

size_t World::record(ThreadId t, EventKind kind, std::string text, int64_t call,
                     const Reply* reply) {
  TraceEvent& e = trace_.events.emplace_back();
  e.at_ms = now_ - options_.start_ms;
  e.thread = t;
  e.kind = kind;
  e.text = std::move(text);
  if (EventTextRewrite rewrite = EventTextRewriteForTests(); rewrite && !e.text.empty())
    e.text = rewrite(std::move(e.text));
  e.call = call;
  if (reply) e.reply = *reply;
  return trace_.events.size() - 1;
}

size_t World::record_fault(ThreadId t, Fault fault, ActorId actor, std::string text, int64_t call,
                           bool planned) {
  const bool clock = fault == Fault::kSkew || fault == Fault::kClockJump;
  const size_t i = record(t, clock ? EventKind::kClock : EventKind::kFault, std::move(text), call);
  TraceEvent& e = trace_.events[i];
  e.fault = fault;
  e.planned = planned;
  e.actor = actor >= 0 ? actor : t >= 0 ? threads_[t]->actor : -1;
  return i;
}

void World::add_wakeup(ThreadId t, int64_t at, std::coroutine_handle<> h) {
  wakeups_.push_back(Wakeup{at, seq_++, t, h});
  std::push_heap(wakeups_.begin(), wakeups_.end());
}

void World::submit_call(Ctx::CallAwaiter* a, std::coroutine_handle<> h) {
  Thread& th = *threads_.at(a->ctx->thread());
  if (th.cancelled || th.finished) return;  // a cancelled thread never resumes
  const FaultOptions& f = options_.faults;
  PendingCall c{seq_++, 0, th.id, a, h, now_, false, false, 0};
  // Fault draws, always in this order, so a plan replays from the seed.
  if (f.lost_request.numerator) c.lose_request = fault_prng_.chance(f.lost_request);
  if (f.lost_reply.numerator && !c.lose_request) c.lose_reply = fault_prng_.chance(f.lost_reply);
  if (f.latency_ms_max > 0) c.latency = fault_prng_.range(f.latency_ms_min, f.latency_ms_max);
  c.latency += th.reply_latency;
  if (f.delayed_request.numerator && fault_prng_.chance(f.delayed_request)) {
    c.ready_at = now_ + fault_prng_.range(1, std::max<int64_t>(1, f.delay_ms_max));
    record_fault(
        th.id, Fault::kDelay, -1,
        absl::StrCat("fault delayed-request until +", c.ready_at - options_.start_ms, "ms"));
  }
  if (f.reordered_request.numerator && fault_prng_.chance(f.reordered_request)) {
    c.ready_at = now_ + f.timeout_ms + fault_prng_.range(1, std::max<int64_t>(1, f.reorder_ms_max));
    c.lose_request = c.lose_reply = false;
    c.orphan = true;
    record_fault(th.id, Fault::kReorder, -1,
                 absl::StrCat("fault ", InfoOf(Fault::kReorder).name, ": held until +",
                              c.ready_at - options_.start_ms, "ms, past the client's timeout"));
  }
  if (f.resent_request.numerator && !c.orphan && !c.lose_request && !c.lose_reply)
    c.resend = fault_prng_.chance(f.resent_request);
  c.event = record(th.id, EventKind::kCall, "");
  trace_.events[c.event].argv = std::move(a->argv);  // the world's one copy of the call
  if (c.orphan) {  // the client times out now and goes on; the request still runs later
    a->result = TransportError{"timeout"};
    add_wakeup(th.id, now_ + f.timeout_ms, h);
    c.awaiter = nullptr;
    c.handle = nullptr;
  }
  calls_.push_back(c);
}

void World::resume(ThreadId t, std::coroutine_handle<> h) {
  Thread& th = *threads_[t];
  if (th.cancelled || th.finished) return;
  if (!h) {
    th.task.emplace((*th.body)(*th.ctx));
    h = th.task->handle();
  }
  h.resume();
  if (th.task && th.task->handle().done() && !th.finished) {
    if (auto err = th.task->handle().promise().error) {
      try {
        std::rethrow_exception(err);
      } catch (const std::exception& e) {
        error_ = who(t) + " threw: " + e.what();
      } catch (...) {
        error_ = who(t) + " threw a non-standard exception";
      }
      trace_.events[record(t, EventKind::kNote, "error " + error_)].note = Note::kError;
    }
    record(t, EventKind::kNote, "finished");
    finish_thread(th);
  }
}

void World::finish_thread(Thread& th) {
  th.finished = true;
  calls_.erase(std::remove_if(calls_.begin(), calls_.end(),
                              [&](const PendingCall& c) { return c.thread == th.id && !c.orphan; }),
               calls_.end());
  const auto gone = std::remove_if(wakeups_.begin(), wakeups_.end(),
                                   [&](const Wakeup& w) { return w.thread == th.id; });
  if (gone != wakeups_.end()) {
    wakeups_.erase(gone, wakeups_.end());
    std::make_heap(wakeups_.begin(), wakeups_.end());
  }
  // A joiner waits on this thread alone, or on the first of several (join_any): it is woken
  // once, and no longer waits on the others.
  std::vector<std::pair<ThreadId, std::coroutine_handle<>>> joiners = std::move(th.joiners);
  th.joiners.clear();
  for (auto& [joiner, h] : joiners) {
    add_wakeup(joiner, now_, h);
    for (auto& other : threads_)
      std::erase_if(other->joiners, [&](const auto& j) { return j.second == h; });
  }
}

std::vector<LoggedCommand> World::LoggedPrefix() const {
  std::vector<LoggedCommand> out;
  out.reserve(log_.size());
  for (const auto& [event, at] : log_) out.push_back({trace_.events[event].argv, at});
  return out;
}

void World::process_due() {
  while (true) {
    const bool event_due = next_event_ < events_.size() && events_[next_event_].at <= now_;
    const bool wake_due = !wakeups_.empty() && wakeups_.front().at <= now_;
    if (event_due && (!wake_due || events_[next_event_].at <= wakeups_.front().at)) {
      apply_event(events_[next_event_++]);
      continue;
    }
    if (!wake_due) return;
    std::pop_heap(wakeups_.begin(), wakeups_.end());
    const Wakeup wk = wakeups_.back();
    wakeups_.pop_back();
    const ActorId a = threads_[wk.thread]->actor;
    if (paused(a)) {  // delivered when the pause ends, in the original order
      add_wakeup(wk.thread, actors_[a]->paused_until, wk.handle);
      continue;
    }
    resume(wk.thread, wk.handle);
  }
}

void World::execute(PendingCall c) {
  Thread& th = *threads_[c.thread];
  th.steps++;
  const int64_t call = static_cast<int64_t>(c.event);
  if (outage_ && c.orphan) {
    record_fault(
        th.id, Fault::kOutage, -1,
        absl::StrCat("fault ", InfoOf(Fault::kOutage).name, ": ",
                     ShortArgv(argv_of(c), options_.script_names), " (reordered) is dropped"),
        call);
    return;
  }
  if (outage_) {
    c.awaiter->result = TransportError{"connection refused (outage)"};
    record_fault(th.id, Fault::kOutage, -1,
                 absl::StrCat("fault ", InfoOf(Fault::kOutage).name, ": ",
                              ShortArgv(argv_of(c), options_.script_names), " fails"),
                 call);
    add_wakeup(th.id, now_, c.handle);
    return;
  }
  if (c.lose_request) {
    c.awaiter->result = TransportError{"timeout"};
    record_fault(th.id, Fault::kLostRequest, -1,
                 absl::StrCat("fault ", InfoOf(Fault::kLostRequest).name, ": ",
                              ShortArgv(argv_of(c), options_.script_names), " not applied"),
                 call);
    add_wakeup(th.id, now_ + options_.faults.timeout_ms, c.handle);
    return;
  }
  Reply reply = backend_.execute(argv_of(c), now_, static_cast<int>(th.actor));
  log_.push_back({c.event, now_});
  if (applied_observer_) applied_observer_(c.thread);
  const FaultOptions& f = options_.faults;
  if (f.scan_duplicate.numerator && reply.elements.size() == 2 &&
      !reply.elements[1].elements.empty() && absl::EqualsIgnoreCase(argv_of(c)[0], "SCAN") &&
      fault_prng_.chance(f.scan_duplicate)) {
    std::vector<Reply>& page = reply.elements[1].elements;
    const Reply again = page[fault_prng_.below(page.size())];
    page.push_back(again);
    record_fault(th.id, Fault::kScanDuplicate, -1,
                 absl::StrCat("fault ", InfoOf(Fault::kScanDuplicate).name, ": the reply repeats ",
                              again.str),
                 call);
  }
  record(th.id, EventKind::kReply, "", call, &reply);
  if (c.orphan) {
    record_fault(th.id, Fault::kReorder, -1,
                 absl::StrCat("fault ", InfoOf(Fault::kReorder).name,
                              ": applied late; nobody waits for the reply"),
                 call);
    return;
  }
  if (c.resend) {  // the reply is lost with the connection; the client library re-sends it
    c.resend = false;
    ++th.resent;
    c.ready_at = now_ + fault_prng_.range(1, std::max<int64_t>(1, f.resend_ms_max));
    record_fault(th.id, Fault::kResend, -1,
                 absl::StrCat("fault ", InfoOf(Fault::kResend).name,
                              ": the connection drops before the reply; re-sent at +",
                              c.ready_at - options_.start_ms, "ms"),
                 call);
    // First on the new connection: before the connection's calls still pending.
    const ActorId actor = th.actor;
    const auto first_of_actor =
        std::find_if(calls_.begin(), calls_.end(),
                     [&](const PendingCall& p) { return threads_[p.thread]->actor == actor; });
    calls_.insert(first_of_actor, c);
    return;
  }
  if (c.lose_reply) {
    c.awaiter->result = TransportError{"timeout"};
    record_fault(
        th.id, Fault::kLostReply, -1,
        absl::StrCat("fault ", InfoOf(Fault::kLostReply).name, ": applied, client times out"));
    add_wakeup(th.id, now_ + options_.faults.timeout_ms, c.handle);
    return;
  }
  c.awaiter->result = std::move(reply);
  add_wakeup(th.id, now_ + c.latency, c.handle);
}

std::string World::state_hash() {
  std::vector<std::string> parts = {backend_.describe_state(now_)};
  for (const auto& t : threads_)
    parts.push_back(std::to_string(t->id) + (t->finished ? " done " : " live ") +
                    std::to_string(t->steps));
  for (const auto& c : calls_)
    parts.push_back("pending " + std::to_string(c.thread) + " " + render_argv(argv_of(c)));
  return Sha256HexOfLines(parts);
}

void World::schedule(FaultKind kind, int64_t offset_ms, ActorId actor, int64_t value) {
  events_.push_back({options_.start_ms + offset_ms, kind, actor, value});
}

RunResult World::run() {
  RunResult result;
  // Neither the backend nor the strategy is named in the trace: the same schedule must hash
  // the same in both worlds, and a replay the same as the run it replays.
  record(-1, EventKind::kNote, absl::StrCat("seed ", options_.seed));
  plan_faults();
  result.stop_reason = "all actors finished";
  std::vector<size_t> enabled, heads;  // per step, kept across steps (no allocation per step)
  std::vector<bool> head_taken;
  std::vector<Choice> choices;
  while (true) {
    process_due();
    if (!error_.empty()) {
      result.stop_reason = "client logic threw";
      break;
    }
    // One actor is one connection, and a connection is FIFO: only the oldest pending call of
    // each actor can run next (calls_ is in the order calls were sent).
    enabled.clear();
    heads.clear();
    head_taken.assign(actors_.size(), false);
    for (size_t i = 0; i < calls_.size(); ++i) {
      const ActorId a = threads_[calls_[i].thread]->actor;
      if (head_taken[a]) continue;
      head_taken[a] = true;
      heads.push_back(i);
      if (calls_[i].ready_at <= now_ && !paused(a)) enabled.push_back(i);
    }
    if (enabled.empty()) {
      int64_t next = INT64_MAX;
      if (!wakeups_.empty()) next = std::min(next, wakeups_.front().at);
      if (next_event_ < events_.size()) next = std::min(next, events_[next_event_].at);
      for (size_t i : heads) {
        const PendingCall& c = calls_[i];
        next =
            std::min(next, std::max(c.ready_at, actors_[threads_[c.thread]->actor]->paused_until));
      }
      if (next == INT64_MAX) break;
      // Only pending work keeps the world going: planned events alone do not.
      if (wakeups_.empty() && calls_.empty()) break;
      if (next >= options_.start_ms + options_.horizon_ms) {
        result.stop_reason = "horizon";
        break;
      }
      now_ = std::max(now_, next);
      continue;
    }
    if (result.steps >= options_.max_steps) {
      result.stop_reason = "max steps";
      break;
    }
    std::sort(enabled.begin(), enabled.end(), [&](size_t x, size_t y) {
      return std::make_pair(calls_[x].thread, calls_[x].seq) <
             std::make_pair(calls_[y].thread, calls_[y].seq);
    });
    choices.clear();
    for (size_t i : enabled)
      choices.push_back({calls_[i].thread, threads_[calls_[i].thread]->actor, &argv_of(calls_[i])});
    const size_t pick = strategy_.choose(choices, prng_);
    if (pick >= choices.size()) throw std::out_of_range("strategy chose outside the enabled set");
    result.choices.push_back({choices.size(), pick});
    if (choices.size() > 1)
      record(-1, EventKind::kNote, absl::StrCat("choose ", pick, " of ", choices.size()));
    PendingCall call = calls_[enabled[pick]];
    calls_.erase(calls_.begin() + static_cast<long>(enabled[pick]));
    execute(call);
    result.steps++;
  }
  result.error = error_;
  result.elapsed_ms = now_ - options_.start_ms;
  record(-1, EventKind::kNote,
         absl::StrCat("end: ", result.stop_reason, " after ", result.steps, " steps"));
  for (const auto& t : threads_) {
    trace_.thread_names.push_back(who(t->id));
    trace_.thread_actor.push_back(actors_[t->actor]->name);
  }
  for (const auto& a : actors_) trace_.actor_names.push_back(a->name);
  if (options_.hash_trace) result.trace_hash = trace_.Hash();
  TraceCapacityHint() = std::clamp(trace_.events.size(), TraceCapacityHint(), size_t{4096});
  return result;
}

}  // namespace testbed::sim
