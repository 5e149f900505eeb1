// Stand-in for store-codec.ts (not in seed 003): returned event ids are stored as a JSON array
// of strings; an empty Lua table comes back from cjson as "{}" and means none (the choice
// real/a2/store.cc's DecodeReturnedEventIds makes).
export function decodeReturnedEventIds(raw: string): string[] {
  const value: unknown = JSON.parse(raw)
  if (value !== null && typeof value === 'object' && !Array.isArray(value) &&
      Object.keys(value).length === 0) return []
  if (!Array.isArray(value) || !value.every((id) => typeof id === 'string')) {
    throw new TypeError('stored event has invalid returned event ids')
  }
  return value
}
