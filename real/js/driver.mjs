// The seeds' own JavaScript as a client under test inside the simulation (testbed --client js).
// The testbed starts one of these per job and drives it over stdin/stdout, one JSON line in, one
// JSON line out (real/js_host.h says the protocol). Every Redis call the SDK makes goes out as a
// "call" event and waits for the world's reply; every timer it sets goes out as a "timer" event
// and fires when the simulation says; Date.now() and `new Date()` read the virtual clock of the
// actor whose code runs; randomInt and randomUUID ask the testbed (its PRNG, as the port draws).
// Node holds no real socket and no real timer: after each message it runs until every
// operation waits on a call, a timer or its work (setImmediate comes after every microtask),
// then reports what happened.
//   node driver.mjs
import { openSync, readSync, writeSync } from 'node:fs';
import { register } from 'node:module';

// node:crypto of the seed's handle.js is tests/js/handles/crypto.mjs, which asks
// globalThis.__testbedRandom when it is set (below).
register('../../tests/js/handles/hooks.mjs', import.meta.url);
const { clock, importA2, importSdk, loadA2, loadSdk } = await import('../../tests/js/sdk.mjs');
const a2Shapes = await import('../../tests/js/a2/shapes.mjs');
const { pick, plain, rows } = a2Shapes;

// A promise rejected with nobody to handle it, or an exception no code catches, ends a Node
// process (Node 15 and later): the message that ran the code fails with it, and the testbed
// reports it as the client's failure. The driver itself goes on serving.
let uncaught = null;
process.on('unhandledRejection', (reason) => {
  uncaught ??= `an unhandled rejection ends the process: ${reason?.stack ?? reason}`;
});
process.on('uncaughtException', (error) => {
  uncaught ??= `an uncaught exception ends the process: ${error?.stack ?? error}`;
});

// --- The pipe. -------------------------------------------------------------------------------
const buffer = Buffer.alloc(1 << 16);
let input = Buffer.alloc(0);  // bytes read past the last line (a line is decoded whole: UTF-8)
// The testbed gives stdin without blocking: the next message usually comes within tens of
// microseconds, and looking again costs less than sleeping and being woken, when a core is free
// for it (the testbed says so in each message: `s`). Otherwise, and past that, a blocking
// descriptor of the same pipe waits.
const blocking = openSync('/proc/self/fd/0', 'r');
const SPIN_NS = 100_000n;
let spin = false;
function readSome() {
  if (!spin) return readSync(blocking, buffer, 0, buffer.length, null);
  const until = process.hrtime.bigint() + SPIN_NS;
  for (;;) {
    try {
      return readSync(0, buffer, 0, buffer.length, null);
    } catch (e) {
      if (e.code !== 'EAGAIN') throw e;
      if (process.hrtime.bigint() > until) return readSync(blocking, buffer, 0, buffer.length, null);
    }
  }
}
function readLine() {
  let end;
  while ((end = input.indexOf(10)) < 0) {
    const n = readSome();
    if (n === 0) process.exit(0);
    input = Buffer.concat([input, buffer.subarray(0, n)]);
  }
  const line = input.toString('utf8', 0, end);
  input = input.subarray(end + 1);
  return line;
}
const writeLine = (o) => writeSync(1, `${JSON.stringify(o)}\n`);

// A question the SDK's synchronous code needs answered now (a random draw, an updater's
// value): asked and answered before the message that ran the code is answered.
function ask(q) {
  writeLine({ q: { op: current?.op ?? null, ...q } });
  const a = JSON.parse(readLine());
  if (a.error !== undefined) throw new Error(a.error);
  return a.v;
}

// --- Operations and their strands. ------------------------------------------------------------
// The operation whose code runs, and its strand: each message resumes one operation's code
// (the one started, or the one whose call, timer or work was answered); every other one waits.
// A strand is a line of the operation's code that waits on one thing at a time: the operation
// itself (strand 0), or an async function it started and went on without awaiting (handle.js's
// renewal loop), which the testbed runs as a thread of the actor named after the function.
let current = null;
const ops = new Map();          // op id -> { client, roots: function key -> strand, anchors, strands }
const spaces = new Map();       // client id -> { ns } | { handles }
const states = new Map();       // state runtime id -> the SDK's RedisProviderRuntimeState
const sdks = new Map();         // `seeds:<version>` or a build's directory -> its modules
const pending = new Map();      // call id -> { resolve, reject, ev }
const timers = new Map();       // timer id -> { fn, args, repeat, ev }
const works = new Map();        // work id -> { resolve, reject, ev }
const workErrors = new WeakMap();  // the Error a failed work rejected with -> its work id
let events = [];
let nextCall = 1;
let nextTimer = 1;
let nextWork = 1;

