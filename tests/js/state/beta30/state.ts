import { createHash } from "node:crypto";
import { providerStateRedisUrlFromEnv } from "../config/loader.js";
import { ProviderError } from "../errors.js";
import type {
	ProviderRuntimeState,
	ProviderStateNamespace,
	StateCasResult,
	StateNamespaceOptions,
	StateValue,
	StateWriteOptions,
} from "../types.js";
import {
	createProviderRedisClient,
	ensureRedisReady,
	type ProviderRedisClient,
	withRedisTimeout,
} from "./redis.js";

const DEFAULT_REDIS_TIMEOUT_MS = 250;
const REDIS_STATE_PREFIX = "apifuse:provider-state:v2";
const PROVIDER_SCOPE_DISCRIMINATOR = "scope:provider";
const MISSING_CONNECTION_SCOPE_DISCRIMINATOR = "scope:connection:missing";
const SET_WITH_QUOTA_SCRIPT = `
local now = tonumber(ARGV[1])
local max_entries = tonumber(ARGV[2])
local expires_at = tonumber(ARGV[3])
local index_ttl = tonumber(ARGV[4])
local envelope = ARGV[5]

redis.call("ZREMRANGEBYSCORE", KEYS[2], "-inf", now)
local indexed = redis.call("ZSCORE", KEYS[2], KEYS[1])
if not indexed and redis.call("ZCARD", KEYS[2]) >= max_entries then
	return {0, false}
end

redis.call("SET", KEYS[1], envelope, "PXAT", expires_at)
redis.call("ZADD", KEYS[2], expires_at, KEYS[1])
redis.call("PEXPIRE", KEYS[2], index_ttl)
return {1, envelope}
`;

const COMPARE_AND_SET_WITH_QUOTA_SCRIPT = `
local current = redis.call("GET", KEYS[1])
if current then
	local ok, decoded = pcall(cjson.decode, current)
	if ok and type(decoded) == "table" and decoded.deleted == true then
		current = false
	end
end

local now = tonumber(ARGV[2])
local max_entries = tonumber(ARGV[3])
local expires_at = tonumber(ARGV[4])
local index_ttl = tonumber(ARGV[5])
local envelope = ARGV[6]

local current_version = 0
local current_decoded = false
if current then
	local ok, decoded = pcall(cjson.decode, current)
	if not ok or type(decoded) ~= "table" or type(decoded.version) ~= "number" then
		return {-2, current}
	end
	current_version = decoded.version
	current_decoded = decoded
end
if current_version ~= tonumber(ARGV[1]) then
	return {-1, current or false}
end

redis.call("ZREMRANGEBYSCORE", KEYS[2], "-inf", now)
local indexed = redis.call("ZSCORE", KEYS[2], KEYS[1])
if not indexed and redis.call("ZCARD", KEYS[2]) >= max_entries then
	return {0, false}
end

if current_decoded and type(current_decoded.createdAt) == "string" then
	local next_decoded = cjson.decode(envelope)
	next_decoded.createdAt = current_decoded.createdAt
	envelope = cjson.encode(next_decoded)
end
redis.call("SET", KEYS[1], envelope, "PXAT", expires_at)
redis.call("ZADD", KEYS[2], expires_at, KEYS[1])
redis.call("PEXPIRE", KEYS[2], index_ttl)
return {1, envelope}
`;

const DELETE_WITH_INDEX_SCRIPT = `
redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2])
redis.call("ZREM", KEYS[2], KEYS[1])
return 1
`;

type RedisProviderRuntimeStateOptions = {
	readonly redisUrl: string;
	readonly providerId?: string;
	/** Test seam; production callers use redisUrl-backed client sharing. */
	readonly __redisClient?: ProviderRedisClient;
};

type RedisStateEnvelope = {
	readonly value: unknown;
	readonly version: number;
	readonly expiresAt: string;
	readonly createdAt: string;
	readonly updatedAt: string;
};

