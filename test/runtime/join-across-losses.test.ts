/**
 * A node whose join of a job is cut short by a connection loss (a ZooKeeper leader election, say)
 * undoes what it did and joins again once its session is back: the job runs on it and counts exactly.
 * Before, the node stayed assigned to a job it never took part in and the job waited forever, or,
 * lost while the kind's member role started, the job failed.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { connect } from '../../src/coord/connect.js';
import { awaitOutcome } from '../../src/runtime/job/outcome.js';
import { submitJob } from '../../src/runtime/client/submit.js';
import { taskPoolJob } from '../../src/runtime/pool/task-pool-ref.js';
import { TidepoolNode } from '../../src/runtime/node/node.js';
import { InProcessNetwork, InProcessTransport } from '../../src/transport/in-process-transport.js';
import { ClusterSecret } from '../../src/util/cluster-secret.js';
import { losingOnce } from '../support/losing-client.js';
import { withDeadline } from '../support/wait.js';
import { countSequentially, rootState } from './apps/compositions.js';
import { minSequentially } from './apps/find-min.js';

const COMPOSITIONS = { module: new URL('./apps/compositions.ts', import.meta.url).href, export: 'default' };
/** A job with a global variable (`best`): its member role reads the job's variables as it starts. */
const FIND_MIN = { module: new URL('./apps/find-min.ts', import.meta.url).href, export: 'default' };

/** The jobs of the two cases, with what each must find. */
const JOBS = {
  compositions: { ref: COMPOSITIONS, root: rootState(12), expected: countSequentially(12) },
  findMin: { ref: FIND_MIN, root: { lo: 0, hi: 50_000, best: Infinity }, expected: minSequentially(0, 50_000) },
};

describe('a join cut short by a connection loss', () => {
  // While the node joins the job's membership (after the kind's member role started), and while the kind's member role starts.
  for (const [where, at, job] of [['joining the membership', /\/members\/n-a$/, JOBS.compositions], ['starting the kind\'s member role', /\/vars$/, JOBS.findMin]] as const) {
    it(`${where}: it is undone and done again once the session is back; the job runs on the node`, { timeout: 60_000 }, async () => {
      const name = `join-loss-${randomBytes(3).toString('hex')}`;
      const secret = ClusterSecret.random();
      const admin = await connect(`embedded:${name}`, { secret });
      const client = await connect(`embedded:${name}`, { secret });
      const lost = { at, count: 0 };
      const node = await TidepoolNode.start({
        client: losingOnce(client, lost), transport: new InProcessTransport('n-a', InProcessNetwork.get(name)), workers: 1, nodeId: 'n-a', secret,
      });
      try {
        const spec = await submitJob(admin, { ...taskPoolJob(job.ref, job.root), secret, nodes: 1 });
        const end = await withDeadline(awaitOutcome(admin, spec.id), 'the job to finish on the node whose join lost the connection', 30_000);
        assert.ok(lost.count >= 2, `the first request on ${String(at)} lost the connection, a later one went through (${lost.count})`);
        assert.deepEqual(end.status === 'done' ? end.value : end, job.expected);
      } finally {
        await node.crash();
        await client.close().catch(() => undefined);
        await admin.close();
      }
    });
  }
});
