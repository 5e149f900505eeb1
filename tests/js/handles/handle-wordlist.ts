// Stand-in for the SDK's dist/runtime/handle-wordlist.js, which seed 002 imports but does not
// show: the C++ port's list (real/handles/wordlist.h, where the choices are written down),
// which the judge receives in its plan file and sets as globalThis.__handleWords before it
// loads the SDK; findHandleWordWithinDistance as the port's (the word itself, else the first
// word within `distance` edits).
const words: readonly string[] = (globalThis as { __handleWords?: string[] }).__handleWords ?? [];

export const BOUND_HANDLE_WORD_COUNT = 2;
export const PUBLIC_HANDLE_WORD_COUNT = 4;
export const HIGH_PUBLIC_HANDLE_WORD_COUNT = 5;
export const ISSUABLE_HANDLE_WORDS: readonly string[] = words;

function editDistance(a: string, b: string, limit: number): number {
	if (Math.abs(a.length - b.length) > limit) return limit + 1;
	let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
	for (let i = 1; i <= a.length; i++) {
		const cur = [i];
		let rowMin = i;
		for (let j = 1; j <= b.length; j++) {
			cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
			rowMin = Math.min(rowMin, cur[j]);
		}
		if (rowMin > limit) return limit + 1;
		prev = cur;
	}
	return Math.min(prev[b.length], limit + 1);
}

const index = new Set(words);

export function findHandleWordWithinDistance(segment: string, distance: number): string | null {
	if (index.has(segment)) return segment;
	if (distance <= 0) return null;
	return words.find((w) => editDistance(segment, w, distance) <= distance) ?? null;
}
