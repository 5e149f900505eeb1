// The seed's own handle runtime (handle.js, seed 002 verbatim, on the seeds' own state runtime of
// the version: tests/js/sdk.mjs lays them out) behind the port's calls, so that a property
// drives it as it drives the port (--client js). Each call is one operation of the JavaScript
// (real/js_host.h): its Redis calls are calls of the actor's threads, its renewal loop a thread
// named "renew" as the port's, its timers sleep on the actor's clock, commit's work runs in the
// simulation, the updater is asked, and randomInt and randomUUID draw from the context's PRNG
// by the port's code, so both draw the same words and claim ids.
//
// What is not the JavaScript's: HandleState::ns() of these states is the port's storage (no
// caller of the runtime uses it; the broken ports of properties/handles wrap it).
#pragma once

#include <memory>
#include <string>

#include "real/client_code.h"
#include "real/handles/handle.h"

namespace testbed::real::handles {

// RedisProviderRuntimeState of the JavaScript of `version` (state::HasJavaScript), for one
// actor; `port`: the same state's port, for ns().
std::unique_ptr<HandleState> JsRedisState(const std::string& version, const ClientCode& code,
                                          std::string provider_id,
                                          std::unique_ptr<HandleState> port);
// createMemoryProviderRuntimeState of the same SDK; `port`: its MemoryState, for ns().
std::unique_ptr<HandleState> JsMemoryState(const std::string& version, const ClientCode& code,
                                           std::unique_ptr<HandleState> port);

}  // namespace testbed::real::handles
