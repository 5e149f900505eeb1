// The seeds' own JavaScript as a client under test (--client js): one Node process per job
// thread, running real/js/driver.mjs, driven over a pipe by the simulation.
//
// Protocol (one JSON line each way; the driver answers every request with one line):
//   open    {id, dir, version, provider, name, options, memory, connection}   a state namespace
//           of the SDK build in dir (null: the seeds' own of the version); memory: of
//           createMemoryProviderRuntimeState, else of the Redis runtime
//   state   {id, dir, version, provider, memory}   a provider runtime state that handle
//           contexts share (memory: createMemoryProviderRuntimeState, else the Redis runtime)
//   handles {id, dir, version, provider, state, connection, leaseMs}   createHandleContext
//   close   {id}                             drops a client and what its operations wait on
//   op      {op, id, m, a, now}              starts method m of client id with arguments a
//   reply   {call, r | x, now}               the reply to a call (x: a transport failure's kind)
//   fire    {t, now}                         a timer is due
//   work    {w, v | x, now}                  a work (commit's callback) ended: its result as JSON
//                                            text, or the text of what it threw
// and any message may carry `ended: [op ids]`, operations the testbed no longer runs. After op,
// reply, fire and work the driver runs until every operation waits on a call, a timer or its
// work, then answers {ev: [...]}:
//   {k: call, op, strand, call, argv}   {k: timer, op, strand, t, ms}   {k: clear, t}
//   {k: work, op, strand, w, data}      {k: strand, op, strand, name}   {k: tel, op, t}
//   {k: done, op, v, exp}   {k: fail, op, name, message, exp, [work], [code, details, cause]}
// Before it answers, the driver may ask questions its synchronous code needs answered, one line
// {q: {op, k, ...}} each (k: int {max}, uuid, words, updater {data}), each answered {v} or
// {error}. `now` is the clock of the actor whose code then runs (Date.now(), new Date()).
// Arguments that are not printable ASCII travel as {b: base64}; replies as ioredis gives them
// (bulk and status as strings, UTF-8 decoded; integers as numbers; nil as null; an error as
// {e: text}). JSON values travel as text, a number JSON cannot hold as {"$nf": "NaN"}.
//
// Strands: an operation's code waits on one thing at a time, except where it started an async
// function and went on without awaiting it (handle.js's renewal loop): the driver files each
// wait under the strand whose function is on the stack, and the testbed runs strand 0 on the
// calling thread and every other strand as a thread of the same actor named after its function
// (the port's "renew"). A strand whose sleeping timer is cleared, with nothing else to do, is
// cancelled (as the port cancels its sleeping renewal); strand 0 with nothing to do joins the
// others in the order they started (the port's `await renewal`).
//
// Each Redis call the JavaScript makes is one ctx.call of its strand's thread: a scheduling
// point, with every fault applying as to a port's call. Command names go out upper-cased
// (Redis reads them case-blind; ioredis sends `eval` as written) so that traces compare with
// the ports'.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "real/client_code.h"
#include "sim/runtime.h"

namespace testbed::real::js {

using real::ClientCode;
using real::ScriptSwap;

// Whether the JavaScript backend can run here: "" when it can, else why not (one line).
std::string Unavailable(const ClientCode& code);

// Runs Node with `args` (paths as given) and returns what it printed; throws std::runtime_error
// when it fails. For the tools beside the driver: tests/js/sdk.mjs write, real/js/mutants.mjs.
std::string NodeOutput(const std::vector<std::string>& args);
// <source>/<relative>: where the JavaScript tools are.
std::string SourcePath(const std::string& relative);

// What an operation's caller gives it besides its arguments.
struct OpHooks {
  // A work the JavaScript calls (commit's): runs in the simulation, returns the result or throws.
  std::function<sim::Task<nlohmann::json>(nlohmann::json data)> work;
  // A question its synchronous code asks ({k, ...}; the op's: int, uuid, updater).
  std::function<nlohmann::json(const nlohmann::json& q)> ask;
  // Any other event it reports (tel).
  std::function<void(const nlohmann::json& event)> event;
  // Changed scripts (check --scripts) that run in place of the bodies it embeds: EVAL, EVAL_RO
  // and SCRIPT LOAD of a shipped body send the changed one, EVALSHA and EVALSHA_RO its SHA1.
  std::shared_ptr<const ScriptSwap> scripts;
};

// How an operation of the JavaScript settled.
struct OpResult {
  bool failed = false;
  nlohmann::json value;           // done: the method's answer
  nlohmann::json error;           // fail: the event (name, message, and code, details, cause, work)
  std::exception_ptr work_error;  // fail with the error of its own work: what the work threw
  std::optional<int64_t> last_expires_at_ms;  // the client's writeTiming seam, when it has one
};

struct Op;  // js_host.cc: an operation's strands and what each waits on

class Host {
 public:
  // This thread's host, started on first use (or taken over from a thread that ended): one
  // Node process runs every SDK build the thread's runs name; a new one when it stopped. Throws
  // std::runtime_error naming why Node could not start.
  static Host& ForThisThread();
  ~Host();
  Host(const Host&) = delete;
  Host& operator=(const Host&) = delete;

  int64_t NewId() { return next_id_++; }
  // Sends `request`, answers the driver's questions, reads the answer and files its events.
  // Throws std::runtime_error when the driver fails or stops.
  void Exchange(nlohmann::json request);
  // Drops client `id` and what its operations still wait on in Node.
  void Close(int64_t id);

 private:
  friend struct Op;
  friend sim::Task<OpResult> RunOp(sim::Ctx&, Host&, int64_t, std::string, nlohmann::json, OpHooks);
  Host();
  nlohmann::json Answer(const nlohmann::json& q);
  std::string ReadLine();
  // The last line Node wrote to its stderr, as " (node: ...)", or "".
  std::string NodeSaid() const;
  void WriteLine(const std::string& line);
  pid_t pid_ = -1;
  bool stopped_ = false;  // the driver stopped: a new host serves the thread's next runs
  int to_node_ = -1, from_node_ = -1;
  int stderr_ = -1;     // Node's stderr (an anonymous file)
  std::string buffer_;  // bytes read past the last line
  int64_t next_id_ = 1;
  std::map<int64_t, std::weak_ptr<Op>> ops_;  // the operations some thread still runs
  std::vector<int64_t> ended_;                // operations ended since the last message
};

// Runs method `method` of client `client` as the JavaScript does: starts it on `ctx`'s thread,
// makes each Redis call, sleeps each timer and runs each work on its strand's thread (strand 0:
// this one), and returns how it settled. Other strands may outlive it.
sim::Task<OpResult> RunOp(sim::Ctx& ctx, Host& host, int64_t client, std::string method,
                          nlohmann::json args, OpHooks hooks = {});

}  // namespace testbed::real::js