// The stack of the running code (async frames included), as V8's call sites: taken at each
// wait, read only where a strand is to be found (most operations never need it).
function callSites() {
  const prepare = Error.prepareStackTrace;
  const limit = Error.stackTraceLimit;
  Error.prepareStackTrace = (_e, sites) => sites;
  Error.stackTraceLimit = 64;
  const holder = {};
  Error.captureStackTrace(holder, callSites);
  const sites = holder.stack;
  Error.prepareStackTrace = prepare;
  Error.stackTraceLimit = limit;
  return sites;
}
// The frames of a wait's stack in the SDK's code, innermost first, each as { key: the
// function's definition (file, line, column), name }.
function framesOf(e) {
  if (e.frames === undefined) {
    e.frames = [];
    for (const s of e.sites) {
      if (s.isPromiseAll()) {
        e.frames.push({ key: 'Promise.all', name: 'Promise.all', index: s.getPromiseIndex() });
        continue;
      }
      const file = s.getFileName();
      if (!file || !file.startsWith('file:') || file === import.meta.url ||
          file.endsWith('/sdk.mjs')) continue;
      e.frames.push({ key: `${file}:${s.getEnclosingLineNumber()}:${s.getEnclosingColumnNumber()}`,
                      name: s.getFunctionName() ?? '' });
    }
  }
  return e.frames;
}

// A wait of the running code (a call, a timer or a work): the event, filed under its strand:
// the innermost function on the stack that roots a strand of the operation, else strand 0.
function wait(e) {
  const op = ops.get(current?.op);
  e.op = current?.op ?? null;
  e.strand = 0;
  if (op) {
    e.sites = callSites();
    if (op.roots.size > 0 || op.branches.length > 0) {
      for (const f of framesOf(e)) {
        if (op.roots.has(f.key)) { e.strand = op.roots.get(f.key); break; }
        if (f.key === 'Promise.all' && op.branches.length > 0) {
          const branch = op.branches[op.branches.length - 1][f.index];
          if (branch !== undefined) { e.strand = branch; break; }
        }
      }
    }
    if (e.strand === 0 && !op.anchors.has(0) && op.first === undefined) op.first = e;
  }
  events.push(e);
  return e;
}

// After a message: a strand that waits on more than one new thing went on without awaiting
// some of them. A strand's waits come from code under its anchor (strand 0: the operation's
// method, the outermost function of its first wait; another strand: its function). A wait whose
// stack does not reach the anchor was made in a function nobody awaits (an async frame chain
// ends where nobody awaits): a new strand rooted at its outermost function. Of the waits that
// reach it, those made inside a function the others are not in (the first frame past their
// common callers) belong to a new strand rooted at that function; the others stay.
// Promise.all over n promises, called by the running code: its branches' first waits are the
// n waits of one strand with the same stack (each made by one call of the mapped function),
// and each branch is a strand of its own, "all#k" (the port's threads), found again by the
// "Promise.all (index k)" frame of the async stacks of its later waits.
let alls = [];
const builtinAll = Promise.all;
Promise.all = function all(iterable) {
  const list = Array.from(iterable);
  if (current !== null) alls.push({ op: current.op, n: list.length });
  return builtinAll.call(this, list);
};