type RedisStateTombstone = {
	readonly deleted: true;
};

type RedisBackend = {
	readonly redis: ProviderRedisClient;
};

const redisBackends = new Map<string, RedisBackend>();

function getRedisBackend(
	redisUrl: string,
	injectedRedis?: ProviderRedisClient,
): RedisBackend {
	const existing = redisBackends.get(redisUrl);
	if (existing) return existing;
	const redis =
		injectedRedis ??
		createProviderRedisClient({
			redisUrl,
			timeoutMs: DEFAULT_REDIS_TIMEOUT_MS,
			onError: () => {
				// Runtime state operations fail closed at their call sites. Avoid noisy
				// unhandled Redis errors from background reconnect attempts.
			},
		});
	const backend = { redis };
	redisBackends.set(redisUrl, backend);
	return backend;
}

async function withRequiredRedis<T>(operation: () => Promise<T>): Promise<T> {
	return await withRedisTimeout(operation, {
		timeoutMs: DEFAULT_REDIS_TIMEOUT_MS,
		onTimeout: () => {
			throw new UnsupportedProviderStateError("Provider runtime state Redis timed out");
		},
		onError: () => {
			throw new UnsupportedProviderStateError("Provider runtime state Redis is unavailable");
		},
	});
}

async function requireRedisReady(redis: ProviderRedisClient): Promise<void> {
	if (await ensureRedisReady(redis, DEFAULT_REDIS_TIMEOUT_MS)) return;
	throw new UnsupportedProviderStateError("Provider runtime state Redis is unavailable");
}

function connectionScopeDiscriminator(connectionId: string | undefined): string {
	if (connectionId === undefined) return MISSING_CONNECTION_SCOPE_DISCRIMINATOR;
	const digest = createHash("sha256").update(connectionId, "utf8").digest("hex");
	return `scope:connection:sha256:${digest}`;
}

function providerStatePrefix(
	providerId: string | undefined,
	namespace: string,
	scopeDiscriminator: string,
): string {
	return `${REDIS_STATE_PREFIX}:${providerId ?? "default"}:${namespace}:${scopeDiscriminator}`;
}

function providerStateKey(
	providerId: string | undefined,
	namespace: string,
	scopeDiscriminator: string,
	key: string,
): string {
	return `${providerStatePrefix(providerId, namespace, scopeDiscriminator)}:${key}`;
}

function publicStateKey(redisKey: string, prefixes: readonly string[]): string {
	for (const prefix of prefixes) {
		const prefixWithSeparator = `${prefix}:`;
		if (redisKey.startsWith(prefixWithSeparator)) {
			return redisKey.slice(prefixWithSeparator.length);
		}
	}
	return redisKey;
}

function parseStateDurationMs(ttl: StateWriteOptions["ttl"]): number {
	// Reconstructed: the seeds hide this body. handle.js passes `${ms}ms` (msDuration); a number
	// is milliseconds; other units as their names say.
	if (typeof ttl === "number") return Math.max(1, ttl);
	const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(String(ttl).trim());
	if (!match) {
		throw new UnsupportedProviderStateError(`Provider runtime state ttl is invalid (${String(ttl)})`);
	}
	const amount = Number(match[1]);
	const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
	const multiplier = units[match[2] ?? "ms"] ?? 1;
	return Math.max(1, amount * multiplier);
}

