/**
 * Proactive evacuation live (issue 29, "Machines that come and go"): `tidepool manager
 * --failure-feed -` over a 3-server ZooKeeper ensemble with three `tidepool node` processes runs a
 * malleable Stencil2D on all three. A malformed feed line is refused naming stdin:LINE and the
 * manager goes on; a feed line predicting node X's failure, then `tidepool warn Y --at`, make the
 * manager move the job off each node before its predicted time, and each is then SIGKILLed. The job
 * never rolls back (nothing was lost) and its result is bit-identical to the sequential run.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connect } from '../../../../src/coord/connect.js';
import type { GridResult } from '../../../../src/frameworks/malleable/apps/grid-blocks.js';
import { malleableJob } from '../../../../src/frameworks/malleable/malleable-kind-ref.js';
import { listWarnings } from '../../../../src/frameworks/malleable/manager/resource-manager.js';
import { submitManagedJob } from '../../../../src/frameworks/malleable/manager/manager-store.js';
import type { MalleableOutcome } from '../../../../src/frameworks/malleable/runtime-options.js';
import { malleableProgress } from '../../../../src/frameworks/malleable/submit.js';
import { awaitOutcome } from '../../../../src/runtime/job/outcome.js';
import { jobLeader } from '../../../../src/runtime/client/job-list.js';
import { listNodes } from '../../../../src/runtime/scheduler/index.js';
import { requestJob } from '../../../../src/runtime/client/job-requests.js';
import { withDeadline } from '../../../support/wait.js';
import { useZkNodePool } from '../../../support/zk-node-pool.js';
import { plainStencil } from '../plain-grids.js';
import { cli, membersOf, nodesOf, startCli, waitFor } from './manager-scenario.js';

const STENCIL = { module: new URL('../../../../src/frameworks/malleable/apps/stencil2d.ts', import.meta.url).href, export: 'default' };
const LEAD_MS = 90_000;

describe('failure warnings from the feed and from tidepool warn, on node processes', () => {
  const pool = useZkNodePool(3);

  it('evacuates each warned node before its predicted failure; the SIGKILLs lose nothing', { timeout: 300_000 }, async () => {
    const client = await connect(pool.zk, { secret: pool.secret });
    const zkArgs = ['--zk', pool.zk, '--secret-file', pool.secretFile];
    const manager = await startCli(['manager', ...zkArgs, '--tgap', '0s', '--failure-feed', '-', '--json'], /"active":true/, { stdin: 'pipe' });
    try {
      const params = { grid: 48, blocks: 6, iterations: 300 };
      // The stencil waits at iteration 100 (serving requests) until the test resumes it: it outlives both warnings.
      const job = await submitManagedJob(client, { ...malleableJob(STENCIL, params, { pauseAt: [100], checkpointEvery: 50 }), flexibility: 'malleable', minNodes: 1, maxNodes: 3, secret: pool.secret });
      await waitFor(async () => (await membersOf(client, job.id)).length === 3, 'the stencil on the 3 nodes', 90_000);

      const evacuate = async (node: string, at: number, how: string) => {
        await waitFor(async () => {
          const n = (await listNodes(client)).find((x) => x.id === node);
          return n !== undefined && n.assignment === '' && n.job === null;
        }, `${node} to be evacuated (${how})`, Math.max(1, at - Date.now()));
        assert.ok(Date.now() < at, `${node} was evacuated before its predicted failure`);
        const victim = pool.processes.find((p) => p.id === node)!;
        victim.kill('SIGKILL'); // the failure comes (early, at the earliest moment the test may send it)
        await victim.exited;
      };

      // Not a prediction: refused naming the line, and the manager reads on.
      manager.child.stdin!.write('node-3 fails soon\n');
      await waitFor(async () => /stdin:1: not JSON/.test(manager.out()), 'the malformed line to be refused', 30_000);

      // The two nodes other than the leader's. (A warned leader's node is vacated too, but the next leader
      // restores the objects from the vacate's own checkpoint, which the job counts as a rollback.)
      const leader = (await jobLeader(client, job.id))!;
      const [x, y] = (await nodesOf(client, job.id)).filter((n) => n !== leader) as [string, string];
      assert.ok(leader && x && y);
      const xAt = Date.now() + LEAD_MS;
      manager.child.stdin!.write(`${JSON.stringify({ node: x, at: new Date(xAt).toISOString() })}\n`);
      await evacuate(x, xAt, 'the feed');
      assert.deepEqual((await listWarnings(client)).map((w) => [w.node, w.at]), [[x, xAt]], 'the feed\'s warning, with its predicted time');

      const yAt = Date.now() + LEAD_MS;
      const warned = await cli(['warn', y, '--at', '90s', ...zkArgs, '--json']);
      assert.equal(warned.node, y);
      await evacuate(y, yAt, 'tidepool warn');
      const left = await nodesOf(client, job.id);
      assert.deepEqual([left, await jobLeader(client, job.id)], [[leader], leader], 'the stencil holds only its leader\'s node');

      await waitFor(async () => (await malleableProgress(client, job.id).catch(() => undefined))?.iteration === 100, 'the stencil at iteration 100', 90_000);
      await requestJob(client, job.id, 'resume');
      const outcome = await withDeadline(awaitOutcome(client, job.id), 'the stencil to finish', 120_000);
      assert.equal(outcome.status, 'done', JSON.stringify(outcome));
      const { result, stats } = (outcome as { value: MalleableOutcome<GridResult> }).value;
      assert.equal(result.checksum, plainStencil(48, 300, 6).checksum, 'bit-identical to the sequential run');
      assert.equal(stats.rollbacks, 0, 'no rollback: nothing was on the nodes when they died');
      assert.ok(/"feed":"stdin","type":"warn"/.test(manager.out()), 'the manager printed the feed\'s warning');
      const cleared = await cli(['clear', x, ...zkArgs, '--json']);
      assert.equal(cleared.cleared, true);
    } finally {
      manager.child.kill('SIGTERM');
      await manager.exited;
      await client.close();
    }
  });
});
