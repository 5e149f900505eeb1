// Internal to sim/runtime.cc and sim/world_faults.cc: a world's actor (its clock, skew, pause
// and crash) and thread (its coroutine, context and joiners).
#pragma once

#include <coroutine>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/runtime.h"

namespace testbed::sim {

struct World::Actor {
  struct ActorClock : Clock {
    const World* world;
    ActorId id;
    int64_t now_ms() const override { return world->actor_time(id); }
  };
  std::string name;
  int64_t skew = 0;
  int64_t jumped = 0;
  int64_t paused_until = 0;
  bool crashed = false;
  ActorClock clock;
};

struct World::Thread {
  ThreadId id;
  ActorId actor;
  std::string name;
  std::unique_ptr<std::function<Task<void>(Ctx&)>> body;
  std::unique_ptr<Ctx> ctx;
  std::optional<Task<void>> task;
  bool finished = false;
  bool cancelled = false;
  int64_t steps = 0;
  int64_t resent = 0;         // calls applied, then re-sent after a reconnect (a resend fault)
  int64_t reply_latency = 0;  // Ctx::set_reply_latency
  std::vector<std::pair<ThreadId, std::coroutine_handle<>>> joiners;
};

}  // namespace testbed::sim