function splitStrands() {
  // Strand 0's anchor: the outermost function of the operation's first wait.
  for (const e of events) {
    const op = e.sites ? ops.get(e.op) : undefined;
    if (op === undefined || op.first !== e) continue;
    const frames = framesOf(e);
    if (frames.length > 0) op.anchors.set(0, frames[frames.length - 1].key);
    op.first = null;
  }
  const byStrand = new Map();
  for (const e of events) {
    if (!e.sites || (e.k === 'timer' && !timers.has(e.t))) continue;
    const key = `${e.op}/${e.strand}`;
    if (!byStrand.has(key)) byStrand.set(key, []);
    byStrand.get(key).push(e);
  }
  const added = [];
  for (const waits of byStrand.values()) {
    const op = ops.get(waits[0].op);
    const all = alls.find((a) => a.op === waits[0].op && a.n === waits.length);
    if (all !== undefined && op !== undefined) {
      const chains = waits.map((e) => framesOf(e).map((f) => f.key).join(' '));
      if (chains.every((c) => c === chains[0])) {
        alls.splice(alls.indexOf(all), 1);
        const group = [];
        waits.forEach((e, k) => {
          const strand = op.strands += 1;
          group.push(strand);
          added.push({ before: e, ev: { k: 'strand', op: e.op, strand, name: `all#${k}` } });
          e.strand = strand;
        });
        op.branches.push(group);
        continue;
      }
    }
    if (waits.length < 2) continue;
    const anchor = op.anchors.get(waits[0].strand);
    // Each wait's functions, outermost first, from the anchor on (null: it does not reach it).
    const chains = waits.map((e) => {
      const keys = framesOf(e).map((f) => f.key).reverse();
      const at = anchor === undefined ? 0 : keys.indexOf(anchor);
      return at < 0 ? null : keys.slice(at);
    });
    const reaching = chains.filter((c) => c !== null);
    let common = 0;
    while (reaching.length > 0 &&
           reaching.every((c) => common < c.length && c[common] === reaching[0][common])) {
      common += 1;
    }
    waits.forEach((e, i) => {
      const chain = chains[i];
      if (chain !== null && chain.length === common) return;
      if (chain === null && e.frames.length === 0) return;
      const key = chain === null ? e.frames[e.frames.length - 1].key : chain[common];
      if (!op.roots.has(key)) {
        const strand = op.strands += 1;
        op.roots.set(key, strand);
        op.anchors.set(strand, key);
        const name = e.frames.find((f) => f.key === key).name;
        added.push({ before: e, ev: { k: 'strand', op: e.op, strand, name } });
      }
      e.strand = op.roots.get(key);
    });
  }
  alls = [];
  for (const { before, ev } of added) events.splice(events.indexOf(before), 0, ev);
  for (const e of events) {
    delete e.frames;
    delete e.sites;
  }
}

// Runs `fn` as the code of the waits' op and strand, with that actor's clock.
function resume(ev, now, fn) {
  clock.now = now;
  current = { op: ev.op, strand: ev.strand };
  fn();
}

// --- The Redis client. ------------------------------------------------------------------------
// An argument as ioredis writes it (flattened, numbers as String(n)); text that is not printable
// ASCII goes as base64 of its UTF-8 bytes (as ioredis encodes a string), so that no byte is lost
// to JSON.
function argOut(a) {
  const s = Buffer.isBuffer(a) ? a : String(a);
  if (typeof s === 'string' && /^[\x20-\x7e]*$/.test(s)) return s;
  return { b: Buffer.from(s).toString('base64') };
}

// A reply as ioredis gives it: bulk and status replies as strings, integers as numbers, nil as
// null, an error as an Error (rejected at the top level, an element inside an array).
class ReplyError extends Error {
  constructor(message) { super(message); this.name = 'ReplyError'; }
}
function replyIn(r) {
  if (Array.isArray(r)) return r.map(replyIn);
  if (r !== null && typeof r === 'object') return new ReplyError(r.e);
  return r;
}

// The Redis client the SDK is given (state's __redisClient): each method is a command.
const client = new Proxy({}, {
  get(_target, name) {
    if (typeof name !== 'string' || name === 'then') return undefined;
    if (name === 'status') return 'ready';
    const command = name === 'call' ? null : name;
    return (...args) => {
      const argv = (command === null ? args : [command, ...args]).flat(Infinity).map(argOut);
      const ev = wait({ k: 'call', call: nextCall++, argv });
      return new Promise((resolve, reject) => pending.set(ev.call, { resolve, reject, ev }));
    };
  },
});

