/**
 * The resource manager as `tidepool manager` processes over a real 3-server ZooKeeper ensemble,
 * with `tidepool node` processes on loopback and jobs queued by `tidepool submit`: a malleable job is
 * asked to shrink and holds its acknowledgement; the manager is killed (SIGKILL) while the shrink is
 * pending; a new manager sends it again from the job's record, the waiting job is launched only after
 * the acknowledgement, `tidepool jobs --managed` and `tidepool scale` work (and their old names `queue` and
 * `rescale`), and both jobs count exactly. Malleable applications queued with `tidepool submit
 * --job-kind malleable --input` (a built-in one inline, a user's module from @FILE) run with the
 * parameters given, bit-identical to their sequential runs.
 */
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '../../../../src/coord/connect.js';
import { loadMalleableApp } from '../../../../src/frameworks/malleable/malleable-app.js';
import type { MalleableOutcome } from '../../../../src/frameworks/malleable/runtime-options.js';
import { runSequential } from '../../../../src/frameworks/malleable/sequential.js';
import { awaitOutcome } from '../../../../src/runtime/job/outcome.js';
import { withDeadline } from '../../../support/wait.js';
import { plainStencil } from '../plain-grids.js';
import { readManagedJob } from '../../../../src/frameworks/malleable/manager/manager-store.js';
import { jobPaths } from '../../../../src/runtime/job/job-paths.js';
import { useZkNodePool } from '../../../support/zk-node-pool.js';
import { rootState } from '../../../runtime/apps/compositions.js';
import { cli, finishExactly, HELD, membersOf, nodesOf, RESCALABLE, rescaleLog, startCli, waitFor } from './manager-scenario.js';

const T = { timeout: 240_000 };

