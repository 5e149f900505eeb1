// A property is the unit a system registers, as FoundationDB registers a workload class with
// WorkloadFactory<CycleWorkload>: what it promises (PropertyInfo: its name, contract sentence,
// where it applies, the fault kinds it sets aside and its anomaly classes) and how one run of
// it goes, all in one file under properties/<system>/:
//
//   setup  the run is made from the system's parameters of one run (its Env: the spec, the
//          version's scripts) and keeps what it records as members of its own;
//   start  Start() puts its actors into the world System::Run built for it;
//   check  Check() judges what they recorded once the world has run: the findings, and
//          `incomplete` when a checker gave up.
//
// A system lists its properties in properties/<system>/properties.inc, one line each, in
// `testbed list` order; nothing else names a property. Probes several properties share (the
// state store's linearizability history, a2's producer and workers) are helpers the property
// files call, never switches a property flips elsewhere.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "harness/system.h"
#include "sim/runtime.h"

namespace testbed::props {

class PropertyRun {
 public:
  virtual ~PropertyRun() = default;
  virtual void Start(sim::World& world) = 0;
  virtual void Check(sim::World& world, RunOutcome& out) = 0;
};

// PropertyInfo::applies for a property that means something for every version and deploy.
inline bool Always(const std::string&, const std::string&) { return true; }

// Restart, failover and key loss (eviction) lose acknowledged writes by themselves: the fault
// kinds most properties set aside.
inline sim::FaultSet LosesWrites() {
  return {sim::Fault::kRestart, sim::Fault::kFailover, sim::Fault::kKeyLoss};
}

// A registered property of a system whose runs share the parameters Env.
template <class Env>
struct Property {
  PropertyInfo info;
  std::unique_ptr<PropertyRun> (*make)(const Env& env);
};

// The usual `make`: a run of class R, constructed from the system's parameters.
template <class R, class Env>
std::unique_ptr<PropertyRun> MakeRun(const Env& env) {
  return std::make_unique<R>(env);
}

// A system's properties, in `testbed list` order.
template <class Env>
class PropertyTable {
 public:
  explicit PropertyTable(std::vector<const Property<Env>*> entries) : entries_(std::move(entries)) {
    for (const Property<Env>* p : entries_) infos_.push_back(p->info);
  }
  const std::vector<PropertyInfo>& infos() const { return infos_; }
  const Property<Env>& find(const std::string& name) const {
    for (const Property<Env>* p : entries_)
      if (p->info.name == name) return *p;
    throw std::invalid_argument("unknown property '" + name + "'");
  }

 private:
  std::vector<const Property<Env>*> entries_;
  std::vector<PropertyInfo> infos_;
};

// A property's run together with the parameters it was made from, which outlive it.
template <class Env>
std::unique_ptr<PropertyRun> Bind(std::unique_ptr<Env> env, const Property<Env>& p) {
  class Bound : public PropertyRun {
   public:
    Bound(std::unique_ptr<Env> env, const Property<Env>& p)
        : env_(std::move(env)), run_(p.make(*env_)) {}
    void Start(sim::World& world) override { run_->Start(world); }
    void Check(sim::World& world, RunOutcome& out) override { run_->Check(world, out); }

   private:
    std::unique_ptr<Env> env_;  // declared first: destroyed after the run that refers to it
    std::unique_ptr<PropertyRun> run_;
  };
  return std::make_unique<Bound>(std::move(env), p);
}

}  // namespace testbed::props