// --- Timers. ----------------------------------------------------------------------------------
// setTimeout and setInterval as Node's (the delay clamped to 1..2^31-1 ms), fired by the
// testbed on the virtual clock of the strand that set them.
class Timeout {
  constructor(id) { this.id = id; }
  ref() { return this; }
  unref() { return this; }
  hasRef() { return true; }
  refresh() { return this; }
  [Symbol.toPrimitive]() { return this.id; }
}
function arm(fn, ms, args, repeat) {
  let delay = Number(ms);
  if (!(delay >= 1 && delay <= 2147483647)) delay = 1;
  const ev = wait({ k: 'timer', t: nextTimer++, ms: Math.trunc(delay) });
  timers.set(ev.t, { fn, args, repeat, ev });
  return new Timeout(ev.t);
}
function disarm(timer) {
  const t = timer instanceof Timeout ? timer.id : Number(timer);
  const armed = timers.get(t);
  if (!armed) return;
  timers.delete(t);
  events.push({ k: 'clear', op: armed.ev.op, t });
}
globalThis.setTimeout = (fn, ms, ...args) => arm(fn, ms, args, false);
globalThis.setInterval = (fn, ms, ...args) => arm(fn, ms, args, true);
globalThis.clearTimeout = disarm;
globalThis.clearInterval = disarm;

function fire(t, now) {
  const timer = timers.get(t);
  if (!timer) return;  // cleared while the message was on its way
  resume(timer.ev, now, () => {
    if (timer.repeat) {
      const ev = wait({ k: 'timer', t, ms: timer.ev.ms });
      timer.ev = ev;
    } else {
      timers.delete(t);
    }
    timer.fn(...timer.args);
  });
}

// --- Randomness: the testbed's PRNG, drawn as the port draws (tests/js/handles/crypto.mjs). ---
globalThis.__testbedRandom = {
  int: (max) => ask({ k: 'int', max }),
  uuid: () => ask({ k: 'uuid' }),
};
// The handle word list (real/handles/wordlist.h), which handle-wordlist.js reads when loaded.
Object.defineProperty(globalThis, '__handleWords', {
  get() {
    const words = ask({ k: 'words' });
    Object.defineProperty(globalThis, '__handleWords', { value: words });
    return words;
  },
  configurable: true,
});

// --- The SDK. ---------------------------------------------------------------------------------
// The seeds' SDK of `version` (dir null), or the build in `dir` (--client-dir, a mutant of
// testbed mutate), which is of the version under test.
async function sdkOf(version, dir) {
  const key = dir ?? `seeds:${version}`;
  if (!sdks.has(key)) sdks.set(key, await (dir ? importSdk(dir) : loadSdk(version)));
  return sdks.get(key);
}

// a2's store core: the seeds' own (dir null) or the build in dir (store-redis-core.js).
const a2s = new Map();
async function a2Of(dir) {
  const key = dir ?? 'seeds';
  if (!a2s.has(key)) {
    a2s.set(key, await (dir ? importA2(dir) : loadA2()));
  }
  return a2s.get(key);
}

// The namespace's last prepared expiry (the port's last_expires_at_ms seam): writeTiming's
// answer, kept on the namespace by a wrapper that changes nothing else.
function watchTiming(ns) {
  const proto = Object.getPrototypeOf(ns);
  if (typeof proto.writeTiming !== 'function' || proto.writeTiming.watched) return;
  const original = proto.writeTiming;
  const watched = function (...args) {
    const timing = original.apply(this, args);
    this.lastExpiresAtMs = timing.expiresAtMs;
    return timing;
  };
  watched.watched = true;
  proto.writeTiming = watched;
}

const ttlOption = (ms) => (ms === null || ms === undefined ? undefined : { ttl: `${ms}ms` });

// A value through JSON with the numbers JSON cannot hold: {"$nf": "NaN" | "Infinity" |
// "-Infinity"} stands for one (the testbed writes a Json's non-finite number so).
const revive = (text) => JSON.parse(text, (_k, v) =>
  (v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 1 &&
   typeof v.$nf === 'string') ? Number(v.$nf) : v);
const jsonOut = (v) => (v === undefined ? null : JSON.stringify(v, (_k, x) =>
  (typeof x === 'number' && !Number.isFinite(x)) ? { $nf: String(x) } : x));

// A StateValue with its value as JSON text (members in their order).
const valueOut = (v) => (v === null || v === undefined ? null : {
  key: v.key, value: JSON.stringify(v.value), version: v.version, expiresAt: v.expiresAt,
  createdAt: v.createdAt, updatedAt: v.updatedAt,
});

// A handle kind as defineHandleKind gives it (the testbed sends its fields); its schema accepts
// every value (the port's choice, real/handles/handle.h).
const kinds = new Map();
function kindOf(text) {
  if (!kinds.has(text)) {
    kinds.set(text, { ...JSON.parse(text), schema: { safeParse: (data) => ({ success: true, data }) } });
  }
  return kinds.get(text);
}
const recordOut = (r) => ({
  handle: r.handle, kind: r.kind, status: r.status, data: jsonOut(r.data),
  result: 'result' in r ? (jsonOut(r.result) ?? 'null') : null, createdAt: r.createdAt, expiresAt: r.expiresAt,
});

