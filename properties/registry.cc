// The registry of systems under test: one line per system.
#include "properties/state/state_system.h"
#include "properties/system.h"

namespace testbed::props {
namespace {

std::vector<std::unique_ptr<System>>& Owned() {
  static auto* systems = [] {
    auto* v = new std::vector<std::unique_ptr<System>>();
    v->push_back(state_system::Make());
    return v;
  }();
  return *systems;
}

std::vector<const System*>& View() {
  static auto* view = new std::vector<const System*>();
  if (view->size() != Owned().size()) {
    view->clear();
    for (const auto& s : Owned()) view->push_back(s.get());
  }
  return *view;
}

}  // namespace

const std::vector<const System*>& Systems() { return View(); }

const System* FindSystem(const std::string& name) {
  for (const System* s : Systems())
    if (s->name() == name) return s;
  return nullptr;
}

void RegisterSystem(std::unique_ptr<System> system) { Owned().push_back(std::move(system)); }

}  // namespace testbed::props
