// The seeds' own state runtime (tests/js/state/<version>/state.ts, through sdk.mjs) as three
// concurrent clients of a redis-server the test spawned and records under MONITOR, with another
// application's calls interleaved (its own keys, a script of its own, INCR): the capture the
// testbed imports, replays and judges (tests/import_test.cc, issue 61 item 6).
//   node capture.mjs VERSION PORT CLOCK_FILE SEED OPS
// CLOCK_FILE is the spawned server's clock (real/redis_server.h: microseconds, little-endian,
// read by the server's time shim): before each operation the clients' clock and the server's
// move on together, so the scripts' "now" and the server's expiry agree, as on one machine.
import { closeSync, openSync, writeSync } from 'node:fs';
import Redis from 'ioredis';
import { clock, loadSdk } from './sdk.mjs';

const [version, port, clockFile, seedText, opsText] = process.argv.slice(2);
const sdk = await loadSdk(version);
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

const connect = async () => {
  const r = new Redis({ host: '127.0.0.1', port: Number(port), lazyConnect: true,
                        maxRetriesPerRequest: 0 });
  await r.connect();
  return r;
};

// One client: its own connection and runtime, operations one after another on two keys.
async function client(id, ops) {
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
await Promise.all([client(0, ops), client(1, ops), client(2, ops), other(ops)]);
closeSync(clockFd);
console.log('capture: done');
