// The handle runtime of seed 002 (real/handles/) as a system under test: LLM tool calls on
// drafts (create, read, update, commit with upstream work under a renewed lease, discard) by
// several app servers sharing one session's connection, on the state store of a ported version
// (beta30 by default, beta24), with faults; the properties are checked over what the callers
// saw and what the simulated upstream did.
//
// Contract (from the seed's comments; where the code is weaker, that is a finding):
//   - "work-at-most-once": work() runs at most once per draft, across every caller and retry
//     (a claim is exclusive; "re-running it is the worse failure", js 784).
//   - "result-replayed": once a commit returned a result, every later commit returns exactly
//     that result ("the promised replay", js 625) and no read finds the draft uncommitted or
//     missing, while the result is live (resultTtlMs; this checks the first half of it).
//   - "busy-means-committing": HANDLE_BUSY ("being committed by another request") is reported
//     only while some commit of the draft is in flight, or within one lease after a committer
//     died or gave up ("A crashed committer leaves the record BUSY for at most the lease").
//   - "updates-exactly-once": an update the caller retries after a lost reply is applied once.
//   - "data-read-back": a draft's data reads back exactly as written (JSON equality).
//   - "bound-isolation": a bound handle is not found from another connection.
#pragma once

#include <memory>

#include "properties/system.h"

namespace testbed::props::handles_system {

std::unique_ptr<System> Make();

}  // namespace testbed::props::handles_system