// Each method: its arguments -> [promise, answer of its value].
const methods = {
  // A state namespace.
  get: (s, [key]) => [s.ns.get(key), valueOut],
  set: (s, [key, json, ttl]) => [s.ns.set(key, JSON.parse(json), ttlOption(ttl)), valueOut],
  cas: (s, [key, expected, json, ttl]) => [
    s.ns.compareAndSet(key, expected, JSON.parse(json), ttlOption(ttl)),
    (r) => ({ ok: r.ok, value: valueOut(r.value), current: valueOut(r.current) })],
  delete: (s, [key]) => [s.ns.delete(key), () => null],
  list: (s, [limit, prefix]) => {
    const options = {};
    if (limit !== null) options.limit = limit;
    if (prefix !== null) options.prefix = prefix;
    return [s.ns.list(options), (r) => r.map(valueOut)];
  },
  increment: (s, [key, field, delta, ttl]) =>
    [s.ns.increment(key, field, delta, ttlOption(ttl)), valueOut],
  // A handle context (createHandleContext).
  create: (s, [kind, data]) => [s.handles.create(kindOf(kind), revive(data)), (h) => h],
  read: (s, [kind, handle]) => [s.handles.read(kindOf(kind), handle), recordOut],
  // The updater is the testbed's: asked with the data it is given.
  update: (s, [kind, handle]) => {
    const op = current.op;
    const updater = (data) => revive(ask({ k: 'updater', op, data: jsonOut(data) }));
    return [s.handles.update(kindOf(kind), handle, updater), recordOut];
  },
  // The work is the testbed's: it runs in the simulation, on the strand that called it.
  commit: (s, [kind, handle]) => {
    const work = (data) => {
      const ev = wait({ k: 'work', w: nextWork++, data: jsonOut(data) });
      return new Promise((resolve, reject) => works.set(ev.w, { resolve, reject, ev }));
    };
    return [s.handles.commit(kindOf(kind), handle, work),
      (r) => ({ status: r.status, handle: r.handle, result: jsonOut(r.result) })];
  },
  discard: (s, [kind, handle]) => [s.handles.discard(kindOf(kind), handle), () => null],
};

