// The seeds' own state runtime (tests/js/state/<version>/state.ts: seed 000 for beta24, seed 001
// for beta30, hidden lines filled as tests/js/state/README.md says) as the judge of the C++ port
// (real/state/v2.cc): it makes the calls of a plan file against `testbed serve` and prints each
// call's answer, one JSON line per call, in the shape tests/port_fidelity_state_test.cc gives
// the port's (sdk.mjs's judgeCalls sets the clocks and marks each call in the capture).
//   node judge.mjs PLANS.json PORT
import { readFileSync } from 'node:fs';
import Redis from 'ioredis';
import { judgeCalls, loadSdk, stateValue } from '../sdk.mjs';

const [plansFile, port] = process.argv.slice(2);
const plans = JSON.parse(readFileSync(plansFile, 'utf8'));
const sdk = await loadSdk(plans.version);
const redis = new Redis({ host: '127.0.0.1', port: Number(port), lazyConnect: true,
                          maxRetriesPerRequest: 0 });
await redis.connect();
await redis.call('TESTBED', 'TIME', 'FREEZE');

const runtime = sdk.state.createRedisProviderRuntimeState({
  redisUrl: 'redis://judge', providerId: plans.provider, __redisClient: redis });
// Each namespace as a provider's code opens it: forConnection(connection) (null: undefined),
// then namespace(name, options); durations as "<ms>ms".
const spaces = plans.namespaces.map((n) => runtime.forConnection(n.connection ?? undefined)
  .namespace(n.name, { scope: n.scope, defaultTtl: `${n.defaultTtl}ms`, maxTtl: `${n.maxTtl}ms`,
                       maxEntries: n.maxEntries, maxValueBytes: n.maxValueBytes }));
const ttl = (c) => (c.ttl === undefined ? undefined : { ttl: `${c.ttl}ms` });

async function perform(c) {
  const ns = spaces[c.ns];
  const value = c.valueJson === undefined ? undefined : JSON.parse(c.valueJson);
  switch (c.op) {
    case 'get': return { value: stateValue(await ns.get(c.key)) };
    case 'set': return { value: stateValue(await ns.set(c.key, value, ttl(c))) };
    case 'cas': {
      const r = await ns.compareAndSet(c.key, c.expected, value, ttl(c));
      return r.ok ? { ok: true, value: stateValue(r.value) }
                  : { ok: false, current: stateValue(r.current) };
    }
    case 'delete': await ns.delete(c.key); return {};
    case 'list': {
      const options = {};
      if (c.limit !== undefined) options.limit = c.limit;
      if (c.prefix !== undefined) options.prefix = c.prefix;
      return { rows: (await ns.list(options)).map(stateValue) };
    }
    case 'increment':
      return { value: stateValue(await ns.increment(c.key, c.field, c.delta, ttl(c))) };
    case 'foreign':  // another writer's bytes under the key (not the SDK: both sides send it)
      await redis.call('SET', c.redisKey, Buffer.from(c.raw64, 'base64'));
      return {};
    default:
      throw new Error(`unknown op ${c.op}`);
  }
}

// The SDK's error by its message; anything else (a TypeError) by its name.
await judgeCalls(redis, plans.calls, perform, (e) =>
  (e && e.name === 'UnsupportedProviderStateError' ? { error: e.message }
                                                   : { thrown: String(e && e.name) }));
redis.disconnect();