function envelopeFromJson(
	key: string,
	raw: string | null,
	// biome-ignore lint/suspicious/noExplicitAny: state envelopes deserialize caller-owned generic values.
): StateValue<any> | null {
	if (!raw) return null;
	// A corrupt/undecodable persisted envelope must be treated as absent rather
	// than throwing a raw JSON.parse SyntaxError: an uncaught SyntaxError escapes
	// the provider error taxonomy, is masked as internal_error 500, and is then
	// retried by the hub (2026-07-22 catchtable reserve RCA, candidate A). Returning
	// null also keeps list() from aborting the whole scan on a single bad entry.
	let parsed: unknown;
	try {
		parsed = JSON.parse(raw);
	} catch {
		return null;
	}
	if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
		return null;
	}
	const record: Record<string, unknown> = Object.fromEntries(Object.entries(parsed));
	if (
		typeof record.version !== "number" ||
		typeof record.expiresAt !== "string" ||
		typeof record.createdAt !== "string" ||
		typeof record.updatedAt !== "string"
	) {
		return null;
	}
	return {
		key,
		value: record.value,
		version: record.version,
		expiresAt: record.expiresAt,
		createdAt: record.createdAt,
		updatedAt: record.updatedAt,
	};
}

function isStateTombstone(raw: string | null): boolean {
	if (!raw) return false;
	try {
		const parsed: unknown = JSON.parse(raw);
		return (
			parsed !== null &&
			typeof parsed === "object" &&
			!Array.isArray(parsed) &&
			(parsed as { deleted?: unknown }).deleted === true
		);
	} catch {
		return false;
	}
}

function redisEnvelope(
	value: unknown,
	version: number,
	createdAt: string,
	expiresAt: string,
): RedisStateEnvelope {
	// Reconstructed: the field order of the RedisStateEnvelope type; updatedAt is the write's time.
	return { value, version, expiresAt, createdAt, updatedAt: new Date().toISOString() };
}

class RedisProviderStateNamespace implements ProviderStateNamespace {
	constructor(
		private readonly backend: RedisBackend,
		private readonly providerId: string | undefined,
		private readonly namespaceName: string,
		private readonly options: StateNamespaceOptions,
		private readonly scopeDiscriminator: string,
	) {}

	private redisKey(key: string): string {
		return providerStateKey(
			this.providerId,
			this.namespaceName,
			this.scopeDiscriminator,
			key,
		);
	}

	private statePrefix(): string {
		return providerStatePrefix(
			this.providerId,
			this.namespaceName,
			this.scopeDiscriminator,
		);
	}

	private indexKey(): string {
		// Keep bookkeeping outside the caller-owned keyspace. A provider may use
		// any state key (including "__index"), so a suffix inside the namespace
		// could turn the ZSET into a string and break every subsequent write.
		const namespaceIdentity = Buffer.from(
			providerStatePrefix(
				this.providerId,
				this.namespaceName,
				this.scopeDiscriminator,
			),
			"utf8",
		).toString("base64url");
		return `${REDIS_STATE_PREFIX}:index:${namespaceIdentity}`;
	}

	private async indexedKeys(limit: number): Promise<string[]> {
		await requireRedisReady(this.backend.redis);
		const now = Date.now();
		return await withRequiredRedis(async () => {
			await this.backend.redis.zremrangebyscore(this.indexKey(), "-inf", now);
			return await this.backend.redis.zrangebyscore(
				this.indexKey(),
				now + 1,
				"+inf",
				"LIMIT",
				0,
				limit,
			);
		});
	}

	private async readRaw(key: string): Promise<string | null> {
		await requireRedisReady(this.backend.redis);
		return await withRequiredRedis(() => this.backend.redis.get(this.redisKey(key)));
	}

	private enforceValueSize(value: unknown): void {
		const bytes = Buffer.byteLength(JSON.stringify(value), "utf8");
		if (bytes > this.options.maxValueBytes) {
			throw new UnsupportedProviderStateError(
				`Provider runtime state value exceeds maxValueBytes (${bytes} > ${this.options.maxValueBytes})`,
			);
		}
	}

	private quotaExceeded(): UnsupportedProviderStateError {
		return new UnsupportedProviderStateError(
			`Provider runtime state namespace quota exceeded (${this.options.maxEntries + 1} > ${this.options.maxEntries})`,
		);
	}

