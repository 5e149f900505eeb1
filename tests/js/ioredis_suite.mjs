// ioredis (pinned in package-lock.json) against `testbed serve`, as an application's own test
// suite would use it: the handshake, virtual time, a seed script through defineCommand
// (EVALSHA, then EVAL on NOSCRIPT), a pipeline, the emulator's errors, and a lost reply that
// ioredis re-sends after reconnecting. Run by tests/serve_test.cc:
//   node ioredis_suite.mjs plain PORT CAS_SCRIPT_FILE
//   node ioredis_suite.mjs lost-reply PORT
// Prints one line per check; exits 1 at the first that fails.
import { readFileSync } from 'node:fs';
import Redis from 'ioredis';

const [mode, port, casFile] = process.argv.slice(2);
let passed = 0;
function check(what, ok, detail) {
  if (!ok) {
    console.log(`FAILED: ${what}: ${detail}`);
    process.exit(1);
  }
  passed += 1;
  console.log(`ok: ${what}`);
}
async function rejection(promise) {
  try {
    await promise;
    return null;
  } catch (e) {
    return e;
  }
}

const redis = new Redis({ host: '127.0.0.1', port: Number(port), lazyConnect: true });
await redis.connect();
check('connects and passes the ready check', redis.status === 'ready', redis.status);

if (mode === 'plain') {
  await redis.call('TESTBED', 'TIME', 'FREEZE');
  await redis.call('TESTBED', 'TIME', 'SET', '1767225600000');
  check('SET PX', (await redis.set('lease', 'w1', 'PX', 1000)) === 'OK', 'not OK');
  check('PTTL on frozen time', (await redis.pttl('lease')) === 1000, await redis.pttl('lease'));
  await redis.call('TESTBED', 'TIME', 'ADVANCE', '1000');
  check('the key lives through its last millisecond', (await redis.get('lease')) === 'w1', 'gone');
  await redis.call('TESTBED', 'TIME', 'ADVANCE', '1');
  check('and expires after it', (await redis.get('lease')) === null, 'still there');

  // The state store's compare-and-set (beta.30), byte for byte as shipped.
  redis.defineCommand('stateCas', { numberOfKeys: 2, lua: readFileSync(casFile, 'utf8') });
  const envelope = (n) =>
    JSON.stringify({ value: { n }, version: 1, expiresAt: '2026-01-01T00:00:02.000Z',
                     createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' });
  const now = '1767225601001';
  const first = await redis.stateCas('k0', 'idx', '0', now, '100', '1767225602000', '10000',
                                     envelope(1));
  check('a compare-and-set at version 0 writes', first[0] === 1 && first[1] === envelope(1),
        JSON.stringify(first));
  const second = await redis.stateCas('k0', 'idx', '0', now, '100', '1767225602000', '10000',
                                      envelope(2));
  check('a second one at version 0 is refused (-1) with the current value',
        second[0] === -1 && second[1] === envelope(1), JSON.stringify(second));
  check('the index counts one key', (await redis.zcard('idx')) === 1, await redis.zcard('idx'));

  const pipeline = redis.pipeline();
  for (let i = 0; i < 100; i += 1) pipeline.hset('h', `f${i}`, String(i));
  pipeline.hget('h', 'f99');
  const replies = await pipeline.exec();
  check('a pipeline of 101 commands answers in order',
        replies.length === 101 && replies.every(([e]) => e === null) && replies[100][1] === '99',
        JSON.stringify(replies.slice(-2)));

  const unsupported = await rejection(redis.call('SORT', 'x'));
  check('a command the emulator lacks is a reply error naming it',
        unsupported && unsupported.name === 'ReplyError' &&
        unsupported.message.startsWith('ERR unsupported by the emulator'),
        unsupported && unsupported.message);
  const wrongType = await rejection(redis.get('h'));
  check('WRONGTYPE as Redis words it', wrongType && wrongType.message ===
        'WRONGTYPE Operation against a key holding the wrong kind of value',
        wrongType && wrongType.message);
  const scriptError = await rejection(redis.eval("return redis.call('nosuch')", 0));
  check('a script error is a reply error', scriptError && scriptError.name === 'ReplyError' &&
        scriptError.message.includes('Unknown Redis command called from script'),
        scriptError && scriptError.message);
} else if (mode === 'lost-reply') {
  // The server drops the connection after running a command, before its reply leaves: ioredis
  // reconnects and re-sends what was not answered (autoResendUnfulfilledCommands, its default),
  // so a call whose reply was lost runs twice. Every call resolves; the counter has more.
  const calls = 100;
  let reconnects = 0;
  redis.on('reconnecting', () => { reconnects += 1; });
  for (let i = 0; i < calls; i += 1) await redis.hincrby('counter', 'n', 1);
  await redis.call('TESTBED', 'FAULTS', 'OFF');
  const applied = Number(await redis.hget('counter', 'n'));
  check(`every call resolved; ${reconnects} reconnects`, reconnects > 0, 'no fault was injected');
  check(`applied ${applied} increments for ${calls} calls: each lost reply ran twice`,
        applied === calls + reconnects, `${applied} applied, ${reconnects} reconnects`);
}
redis.disconnect();
console.log(`ioredis ${mode}: ${passed} checks passed`);