// a2's store core (createRedisStoreCore): answers in model/a2.h's shapes, as
// tests/js/a2/judge.mjs prints them (dates as epoch ms, undefined fields left out).
const undef = (v) => (v === null ? undefined : v);
// An event to append as a JavaScript caller's literal has it (the testbed's JSON sorts keys): the
// cause as {index, attempt, batchSize}.
const eventIn = (e) => {
  const x = {};
  if (e.id !== undefined) x.id = e.id;
  x.type = e.type;
  x.payload = e.payload;
  if (e.cause !== undefined) {
    x.cause = { index: e.cause.index, attempt: e.cause.attempt };
    if (e.cause.batchSize !== undefined) x.cause.batchSize = e.cause.batchSize;
  }
  if (e.lane !== undefined) x.lane = e.lane;
  x.settled = e.settled;
  return x;
};
Object.assign(methods, {
  append: (s, [session, events]) => [s.core.append(session, events.map(eventIn)),
    (r) => ({ events: rows(r.events), hasPending: r.hasPending })],
  readRows: (s, [session, after, through]) => {
    const opts = { afterIndex: after };
    if (through !== null) opts.throughIndex = through;
    return [s.core.read(session, opts), rows];
  },
  claim: (s, [o]) => [s.core.claimAvailable({ sessionId: o.sessionId, holder: o.holder,
    ttlMs: o.ttlMs, expiresAtMs: undef(o.expiresAtMs), excludeIndexes: o.excludeIndexes }),
  (r) => ({ outcome: r.outcome, events: r.outcome === 'claimed' ? rows(r.events) : [],
            retryAt: r.outcome === 'busy' ? plain(r).retryAt : 0 })],
  renew: (s, [session, holder, claims, ttl, expiresAt]) => [s.core.renewClaims({
    sessionId: session, holder, claims, ttlMs: ttl, expiresAtMs: undef(expiresAt) }),
  (r) => ({ renewed: r.renewed, superseded: r.superseded })],
  complete: (s, [session, index, attempt, events]) => [s.core.completeAttempt({
    sessionId: session, index, attempt, events: events.map(eventIn) }),
  (r) => ({ outcome: r.outcome, events: r.outcome === 'completed' ? rows(r.events) : [] })],
  fail: (s, [session, index, attempt, error, maxFailures]) => [s.core.failAttempt({
    sessionId: session, index, attempt, error, maxFailures }),
  (r) => ({ outcome: r.outcome, failureCount: r.failureCount })],
  readState: (s, [session, reducer]) => [s.core.readState(session, reducer),
    (r) => ({ snapshot: r.snapshot ? { index: r.snapshot.index, state: r.snapshot.state } : null,
              events: a2Shapes.events(r.events) })],
  putSnapshot: (s, [session, reducer, index, state]) =>
    [s.core.putSnapshot(session, reducer, index, state), () => null],
  presenceSet: (s, [ns, participant, values, meta]) => [
    s.core.presence.set(ns, participant, Object.fromEntries(values),
                        { seen: meta.seen, at: new Date(meta.at), ttlMs: meta.ttlMs }),
    (r) => (r === null ? null : plain(pick(r, ['participant', 'values', 'seen', 'at'])))],
  presenceRead: (s, [ns]) => [s.core.presence.read(ns), (list) => list.map((row) =>
    plain(pick(row, ['participant', 'field', 'value', 'seen', 'at', 'expiresAt'])))],
  listSessions: (s, [prefix, limit, cursor]) => {
    const options = { prefix, limit };
    if (cursor !== null) options.cursor = cursor;
    return [s.core.inspect.listSessions(options), (page) => ({
      sessions: page.sessions.map((x) => plain(pick(x, ['sessionId', 'eventCount',
        'pendingCount', 'failedCount', 'attemptCount', 'failureCount', 'firstEventAt',
        'updatedAt']))), cursor: page.cursor ?? null })];
  },
  listSnapshots: (s, [session]) => [s.core.inspect.listSnapshots(session), (list) =>
    list.map((x) => plain(pick(x, ['reducerName', 'index', 'updatedAt'])))],
  readEvents: (s, [session, after]) => [s.core.readEvents(session, after), a2Shapes.events],
  markWatched: (s, [session, ttl]) => [s.core.markWatched(session, ttl), () => null],
});

function startOp(m) {
  const space = spaces.get(m.id);
  ops.set(m.op, { client: m.id, roots: new Map(), anchors: new Map(), branches: [], strands: 0 });
  const ev = { op: m.op, strand: 0 };
  let promise;
  let answer = (v) => v;
  resume(ev, m.now, () => {
    try {
      const [p, out] = methods[m.m](space, m.a);
      promise = Promise.resolve(p);
      answer = out;
    } catch (e) {
      promise = Promise.reject(e);
    }
  });
  const exp = () => space.ns?.lastExpiresAtMs ?? null;
  promise.then(
    (r) => events.push({ k: 'done', op: m.op, v: answer(r), exp: exp() }),
    (e) => {
      const fail = { k: 'fail', op: m.op, name: String(e?.name), message: String(e?.message),
                     exp: exp() };
      if (workErrors.has(e)) fail.work = workErrors.get(e);
      if (e?.name === 'HandleError' || e?.name === 'A2Error') {
        fail.code = e.code;
        fail.details = jsonOut(e.details ?? {});
        if (e.cause !== undefined) {
          fail.cause = String(e.cause?.message ?? e.cause);
          fail.causeName = String(e.cause?.name);
        }
      }
      if (e instanceof TypeError) fail.name = 'TypeError';
      events.push(fail);
    });
}

// An operation the testbed no longer runs (it ended, or its actor crashed): what it waits on.
function forget(op) {
  ops.delete(op);
  for (const [id, p] of pending) if (p.ev.op === op) pending.delete(id);
  for (const [id, t] of timers) if (t.ev.op === op) timers.delete(id);
  for (const [id, w] of works) if (w.ev.op === op) works.delete(id);
}