	private writeTiming(ttl: StateWriteOptions["ttl"]): {
		expiresAt: string;
		expiresAtMs: number;
		indexTtlMs: number;
	} {
		const ttlMs = parseStateDurationMs(ttl ?? this.options.defaultTtl);
		const maxTtlMs = parseStateDurationMs(this.options.maxTtl);
		if (ttlMs > maxTtlMs) {
			throw new UnsupportedProviderStateError(
				`Provider runtime state ttl exceeds maxTtl (${ttlMs} > ${maxTtlMs})`,
			);
		}
		const expiresAtMs = Date.now() + ttlMs;
		return {
			expiresAt: new Date(expiresAtMs).toISOString(),
			expiresAtMs,
			indexTtlMs: maxTtlMs,
		};
	}

	async list<T>(options?: { limit?: number; prefix?: string }): Promise<StateValue<T>[]> {
		const requestedLimit = Math.max(0, options?.limit ?? this.options.maxEntries);
		if (requestedLimit === 0) return [];
		const keys = await this.indexedKeys(this.options.maxEntries);
		if (keys.length === 0) return [];
		const values = await withRequiredRedis(() => this.backend.redis.mget(keys));
		const rows: StateValue<T>[] = [];
		for (const [index, raw] of values.entries()) {
			const redisKey = keys[index];
			if (!redisKey) continue;
			const publicKey = publicStateKey(redisKey, [this.statePrefix()]);
			if (options?.prefix && !publicKey.startsWith(options.prefix)) continue;
			const value = envelopeFromJson(publicKey, raw);
			if (!value) continue;
			rows.push(value);
		}
		return rows.slice(0, requestedLimit);
	}

	async get<T>(key: string): Promise<StateValue<T> | null> {
		const raw = await this.readRaw(key);
		if (isStateTombstone(raw)) return null;
		return envelopeFromJson(key, raw);
	}

	async set<T>(key: string, value: T, options?: StateWriteOptions): Promise<StateValue<T>> {
		this.enforceValueSize(value);
		const current = await this.get<T>(key);
		const createdAt = current?.createdAt ?? new Date().toISOString();
		const version = (current?.version ?? 0) + 1;
		const timing = this.writeTiming(options?.ttl);
		const envelope = redisEnvelope(value, version, createdAt, timing.expiresAt);
		await requireRedisReady(this.backend.redis);
		const result = await withRequiredRedis(() =>
			this.backend.redis.eval(
				SET_WITH_QUOTA_SCRIPT,
				2,
				this.redisKey(key),
				this.indexKey(),
				String(Date.now()),
				String(this.options.maxEntries),
				String(timing.expiresAtMs),
				String(timing.indexTtlMs),
				JSON.stringify(envelope),
			),
		);
		if (!Array.isArray(result) || Number(result[0]) !== 1) {
			throw this.quotaExceeded();
		}
		return {
			key,
			value,
			version,
			expiresAt: timing.expiresAt,
			createdAt,
			updatedAt: envelope.updatedAt,
		};
	}

	// Reconstructed (the seeds hide patch; no caller of the testbed uses it).
	async patch<T extends Record<string, unknown>>(
		key: string,
		patch: Partial<T>,
		options?: StateWriteOptions,
	): Promise<StateValue<T>> {
		const current = (await this.get<T>(key))?.value ?? {};
		return await this.set(key, { ...current, ...patch } as T, options);
	}

