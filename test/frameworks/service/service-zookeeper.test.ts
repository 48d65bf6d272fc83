/**
 * The service in front of node processes over a real 3-server ZooKeeper ensemble: its long-lived job
 * runs on the nodes and takes batches as work (a captured array over 64 KiB travels through the data
 * plane); the seed's programs equal sequential runs; side effects arrive; once idle the job frees the
 * nodes, and `tidepool serve --zk` (the built CLI) serves batches on them; a node killed with SIGKILL
 * mid-batch loses no task.
 * Needs `npm run build`: the nodes load the service's task type and job kind from the installed package ('tidepool-runtime/service').
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Cluster } from '../../../src/runtime/client/cluster.js';
import { awaitOutcome } from '../../../src/index.js';
import { Distribution, startService, type RunningService } from '../../../src/frameworks/service/index.js';
import { allKnightTours, countPrimes, factorize, factorizeAll, knightTours, mandelbrot, mandelbrotRow, primes } from '../../../examples/service/programs.js';
import { secretFile, secretIn, startNodeProcess, type NodeProcess } from '../../support/node-process.js';
import { waitFor, withDeadline } from '../../support/wait.js';
import { startEnsemble, type ZkEnsemble } from '../../support/zk-ensemble.js';
import { nestedWritesArrive } from './side-effect-cases.js';
import { mean } from './fixtures/package-use.js';
import { selfSignedCert } from './tls.js';
import { serveFiles, startServe } from './serve-process.js';

const T = { timeout: 240_000 };
const token = 'zk-service-token-0123456789';

describe('the service on node processes over ZooKeeper', () => {
  let zk: ZkEnsemble;
  let cluster: Cluster;
  let service: RunningService;
  let dist: Distribution;
  let secret: string;
  let tls: { cert: string; key: string };
  const processes: NodeProcess[] = [];

  before(async () => {
    zk = await startEnsemble({ size: 3 });
    secret = secretFile();
    processes.push(...await Promise.all(Array.from({ length: 2 }, () => startNodeProcess({ zk: zk.connectionString, secretFile: secret, workers: 1 }))));
    cluster = await Cluster.connect(zk.connectionString, { secret: secretIn(secret) });
    await waitFor(async () => (await cluster.nodes()).filter((n) => n.assignment === '').length === 2, 'two idle nodes', 60_000);
    tls = selfSignedCert();
    service = await startService({ cluster, tls, token, port: 0, taskRef: { module: 'tidepool-runtime/service', export: 'serviceTask' }, kindRef: { module: 'tidepool-runtime/service', export: 'serviceJobKind' }, idleReleaseMs: 1_000 });
    dist = await Distribution.connect(service.url, { token, ca: tls.cert });
  }, T);
  after(async () => {
    await dist?.close();
    await service?.close();
    await cluster?.close();
    for (const p of processes) p.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await zk?.stop();
  });

  it('runs batches on the nodes; a large capture and a bundled package travel through the data plane', T, async () => {
    const numbers = [1_000_003 * 999_983, 104_723 * 104_729, 2 ** 31 - 1, 97 * 89];
    assert.deepEqual(await withDeadline(factorizeAll(dist, numbers), 'factorization', 120_000), numbers.map(factorize));
    const samples = Float64Array.from({ length: 20_000 }, (_, i) => Math.sin(i)); // 160 KB: over the 64 KiB spec limit
    const sums = new Float64Array(20);
    const means = new Float64Array(20);
    await withDeadline(dist.parallelFor(0, 20, (i) => {
      let s = 0;
      for (let k = i * 1000; k < (i + 1) * 1000; k++) s += samples[k]!;
      sums[i] = s;
      means[i] = mean(Array.from(samples.subarray(i * 1000, (i + 1) * 1000))); // a package export, bundled by this client
    }), 'the parallel loop', 120_000);
    assert.deepEqual(dist.lastPackages, [{ name: 'tidepool-fixture-stats', version: '1.2.0', as: 'bundle' }]);
    for (let i = 0; i < 20; i++) {
      let s = 0;
      for (let k = i * 1000; k < (i + 1) * 1000; k++) s += samples[k]!;
      assert.equal(sums[i], s, `sums[${i}] bit-identical to the sequential sum`);
      assert.equal(means[i], mean(Array.from(samples.subarray(i * 1000, (i + 1) * 1000))), `means[${i}] as the package computes it here`);
    }
  });

  it('the seed programs (Mandelbrot, prime scanner, knight tours on 5×5) equal sequential runs', T, async () => {
    const [w, h, iterations] = [120, 40, 150];
    const image = await withDeadline(mandelbrot(dist, w, h, iterations), 'Mandelbrot', 120_000);
    const expected = new Uint8Array(w * h);
    for (let y = 0; y < h; y++) expected.set(mandelbrotRow(y, w, h, iterations), y * w);
    assert.deepEqual(image, expected);
    assert.equal(await withDeadline(primes(dist, 100_000, 6), 'primes', 120_000), countPrimes(0, 100_000));
    assert.equal(countPrimes(0, 100_000), 9592); // π(10^5)
    // The sequential count is the published one (OEIS A165134): computing it here would block this process's
    // event loop for seconds, and with it the cluster client's ZooKeeper connection.
    assert.equal(await withDeadline(allKnightTours(dist, 5), 'knight tours', 120_000), 1728);
    assert.equal(knightTours(5, 0), 304); // one start square, sequentially
  });

  it('side effects on nested objects, arrays, typed arrays, Maps, Sets and new objects arrive', T, async () => {
    await withDeadline(nestedWritesArrive(dist), 'the side-effect batches', 120_000);
  });

  it('once idle, the service\'s job frees the nodes; tidepool serve --zk (the built CLI) runs a client batch on them', T, async () => {
    await waitFor(async () => (await cluster.nodes()).filter((n) => n.assignment === '').length === 2, 'the first service\'s job released, idle', 60_000);
    const cliToken = 'serve-zk-token-0123456789';
    const { dir, args } = serveFiles(tls, cliToken, 'tidepool-serve-zk-');
    const served = startServe(['--zk', zk.connectionString, '--secret-file', secret, '--port', '0', '--json', ...args]);
    try {
      const ready = await served.ready;
      assert.match(ready.url, /^https:\/\/127\.0\.0\.1:\d+$/);
      assert.equal(ready.cluster, zk.connectionString);
      const client = await Distribution.connect(ready.url, { token: cliToken, ca: tls.cert });
      try {
        assert.deepEqual(await withDeadline(factorizeAll(client, [91, 1_000_003 * 3, 65_537]), 'the CLI service batch', 120_000), [7, 3, 65_537]);
        // A batch of about a second or more: the node processes report its job while it runs (polled every ≤ 50 ms).
        const jobsSeen = new Set<string>();
        let running = true;
        const batch = primes(client, 3_000_000, 8).finally(() => (running = false));
        await waitFor(async () => {
          for (const n of await cluster.nodes()) if (n.job !== null) jobsSeen.add(n.job);
          return !running;
        }, 'the CLI service batch on the node processes', 180_000);
        assert.equal(await batch, 216_816); // π(3·10^6)
        assert.ok(jobsSeen.size >= 1, 'the batch ran as a job of the ZooKeeper cluster\'s node processes');
      } finally {
        await client.close();
      }
      assert.equal(await withDeadline(served.stop(), 'serve after SIGTERM', 60_000), 0);
    } finally {
      await served.stop('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a service killed with SIGKILL: its job ends once its session is gone, naming why, and frees the nodes', T, async () => {
    await waitFor(async () => (await cluster.nodes()).filter((n) => n.assignment === '').length === 2, 'idle nodes', 60_000);
    const { dir, args } = serveFiles(tls, token, 'tidepool-serve-zk-');
    const served = startServe(['--zk', zk.connectionString, '--secret-file', secret, '--port', '0', '--json', ...args]);
    try {
      const { url } = await served.ready;
      const client = await Distribution.connect(url, { token, ca: tls.cert });
      assert.deepEqual(await withDeadline(factorizeAll(client, [91]), 'a batch', 120_000), [7]);
      const job = (await cluster.nodes()).find((n) => n.job !== null)!.job!;
      await client.close();
      await served.stop('SIGKILL');
      const outcome = await withDeadline(awaitOutcome(cluster.coordination, job), 'the orphaned job\'s end', 120_000);
      assert.equal(outcome.status, 'failed');
      assert.match((outcome as { error: string }).error, /its service is gone/);
      await waitFor(async () => (await cluster.nodes()).filter((n) => n.assignment === '').length === 2, 'the nodes freed', 60_000);
    } finally {
      await served.stop('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a node killed with SIGKILL mid-batch loses no task', T, async () => {
    const counts = new Array<number>(24).fill(-1);
    const limit = 1_500_000; // about 0.4 s per task here: the batch takes seconds on two single-worker nodes
    let finished = false;
    const batch = dist.parallelFor(0, 24, (i) => {
      counts[i] = countPrimes(0, limit + i);
    }).then(() => (finished = true));
    await waitFor(async () => (await cluster.nodes()).filter((n) => n.job !== null).length === 2, 'both nodes in the batch job', 60_000);
    processes[1]!.kill('SIGKILL');
    await processes[1]!.exited;
    assert.equal(finished, false, 'the node was killed while the batch ran');
    await withDeadline(batch, 'the batch after the kill', 180_000);
    const expected = countPrimes(0, limit);
    assert.deepEqual(counts, Array.from({ length: 24 }, (_, i) => expected + countPrimes(limit, limit + i)));
  });
});
