// The service over real HTTPS on an embedded cluster with real isolates: the seed's programs give
// the sequential results; one round trip starts a batch and streams its outcomes; costs come back;
// exceptions map to client lines; escapes (process, require, import(), constructor.constructor), an
// infinite loop, a memory bomb and deep recursion are contained while the service keeps serving;
// cancel stops a running task; requests are compressed MessagePack, and those without the token,
// oversized, compressed too far, naming blobs the service lacks or malformed are refused with a 4xx
// (fuzzed); a broken outcome stream is read again from where it broke.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Distribution, RunningService } from '../../../src/frameworks/service/index.js';
import { Rng } from '../../../src/util/rng.js';
import { allKnightTours, countPrimes, factorize, factorizeAll, knightTours, mandelbrot, mandelbrotRow, primes } from '../../../examples/service/programs.js';
import { startHttpsService, type HttpsService } from './https-service.js';
import { unpackChunk } from '../../../src/frameworks/service/outcome-chunks.js';
import { FrameReader, pack } from '../../../src/frameworks/service/wire-format.js';
import { brotliCompressSync } from 'node:zlib';

let svc: HttpsService;
let token: string;
let tls: { cert: string };
let service: RunningService;
let dist: Distribution;

before(async () => {
  svc = await startHttpsService({ maxBodyBytes: 2 * 1024 * 1024 });
  ({ token, tls, service, dist } = svc);
});
after(() => svc.close());

/** Recurses without end (a RangeError in the sandbox). */
function deep(n: number): number {
  return 1 + deep(n + 1);
}