	async compareAndSet<T>(
		key: string,
		expectedVersion: number,
		value: T,
		options?: StateWriteOptions,
	): Promise<StateCasResult<T>> {
		this.enforceValueSize(value);
		const createdAt = new Date().toISOString();
		const timing = this.writeTiming(options?.ttl);
		const envelope = redisEnvelope(
			value,
			expectedVersion + 1,
			createdAt,
			timing.expiresAt,
		);
		await requireRedisReady(this.backend.redis);
		const result = await withRequiredRedis(() =>
			this.backend.redis.eval(
				COMPARE_AND_SET_WITH_QUOTA_SCRIPT,
				2,
				this.redisKey(key),
				this.indexKey(),
				String(expectedVersion),
				String(Date.now()),
				String(this.options.maxEntries),
				String(timing.expiresAtMs),
				String(timing.indexTtlMs),
				JSON.stringify(envelope),
			),
		);
		if (Array.isArray(result) && Number(result[0]) === 0) {
			throw this.quotaExceeded();
		}
		if (!Array.isArray(result) || Number(result[0]) !== 1) {
			const rawCurrent = Array.isArray(result) && typeof result[1] === "string" ? result[1] : null;
			return { ok: false, current: envelopeFromJson(key, rawCurrent) };
		}
		const rawWritten = typeof result[1] === "string" ? result[1] : null;
		const written = envelopeFromJson(key, rawWritten) as StateValue<T> | null;
		if (!written) {
			throw new UnsupportedProviderStateError(
				"Provider runtime state CAS returned an invalid value",
			);
		}
		return { ok: true, value: written };
	}

	async delete(key: string): Promise<void> {
		await requireRedisReady(this.backend.redis);
		const tombstone = JSON.stringify({ deleted: true } satisfies RedisStateTombstone);
		await withRequiredRedis(() =>
			this.backend.redis.eval(
				DELETE_WITH_INDEX_SCRIPT,
				2,
				this.redisKey(key),
				this.indexKey(),
				tombstone,
				String(parseStateDurationMs(this.options.maxTtl)),
			),
		);
	}

	async increment(
		key: string,
		field: string,
		delta: number,
		options?: StateWriteOptions,
	): Promise<StateValue<Record<string, unknown>>> {
		const current = (await this.get<Record<string, unknown>>(key))?.value ?? {};
		const previous = typeof current[field] === "number" ? current[field] : 0;
		return await this.set(key, { ...current, [field]: previous + delta }, options);
	}
}

class RedisProviderRuntimeState implements ProviderRuntimeState {
	readonly backend: RedisBackend;
	readonly providerId?: string;
	readonly redisUrl: string;
	readonly scopeDiscriminator: string;

	constructor(
		options: RedisProviderRuntimeStateOptions,
		scopeDiscriminator = MISSING_CONNECTION_SCOPE_DISCRIMINATOR,
	) {
		this.backend = getRedisBackend(options.redisUrl, options.__redisClient);
		this.providerId = options.providerId;
		this.redisUrl = options.redisUrl;
		this.scopeDiscriminator = scopeDiscriminator;
	}

	forConnection(connectionId: string | undefined): ProviderRuntimeState {
		return new RedisProviderRuntimeState(
			{ redisUrl: this.redisUrl, providerId: this.providerId },
			connectionScopeDiscriminator(connectionId),
		);
	}

	namespace(name: string, options: StateNamespaceOptions): ProviderStateNamespace {
		return new RedisProviderStateNamespace(
			this.backend,
			this.providerId,
			name,
			options,
			options.scope === "provider" ? PROVIDER_SCOPE_DISCRIMINATOR : this.scopeDiscriminator,
		);
	}
}

export class UnsupportedProviderStateError extends ProviderError {
	constructor(message = "Provider runtime state is not available in this runtime") {
		super(message, { code: "PROVIDER_STATE_UNSUPPORTED" });
		this.name = "UnsupportedProviderStateError";
	}
}

