// The a2 event store of seed 003 (real/a2/) as a system under test: producers append events
// (some in ordered lanes, some settled), workers claim them under short leases, renew, work
// (sometimes longer than the lease) and complete (with child events) or fail them; presence
// writers stamp fields with their own clocks and deliver them out of order.
//
// Restart and failover lose acknowledged writes (Redis persistence and replication are
// asynchronous); every property sets them aside, so what remains is the store's own logic.
//
// Contract (from the seed's doc comments and the a2 model's promises; where the code is
// weaker, that is a finding, not a choice):
//   - "attempts-increase": each claim of an event gets a fresh attempt number, larger than
//     every attempt granted before it ("claims with leases and attempts").
//   - "single-holder": at any instant at most one live claim holds an event. A lease lives
//     from its grant until the expiry the claimer asked for (extended by acknowledged
//     renewals) or until its holder completes or fails it, judged in real (world) time.
//   - "fencing": complete, fail and appends caused by an attempt are accepted only from the
//     current attempt of a live claim: not after a newer attempt was granted, and not after
//     the lease expired.
//   - "lane-order": the events of one lane are claimed in index order, one at a time: an
//     event is not claimed before every earlier event of its lane is settled.
//   - "appends-readable": an acknowledged append stays readable at the index it was given,
//     as the event it was ("the event an index names never changes").
//   - "presence-lww": presence is per-field last-writer-wins by the sender's `at` stamp
//     (PRESENCE_SET_LUA's comment), whatever the delivery order: after every write, a read
//     shows for each field the write with the newest stamp (a delete included).
#pragma once

#include <memory>

#include "properties/system.h"

namespace testbed::props::a2_system {

std::unique_ptr<System> Make();

}  // namespace testbed::props::a2_system
