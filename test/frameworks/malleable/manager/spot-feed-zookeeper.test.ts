/**
 * The live spot-price feed on node processes (issue 29, "Machines that come and go"): `tidepool manager
 * --price-feed` replays a real excerpt of EC2's 2010 spot price history (test/data/traces, 8 price
 * changes over 19 hours) at 900× onto two static and two spot `tidepool node` processes over ZooKeeper.
 * A malleable Stencil2D grows onto the spot nodes while the price is below the threshold; at each price
 * that reaches it the manager gets the interruption notice and vacates them before the notice ends;
 * below the threshold again (after the notice) the job grows back; at the end of the last notice the
 * spot nodes are SIGKILLed, as the cloud takes them. Nothing is lost: no rollback, and the result is
 * bit-identical to the sequential run.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { connect } from '../../../../src/coord/connect.js';
import type { GridResult } from '../../../../src/frameworks/malleable/apps/grid-blocks.js';
import { malleableJob } from '../../../../src/frameworks/malleable/malleable-kind-ref.js';
import { submitManagedJob } from '../../../../src/frameworks/malleable/manager/manager-store.js';
import type { MalleableOutcome } from '../../../../src/frameworks/malleable/runtime-options.js';
import { malleableProgress } from '../../../../src/frameworks/malleable/submit.js';
import { requestJob } from '../../../../src/runtime/client/job-requests.js';
import { jobLeader } from '../../../../src/runtime/client/job-list.js';
import { awaitOutcome } from '../../../../src/runtime/job/outcome.js';
import { secretFile, secretIn, startNodeProcess, type NodeProcess } from '../../../support/node-process.js';
import { withDeadline } from '../../../support/wait.js';
import { startEnsemble, type ZkEnsemble } from '../../../support/zk-ensemble.js';
import { plainStencil } from '../plain-grids.js';
import { nodesOf, startCli, waitFor } from './manager-scenario.js';

const STENCIL = { module: new URL('../../../../src/frameworks/malleable/apps/stencil2d.ts', import.meta.url).href, export: 'default' };
const PRICES = fileURLToPath(new URL('../../../data/traces/spot-ca-m1small-2010-02-16.jsonl', import.meta.url));
const SPOT = ['spot-1', 'spot-2'];

describe('a live spot-price feed on node processes', () => {
  let zk: ZkEnsemble;
  const secret = secretFile();
  const processes: NodeProcess[] = [];
  before(async () => {
    zk = await startEnsemble({ size: 1 });
  });
  after(async () => {
    for (const p of processes) p.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await zk.stop();
  });

  it('replays EC2 prices at 900×: spot nodes used below the threshold, vacated within each notice, SIGKILLed at the last one\'s end; nothing lost', { timeout: 300_000 }, async () => {
    const client = await connect(zk.connectionString, { secret: secretIn(secret) });
    const start = async (id?: string) => void processes.push(await startNodeProcess({ zk: zk.connectionString, secretFile: secret, workers: 1, ...(id ? { id } : {}) }));
    await Promise.all([start(), start(), ...SPOT.map((id) => start(id))]);
    // The notice: 6 s of real time (the trace's 2 minutes would be 0.13 s at 900×). Thresholds crossed at 10:54 and 20:36 of the trace.
    // The prices come on stdin once the job runs (the replay starts with the first price); until then the spot nodes are kept from jobs.
    const manager = await startCli(['manager', '--zk', zk.connectionString, '--secret-file', secret, '--tgap', '0s', '--cost-factor', '0', '--json',
      '--price-feed', '-', '--spot-nodes', ...SPOT, '--spot-threshold', '0.0405', '--speed', '900', '--notice', '6s'], /"ready":true/, { stdin: 'pipe' });
    try {
      const params = { grid: 48, blocks: 6, iterations: 300 };
      // The stencil waits at iteration 100 (serving rescale requests) until the test resumes it: it outlives the replay.
      const job = await submitManagedJob(client, { ...malleableJob(STENCIL, params, { pauseAt: [100], checkpointEvery: 50 }), flexibility: 'malleable', minNodes: 1, maxNodes: 4, secret: secretIn(secret) });
      await waitFor(async () => (await nodesOf(client, job.id)).length === 2, 'the stencil on the two static nodes', 90_000);
      assert.ok((await nodesOf(client, job.id)).every((n) => !SPOT.includes(n)), 'the spot nodes were kept from the job before the first price');
      await waitFor(async () => (await jobLeader(client, job.id)) !== null, 'the stencil\'s leader', 60_000);
      const leader = await jobLeader(client, job.id);
      manager.child.stdin!.end(readFileSync(PRICES));
      const lines = () => manager.out().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
      const spotLines = () => lines().filter((l) => typeof l.spot === 'string');
      const onSpot = async () => (await nodesOf(client, job.id)).filter((n) => SPOT.includes(n)).length;

      const grown = async (what: string) => waitFor(async () => (await onSpot()) === 2, `the stencil to grow onto both spot nodes (${what})`, 60_000);
      await grown('the price is below the threshold');
      for (const k of [1, 2]) {
        await waitFor(async () => spotLines().filter((l) => l.spot === 'notice').length >= k, `interruption notice ${k}`, 90_000);
        const notice = spotLines().filter((l) => l.spot === 'notice')[k - 1]!;
        assert.equal(notice.price, 0.041, 'the price that reached the threshold');
        const takeAt = notice.takeAt as number;
        await waitFor(async () => (await onSpot()) === 0, `the spot nodes to be vacated (notice ${k})`, Math.max(1, takeAt - Date.now()));
        assert.ok(Date.now() < takeAt, `notice ${k}: both spot nodes left the job before the notice ended`);
        if (k === 1) {
          // Taken at the notice's end, usable again at once (the price fell during the notice): the job grows back.
          await waitFor(async () => spotLines().some((l) => l.spot === 'clear' && l.traceTime === '2010-02-16T12:08:09.000Z'), 'the clear after the first notice', 60_000);
          await grown('after the first notice');
        }
      }
      await waitFor(async () => spotLines().filter((l) => l.spot === 'take').length === 2, 'the end of the second notice', 60_000);
      for (const p of processes.filter((x) => SPOT.includes(x.id))) p.kill('SIGKILL'); // the cloud takes them
      await Promise.all(processes.filter((x) => SPOT.includes(x.id)).map((p) => p.exited));

      assert.deepEqual(spotLines().map((l) => [l.spot, l.traceTime ?? null]).slice(0, 5), [
        ['clear', '2010-02-16T05:54:47.000Z'], ['notice', '2010-02-16T10:54:43.000Z'], ['take', null], ['clear', '2010-02-16T12:08:09.000Z'], ['notice', '2010-02-16T20:36:13.000Z'],
      ], 'the replay in the trace\'s order');
      await waitFor(async () => (await malleableProgress(client, job.id).catch(() => undefined))?.iteration === 100, 'the stencil at iteration 100', 60_000);
      assert.deepEqual([await nodesOf(client, job.id), await jobLeader(client, job.id)], [processes.filter((p) => !SPOT.includes(p.id)).map((p) => p.id).sort(), leader], 'on the static nodes, its leader unchanged');
      await requestJob(client, job.id, 'resume');
      const outcome = await withDeadline(awaitOutcome(client, job.id), 'the stencil to finish', 120_000);
      assert.equal(outcome.status, 'done', JSON.stringify(outcome));
      const { result, stats } = (outcome as { value: MalleableOutcome<GridResult> }).value;
      assert.equal(result.checksum, plainStencil(48, 300, 6).checksum, 'bit-identical to the sequential run');
      assert.equal(stats.rollbacks, 0, 'no rollback: nothing was on the spot nodes when they were taken');
      assert.ok(stats.rescales.filter((r) => r.kind === 'shrink').length >= 2 && stats.rescales.filter((r) => r.kind === 'expand').length >= 2, `grown and vacated twice: ${JSON.stringify(stats.rescales.map((r) => [r.kind, r.nodes.length]))}`);
    } finally {
      manager.child.kill('SIGTERM');
      assert.equal(await withDeadline(manager.exited, 'the manager to stop', 60_000), 0, manager.out());
      await client.close();
    }
  });
});
