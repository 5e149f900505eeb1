// The history checkers, as a library: the one header a user of the library includes.
//
// It knows no system under test, no emulator and no command line: a history is a list of
// operations with their real-time windows, and a model says what each may do.
//
//   Linearizability of any model (Wing & Gong with Lowe's memo, per partition, as Porcupine):
//     checker::Checker<Model>(model).check(history) -> Verdict {ok, complete, ...}
//       (linearizability.h: the Model's step / append_key / read_only; complete false is "no
//       verdict", never a pass)
//   The versioned register of the state store (register_history.h, version_order.h):
//     RegisterHistory, RegisterClass (the anomaly a rejected core shows), version inference
//     and the greedy and nearest orders that explain a rejection (greedy_order.h,
//     nearest_order.h).
//   Jepsen histories (jepsen_history.h): CheckCasRegisterHistory and CheckMutexHistory on
//     Jepsen's JSON form (Knossos's cas-register and mutex), the models table HistoryModels(),
//     JepsenHistoryOf (writing one) and JepsenEdn.
//   Generated histories for tests and benchmarks (history_gen.h, GenerateCasRegisterHistory):
//     linearizable by construction, drawn from a caller's Draws (draws.h).
//
// Every piece depends on the standard library, Abseil, nlohmann_json and model/ alone.
#pragma once

#include "checker/draws.h"
#include "checker/greedy_order.h"
#include "checker/history_gen.h"
#include "checker/jepsen_history.h"
#include "checker/linearizability.h"
#include "checker/nearest_order.h"
#include "checker/register_history.h"
#include "checker/version_order.h"
