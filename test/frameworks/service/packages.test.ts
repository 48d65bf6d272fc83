// Imported packages (seed 002 §3.2): a captured export of an installed package travels as a reference
// (package, version, module, export path) when the service has that version, and bundled by the client
// otherwise; either way it is evaluated inside the sandbox, with no module loader and no I/O. Class
// instances of a package, side effects through its functions and a package closure that is not an
// export work on both paths; a package that imports Node.js modules is refused at start, by name.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { fileURLToPath } from 'node:url';
import { CaptureError, Distribution } from '../../../src/frameworks/service/index.js';
import { Histogram, makeScaler, mean, normalizeInPlace, readConfig, variance } from './fixtures/package-use.js';
import { startHttpsService, type HttpsService } from './https-service.js';
import { pack } from '../../../src/frameworks/service/wire-format.js';

const STATS_DIR = fileURLToPath(new URL('./fixtures/node_modules/tidepool-fixture-stats', import.meta.url));
const STATS = { name: 'tidepool-fixture-stats', version: '1.2.0' };

/** Batches that use the stats package every way a task can; returns the request size of the first. */
async function packageBatches(dist: Distribution): Promise<number> {
  const samples = [[1, 2, 3, 4], [2, 4, 4, 4, 5, 5, 7, 9], [10]];
  const tasks = samples.map((xs) => dist.task(() => [mean(xs), variance(xs)]));
  const batch = await dist.start(tasks);
  assert.deepEqual(await Promise.all(tasks.map((t) => t.result)), [[2.5, 1.25], [5, 4], [10, 0]]);
  const { requestBytes } = await batch.done;

  const histogram = new Histogram(4, 0, 8);
  const data = [0.5, 1.5, 2, 7.9, 6, 3.3, 4.4, 5.5];
  const weights = [1, 3];
  const triple = makeScaler(3); // a closure of the package that its module does not export
  const t = dist.task(() => {
    for (const x of data) histogram.add(x); // a method of the package's class, on a captured instance
    normalizeInPlace(weights); // a package function writing the client's array
    return { fresh: new Histogram(2, 0, 1), tripled: triple(5) };
  });
  await dist.start([t]);
  const { fresh, tripled } = await t.result;
  assert.deepEqual(histogram.counts, [2, 2, 2, 2]);
  assert.deepEqual(weights, [0.25, 0.75]);
  assert.ok(fresh instanceof Histogram, 'a new instance of the package class is an instance of the client\'s class');
  assert.deepEqual(fresh.counts, [0, 0]);
  assert.equal(tripled, 15);
  return requestBytes;
}

function health(svc: HttpsService): Promise<{ packages: Record<string, string> }> {
  return post(svc, 'GET', '/v1/health').then((r) => JSON.parse(r.body) as { packages: Record<string, string> });
}

function post(svc: HttpsService, method: string, path: string, body?: Buffer): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(new URL(path, svc.service.url), {
      method, ca: svc.tls.cert,
      headers: { authorization: `Bearer ${svc.token}`, ...(body !== undefined ? { 'content-type': 'application/x-msgpack', 'content-length': body.length } : {}) },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Starts a batch by hand, in a session of its own. */
async function postBatch(svc: HttpsService, body: unknown): Promise<{ status: number; body: string }> {
  const { session } = JSON.parse((await post(svc, 'POST', '/v1/sessions')).body) as { session: string };
  return post(svc, 'POST', `/v1/sessions/${session}/batches`, pack(body));
}

describe('imported packages', () => {
  let local: Distribution;
  let without: HttpsService;
  let having: HttpsService;
  before(async () => {
    local = Distribution.local({ workers: 2 });
    without = await startHttpsService();
    having = await startHttpsService({ packages: [STATS_DIR] });
  });
  after(async () => {
    await local.close();
    await without.close();
    await having.close();
  });

  test('Distribution.local(): the package is bundled and runs in the vm sandbox', async () => {
    await packageBatches(local);
    assert.deepEqual(local.lastPackages, [{ ...STATS, as: 'bundle' }]);
  });

  test('a service without the package: the client bundles it; one that has it: a reference, and a smaller request', async () => {
    assert.deepEqual((await health(without)).packages, {});
    assert.deepEqual((await health(having)).packages, { [STATS.name]: STATS.version });
    const bundled = await packageBatches(without.dist);
    assert.deepEqual(without.dist.lastPackages, [{ ...STATS, as: 'bundle' }]);
    const referenced = await packageBatches(having.dist);
    assert.deepEqual(having.dist.lastPackages, [{ ...STATS, as: 'reference' }]);
    assert.ok(bundled - referenced > 500, `the bundle travelled only to the service without the package (${bundled} vs ${referenced} bytes)`);
  });

  test('a reference the service cannot honour is a 400 naming the package: another version, a module outside it, a package it lacks', async () => {
    const batch = (pkg: object) => ({ graph: { codes: [], nodes: [{ t: 'pk', k: 0, f: 0, p: ['mean'] }], tasks: [{ f: 0 }], packages: [pkg] } });
    const version = await postBatch(having, batch({ ...STATS, version: '9.9.9', files: ['lib/moments.js'] }));
    assert.equal(version.status, 400);
    assert.match(version.body, /has package tidepool-fixture-stats@1\.2\.0, not 9\.9\.9/);
    const outside = await postBatch(having, batch({ ...STATS, files: ['../tidepool-fixture-fs/index.js'] }));
    assert.equal(outside.status, 400);
    assert.match(outside.body, /not inside the package/);
    const lacking = await postBatch(without, batch({ ...STATS, files: ['lib/moments.js'] }));
    assert.equal(lacking.status, 400);
    assert.match(lacking.body, /does not have package tidepool-fixture-stats/);
  });

  test('a package that imports Node.js modules is refused at start, naming the variable, its line and the import', async () => {
    for (const dist of [local, without.dist, having.dist]) {
      await assert.rejects(dist.start([dist.task(() => readConfig('config.json'))]), (e: CaptureError) => {
        assert.ok(e instanceof CaptureError, String(e));
        assert.equal(e.variable, 'readConfig');
        assert.match(e.at, /packages\.test\.ts:\d+/);
        assert.match(e.message, /package tidepool-fixture-fs cannot run in a sandbox: .*node:fs.*Node\.js modules/);
        return true;
      });
    }
  });
});
