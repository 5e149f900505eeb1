// a2's answers in model/a2.h's shapes, as the port's callers print them: dates as epoch ms,
// undefined fields left out (what JSON.stringify of the answer gives). Shared by the judge
// (judge.mjs) and the testbed's driver (real/js/driver.mjs).
export const plain = (value) => JSON.parse(JSON.stringify(value, function replacer(key, v) {
  return this[key] instanceof Date ? this[key].getTime() : v;
}));
export const pick = (o, keys) => Object.fromEntries(keys.map((k) => [k, o[k]]));
export const EVENT = ['id', 'type', 'payload', 'index', 'sessionId', 'createdAt'];
export const STORED = [...EVENT, 'cause', 'lane', 'processedAt', 'processedByAttempt',
  'returnedEventIds', 'firstClaimedAt', 'lastClaimedAt', 'attemptCount', 'claimHolder',
  'claimExpiresAt', 'failureCount', 'lastFailedAt', 'lastFailedAttempt', 'lastError', 'failedAt'];
// A row the store core left undefined (completeAttempt's replay of an index it could not read
// back, ts 1159: `byIndex.get(...)!`) is null here; the port holds an empty row there.
export const rows = (list) => list.map((e) => (e === undefined || e === null ? null
  : pick(plain(e), STORED)));
export const events = (list) => list.map((e) => pick(plain(e), EVENT));
