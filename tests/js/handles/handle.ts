// Stand-in for the SDK's dist/handle.js (../handle.js from dist/runtime/handle.js), which seed
// 002 imports but does not show. The same choices as the C++ port (real/handles/handle.h and
// handle.cc):
//   - HandleError(code, message, { kind, details, cause }): an Error with a code, the kind's
//     name, details and the cause;
//   - isDraftKind(kind): kind.type === "draft";
//   - handleRecoverySentence(kind): "Call `<issuedBy>` again." when the kind names the operation
//     that issues it, else "Request a new one." (the wording of handle.js's own
//     publicCollapsedMessage, js 153).
export class HandleError extends Error {
	readonly code: string;
	readonly kind: string | undefined;
	readonly details: Record<string, unknown> | undefined;
	constructor(
		code: string,
		message: string,
		options: { kind?: string; details?: Record<string, unknown>; cause?: unknown } = {},
	) {
		super(message, options.cause === undefined ? undefined : { cause: options.cause });
		this.name = "HandleError";
		this.code = code;
		this.kind = options.kind;
		this.details = options.details;
	}
}

export function isDraftKind(kind: { type: string }): boolean {
	return kind.type === "draft";
}

export function handleRecoverySentence(kind: { issuedBy?: string }): string {
	return kind.issuedBy ? `Call \`${kind.issuedBy}\` again.` : "Request a new one.";
}
