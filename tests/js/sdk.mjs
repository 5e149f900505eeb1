// The SDK the judges run (tests/js/state/judge.mjs, tests/js/handles/judge.mjs): the seeds'
// files, their types stripped by TypeScript's transpileModule (no code changed), laid out as
// the package lays them out, with the stand-ins for the files no seed shows:
//   runtime/state.js          tests/js/state/<version>/state.ts (seed 000 or 001, its hidden
//                             lines filled: see tests/js/state/README.md)
//   runtime/redis.js          tests/js/state/redis.ts (stand-in)
//   errors.js                 tests/js/state/errors.ts (stand-in)
//   config/loader.js          tests/js/state/config-loader.ts (stand-in)
//   runtime/handle.js         tests/js/seeds/handles-2.2.0-beta.61/handle.js (seed 002 verbatim)
//   handle.js                 tests/js/handles/handle.ts (stand-in)
//   runtime/handle-wordlist.js  tests/js/handles/handle-wordlist.ts (stand-in)
// and a clock the judge sets: Date.now() and `new Date()` read it, as the ports read the actor's.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

const here = dirname(fileURLToPath(import.meta.url));

export async function loadSdk(stateVersion) {
  return importSdk(writeSdk(stateVersion, mkdtempSync(join(tmpdir(), 'sdk-judge-'))));
}

// The SDK's modules from a directory laid out as the package (writeSdk's, or a user's build).
export async function importSdk(out) {
  const load = (name) => import(pathToFileURL(join(out, `${name}.js`)));
  return { state: await load('runtime/state'), handle: await load('runtime/handle'),
           errors: await load('errors') };
}

// Writes the SDK of `stateVersion` into `out` as the package lays it out; returns `out`.
export function writeSdk(stateVersion, out) {
  const files = {
    'runtime/state': join(here, 'state', stateVersion, 'state.ts'),
    'runtime/redis': join(here, 'state', 'redis.ts'),
    errors: join(here, 'state', 'errors.ts'),
    'config/loader': join(here, 'state', 'config-loader.ts'),
    'runtime/handle': join(here, 'seeds', 'handles-2.2.0-beta.61', 'handle.js'),
    handle: join(here, 'handles', 'handle.ts'),
    'runtime/handle-wordlist': join(here, 'handles', 'handle-wordlist.ts'),
  };
  for (const [name, file] of Object.entries(files)) {
    const text = readFileSync(file, 'utf8');
    const js = file.endsWith('.js') ? text : ts.transpileModule(text, {
      fileName: file,
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    mkdirSync(dirname(join(out, `${name}.js`)), { recursive: true });
    writeFileSync(join(out, `${name}.js`), js);
  }
  writeFileSync(join(out, 'package.json'), '{"type":"module"}');
  return out;
}

// a2's store (seed 003's store-redis-core.ts verbatim, the stand-ins for the files it imports
// but does not show beside tests/js/a2/judge.mjs), types stripped: the module, whose
// createRedisStoreCore the judge and the captures call.
export async function loadA2() {
  return importA2(writeA2(mkdtempSync(join(tmpdir(), 'a2-'))));
}

// a2's store core from a directory laid out as writeA2 lays it out (or a user's build).
export async function importA2(out) {
  return import(pathToFileURL(join(out, 'store-redis-core.js')));
}

// Writes a2's store core and its stand-ins into `out`, one .js file each; returns `out`.
export function writeA2(out) {
  const sources = {
    'store-redis-core': join(here, 'seeds', 'a2-0.5.0', 'store-redis-core.ts'),
  };
  for (const name of ['errors', 'idempotent-replay', 'internal', 'store-codec', 'contract',
                      'store'])
    sources[name] = join(here, 'a2', `${name}.ts`);
  for (const [name, file] of Object.entries(sources)) {
    const { outputText } = ts.transpileModule(readFileSync(file, 'utf8'), {
      fileName: file,
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
        rewriteRelativeImportExtensions: true,
      },
    });
    writeFileSync(join(out, `${name}.js`), outputText);
  }
  writeFileSync(join(out, 'package.json'), '{"type":"module"}');
  return out;
}

// Date.now() and new Date() read `clock.now` (ms); Date(x) and Date.parse are JavaScript's.
export const clock = { now: 0 };
const RealDate = Date;
class JudgeDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(clock.now);
    else super(...args);
  }
  static now() { return clock.now; }
}
globalThis.Date = JudgeDate;

// node sdk.mjs write VERSION DIR: the seeds' SDK of VERSION (beta24, beta30: the state runtime
// and handle.js) or a2's store core (0.5.0) in DIR, laid out as the package (a start for a
// changed build that --client-dir runs).
if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === 'write') {
  const [version, dir] = process.argv.slice(3);
  if (!['beta24', 'beta30', '0.5.0'].includes(version) || !dir) {
    console.error('usage: node sdk.mjs write beta24|beta30|0.5.0 DIR');
    process.exit(2);
  }
  mkdirSync(dir, { recursive: true });
  if (version === '0.5.0') writeA2(dir);
  else writeSdk(version, dir);
}

// A StateValue as the ports' answers show it (model shapes: every field, dates as strings).
export function stateValue(v) {
  if (v === null || v === undefined) return null;
  return { key: v.key, value: v.value, version: v.version, expiresAt: v.expiresAt,
           createdAt: v.createdAt, updatedAt: v.updatedAt };
}

// Makes a plan's calls against `testbed serve`, one after another. Before each call it sets the
// judge's clock and the server's (TESTBED TIME SET) to the call's `now`, and sends ECHO
// "judge: call N", which marks in serve's --record capture where the call's commands begin.
// Prints one JSON line per call: { op, answer, ...extra() }, where answer is what perform gave,
// or what failed(error) makes of the error it threw.
export async function judgeCalls(redis, calls, perform, failed, extra = () => ({})) {
  let n = 0;
  for (const c of calls) {
    clock.now = c.now;
    await redis.call('TESTBED', 'TIME', 'SET', String(c.now));
    await redis.echo(`judge: call ${n}`);
    n += 1;
    let answer;
    try {
      answer = await perform(c);
    } catch (e) {
      answer = failed(e, c);
    }
    console.log(JSON.stringify({ op: c.op, answer, ...extra() }));
  }
}
