/**
 * Submitting a job (`submitJob`): the job's znode, its kind's znodes (the task pool's ledger with the
 * root task) and the spec in one transaction; a job znode made first by the caller is filled; a job id
 * in use and a kind spec too large for the spec are refused. No node runs the jobs here.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { connect } from '../../src/coord/connect.js';
import { mkdirp } from '../../src/coord/tree-ops.js';
import { submitJob } from '../../src/runtime/client/submit.js';
import { jobPaths } from '../../src/runtime/job/job-paths.js';
import type { JobSpec } from '../../src/runtime/job/job-spec.js';
import { taskPoolJob } from '../../src/runtime/pool/task-pool-ref.js';
import { ledgerPaths } from '../../src/runtime/pool/task-pool-spec.js';
import { ClusterSecret } from '../../src/util/cluster-secret.js';
import { decode } from '../../src/util/codec.js';
import { rootState } from './apps/compositions.js';

const secret = ClusterSecret.random();

const APP = { module: new URL('./apps/compositions.ts', import.meta.url).href, export: 'default' };
const PLAIN = { module: new URL('./apps/plain-kind.ts', import.meta.url).href, export: 'default' };

describe('submitJob', () => {
  it('creates a job without blobs — its znode, ledger with the root task, and spec — in one transaction', { timeout: 60_000 }, async () => {
    const client = await connect(`embedded:submit-${randomBytes(3).toString('hex')}`, { secret });
    try {
      await submitJob(client, { ...taskPoolJob(APP, rootState(4)), nodes: 0, secret }); // creates the jobs directory
      const writes: string[] = [];
      const counting = new Proxy(client, {
        get(target, key, receiver) {
          const value = Reflect.get(target, key, receiver) as unknown;
          if (typeof value !== 'function') return value;
          return (...args: unknown[]) => {
            if (['create', 'multi', 'setData', 'delete'].includes(String(key))) writes.push(String(key));
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        },
      });
      const spec = await submitJob(counting, { ...taskPoolJob(APP, rootState(4)), nodes: 0, secret, input: { small: true } });
      assert.deepEqual(writes, ['multi'], 'one transaction, no separate create');
      const paths = jobPaths(spec.id);
      const znodes = ledgerPaths(paths);
      for (const path of [paths.base, paths.spec, znodes.tasks, znodes.txns, `${znodes.tasks}/root`]) assert.ok(await client.exists(path), `${path} exists`);
    } finally {
      await client.close();
    }
  });

  it('fills a job znode its caller made first (as the resource manager does); refuses a job id in use', { timeout: 60_000 }, async () => {
    const client = await connect(`embedded:submit-${randomBytes(3).toString('hex')}`, { secret });
    try {
      const paths = jobPaths('j-premade');
      await mkdirp(client, paths.base);
      await client.create(`${paths.base}/managed`, Buffer.from('{}'));
      const spec = await submitJob(client, { ...taskPoolJob(APP, rootState(4)), nodes: 0, secret, jobId: 'j-premade' });
      assert.equal(spec.id, 'j-premade');
      for (const path of [paths.spec, `${ledgerPaths(paths).tasks}/root`, `${paths.base}/managed`]) assert.ok(await client.exists(path), `${path} exists`);
      await assert.rejects(submitJob(client, { ...taskPoolJob(APP, rootState(5)), nodes: 0, secret, jobId: 'j-premade' }), /job j-premade exists already/);
    } finally {
      await client.close();
    }
  });

  it('stores a kind spec as submitted when the kind has no prepare; refuses one over 64 KiB, naming the kind and its size', { timeout: 60_000 }, async () => {
    const client = await connect(`embedded:submit-${randomBytes(3).toString('hex')}`, { secret });
    try {
      const spec = await submitJob(client, { kind: PLAIN, kindSpec: { say: 'hello' }, nodes: 0, secret });
      assert.deepEqual(decode<JobSpec>((await client.getData(jobPaths(spec.id).spec)).data).kindSpec, { say: 'hello' });
      assert.equal(spec.label, PLAIN.module, 'a job without a label is listed by its kind');
      await assert.rejects(
        submitJob(client, { kind: PLAIN, kindSpec: { text: 'x'.repeat(70_000) }, nodes: 0, secret, jobId: 'j-large' }),
        /the plain spec of job j-large is 700\d\d bytes encoded, over the 65536 bytes a job spec holds/,
      );
      assert.equal(await client.exists(jobPaths('j-large').base), null, 'nothing of the refused job was written');
    } finally {
      await client.close();
    }
  });
});
