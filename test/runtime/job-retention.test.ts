import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connect } from '../../src/coord/connect.js';
import { mkdirp } from '../../src/coord/tree-ops.js';
import { encode } from '../../src/util/codec.js';
import { listJobs } from '../../src/runtime/client/job-list.js';
import { jobPaths } from '../../src/runtime/job/job-paths.js';
import { ledgerPaths } from '../../src/runtime/pool/task-pool-spec.js';
import { pruneFinishedJobs } from '../../src/runtime/client/job-retention.js';
import type { JobOutcome } from '../../src/runtime/job/outcome.js';

describe('pruneFinishedJobs', () => {
  it('removes finished jobs beyond the most recent ones, after a grace period, never running ones', async () => {
    const client = await connect(`embedded:retention-${process.pid}`);
    try {
      const now = 1_000_000_000;
      const job = async (id: string, finishedAgoMs: number | null) => {
        const p = jobPaths(id);
        await mkdirp(client, ledgerPaths(p).txns);
        for (let i = 0; i < 3; i++) await client.create(`${ledgerPaths(p).txns}/t${i}`, Buffer.from('x'));
        await client.create(p.spec, Buffer.from('spec'));
        if (finishedAgoMs !== null) {
          const outcome: JobOutcome = { status: 'done', value: 1, completions: 3, finishedAt: now - finishedAgoMs };
          await client.create(p.result, encode(outcome));
        }
      };
      await job('a', 1_000); // finished a second ago
      await job('b', 100_000);
      await job('c', 200_000);
      await job('d', 300_000);
      await job('running', null);
      assert.deepEqual(await pruneFinishedJobs(client, { keep: 2, now }), ['c', 'd']);
      assert.deepEqual(await listJobs(client), ['a', 'b', 'running']);
      assert.equal(await client.exists(jobPaths('c').base), null, 'the whole tree is gone');
      // keep 0: b goes; a finished within the grace period (its nodes may still be leaving) stays.
      assert.deepEqual(await pruneFinishedJobs(client, { keep: 0, now }), ['b']);
      assert.deepEqual(await listJobs(client), ['a', 'running']);
      assert.deepEqual(await pruneFinishedJobs(client, { keep: 0, now, graceMs: 0 }), ['a']);
      assert.deepEqual(await listJobs(client), ['running']);
    } finally {
      await client.close();
    }
  });
});
