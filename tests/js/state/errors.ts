// Stand-in for the SDK's src/errors.ts (../errors.js), which no seed shows. state.ts needs
// ProviderError(message, { code }) and handle.js needs isProviderError. The testbed's ports make
// the same choice: an error is the SDK's when it is a ProviderError, and its code is the one
// its constructor got (real/state/state_api.h: PROVIDER_STATE_UNSUPPORTED).
export class ProviderError extends Error {
	readonly code: string | undefined;
	constructor(message: string, options?: { code?: string }) {
		super(message);
		this.name = "ProviderError";
		this.code = options?.code;
	}
}

export function isProviderError(error: unknown): error is ProviderError {
	return error instanceof ProviderError;
}
