// Stand-in for idempotent-replay.ts (not in seed 003): the rows already stored, in the order
// of the retried batch; `existing` arrives ordered so (real/a2/store.h documents the choice).
export function idempotentReplay<E, R>(_events: E[], existing: R[]): R[] {
  return existing
}
