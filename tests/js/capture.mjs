// The seeds' own code as three concurrent clients of a redis-server the test spawned and
// records under MONITOR, with another application's calls interleaved (its own keys, a script
// of its own, INCR): the captures the testbed imports, replays and judges (tests/import_test.cc,
// issue 61 item 6). SYSTEM is
//   state     the state runtime (tests/js/state/<VERSION>/state.ts, through sdk.mjs)
//   handles   the handle runtime (seed 002's handle.js verbatim) on that state runtime
//   a2        a2's store (seed 003's store-redis-core.ts; VERSION is 0.5.0)
//   node capture.mjs SYSTEM VERSION PORT CLOCK_FILE SEED OPS
// CLOCK_FILE is the spawned server's clock (real/redis_server.h: microseconds, little-endian,
// read by the server's time shim): before each operation the clients' clock and the server's
// move on together, so the scripts' "now" and the server's expiry agree, as on one machine.
import { closeSync, openSync, writeSync } from 'node:fs';
import Redis from 'ioredis';
import { clock, loadA2, loadSdk } from './sdk.mjs';

const [system, version, port, clockFile, seedText, opsText] = process.argv.slice(2);
const clockFd = openSync(clockFile, 'r+');
let now = 1767225600000;  // the spawned server's start (sim::kDefaultEpochMs)
function advance(ms) {
  now += ms;
  clock.now = now;
  const micros = Buffer.alloc(8);
  micros.writeBigInt64LE(BigInt(now) * 1000n);
  writeSync(clockFd, micros, 0, 8, 0);
}

