/**
 * Control requests to a job from outside (`requestJob`): a job that ends before serving a request
 * never acknowledges it, so the caller is told at once instead of waiting out its timeout; a job that
 * has ended is refused up front; the caller's own signal abandons the wait. No node serves the job
 * here: nothing but the job's end can answer.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { connect } from '../../src/coord/connect.js';
import { ControlChannel } from '../../src/coord/recipes/control-channel.js';
import { cancelJob } from '../../src/runtime/job/outcome.js';
import { requestJob } from '../../src/runtime/client/job-requests.js';
import { submitJob } from '../../src/runtime/client/submit.js';
import { taskPoolJob } from '../../src/runtime/pool/task-pool-ref.js';
import { jobPaths } from '../../src/runtime/job/job-paths.js';
import { ClusterSecret } from '../../src/util/cluster-secret.js';
import { withDeadline } from '../support/wait.js';
import { rootState } from './apps/compositions.js';

const APP = { module: new URL('./apps/compositions.ts', import.meta.url).href, export: 'default' };
const secret = ClusterSecret.random();

describe('requestJob', () => {
  it('rejects when the job ends before acknowledging; refuses an ended job; honours the caller\'s signal', { timeout: 60_000 }, async () => {
    const client = await connect(`embedded:control-${randomBytes(3).toString('hex')}`, { secret });
    try {
      const spec = await submitJob(client, { ...taskPoolJob(APP, rootState(4)), nodes: 0, secret });
      const caller = new AbortController();
      const mine = requestJob(client, spec.id, 'status', null, { timeoutMs: 60_000, signal: caller.signal }).then(() => new Error('resolved'), (err: unknown) => err);
      caller.abort(new Error('the operator pressed ^C'));
      assert.match(String(await withDeadline(mine, 'the abandoned request')), /the operator pressed \^C/);
      const pending = requestJob(client, spec.id, 'rescale', { nodes: 2 }, { timeoutMs: 60_000 }).then(() => new Error('resolved'), (err: unknown) => err);
      assert.equal(await cancelJob(client, spec.id), true);
      assert.match(String(await withDeadline(pending, 'the rejection')), new RegExp(`job ${spec.id} ended before it acknowledged the rescale request`));
      await assert.rejects(requestJob(client, spec.id, 'status'), new RegExp(`job ${spec.id} has ended`));
    } finally {
      await client.close();
    }
  });

  it('many requests to a running job share one watch on its result (a watch stays registered until it fires)', { timeout: 60_000 }, async () => {
    const client = await connect(`embedded:control-${randomBytes(3).toString('hex')}`, { secret });
    try {
      const spec = await submitJob(client, { ...taskPoolJob(APP, rootState(4)), nodes: 0, secret });
      // The test serves the job's channel itself (no node runs the job).
      const server = new ControlChannel(client, jobPaths(spec.id).control).serve((req) => `ok ${req.type}`);
      for (let i = 0; i < 25; i++) assert.equal(await requestJob(client, spec.id, 'status'), 'ok status');
      const watchers = (client as unknown as { watchers: Record<string, Map<string, Set<unknown>>> }).watchers;
      const onResult = ['data', 'exist'].reduce((n, kind) => n + (watchers[kind]!.get(jobPaths(spec.id).result)?.size ?? 0), 0);
      assert.equal(onResult, 1, 'one watch on the result, not one per request');
      await server.stop();
    } finally {
      await client.close();
    }
  });
});
