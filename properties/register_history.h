// Text form of state-register histories (golden files, counterexamples, scenarios):
//   actor invoke ret invoke_ms ret_ms op [key=K] args -> result
//   1 1 2 0 0 set value=a exp=100 -> version=1
//   2 3 4 99 101 get -> value=a version=1          (or: -> null)
//   3 5 6 2 4 cas expected=1 value=c exp=1000 -> fail version=2 value=b
//   1 1 ? 0 ? set value=a exp=1000 -> ?            (ambiguous: never returned)
// Lines starting with # are comments. Parse errors throw std::invalid_argument with the line.
#pragma once

#include <string>
#include <vector>

#include "model/state_register.h"
#include "properties/linearizability.h"

namespace testbed::lin {

using RegisterHistory = std::vector<Operation<model::RegisterOp>>;

RegisterHistory ParseRegisterHistory(const std::string& text);
std::string FormatRegisterOperation(const Operation<model::RegisterOp>& o);

}  // namespace testbed::lin
