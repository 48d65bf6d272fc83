// The service over real HTTPS on an embedded cluster with real isolates: the seed's programs give
// the sequential results; one round trip starts a batch; costs come back; exceptions map to client
// lines; escapes (process, require, import(), constructor.constructor), an infinite loop, a memory
// bomb and deep recursion are contained while the service keeps serving; cancel works; requests
// without the token, oversized or malformed are refused with a 4xx (fuzzed); an await answers in
// either form, JSON outcomes or compressed chunks.
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
import { unpackOutcomes } from '../../../src/frameworks/service/outcome-chunks.js';

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

function request(method: string, path: string, opts: { body?: string | Buffer; auth?: string | null; contentType?: string } = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = {};
    if (opts.auth !== null) headers.authorization = opts.auth ?? `Bearer ${token}`;
    if (opts.body !== undefined) {
      headers['content-type'] = opts.contentType ?? 'application/json';
      headers['content-length'] = Buffer.byteLength(opts.body);
    }
    const req = https.request(new URL(path, service.url), { method, ca: tls.cert, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
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
  // The sandbox's global object, reached the way capture cannot see (a sloppy-mode `this`).
  const probe = { global() { return (function (this: Record<string, unknown>) { return this; }.call(undefined as never)); } };
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

test('one round trip starts a batch of 1,000 tasks; cancel stops a running batch', async () => {
  const tasks = Array.from({ length: 1000 }, (_, i) => dist.task(() => i * i));
  await dist.start(tasks);
  let sum = 0;
  for (const t of tasks) sum += await t.result;
  assert.equal(sum, (999 * 1000 * 1999) / 6);
  assert.equal(dist.lastCosts!.roundTrips, 2, 'one request started the batch, one long poll awaited it');
  const long = { ms: 1e12 };
  const slow = dist.task(() => { let x = 0; for (let i = 0; i < long.ms; i++) x++; return x; });
  await dist.start([slow]);
  assert.equal(await slow.cancel(), true);
  await assert.rejects(slow.result, /cancel/);
});

test('an await answers with the outcomes as JSON or as the nodes compressed them (form=chunks, what the client asks for): the same outcomes, a fraction of the bytes', async () => {
  // 64 rows of a 2000-pixel Mandelbrot: each outcome carries a 2000-byte row.
  const image = await mandelbrot(dist, 2000, 64, 100);
  const expected = new Uint8Array(2000 * 64);
  for (let y = 0; y < 64; y++) expected.set(mandelbrotRow(y, 2000, 64, 100), y * 2000);
  assert.deepEqual(image, expected);
  const costs = dist.lastCosts!;
  // The same batch shape, started by hand, read in both forms.
  const capture = JSON.stringify({ graph: { codes: [{ src: '() => { let s = ""; for (let i = 0; i < 4000; i++) s += "ab"; return s; }', env: [], form: 'expression' }], nodes: [{ t: 'f', c: 0, env: [] }], tasks: Array.from({ length: 40 }, () => ({ f: 0 })) } });
  const started = await request('POST', '/v1/batches', { body: capture });
  assert.equal(started.status, 202, started.body);
  const { batch } = JSON.parse(started.body) as { batch: string };
  const asOutcomes = await request('GET', `/v1/batches/${batch}?waitMs=30000`);
  const asChunks = await request('GET', `/v1/batches/${batch}?waitMs=30000&form=chunks`);
  const outcomes = (JSON.parse(asOutcomes.body) as { outcomes: Array<{ ok: boolean }> }).outcomes;
  const { chunks, tasks } = JSON.parse(asChunks.body) as { chunks: string[]; tasks: number };
  assert.equal(tasks, 40);
  assert.deepEqual(unpackOutcomes(chunks, 40).map((o) => JSON.parse(o!) as unknown), outcomes);
  assert.ok(outcomes.every((o) => o.ok));
  assert.ok(asChunks.body.length * 10 < asOutcomes.body.length, `compressed ${asChunks.body.length} against ${asOutcomes.body.length} bytes`);
  // The client reads the compressed form: its answer was smaller than the image it carried.
  assert.ok(costs.responseBytes < 2000 * 64, `${costs.responseBytes} bytes for a ${2000 * 64}-byte image`);
  assert.equal((await request('GET', `/v1/batches/${batch}?form=zip`)).status, 400);
});

test('requests without the token, oversized or malformed get a 4xx; the service keeps serving', async () => {
  assert.equal((await request('GET', '/v1/health', { auth: null })).status, 401);
  assert.equal((await request('GET', '/v1/health', { auth: `Bearer ${token}x` })).status, 401);
  assert.equal((await request('POST', '/v1/batches', { body: JSON.stringify({ graph: { codes: [], nodes: [], tasks: [{ f: 0 }] } }), auth: 'Bearer nope' })).status, 401);
  const big = await request('POST', '/v1/batches', { body: `{"graph":{"codes":[],"nodes":[],"tasks":[{"f":0}],"pad":"${'x'.repeat(3 * 1024 * 1024)}"}}` });
  assert.equal(big.status, 413);
  const rng = new Rng(7);
  const valid = JSON.stringify({ graph: { codes: [{ src: '() => 1', env: [], form: 'expression' }], nodes: [{ t: 'f', c: 0, env: [] }], tasks: [{ f: 0 }] } });
  const malformed: string[] = ['', '{', 'null', '[]', '{"graph":1}', '{"graph":{}}', '{"graph":{"codes":[],"nodes":[],"tasks":[]}}', '{"graph":{"codes":[],"nodes":[],"tasks":[{"f":5}]}}',
    '{"graph":{"codes":[],"nodes":[{"t":"zz"}],"tasks":[{"f":0}]}}', '{"graph":{"codes":[{"src":1}],"nodes":[],"tasks":[{"f":0}]}}'];
  for (let i = 0; i < 40; i++) {
    // Random corruptions of a valid request: a byte changed, a cut, a duplicate.
    const at = rng.int(0, valid.length - 1);
    const kind = rng.int(0, 2);
    const bad = kind === 0 ? valid.slice(0, at) : kind === 1 ? valid.slice(0, at) + String.fromCharCode(rng.int(32, 126)) + valid.slice(at + 1) : valid.slice(0, at) + valid.slice(at - 1 >= 0 ? at - 1 : 0);
    malformed.push(bad);
  }
  let refused = 0;
  for (const body of malformed) {
    const r = await request('POST', '/v1/batches', { body });
    assert.ok(r.status === 202 || (r.status >= 400 && r.status < 500), `${r.status} for ${JSON.stringify(body).slice(0, 80)}: ${r.body}`);
    if (r.status !== 202) {
      refused++;
      assert.match(r.body, /"error"/);
    }
  }
  assert.ok(refused >= 10);
  assert.equal((await request('GET', '/v1/batches/nope')).status, 404);
  assert.equal((await request('GET', '/v1/batches/nope?waitMs=-5')).status, 400);
  const plain = await request('POST', '/v1/batches', { body: valid, contentType: 'text/plain' });
  assert.ok(plain.status >= 400 && plain.status < 500, `text/plain: ${plain.status}`);
  assert.equal((await request('GET', '/v1/health')).status, 200);
});
