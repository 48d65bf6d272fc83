/**
 * The iterative kind on node processes over a real 3-server ZooKeeper ensemble and real TCP: jobs
 * under every strategy survive kill -9 of a member (its unreported blocks run again elsewhere), and a
 * RUPER job the drain of a member (its ranges are handed over); each gives the sequential result bit
 * for bit with every iteration counted once. Two jobs run at once on disjoint nodes to keep it short.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Cluster } from '../../../src/runtime/client/cluster.js';
import { jobLeader } from '../../../src/runtime/client/job-list.js';
import { requestJob } from '../../../src/runtime/client/job-requests.js';
import { iterateSequentially, submitIterative, type IterativeOptions } from '../../../src/frameworks/iterative/run-iterative.js';
import type { NodeFigures } from '../../../src/frameworks/iterative/figures.js';
import type { BalanceStrategy } from '../../../src/frameworks/iterative/iterative-types.js';
import { secretFile, secretIn, startNodeProcess, type NodeProcess } from '../../support/node-process.js';
import { waitFor, withDeadline } from '../../support/wait.js';
import { startEnsemble, type ZkEnsemble } from '../../support/zk-ensemble.js';
import checksum, { type Checksum } from './apps/checksum.js';

const APP = { module: new URL('./apps/checksum.ts', import.meta.url).href, export: 'default' };
const T = { timeout: 180_000 };
/** 192 blocks of 2 × 30 ms of sleep: 4–6 s on two or three nodes whatever the load, time to disrupt one mid-run. */
const PARAMS = { work: 4, sleepMs: 30 };
const OPTS: IterativeOptions<{ work: number; sleepMs: number }> = {
  iterations: 19_200, params: PARAMS, blockSize: 100, chunkSize: 50, checkpointMs: 100,
  ruper: { checkpointInterval: 0.2, minRemaining: 0.05 },
};
const REFERENCE = iterateSequentially(checksum, OPTS).value;

describe('iterative jobs on node processes over ZooKeeper', () => {
  let zk: ZkEnsemble;
  let cluster: Cluster;
  const processes: NodeProcess[] = [];

  before(async () => {
    zk = await startEnsemble({ size: 3 });
    const secret = secretFile();
    processes.push(...await Promise.all(Array.from({ length: 5 }, () => startNodeProcess({ zk: zk.connectionString, secretFile: secret, workers: 1 }))));
    cluster = await Cluster.connect(zk.connectionString, { secret: secretIn(secret) });
  });
  after(async () => {
    await cluster?.close();
    for (const p of processes) p.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await zk.stop();
  });

  /** Runs a job on `nodes` nodes, kills (-9) or drains one member other than the leader once every member has run five blocks, checks the result. */
  async function disruptMidRun(balance: BalanceStrategy, nodes: number, how: 'kill -9' | 'drain'): Promise<void> {
    const what = `${balance} on ${nodes} nodes, ${how} of a member`;
    const job = await submitIterative(cluster, APP, { ...OPTS, balance, nodes });
    let ended = false;
    void job.outcome().then(() => (ended = true));
    let figures: NodeFigures[] = [];
    await waitFor(async () => {
      figures = (await requestJob(cluster.coordination, job.id, 'figures', null, { timeoutMs: 10_000 }).catch(() => [])) as NodeFigures[];
      // Five blocks each: past a durable checkpoint (every 100 ms), so a crash resumes from one, not from the start.
      return figures.length === nodes && figures.every((f) => f.done >= 5 * OPTS.blockSize!);
    }, `${what}: every member to run five blocks`, 90_000);
    const leader = await jobLeader(cluster.coordination, job.id);
    const victim = processes.find((p) => p.id !== leader && figures.some((f) => f.node === p.id))!;
    assert.equal(ended, false, `${what}: the job still runs when its member is disrupted`);
    if (how === 'kill -9') {
      victim.kill('SIGKILL');
      await victim.exited;
      processes.splice(processes.indexOf(victim), 1);
    } else {
      assert.equal(await cluster.drain(victim.id), true, `${what}: the member was in the job when drained`);
    }
    const r = await withDeadline(job.result<{ n: number; v: Checksum }>(), `${what}: the result`, 120_000);
    assert.equal(r.n, OPTS.iterations, `${what}: iterations`);
    assert.equal(r.v.count, OPTS.iterations, `${what}: every iteration counted once`);
    assert.equal(r.v.indexSum, (OPTS.iterations! * (OPTS.iterations! - 1)) / 2, `${what}: index checksum`);
    assert.deepEqual(r.v, REFERENCE, `${what}: bit-identical to the sequential fold`);
  }

  const idle = async (n: number) => waitFor(async () => (await cluster.nodes()).filter((x) => x.assignment === '').length >= n, `${n} idle nodes`, 60_000);

  it('ruper: kill -9 of a member of one job and drain of a member of another, at once', T, async () => {
    await idle(5);
    await Promise.all([disruptMidRun('ruper', 3, 'kill -9'), disruptMidRun('ruper', 2, 'drain')]);
  });

  it('steal and static: kill -9 of a member of each job, at once', T, async () => {
    await idle(4);
    await Promise.all([disruptMidRun('steal', 2, 'kill -9'), disruptMidRun('static', 2, 'kill -9')]);
  });
});
