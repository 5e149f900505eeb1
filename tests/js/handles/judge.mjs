// The seed's own handle runtime (tests/js/seeds/handles-2.2.0-beta.61/handle.js, seed 002
// verbatim) on the seeds' state runtime (tests/js/state/<version>/state.ts) as the judge of the
// C++ port (real/handles/handle.cc): it makes the calls of a plan file against `testbed serve`
// and prints each call's answer and telemetry, one JSON line per call, in the shape
// tests/port_fidelity_handles_test.cc gives the port's. randomInt and randomUUID draw from the
// testbed's PRNG with the port's seed (crypto.mjs, mapped in by hooks.mjs); sdk.mjs's
// judgeCalls sets the clocks and marks each call in serve's --record capture.
//   node judge.mjs PLANS.json PORT
import { readFileSync } from 'node:fs';
import { register } from 'node:module';
import Redis from 'ioredis';

register('./hooks.mjs', import.meta.url);
const [plansFile, port] = process.argv.slice(2);
const plans = JSON.parse(readFileSync(plansFile, 'utf8'));
globalThis.__handleWords = plans.words;
const { seedJudgePrng } = await import('./crypto.mjs');
const { judgeCalls, loadSdk } = await import('../sdk.mjs');
const sdk = await loadSdk(plans.stateVersion);
seedJudgePrng(plans.prngSeed);

const redis = new Redis({ host: '127.0.0.1', port: Number(port), lazyConnect: true,
                          maxRetriesPerRequest: 0 });
await redis.connect();
await redis.call('TESTBED', 'TIME', 'FREEZE');

// A kind as defineHandleKind would give it; its schema accepts every value (the port's choice,
// real/handles/handle.h).
const kinds = Object.fromEntries(Object.entries(plans.kinds).map(([name, k]) =>
  [name, { ...k, schema: { safeParse: (data) => ({ success: true, data }) } }]));
let telemetry = [];
const handles = sdk.handle.createHandleContext({
  providerId: plans.provider,
  state: sdk.state.createRedisProviderRuntimeState({
    redisUrl: 'redis://judge', providerId: plans.provider, __redisClient: redis }),
  request: plans.connection === null ? {} : { connectionId: plans.connection },
  commitLeaseMs: plans.commitLeaseMs,
  onTelemetry: (t) => telemetry.push({ kind: t.kind, type: t.type, operation: t.operation,
                                       outcome: t.outcome, normalization: t.normalization,
                                       words: t.words }),
});

const record = (r) => ({ handle: r.handle, kind: r.kind, status: r.status, data: r.data,
                         ...('result' in r ? { result: r.result } : {}),
                         createdAt: r.createdAt, expiresAt: r.expiresAt });

// The data or result of a call: JSON.parse of its text, and NaN at member `nanAt` if it names
// one (a value JSON cannot carry).
const value = (text, c) => {
  const v = JSON.parse(text);
  if (c.nanAt !== undefined) v[c.nanAt] = NaN;
  return v;
};

async function perform(c) {
  const kind = kinds[c.kind];
  switch (c.op) {
    case 'create': return { handle: await handles.create(kind, value(c.dataJson, c)) };
    case 'read': return { record: record(await handles.read(kind, c.handle)) };
    case 'update':
      return { record: record(await handles.update(kind, c.handle, () => value(c.dataJson, c))) };
    case 'commit': {
      const r = await handles.commit(kind, c.handle, async () => {
        if (c.workError !== undefined) throw new Error(c.workError);
        return value(c.resultJson, c);
      });
      return { status: r.status, handle: r.handle, result: r.result };
    }
    case 'discard': await handles.discard(kind, c.handle); return {};
    case 'foreign':  // another writer's bytes under a handle's key (both sides send it)
      await redis.call('SET', c.redisKey, Buffer.from(c.raw64, 'base64'));
      return {};
    default:
      throw new Error(`unknown op ${c.op}`);
  }
}

await judgeCalls(redis, plans.calls, (c) => { telemetry = []; return perform(c); }, (e, c) => {
  if (e && e.name === 'HandleError')
    return { error: e.code, message: e.message, details: e.details ?? {} };
  if (e instanceof Error && c.workError !== undefined && e.message === c.workError)
    return { workError: e.message };
  return { thrown: String(e && e.name) };
}, () => ({ telemetry }));
redis.disconnect();
