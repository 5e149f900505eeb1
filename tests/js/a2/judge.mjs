// The seed's own a2 store (tests/js/seeds/a2-0.5.0/store-redis-core.ts, seed 003 verbatim, its
// types stripped by TypeScript) as the judge of the C++ port (real/a2/store.cc): it makes the
// calls of a plan file against `testbed serve` and prints each call's answer in the shape
// properties/a2/a2_sequential.cc's Perform gives the port's (model/a2.h's shapes), one JSON
// line per call. Before each call it sets the server's clock to the call's `now` (TESTBED TIME
// SET) and sends ECHO "judge: call N", which marks in serve's --record capture (where TESTBED
// commands are not written) where each call's commands begin.
//   node judge.mjs PLANS.json PORT
// The stand-ins for the files the seed imports but does not show are beside this file.
import { readFileSync } from 'node:fs';
import Redis from 'ioredis';
import { loadA2 } from '../sdk.mjs';
import { events, pick, plain, rows } from './shapes.mjs';

const { createRedisStoreCore } = await loadA2();
const [plansFile, port] = process.argv.slice(2);
const plans = JSON.parse(readFileSync(plansFile, 'utf8'));
const redis = new Redis({ host: '127.0.0.1', port: Number(port), lazyConnect: true,
                          maxRetriesPerRequest: 0 });
await redis.connect();
await redis.call('TESTBED', 'TIME', 'FREEZE');

let now = 0;
let ids = [];
let notified = null;  // what notify last said (the port's Perform reports it the same way)
const core = createRedisStoreCore({
  notify: (_sessionId, count) => { notified = count; },
  call: (command, ...args) => redis.call(command, ...args),
  clock: { now: () => new Date(now) },
  ids: () => (ids.length > 0 ? ids.shift() : 'judge-ran-out-of-ids'),
  keyPrefix: plans.prefix,
});

// Perform (properties/a2/a2_sequential.cc), call for call.
async function perform(p) {
  switch (p.op) {
    case 'append': {
      const r = await core.append(p.session, p.events);
      return { events: rows(r.events), hasPending: r.hasPending };
    }
    case 'claim': {
      const r = await core.claimAvailable({ sessionId: p.session, holder: p.holder,
                                            ttlMs: p.ttl, excludeIndexes: p.exclude });
      const a = { outcome: r.outcome };
      if (r.outcome === 'claimed') a.events = rows(r.events);
      if (r.outcome === 'busy') a.retryAt = plain(r).retryAt;
      return a;
    }
    case 'renew': {
      const r = await core.renewClaims({ sessionId: p.session, holder: p.holder,
                                         claims: p.refs, ttlMs: p.ttl });
      return { renewed: r.renewed, superseded: r.superseded };
    }
    case 'complete': {
      const r = await core.completeAttempt({ sessionId: p.session, index: p.index,
                                             attempt: p.attempt, events: p.children });
      const a = { outcome: r.outcome };
      if (r.outcome === 'completed') a.events = rows(r.events);
      return a;
    }
    case 'fail': {
      const r = await core.failAttempt({ sessionId: p.session, index: p.index, attempt: p.attempt,
                                         error: 'boom', maxFailures: p.maxFailures });
      return { outcome: r.outcome, failureCount: r.failureCount };
    }
    case 'read': {
      const opts = { afterIndex: p.after };
      if (p.through !== undefined) opts.throughIndex = p.through;
      return rows(await core.read(p.session, opts));
    }
    case 'readEvents':
      return events(await core.readEvents(p.session, p.after));
    case 'readState': {
      const r = await core.readState(p.session, p.reducer);
      return { snapshot: r.snapshot ? { index: r.snapshot.index, state: r.snapshot.state } : null,
               events: events(r.events) };
    }
    case 'putSnapshot':
      await core.putSnapshot(p.session, p.reducer, p.index, p.state);
      return {};
    case 'presenceSet': {
      const values = Object.fromEntries(p.values);
      const r = await core.presence.set(p.ns, p.participant, values,
                                        { seen: p.seen, at: new Date(p.at), ttlMs: p.ttl });
      return r === null ? null : plain(pick(r, ['participant', 'values', 'seen', 'at']));
    }
    case 'presenceRead':
      return (await core.presence.read(p.ns)).map((row) =>
        plain(pick(row, ['participant', 'field', 'value', 'seen', 'at', 'expiresAt'])));
    case 'listSessions': {
      const options = { prefix: p.session, limit: p.limit };
      if (p.cursor !== undefined) options.cursor = p.cursor;
      const page = await core.inspect.listSessions(options);
      return { sessions: page.sessions.map((s) => plain(pick(s, ['sessionId', 'eventCount',
        'pendingCount', 'failedCount', 'attemptCount', 'failureCount', 'firstEventAt',
        'updatedAt']))), cursor: page.cursor ?? null };
    }
    case 'listSnapshots':
      return (await core.inspect.listSnapshots(p.session)).map((s) =>
        plain(pick(s, ['reducerName', 'index', 'updatedAt'])));
    case 'markWatched':
      await core.markWatched(p.session, p.ttl);
      return {};
    default:
      throw new Error(`unknown op ${p.op}`);
  }
}

let calls = 0;
for (const p of plans.calls) {
  now = p.now;
  ids = [...(p.ids ?? [])];
  await redis.call('TESTBED', 'TIME', 'SET', String(now));
  await redis.echo(`judge: call ${calls}`);
  calls += 1;
  let answer;
  let note;
  notified = null;
  try {
    answer = await perform(p);
    if (p.op === 'append' || (p.op === 'complete' && answer.outcome === 'completed'))
      answer.notified = notified;
  } catch (e) {
    if (e && e.name === 'A2Error') answer = { error: e.code };
    else if (e instanceof TypeError) answer = { error: 'TypeError' };
    else throw e;
    note = e.message;
  }
  console.log(JSON.stringify({ op: p.op, answer, note }));
}
redis.disconnect();
