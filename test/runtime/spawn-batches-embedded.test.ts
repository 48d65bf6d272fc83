/**
 * Spawned children recorded and dispatched in batches and run inline, end to end on an embedded cluster
 * with real worker threads: fans and trees of small spawned tasks count exactly across nodes (one
 * completion per task), and a node that crashes while holding recorded children that have not run, or a
 * unit running a held child inline, loses none and doubles none.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decode } from '../../src/util/codec.js';
import { Cluster, type ClusterEvent } from '../../src/runtime/client/cluster.js';
import { jobPaths } from '../../src/runtime/job/job-paths.js';
import { ledgerPaths } from '../../src/runtime/pool/task-pool-spec.js';
import { ROOT_TASK_ID } from '../../src/runtime/pool/task-pool-spec.js';
import type { TaskRef } from '../../src/runtime/worker/task.js';
import type { TaskRecord } from '../../src/runtime/worker/task-record.js';
import { openGate } from '../support/gate.js';
import { waitFor, withDeadline } from '../support/wait.js';
import { checksumRoot, type Tally } from './apps/spawn-checksum.js';

const ref = (file: string): TaskRef => ({ module: new URL(`./apps/${file}`, import.meta.url).href, export: 'default' });
const T = { timeout: 120_000 };

describe('spawned tasks in batches on an embedded cluster', () => {
  it('a fan, a tree and a checksummed fan of small spawned tasks count exactly on 2 nodes', T, async () => {
    const cluster = await Cluster.embedded({ nodes: 2, workers: 2, seed: 51 });
    try {
      const fan = await cluster.submit(ref('sleepy-fan.ts'), { fanout: 5_000, spin: 0, root: true }, { nodes: 2 });
      assert.equal(await withDeadline(fan.result<number>(), 'the fan', 60_000), 5_001);
      const tree = await cluster.submit(ref('spawn-tree.ts'), { level: 0, depth: 11 }, { nodes: 2 });
      const outcome = await withDeadline(tree.outcome(), 'the tree', 60_000);
      assert.equal(outcome.status === 'done' && outcome.value, 2 ** 12 - 1);
      assert.equal(outcome.status === 'done' && outcome.completions, 2 ** 12 - 1, 'one completion per task, run inline or not');
      const n = 3_000;
      const sum = await cluster.submit(ref('spawn-checksum.ts'), checksumRoot(n), { nodes: 2 });
      assert.deepEqual(await withDeadline(sum.result<Tally>(), 'the checksummed fan', 60_000), { count: n, sum: (n * (n + 1)) / 2 });
    } finally {
      await cluster.close();
    }
  });

  it('a node holding recorded children that have not run crashes: each counts exactly once', T, async () => {
    const cluster = await Cluster.embedded({ nodes: 3, workers: 1, seed: 52 });
    const events: ClusterEvent[] = [];
    cluster.on((e) => events.push(e));
    const n = 300;
    try {
      const job = await cluster.submit(ref('spawn-checksum.ts'), checksumRoot(n, true), { nodes: 3 });
      const paths = jobPaths(job.id);
      const znodes = ledgerPaths(paths);
      const client = cluster.coordination;
      // Children hold until the gate opens, one per node (one worker each): the rest wait, recorded. (The
      // root may still be live: the children it had not handed over when it returned run inline, and hold.)
      let owned = new Map<string, number>();
      await waitFor(async () => {
        const ids = (await client.getChildren(znodes.tasks)).filter((id) => id !== ROOT_TASK_ID);
        if (ids.length < n - 32) return false;
        owned = new Map();
        for (const id of ids) {
          const owner = decode<TaskRecord>((await client.getData(`${znodes.tasks}/${id}`)).data).owner;
          owned.set(owner, (owned.get(owner) ?? 0) + 1);
        }
        return true;
      }, 'the root to record its children', 60_000);
      const [victim, held] = [...owned].sort((x, y) => y[1] - x[1])[0]!;
      assert.ok(held >= 2, `the victim holds more children than its one worker can have started (${held})`);
      await cluster.crashNode(victim);
      await waitFor(() => events.some((e) => e.type === 'node-left' && e.node === victim), 'the crash to be seen');
      await openGate(client, job.id);
      assert.deepEqual(await withDeadline(job.result<Tally>(), 'the result', 90_000), { count: n, sum: (n * (n + 1)) / 2 });
    } finally {
      await cluster.close();
    }
  });
});
