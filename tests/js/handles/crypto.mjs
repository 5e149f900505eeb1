// node:crypto as the seed's handle.js sees it in the judge (tests/js/handles/hooks.mjs maps its
// import here): randomInt and randomUUID draw from the testbed's PRNG (sim/prng.h: xoshiro256**
// seeded through splitmix64, uniform by rejection) with the seed the port's HandleContext got,
// so both draw the same words and claim ids when they draw in the same order; the rest is
// Node's.
export * from 'node:crypto';

const MASK = (1n << 64n) - 1n;
const rotl = (x, k) => ((x << BigInt(k)) | (x >> BigInt(64 - k))) & MASK;
let state = [0n, 0n, 0n, 0n];

export function seedJudgePrng(seed) {
  let x = BigInt(seed) & MASK;
  state = state.map(() => {
    x = (x + 0x9e3779b97f4a7c15n) & MASK;
    let z = x;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK;
    return z ^ (z >> 31n);
  });
}

function next() {
  const result = (rotl((state[1] * 5n) & MASK, 7) * 9n) & MASK;
  const t = (state[1] << 17n) & MASK;
  state[2] ^= state[0];
  state[3] ^= state[1];
  state[1] ^= state[2];
  state[0] ^= state[3];
  state[2] ^= t;
  state[3] = rotl(state[3], 45);
  return result;
}

function below(bound) {
  const b = BigInt(bound);
  if (b === 0n) return 0n;
  const limit = MASK - (MASK % b);
  let x;
  do x = next(); while (x >= limit);
  return x % b;
}

// The testbed's own draws when it runs the seed inside the simulation (real/js/driver.mjs sets
// globalThis.__testbedRandom): the world's PRNG, drawn by the port's code.
export function randomInt(max) {
  if (globalThis.__testbedRandom) return globalThis.__testbedRandom.int(max);
  return Number(below(max));
}

// real/handles/handle.cc's RandomUuid: 32 hex digits drawn one at a time, version 4, variant 8-b.
export function randomUUID() {
  if (globalThis.__testbedRandom) return globalThis.__testbedRandom.uuid();
  const hex = '0123456789abcdef';
  let out = '';
  for (let i = 0; i < 32; i += 1) {
    let d = Number(below(16));
    if (i === 12) d = 4;
    if (i === 16) d = 8 + (d & 3);
    if (i === 8 || i === 12 || i === 16 || i === 20) out += '-';
    out += hex[d];
  }
  return out;
}
