/**
 * Rotating the cluster secret as docs/security.md describes it, on the embedded backend: a window in
 * which processes hold both secrets, `protect` with both (every znode accepts both, every spec is signed
 * with the new one), then `protect` with the new one alone. A job submitted before the rotation runs
 * after it; the old secret then neither reads nor writes, and a node holding only it cannot join.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { clusterAcl } from '../../src/coord/access.js';
import { connect } from '../../src/coord/connect.js';
import { CoordError } from '../../src/coord/errors.js';
import { Cluster } from '../../src/runtime/client/cluster.js';
import { protectClusterTree } from '../../src/runtime/job/cluster-root.js';
import { decode } from '../../src/util/codec.js';
import { awaitOutcome } from '../../src/runtime/job/outcome.js';
import { submitJob } from '../../src/runtime/client/submit.js';
import { taskPoolJob } from '../../src/runtime/pool/task-pool-ref.js';
import { clusterPaths, jobPaths } from '../../src/runtime/job/job-paths.js';
import { specSignatureValid } from '../../src/runtime/job/job-signature.js';
import type { JobSpec } from '../../src/runtime/job/job-spec.js';
import { ClusterSecret } from '../../src/util/cluster-secret.js';
import { withDeadline } from '../support/wait.js';
import { countSequentially, rootState } from './apps/compositions.js';

const APP = { module: new URL('./apps/compositions.ts', import.meta.url).href, export: 'default' };

describe('secret rotation', () => {
  it('old → both → new: the tree and the specs follow; a job from before runs after; the old secret is shut out', { timeout: 120_000 }, async () => {
    const name = `rotation-${randomBytes(3).toString('hex')}`;
    const old = ClusterSecret.random();
    const next = ClusterSecret.random();
    const both = ClusterSecret.parse(`${next.current.toString()}\n${old.current.toString()}`, 'window');
    const before = await Cluster.embedded({ name, secret: old, nodes: 1, workers: 1, progressIntervalMs: 0 });
    const job = await submitJob(before.coordination, { ...taskPoolJob(APP, rootState(9)), nodes: 0, secret: old });
    await before.close(); // the old cluster's nodes stop; its tree stays

    const window = await connect(`embedded:${name}`, { secret: both });
    const first = await protectClusterTree(window, clusterPaths().root, both);
    assert.ok(first.protected > 5 && first.refused.length === 0 && first.resigned === 1, JSON.stringify(first));
    assert.deepEqual((await window.getACL(jobPaths(job.id).spec)).acl, clusterAcl(both));
    const fresh = await connect(`embedded:${name}`, { secret: next });
    const second = await protectClusterTree(fresh, clusterPaths().root, next);
    assert.deepEqual([second.refused, second.resigned, second.unsigned], [[], 0, []], 'the spec already carries the new signature');
    await window.close();

    const spec = decode<JobSpec>((await fresh.getData(jobPaths(job.id).spec)).data);
    await fresh.close();
    assert.equal(specSignatureValid(spec, next), true);
    assert.equal(specSignatureValid(spec, old), false);
    const stale = await connect(`embedded:${name}`, { secret: old });
    for (const op of [stale.getData(jobPaths(job.id).spec), stale.setData(jobPaths(job.id).spec, Buffer.from('x')), stale.create(`${clusterPaths().jobs}/j-stale`)]) {
      await assert.rejects(op, (err: unknown) => err instanceof CoordError && err.code === 'NO_AUTH' && /not one this znode's access list accepts/.test(err.message));
    }
    await assert.rejects(Cluster.connect(`embedded:${name}`, { secret: old }).then((c) => c.addNodes(1)), /NO_AUTH at \/tidepool\/nodes/);
    await stale.close();

    const after = await Cluster.connect(`embedded:${name}`, { secret: next });
    try {
      await after.addNodes(1);
      await after.scale(job.id, 1);
      const done = await withDeadline(awaitOutcome(after.coordination, job.id), 'the job from before the rotation');
      assert.equal(done.status, 'done', JSON.stringify(done));
      if (done.status === 'done') assert.equal(done.value, countSequentially(9));
    } finally {
      await after.close();
    }
  });
});