class UnsupportedProviderStateNamespace implements ProviderStateNamespace {
	async list<T>(_options?: { limit?: number; prefix?: string }): Promise<StateValue<T>[]> {
		throw new UnsupportedProviderStateError();
	}
	async get<T>(_key: string): Promise<StateValue<T> | null> {
		throw new UnsupportedProviderStateError();
	}
	async set<T>(_key: string, _value: T, _options?: StateWriteOptions): Promise<StateValue<T>> {
		throw new UnsupportedProviderStateError();
	}
	async patch<T extends Record<string, unknown>>(
		_key: string,
		_patch: Partial<T>,
		_options?: StateWriteOptions,
	): Promise<StateValue<T>> {
		throw new UnsupportedProviderStateError();
	}
	async compareAndSet<T>(
		_key: string,
		_expectedVersion: number,
		_value: T,
		_options?: StateWriteOptions,
	): Promise<StateCasResult<T>> {
		throw new UnsupportedProviderStateError();
	}
	async delete(_key: string): Promise<void> {
		throw new UnsupportedProviderStateError();
	}
	async increment(
		_key: string,
		_field: string,
		_delta: number,
		_options?: StateWriteOptions,
	): Promise<StateValue<Record<string, unknown>>> {
		throw new UnsupportedProviderStateError();
	}
}

class UnsupportedProviderRuntimeState implements ProviderRuntimeState {
	forConnection(_connectionId: string | undefined): ProviderRuntimeState {
		return new UnsupportedProviderRuntimeState();
	}

	namespace(_name: string, _options: StateNamespaceOptions): ProviderStateNamespace {
		return new UnsupportedProviderStateNamespace();
	}
}

class MemoryProviderStateNamespace implements ProviderStateNamespace {
	private readonly values = new Map<string, StateValue<unknown>>();

	constructor(private readonly options: StateNamespaceOptions) {}

	private enforceValueSize(value: unknown): void {
		const bytes = Buffer.byteLength(JSON.stringify(value), "utf8");
		if (bytes > this.options.maxValueBytes) {
			throw new UnsupportedProviderStateError(
				`Provider runtime state value exceeds maxValueBytes (${bytes} > ${this.options.maxValueBytes})`,
			);
		}
	}

	private enforceWritePolicy(key: string, value: unknown, ttl: StateWriteOptions["ttl"]): void {
		this.enforceValueSize(value);
		const ttlMs = parseStateDurationMs(ttl ?? this.options.defaultTtl);
		const maxTtlMs = parseStateDurationMs(this.options.maxTtl);
		if (ttlMs > maxTtlMs) {
			throw new UnsupportedProviderStateError(
				`Provider runtime state ttl exceeds maxTtl (${ttlMs} > ${maxTtlMs})`,
			);
		}
		if (!this.values.has(key) && this.values.size >= this.options.maxEntries) {
			throw new UnsupportedProviderStateError(
				`Provider runtime state namespace quota exceeded (${this.options.maxEntries + 1} > ${this.options.maxEntries})`,
			);
		}
	}

	private pruneExpired(nowMs = Date.now()): void {
		for (const [key, row] of this.values.entries()) {
			if (row.expiresAt && Date.parse(row.expiresAt) <= nowMs) {
				this.values.delete(key);
			}
		}
	}

	async list<T>(_options?: { limit?: number; prefix?: string }): Promise<StateValue<T>[]> {
		this.pruneExpired();
		const rows = Array.from(this.values.values()).filter((value) =>
			_options?.prefix ? value.key.startsWith(_options.prefix) : true,
		);
		return rows.slice(0, Math.max(0, _options?.limit ?? this.options.maxEntries)) as StateValue<T>[];
	}

	async get<T>(key: string): Promise<StateValue<T> | null> {
		this.pruneExpired();
		return this.values.get(key) ?? null;
	}

	async set<T>(key: string, value: T, options?: StateWriteOptions): Promise<StateValue<T>> {
		this.pruneExpired();
		this.enforceWritePolicy(key, value, options?.ttl);
		const now = new Date().toISOString();
		const current = this.values.get(key);
		const expiresAt = resolveMemoryStateExpiresAt(options?.ttl ?? this.options.defaultTtl);
		const row = {
			key,
			value,
			version: (current?.version ?? 0) + 1,
			expiresAt,
			createdAt: current?.createdAt ?? now,
			updatedAt: now,
		} satisfies StateValue<T>;
		this.values.set(key, row);
		return row;
	}

