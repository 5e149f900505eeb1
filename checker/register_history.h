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
#include "checker/linearizability.h"

namespace testbed::checker {

using RegisterHistory = std::vector<Operation<model::RegisterOp>>;

RegisterHistory ParseRegisterHistory(const std::string& text);
std::string FormatRegisterOperation(const Operation<model::RegisterOp>& o);

// Ambiguous writes that a completed operation saw, made definite: a write whose value no other
// write of the history has, and which a get (or a failed compareAndSet) returned with version
// v, took effect, as version v, before that reader returned. It becomes an acknowledged write
// of version v whose window ends at the earliest such reader's return; the checker then
// neither tries "it never happened" nor places it after its reader, which prunes most of a
// faulty run's search. A write read at two versions, or a compareAndSet read at a version it
// cannot have written, stays ambiguous (the history is rejected either way). Partitions are
// kept apart (a value is unique within its key).
RegisterHistory PinObservedWrites(RegisterHistory ops);
// The operations of a history the checker rejects that the rejection needs: dropping any one
// of them makes the rest linearizable (a 1-minimal core, found by dropping one operation at a
// time, as delta debugging does). A core of two or three operations names a bug's shape far
// better than the whole history around it. A search that runs out of budget keeps the op.
// Every write dropped from the core stays in its checks as an ambiguous write that never
// returned, so the core conflicts whatever the other writes did: a core never blames an order
// that a dropped write (a short TTL, a delete) explains.
// max_states: the search budget of each check; a check that runs out keeps the operation
// (the core stays rejected, only less small). *minimal (when given): whether every check
// decided, so that dropping any one operation of the core is known to leave an order.
RegisterHistory RejectedCore(RegisterHistory ops, int64_t max_states = 2'000'000,
                             bool* minimal = nullptr);
// A core's shape, free of seeds, actors, times, keys and values: each operation in invocation
// order with its kind, abstracted versions (ranked: v1 < v2 < ...; 0 stays 0), which write of
// the core a read's value came from, whether a write's TTL ends inside the core, and which
// operations returned before others began. Two runs of the same bug give the same shape.
std::string RegisterShape(const RegisterHistory& core);
// One sentence saying what cannot be ordered, e.g. "client 0's cas(expected 0) and client 2's
// set were both acknowledged as version 1 on k1" (actors are client ids).
// history: the key's whole history, which RegisterClass reads as well.
std::string RegisterSentence(const RegisterHistory& core, const std::string& key,
                             const RegisterHistory& history);
// The history with its times (invoke_ms, ret_ms, expiries) made relative to `start_ms`.
RegisterHistory RelativeTimes(RegisterHistory ops, int64_t start_ms);
// The named class of a core ("" when none fits): "duplicate-version" (two concurrent writes
// acknowledged with one version), "version-reused" (the same, one after the other),
// "stale-cas-succeeds" (a compareAndSet won against a version an earlier acknowledged write
// had replaced), "version-continues-after-delete", "version-continues-after-expiry" (a write
// landed after a delete or an expiry but counted from the value before it), "get-misses-write"
// (get() found nothing after an acknowledged write that nothing later replaced and that was
// alive, with no delete).
// history: the key's whole history the core came from: a get that found nothing is called a
// miss only when nothing in it may have removed the value.
std::string RegisterClass(const RegisterHistory& core, const RegisterHistory& history);
inline std::string RegisterClass(const RegisterHistory& core) { return RegisterClass(core, core); }
// The history plus, for each write whose request was re-sent after a reconnect, an ambiguous
// twin (it may have taken effect once more, at any point after its invocation): the history
// the resend fault can really produce.
RegisterHistory WithResentTwins(RegisterHistory ops);

}  // namespace testbed::checker
