// Stand-in for store.ts (not in seed 003): only types are imported from it, and the type
// stripper erases them, so loose ones do.
/* eslint-disable @typescript-eslint/no-explicit-any */
export type A2Store = any
export type A2StoreInspection = any
export type Clock = { now(): Date }
export type CompleteAttemptResult = any
export type Event = any
export type EventCause = any
export type IdSource = () => string
export type StoreClaimAvailableResult = any
export type PresenceRow = any
export type StoredEvent = any
