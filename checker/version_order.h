// Version-order inference for the state register (issue 33): what the versions a history's
// operations returned force, checked in polynomial time, for the histories the search cannot
// finish (many clients on one hot key).
//
// Every state operation that returned says which version the key had around it: a get that
// found the key saw version v (one that found nothing saw 0: absent), a failed compareAndSet saw
// the version it reports, and an acknowledged set or compareAndSet of version v found v - 1 and
// left v. Within one lifetime of the key (model rules 2 and 3: from a write of version 1 to the
// delete or expiry that ends it) versions only grow, one per write. So for two operations F and
// S, with F linearized before S:
//   - if S found a lower version than F left (or the same version with another value), the key
//     was reset between them: a delete, or the expiry of a value written by then, lies between;
//   - if S found a higher version than F left, or found v >= 1 after a reset, a write lies
//     between.
// A delete, write or expiry can lie between F and S only if it did not return before F was
// invoked and was not invoked after S returned (real time), and an expiry only if its instant
// can fall inside [F's invocation, S's return] (virtual ms, rule 1). When every order that real
// time allows for F and S needs something no operation of the history can supply, no
// linearization exists, and {F, S} is the rejected core: both must be in any explanation, and
// what explains them is ruled out by the rest of the history (never by dropping it).
//
// Also one-operation cores: a failed compareAndSet that reports its own expected version as the
// current one (the model's compareAndSet succeeds exactly then), and acknowledged writes whose
// version no state can produce. Sound, not complete: a history that needs three operations to
// show its conflict, or one whose pairs all have some delete, write or expiry that might lie
// between, stays undecided (never a pass).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "checker/greedy_order.h"
#include "checker/register_history.h"

namespace testbed::checker {

// The operations of one key's history that cannot be ordered, found by version-order inference
// alone; nullopt when it finds none (the history may still be rejected by the search). The
// history is read as the checker reads it (pin observed writes and add resent twins first).
// ignore_resets: a deliberately broken variant for the negative test (every order that needs
// a reset between two operations is taken as impossible, deletes and expiries notwithstanding).
std::optional<RegisterHistory> InferRejectedCore(const RegisterHistory& part,
                                                 bool ignore_resets = false);

// A linearization of one key's history built without search (GreedyOrder, properties/
// greedy_order.h, with the state register's model), or false when the greedy walk does not find
// one (the history may still be linearizable).
bool GreedyLinearization(const RegisterHistory& part);

// Why one key's history is hard to search: its operations, the most that were pending at once
// and the ambiguous ones (a lost reply may have taken effect at any time after its invocation,
// or never), e.g. "hot: 360 operations, up to 87 pending at once, 12 ambiguous".
std::string DescribeUndecided(const std::string& key, const RegisterHistory& part);

}  // namespace testbed::checker
