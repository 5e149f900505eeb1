// The registry of systems under test: one line per system, in Owned() below.
#include "properties/a2/a2_system.h"
#include "properties/handles/handles_system.h"
#include "properties/state/state_system.h"
#include "harness/system.h"

#include <mutex>

namespace testbed::props {
namespace {

std::vector<std::unique_ptr<System>>& Owned() {
  static auto* systems = [] {
    auto* v = new std::vector<std::unique_ptr<System>>();
    v->push_back(state::Make());
    v->push_back(handles::Make());
    v->push_back(a2::Make());
    return v;
  }();
  return *systems;
}

std::mutex& Lock() {
  static std::mutex m;
  return m;
}

}  // namespace

const std::vector<const System*>& Systems() {
  // Registration happens before the CLI runs; the view is rebuilt under the lock when it grew.
  static auto* view = new std::vector<const System*>();
  std::lock_guard<std::mutex> lock(Lock());
  if (view->size() != Owned().size()) {
    view->clear();
    for (const auto& s : Owned()) view->push_back(s.get());
  }
  return *view;
}

const System* FindSystem(const std::string& name) {
  for (const System* s : Systems())
    if (s->name() == name) return s;
  return nullptr;
}

void RegisterSystem(std::unique_ptr<System> system) {
  std::lock_guard<std::mutex> lock(Lock());
  Owned().push_back(std::move(system));
}

}  // namespace testbed::props
