// Stand-in for contract.ts (not in seed 003): only types are imported from it.
export type PresencePatch = {
  participant: string
  values: Record<string, unknown>
  seen: number
  at: Date
}
