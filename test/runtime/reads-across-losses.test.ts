/**
 * Reads that clients and holders make of the cluster, while their connection to the coordination
 * service is lost (a ZooKeeper leader election, a lossy link): each answers once the session is back.
 * - Who may fetch a job's blobs (runtime/job/blob-access.ts), asked of a holder: before, `tidepool
 *   serve` refused the code of its batch to the nodes that joined while the ZooKeeper leader's host was
 *   cut off, and the batch never ran (across test hosts).
 * - The list of nodes (runtime/scheduler/node-list.ts), which a client reads before it submits: before,
 *   `tidepool solve` across links with 1 % packet loss exited with CONNECTION_LOSS at /tidepool/assign/….
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { connect } from '../../src/coord/connect.js';
import { joinPath } from '../../src/coord/paths.js';
import { mkdirp } from '../../src/coord/tree-ops.js';
import { mayFetchJobBlob } from '../../src/runtime/job/blob-access.js';
import { clusterPaths, jobPaths } from '../../src/runtime/job/job-paths.js';
import { listNodes } from '../../src/runtime/scheduler/node-list.js';
import { ClusterSecret } from '../../src/util/cluster-secret.js';
import { losingOnce } from '../support/losing-client.js';

describe('reads across a connection loss', () => {
  for (const [who, at] of [['a member of the job', /\/members\/n-a$/], ['a node assigned to the job', /\/assign\/n-b$/]] as const) {
    it(`who may fetch a job's blobs, ${who}: allowed once the session is back; a stranger still refused`, async () => {
      const name = `blob-access-${randomBytes(3).toString('hex')}`;
      const secret = ClusterSecret.random();
      const admin = await connect(`embedded:${name}`, { secret });
      const client = await connect(`embedded:${name}`, { secret });
      try {
        const job = 'j-access';
        await mkdirp(admin, joinPath(jobPaths(job).members, 'n-a'));
        await mkdirp(admin, clusterPaths().assignments);
        await admin.create(joinPath(clusterPaths().assignments, 'n-b'), Buffer.from(job));
        const lost = { at, count: 0 };
        const holder = losingOnce(client, lost);
        assert.equal(await mayFetchJobBlob(holder, at.source.includes('n-a') ? 'n-a' : 'n-b', job), true);
        assert.ok(lost.count >= 2, `the first read lost the connection and a later one went through (${lost.count})`);
        assert.equal(await mayFetchJobBlob(holder, 'n-c', job), false, 'a node neither member nor assigned');
      } finally {
        await client.close();
        await admin.close();
      }
    });
  }

  it('the list of nodes: read again once the session is back', async () => {
    const name = `node-list-${randomBytes(3).toString('hex')}`;
    const secret = ClusterSecret.random();
    const admin = await connect(`embedded:${name}`, { secret });
    const client = await connect(`embedded:${name}`, { secret });
    try {
      await mkdirp(admin, clusterPaths().nodes);
      await mkdirp(admin, clusterPaths().assignments);
      await admin.create(joinPath(clusterPaths().nodes, 'n-a'), Buffer.from(JSON.stringify({ address: 'tcp://10.0.0.1:7400', workers: 2, job: 'j-1' })));
      await admin.create(joinPath(clusterPaths().assignments, 'n-a'), Buffer.from('j-1'));
      const lost = { at: /\/assign\/n-a$/, count: 0 };
      assert.deepEqual(await listNodes(losingOnce(client, lost)), [{ id: 'n-a', address: 'tcp://10.0.0.1:7400', workers: 2, job: 'j-1', assignment: 'j-1' }]);
      assert.ok(lost.count >= 2, `the first read of the assignment lost the connection and a later one went through (${lost.count})`);
    } finally {
      await client.close();
      await admin.close();
    }
  });
});