describe('tidepool manager over ZooKeeper with node processes', () => {
  const pool = useZkNodePool(3);

  it('a manager killed with a shrink pending is replaced and loses no job; submit, queue and rescale', T, async () => {
    const client = await connect(pool.zk, { secret: pool.secret });
    const zkArgs = ['--zk', pool.zk, '--secret-file', pool.secretFile];
    const managerArgs = ['manager', ...zkArgs, '--policy', 'equipartition', '--tgap', '0s', '--json'];
    let m1 = await startCli(managerArgs, /"active":true/);
    try {
      const heldFile = fileURLToPath(HELD.module);
      const a = await cli(['submit', heldFile, '--flexibility', 'malleable', '--min', '1', '--max', '3', '--root', JSON.stringify(rootState(20, 300)), '--job-kind', `${fileURLToPath(RESCALABLE.module)}#default`, ...zkArgs, '--json']);
      const aId = a.job as string;
      await waitFor(async () => (await membersOf(client, aId)).length === 3, 'A to run on the 3 nodes', 90_000);
      // The manager told A its nodes after the launch; once A has answered (no request left in its channel), A holds its acknowledgements.
      const requests = `${jobPaths(aId).control}/requests`;
      await waitFor(async () => (await rescaleLog(client, aId)).length >= 1 && (await client.getChildren(requests).catch(() => ['?'])).length === 0, 'A to acknowledge its launch', 60_000);
      await client.create(`${jobPaths(aId).base}/hold-rescales`);
      const b = await cli(['submit', heldFile, '--kind', 'malleable', '--min', '1', '--max', '3', '--root', JSON.stringify(rootState(19, 300)), ...zkArgs, '--json']);
      const bId = b.job as string;
      const shrinks = async () => (await rescaleLog(client, aId)).filter((r) => (r.body.nodes?.length ?? 3) < 3);
      await waitFor(async () => (await shrinks()).length === 1, 'A to be asked to shrink', 60_000);
      const pending = (await readManagedJob(client, aId))!.record.pending;
      assert.ok(pending && pending.removed.length >= 1, 'the pending shrink is in A\'s record');

      m1.child.kill('SIGKILL');
      await m1.exited;
      m1 = await startCli(managerArgs, /"active":true/);
      const queue = await cli(['jobs', '--managed', ...zkArgs, '--json']) as { jobs: Array<{ id: string; flexibility: string; state: string; pending: unknown; nodes: string[] }> };
      assert.deepEqual(queue.jobs.map((j) => [j.id, j.flexibility, j.state]), [[aId, 'malleable', 'running'], [bId, 'malleable', 'waiting']], 'both jobs are still queued after the crash');
      const old = await cli(['queue', ...zkArgs, '--json']) as { jobs: Array<{ id: string; kind: string; state: string }> };
      assert.deepEqual(old.jobs.map((j) => [j.id, j.kind, j.state]), [[aId, 'malleable', 'running'], [bId, 'malleable', 'waiting']], 'the old name answers as before');
      assert.deepEqual(await nodesOf(client, bId), [], 'B gets nothing while A has not acknowledged');
      assert.deepEqual((await nodesOf(client, aId)).length, 3);

      await client.delete(`${jobPaths(aId).base}/hold-rescales`);
      await waitFor(async () => (await membersOf(client, bId)).length >= 1, 'B to launch on the nodes A gave up', 90_000);
      const log = await shrinks();
      assert.ok(log.length >= 2 && log.every((r) => r.members.length === 3), 'the new manager asked again, and A held all 3 nodes when asked');
      assert.equal((await readManagedJob(client, aId))!.record.pending, undefined, 'the shrink is acknowledged and recorded');

      const r = await cli(['scale', bId, '1', ...zkArgs, '--json']);
      assert.equal(r.requested, 1);
      // The operator's size sticks until released: jobs --managed shows it; scale --release gives it back to the policy.
      const listed = await cli(['jobs', '--managed', ...zkArgs, '--json']) as { jobs: Array<{ id: string; pinned: number | null; minNodes: number; maxNodes: number | null }> };
      assert.deepEqual(listed.jobs.map((j) => [j.id, j.pinned, j.minNodes, j.maxNodes]), [[aId, null, 1, 3], [bId, 1, 1, 3]]);
      assert.deepEqual(await cli(['scale', bId, '--release', ...zkArgs, '--json']), { job: bId, released: 1 });
      await finishExactly(client, [{ id: aId, n: 20 }, { id: bId, n: 19 }], 150_000);
    } finally {
      m1.child.kill('SIGTERM');
      await m1.exited;
      await client.close();
    }
  });

  it('runs malleable applications queued with submit --job-kind malleable --input (inline and @FILE)', T, async () => {
    const client = await connect(pool.zk, { secret: pool.secret });
    const zkArgs = ['--zk', pool.zk, '--secret-file', pool.secretFile];
    const manager = await startCli(['manager', ...zkArgs, '--policy', 'equipartition', '--tgap', '0s', '--json'], /"active":true/);
    try {
      const stencil = { params: { grid: 48, blocks: 4, iterations: 120 }, runtime: { checkpointEvery: 40 } };
      const a = await cli(['submit', 'stencil', '--job-kind', 'malleable', '--flexibility', 'malleable', '--min', '1', '--max', '3', '--input', JSON.stringify(stencil), ...zkArgs, '--json']);
      const heat = fileURLToPath(new URL('../../../../examples/malleable/heat.js', import.meta.url));
      const params = { cells: 600, segments: 6, loss: 0.2, tol: 1e-10, iterations: 3000 };
      const file = join(mkdtempSync(join(tmpdir(), 'tidepool-submit-')), 'heat.json');
      writeFileSync(file, JSON.stringify({ params, runtime: { syncEvery: 4 } }));
      const b = await cli(['submit', heat, '--job-kind', 'malleable', '--flexibility', 'moldable', '--max', '2', '--input', `@${file}`, ...zkArgs, '--json']);
      const [outA, outB] = await withDeadline(Promise.all([awaitOutcome(client, a.job as string), awaitOutcome(client, b.job as string)]), 'both jobs to finish', 150_000);
      assert.equal(outA.status, 'done', JSON.stringify(outA));
      assert.equal((outA as { value: MalleableOutcome<{ checksum: string }> }).value.result.checksum, plainStencil(48, 120, 4).checksum, 'Stencil2D with the parameters given, bit-identical');
      assert.equal(outB.status, 'done', JSON.stringify(outB));
      const heatApp = await loadMalleableApp({ module: new URL('../../../../examples/malleable/heat.js', import.meta.url).href, export: 'default' });
      const { result, stats } = (outB as { value: MalleableOutcome }).value;
      assert.deepEqual(result, runSequential(heatApp, params), 'the user\'s module with the parameters from the file, bit-identical');
      assert.ok(stats.iterations < params.iterations, `its convergence test ended it (${stats.iterations} iterations)`);
    } finally {
      manager.child.kill('SIGTERM');
      await manager.exited;
      await client.close();
    }
  });
});
