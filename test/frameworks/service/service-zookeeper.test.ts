/**
 * The service in front of node processes over a real 3-server ZooKeeper ensemble: a batch becomes a
 * job on the nodes (its captured graph, over 64 KiB, travels through the data plane), results equal
 * sequential runs, and a node killed with SIGKILL mid-batch loses no task.
 * Needs `npm run build`: the nodes load the batch task type from the installed package ('tidepool').
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Cluster } from '../../../src/runtime/cluster.js';
import { Distribution, startService, type RunningService } from '../../../src/index.js';
import { countPrimes, factorize, factorizeAll } from '../../../examples/service/programs.js';
import { secretFile, startNodeProcess, type NodeProcess } from '../../support/node-process.js';
import { waitFor, withDeadline } from '../../support/wait.js';
import { startEnsemble, type ZkEnsemble } from '../../support/zk-ensemble.js';
import { selfSignedCert } from './tls.js';

const T = { timeout: 240_000 };
const token = 'zk-service-token-0123456789';

describe('the service on node processes over ZooKeeper', () => {
  let zk: ZkEnsemble;
  let cluster: Cluster;
  let service: RunningService;
  let dist: Distribution;
  const processes: NodeProcess[] = [];

  before(async () => {
    zk = await startEnsemble({ size: 3 });
    const secret = secretFile();
    processes.push(...await Promise.all(Array.from({ length: 2 }, () => startNodeProcess({ zk: zk.connectionString, secretFile: secret, workers: 1 }))));
    cluster = await Cluster.connect(zk.connectionString, { secret: readFileSync(secret, 'utf8').trim() });
    await waitFor(async () => (await cluster.nodes()).filter((n) => n.assignment === '').length === 2, 'two idle nodes', 60_000);
    const tls = selfSignedCert();
    service = await startService({ cluster, tls, token, port: 0, taskRef: { module: 'tidepool', export: 'serviceBatchTask' } });
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

  it('runs batches on the nodes; a large capture travels through the data plane', T, async () => {
    const numbers = [1_000_003 * 999_983, 104_723 * 104_729, 2 ** 31 - 1, 97 * 89];
    assert.deepEqual(await withDeadline(factorizeAll(dist, numbers), 'factorization', 120_000), numbers.map(factorize));
    const samples = Float64Array.from({ length: 20_000 }, (_, i) => Math.sin(i)); // 160 KB: over the 64 KiB spec limit
    const sums = new Float64Array(20);
    await withDeadline(dist.parallelFor(0, 20, (i) => {
      let s = 0;
      for (let k = i * 1000; k < (i + 1) * 1000; k++) s += samples[k]!;
      sums[i] = s;
    }), 'the parallel loop', 120_000);
    for (let i = 0; i < 20; i++) {
      let s = 0;
      for (let k = i * 1000; k < (i + 1) * 1000; k++) s += samples[k]!;
      assert.equal(sums[i], s, `sums[${i}] bit-identical to the sequential sum`);
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
