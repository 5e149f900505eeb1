// Stand-in for internal.ts (not in seed 003): a record without a prototype, so that any
// field name (`__proto__` too) is an own property, in insertion order.
export function nullProtoRecord<T = unknown>(): Record<string, T> {
  return Object.create(null) as Record<string, T>
}