	async patch<T extends Record<string, unknown>>(
		key: string,
		patch: Partial<T>,
		options?: StateWriteOptions,
	): Promise<StateValue<T>> {
		const current = (await this.get<T>(key))?.value ?? {};
		return await this.set(key, { ...current, ...patch } as T, options);
	}

	async compareAndSet<T>(
		key: string,
		expectedVersion: number,
		value: T,
		options?: StateWriteOptions,
	): Promise<StateCasResult<T>> {
		this.pruneExpired();
		const current = this.values.get(key) as StateValue<T> | undefined;
		if ((current?.version ?? 0) !== expectedVersion) {
			return { ok: false, current: current ?? null };
		}
		this.enforceWritePolicy(key, value, options?.ttl);
		const now = new Date().toISOString();
		const stored = {
			key,
			value,
			version: expectedVersion + 1,
			expiresAt: resolveMemoryStateExpiresAt(
				options?.ttl ?? this.options.defaultTtl,
			),
			createdAt: current?.createdAt ?? now,
			updatedAt: now,
		} satisfies StateValue<T>;
		this.values.set(key, stored);
		return { ok: true, value: stored };
	}

	async delete(key: string): Promise<void> {
		this.pruneExpired();
		this.values.delete(key);
	}

	async increment(
		key: string,
		field: string,
		delta: number,
		options?: StateWriteOptions,
	): Promise<StateValue<Record<string, unknown>>> {
		const current = (await this.get<Record<string, unknown>>(key))?.value ?? {};
		const previous = typeof current[field] === "number" ? current[field] : 0;
		return await this.set(key, { ...current, [field]: previous + delta }, options);
	}
}

type MemoryProviderStateBackend = {
	readonly namespaces: Map<string, MemoryProviderStateNamespace>;
};

class MemoryProviderRuntimeState implements ProviderRuntimeState {
	constructor(
		private readonly backend: MemoryProviderStateBackend = { namespaces: new Map() },
		private readonly scopeDiscriminator = MISSING_CONNECTION_SCOPE_DISCRIMINATOR,
	) {}

	forConnection(connectionId: string | undefined): ProviderRuntimeState {
		return new MemoryProviderRuntimeState(
			this.backend,
			connectionScopeDiscriminator(connectionId),
		);
	}

	namespace(name: string, options: StateNamespaceOptions): ProviderStateNamespace {
		const scopeDiscriminator =
			options.scope === "provider" ? PROVIDER_SCOPE_DISCRIMINATOR : this.scopeDiscriminator;
		const namespaceIdentity = `${scopeDiscriminator}\0${name}`;
		const existing = this.backend.namespaces.get(namespaceIdentity);
		if (existing) return existing;
		const created = new MemoryProviderStateNamespace(options);
		this.backend.namespaces.set(namespaceIdentity, created);
		return created;
	}
}

function resolveMemoryStateExpiresAt(ttl: StateWriteOptions["ttl"]): string {
	return new Date(Date.now() + parseStateDurationMs(ttl)).toISOString();
}

export function createMemoryProviderRuntimeState(): ProviderRuntimeState {
	return new MemoryProviderRuntimeState();
}

export function createRedisProviderRuntimeState(
	options: RedisProviderRuntimeStateOptions,
): ProviderRuntimeState {
	return new RedisProviderRuntimeState(options);
}

export function createProviderRuntimeStateFromEnv(
	options: { readonly providerId?: string; readonly allowMemoryFallback?: boolean } = {},
): ProviderRuntimeState {
	const redisUrl = providerStateRedisUrlFromEnv();
	if (redisUrl) {
		return createRedisProviderRuntimeState({ redisUrl, providerId: options.providerId });
	}
	if (options.allowMemoryFallback) return createMemoryProviderRuntimeState();
	return new UnsupportedProviderRuntimeState();
}