let seed = Number(seedText) >>> 0;  // mulberry32: one stream for the whole capture
function random() {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (n) => Math.floor(random() * n);

// Words for handles (the runtime's ISSUABLE_HANDLE_WORDS, tests/js/handles/handle-wordlist.ts):
// 256 distinct consonant-vowel words, from the capture's own stream.
function words() {
  const out = new Set();
  while (out.size < 256) {
    let w = '';
    for (let i = 0; i < 5 + pick(3); i += 1)
      w += i % 2 === 0 ? 'bcdfghjklmnprstvwz'[pick(18)] : 'aeiou'[pick(5)];
    out.add(w);
  }
  return [...out];
}

const connect = async () => {
  const r = new Redis({ host: '127.0.0.1', port: Number(port), lazyConnect: true,
                        maxRetriesPerRequest: 0 });
  await r.connect();
  return r;
};

// A state client: its own connection and runtime, operations one after another on two keys.
async function stateClient(sdk, id, ops) {
  const redis = await connect();
  const runtime = sdk.state.createRedisProviderRuntimeState({
    redisUrl: `redis://capture-${id}`, providerId: 'provider-under-test', __redisClient: redis });
  const ns = runtime.forConnection('conn-1').namespace('ns', {
    defaultTtl: '60000ms', maxTtl: '600000ms', maxEntries: 100, maxValueBytes: 10000 });
  const seen = new Map();  // key -> the version this client last read
  for (let n = 0; n < ops; n += 1) {
    advance(1 + pick(3));
    const key = `k${pick(2)}`;
    const value = { client: id, n };
    try {
      // The ports' plain mix, writes first: 2 gets, 5 sets, 2 compare-and-sets, 1 delete in 10.
      const draw = pick(10);
      if (draw < 2) {
        const v = await ns.get(key);
        seen.set(key, v ? v.version : 0);
      } else if (draw < 7) {
        seen.set(key, (await ns.set(key, value)).version);
      } else if (draw < 9) {
        const r = await ns.compareAndSet(key, seen.get(key) ?? 0, value);
        seen.set(key, r.ok ? r.value.version : (r.current ? r.current.version : 0));
      } else {
        await ns.delete(key);
      }
    } catch (e) {
      console.log(`client ${id}: ${e && e.message}`);
    }
    await new Promise((resolve) => { setImmediate(resolve); });  // let the others interleave
  }
  redis.disconnect();
}

// A handles client: its own connection, state runtime and handle context, on drafts of one
// connection that every client creates, reads, updates, commits and discards (the newest ones). A commit's work
// runs while the clock moves on in real time (the runtime's renewal timer is a real timer: the
// lease is 40 ms, so its renewals show), and sometimes fails (the draft is restored).
const drafts = [];  // every client's created drafts
const draftKind = {
  name: 'draft', type: 'draft', access: 'bound', fieldName: 'draftHandle',
  issuedBy: 'createDraft', idleTtlMs: 2000, maxTtlMs: 8000, resultTtlMs: 3000, maxEntries: 20,
  maxValueBytes: 600, wordCount: 2, schema: { safeParse: (data) => ({ success: true, data }) } };
async function handlesClient(sdk, id, ops) {
  const redis = await connect();
  const handles = sdk.handle.createHandleContext({
    providerId: 'provider-under-test',
    state: sdk.state.createRedisProviderRuntimeState({
      redisUrl: `redis://capture-${id}`, providerId: 'provider-under-test',
      __redisClient: redis }),
    request: { connectionId: 'session-1' },
    commitLeaseMs: 40,
  });
  for (let n = 0; n < ops; n += 1) {
    advance(1 + pick(3));
    // One of the two newest drafts (a commit: the newest), so that the clients' commits meet.
    const draft = drafts.length > 0 ? drafts[drafts.length - 1 - pick(Math.min(2, drafts.length))]
                                    : null;
    try {
      const draw = pick(10);
      if (draw < 3 || draft === null) {
        drafts.push(await handles.create(draftKind, { client: id, n }));
      } else if (draw < 4) {
        await handles.read(draftKind, draft);
      } else if (draw < 5) {
        await handles.update(draftKind, draft, (data) => ({ ...data, updated: n }));
      } else if (draw < 9) {
        const steps = 2 + pick(5);
        const fails = pick(4) === 0;
        await handles.commit(draftKind, drafts[drafts.length - 1], async () => {
          for (let s = 0; s < steps; s += 1) {
            advance(5);
            await new Promise((resolve) => { setTimeout(resolve, 10); });
          }
          if (fails) throw new Error('upstream failed');
          return { client: id, n };
        });
      } else {
        await handles.discard(draftKind, draft);
      }
    } catch (e) {
      const expected = (e && e.name === 'HandleError') || (e && e.message === 'upstream failed');
      if (!expected) console.log(`client ${id}: ${e && e.message}`);
    }
    await new Promise((resolve) => { setImmediate(resolve); });
  }
  redis.disconnect();
}

// An a2 client: its own connection and store, on one session every client appends to, claims
// from (a lease of 200 ms), renews, completes or fails, and reads.
async function a2Client(a2, id, ops) {
  const redis = await connect();
  let made = 0;
  const store = a2.createRedisStoreCore({
    call: (command, ...args) => redis.call(command, ...args),
    clock: { now: () => new Date(now) },
    ids: () => `e-${id}-${(made += 1)}`,
    keyPrefix: 'a2',
  });
  const holder = `worker-${id}`;
  let claimed = [];  // what this client's last claim gave it
  for (let n = 0; n < ops; n += 1) {
    advance(1 + pick(60));
    try {
      const draw = pick(10);
      if (draw < 3) {
        await store.append('s1', [{ type: 'job', payload: { client: id, n } }]);
      } else if (draw < 5 || claimed.length === 0) {
        const r = await store.claimAvailable({ sessionId: 's1', holder, ttlMs: 200 });
        claimed = r.outcome === 'claimed' ? r.events : [];
      } else if (draw < 6) {
        await store.renewClaims({ sessionId: 's1', holder, ttlMs: 200,
          claims: claimed.map((e) => ({ index: e.index, attempt: e.attemptCount })) });
      } else if (draw < 8) {
        const e = claimed.shift();
        await store.completeAttempt({ sessionId: 's1', index: e.index, attempt: e.attemptCount,
                                      events: [] });
      } else if (draw < 9) {
        const e = claimed.shift();
        await store.failAttempt({ sessionId: 's1', index: e.index, attempt: e.attemptCount,
                                  error: 'boom', maxFailures: 3 });
      } else {
        await store.read('s1', { afterIndex: 0 });
      }
    } catch (e) {
      if (!(e && e.name === 'A2Error')) console.log(`client ${id}: ${e && e.message}`);
    }
    await new Promise((resolve) => { setImmediate(resolve); });
  }
  redis.disconnect();
}

// Another application on the same server: keys, a script and counters of its own.
async function other(ops) {
  const redis = await connect();
  for (let n = 0; n < ops; n += 1) {
    await redis.call('INCR', 'other:app:hits');
    await redis.call('EVAL', "return redis.call('SET', KEYS[1], ARGV[1])", 1, 'other:app:last',
                     String(n));
    await new Promise((resolve) => { setImmediate(resolve); });
  }
  redis.disconnect();
}

const ops = Number(opsText);
advance(0);
let client;
if (system === 'state') {
  const sdk = await loadSdk(version);
  client = (id) => stateClient(sdk, id, ops);
} else if (system === 'handles') {
  globalThis.__handleWords = words();
  const sdk = await loadSdk(version);
  client = (id) => handlesClient(sdk, id, ops);
} else if (system === 'a2') {
  const a2 = await loadA2();
  client = (id) => a2Client(a2, id, ops);
} else {
  throw new Error(`capture.mjs: no system ${system} (state, handles, a2)`);
}
await Promise.all([client(0), client(1), client(2), other(ops)]);
closeSync(clockFd);
console.log('capture: done');
