// The seeds' own JavaScript as a client under test (--client js): one Node process per job
// thread, running real/js/driver.mjs, driven over a pipe by the simulation.
//
// Protocol (one JSON line each way; the driver answers every request with one line):
//   open  {id, dir, version, provider, name, options, connection}   a client object (a
//         namespace) of the SDK build in dir (null: the seeds' own of the version)
//   close {id}                                                 drops it and its pending calls
//   op    {op, id, m, a, now}          starts method m of client id with arguments a
//   reply {call, r | x, now}           the reply to a call (x: a transport failure's kind)
// and after op and reply the driver runs until every operation waits on a call, then answers
// {ev: [...]}: {k: call, op, call, argv}, {k: done, op, v, exp}, {k: fail, op, name, message,
// exp}. `now` is the clock of the actor whose code then runs (Date.now(), new Date()).
// Arguments that are not printable ASCII travel as {b: base64}; replies as ioredis gives them
// (bulk and status as strings, UTF-8 decoded; integers as numbers; nil as null; an error as
// {e: text}).
//
// Each Redis call the JavaScript makes is one ctx.call of the actor's thread: a scheduling
// point, with every fault applying as to a port's call. Command names go out upper-cased
// (Redis reads them case-blind; ioredis sends `eval` as written) so that traces compare with
// the ports'.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "real/client_code.h"
#include "sim/runtime.h"

namespace testbed::real::js {

using real::ClientCode;

// Whether the JavaScript backend can run here: "" when it can, else why not (one line).
std::string Unavailable(const ClientCode& code);

// Runs Node with `args` (paths as given) and returns what it printed; throws std::runtime_error
// when it fails. For the tools beside the driver: tests/js/sdk.mjs write, real/js/mutants.mjs.
std::string NodeOutput(const std::vector<std::string>& args);
// <source>/<relative>: where the JavaScript tools are.
std::string SourcePath(const std::string& relative);

// What an operation of the JavaScript has left for the simulation.
struct OpState {
  std::deque<std::pair<int64_t, sim::Argv>> calls;  // (call id, argv), in the order made
  bool settled = false;
  bool failed = false;
  nlohmann::json value;  // done: the method's answer
  std::string error_name, error_message;
  std::optional<int64_t> last_expires_at_ms;  // the client's writeTiming seam, when it has one
};

class Host {
 public:
  // This thread's host, started on first use (or taken over from a thread that ended): one
  // Node process runs every SDK build the thread's runs name. Throws std::runtime_error naming
  // why Node could not start.
  static Host& ForThisThread();
  ~Host();
  Host(const Host&) = delete;
  Host& operator=(const Host&) = delete;

  int64_t NewId() { return next_id_++; }
  // Sends `request`, reads the answer and files its events. Throws std::runtime_error when the
  // driver fails or stops.
  void Exchange(const nlohmann::json& request);
  int64_t StartOp(int64_t client, const std::string& method, nlohmann::json args, int64_t now_ms);
  void Deliver(int64_t call, const sim::CallResult& result, int64_t now_ms);
  OpState& op(int64_t id) { return ops_.at(id); }
  void EndOp(int64_t id) { ops_.erase(id); }
  // Drops client `id` and the calls of its operations still waiting in Node.
  void Close(int64_t id);

 private:
  Host();
  pid_t pid_ = -1;
  int to_node_ = -1, from_node_ = -1;
  std::string buffer_;  // bytes read past the last line
  int64_t next_id_ = 1;
  std::map<int64_t, OpState> ops_;
};

// Runs method `method` of client `client` as the JavaScript does: starts it, makes each Redis
// call it asks for on `ctx`, in the order asked, and returns how it settled.
sim::Task<OpState> RunOp(sim::Ctx& ctx, Host& host, int64_t client, std::string method,
                         nlohmann::json args);

}  // namespace testbed::real::js
