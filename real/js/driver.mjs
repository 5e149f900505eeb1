// The seeds' own JavaScript as a client under test inside the simulation (testbed --client js).
// The testbed starts one of these per job and drives it over stdin/stdout, one JSON line in, one
// JSON line out (real/js_host.h says the protocol). Every Redis call the SDK makes goes out as a
// "call" event and waits for the world's reply; Date.now() and `new Date()` read the virtual
// clock of the actor whose code runs. Node holds no real socket and no real timer: after each
// message it runs until every operation waits on a call (setImmediate comes after every
// microtask), then reports what happened.
//   node driver.mjs
import { readSync, writeSync } from 'node:fs';
import { clock, importSdk, loadSdk } from '../../tests/js/sdk.mjs';

// The operation whose code runs: its Redis calls are its. Only one operation's code runs per
// message (the one started, or the one whose call was answered): every other one waits on a
// call of its own.
let current = null;
const sdks = new Map();                // `seeds:<version>` or a build's directory -> its modules
const spaces = new Map();              // id -> { ns }
const pending = new Map();             // call id -> { resolve, reject, op: {id, client} }
let events = [];
let nextCall = 1;

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
      const op = current;
      const call = nextCall++;
      events.push({ k: 'call', op: op.id, call, argv });
      return new Promise((resolve, reject) => pending.set(call, { resolve, reject, op }));
    };
  },
});

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

// The seeds' SDK of `version` (dir null), or the build in `dir` (--client-dir, a mutant of
// testbed mutate), which is of the version under test.
async function sdkOf(version, dir) {
  const key = dir ?? `seeds:${version}`;
  if (!sdks.has(key)) sdks.set(key, await (dir ? importSdk(dir) : loadSdk(version)));
  return sdks.get(key);
}

const ttlOption = (ms) => (ms === null || ms === undefined ? undefined : { ttl: `${ms}ms` });
const methods = {
  get: (ns, [key]) => ns.get(key),
  set: (ns, [key, json, ttl]) => ns.set(key, JSON.parse(json), ttlOption(ttl)),
  cas: (ns, [key, expected, json, ttl]) =>
    ns.compareAndSet(key, expected, JSON.parse(json), ttlOption(ttl)),
  delete: (ns, [key]) => ns.delete(key),
  list: (ns, [limit, prefix]) => {
    const options = {};
    if (limit !== null) options.limit = limit;
    if (prefix !== null) options.prefix = prefix;
    return ns.list(options);
  },
  increment: (ns, [key, field, delta, ttl]) => ns.increment(key, field, delta, ttlOption(ttl)),
};

// A StateValue with its value as JSON text (members in their order).
const valueOut = (v) => (v === null || v === undefined ? null : {
  key: v.key, value: JSON.stringify(v.value), version: v.version, expiresAt: v.expiresAt,
  createdAt: v.createdAt, updatedAt: v.updatedAt,
});
function resultOut(method, r) {
  switch (method) {
    case 'list': return r.map(valueOut);
    case 'cas': return { ok: r.ok, value: valueOut(r.value), current: valueOut(r.current) };
    case 'delete': return null;
    default: return valueOut(r);
  }
}

function startOp(m) {
  const space = spaces.get(m.id);
  clock.now = m.now;
  current = { id: m.op, client: m.id };
  let promise;
  try {
    promise = Promise.resolve(methods[m.m](space.ns, m.a));
  } catch (e) {
    promise = Promise.reject(e);
  }
  promise.then(
    (r) => events.push({ k: 'done', op: m.op, v: resultOut(m.m, r),
                         exp: space.ns.lastExpiresAtMs ?? null }),
    (e) => events.push({ k: 'fail', op: m.op, name: String(e?.name), message: String(e?.message),
                         exp: space.ns.lastExpiresAtMs ?? null }));
}

async function handle(m) {
  switch (m.k) {
    case 'open': {
      const sdk = await sdkOf(m.version, m.dir);
      const runtime = sdk.state.createRedisProviderRuntimeState({
        redisUrl: 'redis://testbed', providerId: m.provider ?? undefined, __redisClient: client });
      const o = m.options;
      const ns = runtime.forConnection(m.connection ?? undefined).namespace(m.name, {
        scope: o.scope, defaultTtl: `${o.defaultTtl}ms`, maxTtl: `${o.maxTtl}ms`,
        maxEntries: o.maxEntries, maxValueBytes: o.maxValueBytes });
      watchTiming(ns);
      spaces.set(m.id, { ns });
      return {};
    }
    case 'close':
      spaces.delete(m.id);
      for (const [c, p] of pending) if (p.op.client === m.id) pending.delete(c);
      return {};
    case 'op':
      startOp(m);
      break;
    case 'reply': {
      const p = pending.get(m.call);
      pending.delete(m.call);
      clock.now = m.now;
      current = p.op;
      if (m.x !== undefined) {
        // A transport failure: ioredis's texts for a command that timed out (commandTimeout)
        // and for a connection that broke.
        p.reject(new Error(m.x === 'timeout' ? 'Command timed out' : 'Connection is closed.'));
      } else {
        const r = replyIn(m.r);
        if (r instanceof ReplyError) p.reject(r);
        else p.resolve(r);
      }
      break;
    }
    default:
      throw new Error(`unknown message ${m.k}`);
  }
  await new Promise((resolve) => setImmediate(resolve));
  const out = { ev: events };
  events = [];
  return out;
}

// The messages, one line each, answered in order: the testbed sends the next one only after
// the answer to the last, so a blocking read waits for it (a pipe's round trip is most of a
// call's cost, and this one skips the event loop's poll).
const buffer = Buffer.alloc(1 << 16);
let input = '';
for (;;) {
  let end;
  while ((end = input.indexOf('\n')) < 0) {
    const n = readSync(0, buffer, 0, buffer.length, null);
    if (n === 0) process.exit(0);
    input += buffer.toString('utf8', 0, n);
  }
  const line = input.slice(0, end);
  input = input.slice(end + 1);
  let out;
  try {
    out = await handle(JSON.parse(line));
  } catch (e) {
    out = { error: String(e?.stack ?? e) };
  }
  writeSync(1, `${JSON.stringify(out)}\n`);
}