async function handle(m) {
  spin = m.s === 1;
  for (const op of m.ended ?? []) forget(op);
  switch (m.k) {
    case 'open': {
      const sdk = await sdkOf(m.version, m.dir);
      const runtime = m.memory ? sdk.state.createMemoryProviderRuntimeState()
        : sdk.state.createRedisProviderRuntimeState({
          redisUrl: 'redis://testbed', providerId: m.provider ?? undefined, __redisClient: client });
      const o = m.options;
      const ns = runtime.forConnection(m.connection ?? undefined).namespace(m.name, {
        scope: o.scope, defaultTtl: `${o.defaultTtl}ms`, maxTtl: `${o.maxTtl}ms`,
        maxEntries: o.maxEntries, maxValueBytes: o.maxValueBytes });
      watchTiming(ns);
      spaces.set(m.id, { ns });
      return {};
    }
    case 'state': {  // a provider runtime state the handle contexts of one client share
      const sdk = await sdkOf(m.version, m.dir);
      states.set(m.id, m.memory ? sdk.state.createMemoryProviderRuntimeState()
        : sdk.state.createRedisProviderRuntimeState({
          redisUrl: 'redis://testbed', providerId: m.provider ?? undefined, __redisClient: client }));
      return {};
    }
    case 'handles': {  // createHandleContext on a state opened before
      const sdk = await sdkOf(m.version, m.dir);
      const handles = sdk.handle.createHandleContext({
        providerId: m.provider,
        state: states.get(m.state),
        request: m.connection === null ? {} : { connectionId: m.connection },
        commitLeaseMs: m.leaseMs,
        onTelemetry: (t) => events.push({
          k: 'tel', op: current?.op ?? null,
          t: { kind: t.kind, type: t.type, operation: t.operation, outcome: t.outcome,
               normalization: t.normalization, words: t.words, providerId: t.providerId } }),
      });
      spaces.set(m.id, { handles });
      return {};
    }
    case 'a2': {  // createRedisStoreCore of the seeds' a2 (or the build in dir)
      const a2 = await a2Of(m.dir);
      const id = m.id;
      const core = a2.createRedisStoreCore({
        notify: (sessionId, count) => events.push({ k: 'notify', op: current?.op ?? null,
                                                    s: sessionId, n: count }),
        call: (command, ...args) => client.call(command, ...args),
        clock: { now: () => new Date() },
        ids: () => ask({ k: 'id', client: id }),
        keyPrefix: m.prefix,
      });
      spaces.set(m.id, { core });
      return {};
    }
    case 'close':
      spaces.delete(m.id);
      states.delete(m.id);
      for (const [op, o] of ops) if (o.client === m.id) forget(op);
      return {};
    case 'op':
      startOp(m);
      break;
    case 'reply': {
      const p = pending.get(m.call);
      if (!p) break;  // the call of an operation forgotten (its client closed): nobody listens
      pending.delete(m.call);
      resume(p.ev, m.now, () => {
        if (m.x !== undefined) {
          // A transport failure: ioredis's texts for a command that timed out (commandTimeout)
          // and for a connection that broke.
          p.reject(new Error(m.x === 'timeout' ? 'Command timed out' : 'Connection is closed.'));
        } else {
          const r = replyIn(m.r);
          if (r instanceof ReplyError) p.reject(r);
          else p.resolve(r);
        }
      });
      break;
    }
    case 'fire':
      fire(m.t, m.now);
      break;
    case 'work': {  // a work's end: its result, or the text of what it threw
      const w = works.get(m.w);
      if (!w) break;
      works.delete(m.w);
      resume(w.ev, m.now, () => {
        if (m.x !== undefined) {
          const error = new Error(m.x);
          workErrors.set(error, m.w);
          w.reject(error);
        } else {
          w.resolve(revive(m.v));
        }
      });
      break;
    }
    default:
      throw new Error(`unknown message ${m.k}`);
  }
  await new Promise((resolve) => setImmediate(resolve));
  current = null;
  if (uncaught !== null) {
    const why = uncaught;
    uncaught = null;
    events = [];
    throw { uncaught: why };
  }
  splitStrands();
  const out = { ev: events };
  events = [];
  return out;
}

// The messages, one line each, answered in order: the testbed sends the next one only after
// the answer to the last, so a blocking read waits for it (a pipe's round trip is most of a
// call's cost, and this one skips the event loop's poll).
for (;;) {
  const line = readLine();
  let out;
  try {
    out = await handle(JSON.parse(line));
  } catch (e) {
    out = { error: e?.uncaught ?? String(e?.stack ?? e) };
  }
  writeLine(out);
}