function request(method: string, path: string, opts: { body?: string | Buffer; auth?: string | null; contentType?: string; encoding?: string } = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = {};
    if (opts.auth !== null) headers.authorization = opts.auth ?? `Bearer ${token}`;
    if (opts.body !== undefined) {
      headers['content-type'] = opts.contentType ?? 'application/json';
      headers['content-length'] = Buffer.byteLength(opts.body);
      if (opts.encoding) headers['content-encoding'] = opts.encoding;
    }
    const req = https.request(new URL(path, service.url), { method, ca: tls.cert, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      // latin1 keeps binary answers (outcome streams) byte for byte; JSON answers are ASCII here.
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('latin1') }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

test('the seed programs give the sequential results through the service', async () => {
  const numbers = [1_000_003 * 999_983, 104_723 * 104_729, 2 ** 31 - 1, 600_851_475_143, 97 * 89, 1_299_709 * 15_485_863];
  assert.deepEqual(await factorizeAll(dist, numbers), numbers.map(factorize));
  const costs = dist.lastCosts!;
  for (const key of ['serializationMs', 'transferMs', 'dispatchMs', 'executionMs', 'diffingMs'] as const) assert.ok(costs[key] >= 0 && Number.isFinite(costs[key]), key);

  const [w, h, it] = [160, 48, 200];
  const image = await mandelbrot(dist, w, h, it);
  const expected = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) expected.set(mandelbrotRow(y, w, h, it), y * w);
  assert.deepEqual(image, expected);

  assert.equal(await primes(dist, 200_000, 8), countPrimes(0, 200_000));
  assert.equal(await primes(dist, 200_000, 8), 17_984); // π(2·10^5)
});

test('knight tours on a 5×5 board: 1728 open tours, as a sequential count', async () => {
  const total = await allKnightTours(dist, 5);
  assert.equal(total, 1728); // directed open tours of the 5×5 board (OEIS A165134)
  assert.equal(knightTours(5, 0), 304);
});

test('a remote exception is an AggregateError whose stack points at this file', async () => {
  const values = [1, 0, 2];
  const tasks = values.map((v) => dist.task(() => {
    if (v === 0) throw new RangeError(`bad value ${v}`);
    return 10 / v;
  }));
  await dist.start(tasks);
  assert.equal(await tasks[0]!.result, 10);
  await assert.rejects(tasks[1]!.result, (e: AggregateError) => {
    assert.ok(e instanceof AggregateError);
    assert.match(e.message, /task 1 failed: RangeError: bad value 0/);
    assert.match(String(e.errors[0].stack), /service-https\.test\.ts:\d+:\d+/);
    return true;
  });
});

test('escapes, an infinite loop, a memory bomb and deep recursion are contained and the service keeps serving', async () => {
  // The sandbox's global object, reached the way capture cannot see: `this` in a sloppy-mode function (made
  // here with Function, so its code is not this strict module's and stays sloppy remotely too).
  const probe = { global: new Function('return (function () { return this; })()') as () => Record<string, unknown> };
  // A module that would leave a file behind if any sandbox could load it.
  const dir = mkdtempSync(path.join(tmpdir(), 'tidepool-escape-'));
  const marker = path.join(dir, 'loaded');
  const moduleFile = path.join(dir, 'escape.mjs');
  writeFileSync(moduleFile, `import { writeFileSync } from 'node:fs'; writeFileSync(${JSON.stringify(marker)}, 'escaped');\n`);
  const moduleUrl = pathToFileURL(moduleFile).href;
  try {
    const tasks = [
      dist.task(() => typeof probe.global().process),
      dist.task(() => { for (;;) { /* spin */ } }),
      dist.task(() => { const keep: number[][] = []; for (;;) keep.push(new Array(100_000).fill(1)); }),
      dist.task(() => (() => 0).constructor('return process')()),
      dist.task(() => [typeof probe.global().require, typeof probe.global().module]),
      dist.task(() => (probe.global().require as (id: string) => unknown)('node:fs')),
      dist.task(() => import(moduleUrl)),
      dist.task(() => deep(0)),
    ];
    await dist.start(tasks, { limits: { timeoutMs: 1_000, memoryMb: 32 } }); // tighter than the service's, for this batch

    assert.equal(await tasks[0]!.result, 'undefined');
    await assert.rejects(tasks[1]!.result, /TimeoutError/);
    await assert.rejects(tasks[2]!.result, /MemoryLimitError/);
    await assert.rejects(tasks[3]!.result, /dynamic code/);
    assert.deepEqual(await tasks[4]!.result, ['undefined', 'undefined']);
    await assert.rejects(tasks[5]!.result, /TypeError: .*require.* is not a function/);
    await assert.rejects(tasks[6]!.result, /SandboxError: Not supported/); // isolated-vm has no module loader: import() throws
    await assert.rejects(tasks[7]!.result, /RangeError: Maximum call stack size exceeded/);
    assert.deepEqual(await factorizeAll(dist, [91]), [7]);
    assert.equal(existsSync(marker), false, 'import() loaded no module');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a batch cannot loosen the service limits: 320 MB asked under a 4 GB batch limit stops at the service 128 MB', async () => {
  // Finite: with the batch's own limit it would return 400.
  const big = dist.task(() => { const keep: number[][] = []; for (let i = 0; i < 400; i++) keep.push(new Array(100_000).fill(1.5)); return keep.length; });
  await dist.start([big], { limits: { memoryMb: 4096 } });
  await assert.rejects(big.result, /MemoryLimitError/);
});

test('one round trip starts a batch of 1,000 tasks and streams its outcomes; cancel stops a running task', async () => {
  const tasks = Array.from({ length: 1000 }, (_, i) => dist.task(() => i * i));
  const batch = await dist.start(tasks);
  let sum = 0;
  for (const t of tasks) sum += await t.result;
  assert.equal(sum, (999 * 1000 * 1999) / 6);
  assert.equal((await batch.done).roundTrips, 1, 'one request started the batch and streamed its outcomes back');
  const long = { ms: 1e12 };
  const slow = dist.task(() => { let x = 0; for (let i = 0; i < long.ms; i++) x++; return x; });
  await dist.start([slow]);
  assert.equal(await slow.cancel(), true);
  await assert.rejects(slow.result, { name: 'CancelledError' });
  // The sandbox running it was stopped: a new batch runs at once on both workers.
  assert.deepEqual(await factorizeAll(dist, [91, 15]), [7, 3]);
});

test('a request is MessagePack, compressed: a batch over a large compressible array sends a fraction of its bytes', async () => {
  const steps = new Float64Array(128 * 1024).map((_, i) => i % 100); // 1 MB that compresses well
  const t = dist.task(() => steps[12345]);
  const costs = await (await dist.start([t])).done;
  assert.equal(await t.result, 45);
  assert.ok(costs.requestBytes < steps.byteLength / 10, `${costs.requestBytes} bytes sent for a ${steps.byteLength}-byte array`);
});

/** A MessagePack request of the service's protocol. */
function msgpackRequest(method: string, p: string, body: unknown, opts: { auth?: string | null; encoding?: string } = {}) {
  const raw = pack(body);
  return request(method, p, { body: opts.encoding === 'br' ? brotliCompressSync(raw) : raw, contentType: 'application/x-msgpack', auth: opts.auth, ...(opts.encoding ? { encoding: opts.encoding } : {}) });
}

test('requests without the token, oversized, malformed or compressed too far get a 4xx; the service keeps serving', async () => {
  assert.equal((await request('GET', '/v1/health', { auth: null })).status, 401);
  assert.equal((await request('GET', '/v1/health', { auth: `Bearer ${token}x` })).status, 401);
  const opened = await request('POST', '/v1/sessions');
  assert.equal(opened.status, 201);
  const session = (JSON.parse(opened.body) as { session: string }).session;
  const batches = `/v1/sessions/${session}/batches`;
  const valid = { graph: { codes: [{ src: '() => 1', env: [], form: 'expression' }], nodes: [{ t: 'f', c: 0, env: [] }], tasks: [{ f: 0 }] } };
  assert.equal((await msgpackRequest('POST', batches, valid, { auth: 'Bearer nope' })).status, 401);
  assert.equal((await msgpackRequest('POST', `/v1/sessions/nope/batches`, valid)).status, 404);
  const big = await msgpackRequest('POST', batches, { ...valid, pad: 'x'.repeat(3 * 1024 * 1024) });
  assert.equal(big.status, 413);
  // A small body that decompresses beyond the limit (a compression bomb) is refused, not inflated.
  const bomb = await msgpackRequest('POST', batches, { ...valid, pad: 'x'.repeat(8 * 1024 * 1024) }, { encoding: 'br' });
  assert.equal(bomb.status, 413, bomb.body);
  const named = await msgpackRequest('POST', batches, { graph: { ...valid.graph, nodes: [{ t: 'f', c: 0, env: [] }, { t: 'ta', c: 'Uint8Array', h: 'ab'.repeat(32) }], blobs: { ['ab'.repeat(32)]: 2048 } } });
  assert.equal(named.status, 409, named.body);
  assert.deepEqual((JSON.parse(named.body) as { missing: string[] }).missing, ['ab'.repeat(32)]);
  const lying = await msgpackRequest('POST', batches, { graph: { ...valid.graph, blobs: { ['ab'.repeat(32)]: 4 } }, blobs: { ['ab'.repeat(32)]: Buffer.from('nope') } });
  assert.equal(lying.status, 400);
  assert.match(lying.body, /do not have that SHA-256/);
  const rng = new Rng(7);
  const validBytes = pack(valid);
  const malformed: Buffer[] = [Buffer.alloc(0), Buffer.from('{'), pack(null), pack([]), pack({ graph: 1 }), pack({ graph: {} }), pack({ graph: { codes: [], nodes: [], tasks: [] } }),
    pack({ graph: { codes: [], nodes: [], tasks: [{ f: 5 }] } }), pack({ graph: { codes: [], nodes: [{ t: 'zz' }], tasks: [{ f: 0 }] } }), pack({ graph: { codes: [{ src: 1 }], nodes: [], tasks: [{ f: 0 }] } })];
  for (let i = 0; i < 40; i++) {
    // Random corruptions of a valid request: a byte changed, a cut, a byte doubled.
    const at = rng.int(0, validBytes.length - 1);
    const kind = rng.int(0, 2);
    const bad = Buffer.from(validBytes);
    malformed.push(kind === 0 ? bad.subarray(0, at) : kind === 1 ? (bad[at] = rng.int(0, 255), bad) : Buffer.concat([bad.subarray(0, at + 1), bad.subarray(at)]));
  }
  let refused = 0;
  for (const body of malformed) {
    const r = await request('POST', batches, { body, contentType: 'application/x-msgpack' });
    assert.ok(r.status === 202 || (r.status >= 400 && r.status < 500), `${r.status} for ${body.toString('hex').slice(0, 80)}: ${r.body}`);
    if (r.status !== 202) {
      refused++;
      assert.match(r.body, /"error"/);
    }
  }
  assert.ok(refused >= 10);
  assert.equal((await request('GET', `/v1/sessions/${session}/batches/nope/outcomes`)).status, 404);
  assert.equal((await request('GET', `/v1/sessions/${session}/batches/nope/outcomes?from=-5`)).status, 400);
  const json = await request('POST', batches, { body: JSON.stringify(valid), contentType: 'application/json' });
  assert.equal(json.status, 415, 'a JSON body is not the protocol');
  assert.equal((await request('GET', '/v1/health')).status, 200);
});

test('a broken outcome stream is read again from where it broke', async () => {
  const opened = await request('POST', '/v1/sessions');
  const session = (JSON.parse(opened.body) as { session: string }).session;
  const graph = { codes: [{ src: '(i) => i * 2', env: [], form: 'expression' }], nodes: [{ t: 'f', c: 0, env: [] }], tasks: Array.from({ length: 50 }, (_, i) => ({ f: 0, a: [i] })) };
  const started = await msgpackRequest('POST', `/v1/sessions/${session}/batches`, { graph });
  assert.equal(started.status, 202);
  const frames = readFrames(Buffer.from(started.body, 'latin1'));
  const { batch } = frames[0] as { batch: string };
  const chunks = frames.filter((f) => 'c' in f) as { c: { i: number[]; z: Uint8Array }[] }[];
  assert.equal(chunks.flatMap((f) => f.c.flatMap((c) => c.i)).sort((a, b) => a - b).join(), Array.from({ length: 50 }, (_, i) => i).join());
  // Read again from the second chunk on: the same chunks after the first, then the end.
  const again = readFrames(Buffer.from((await request('GET', `/v1/sessions/${session}/batches/${batch}/outcomes?from=1`)).body, 'latin1'));
  assert.deepEqual(again.filter((f) => 'c' in f).flatMap((f) => (f as { c: { i: number[] }[] }).c.map((c) => c.i)), chunks.flatMap((f) => f.c.map((c) => c.i)).slice(1));
  assert.equal((again.at(-1) as { end: string }).end, 'done');
  const outcomes = chunks.flatMap((f) => f.c.flatMap((c) => unpackChunk(c.z, 50)));
  assert.ok(outcomes.every(([i, o]) => (JSON.parse(o) as { v: number }).v === i * 2));
});

/** The frames of an outcome stream. */
function readFrames(bytes: Buffer): object[] {
  return new FrameReader<object>().push(bytes);
}
