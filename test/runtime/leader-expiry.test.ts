/**
 * A job leader whose coordination session expires stops acting as leader at once (its leader duties
 * and control server stop), another member takes over, and the job still counts exactly: the old
 * leader's writes for tasks recovered elsewhere are fenced by the ledger's versions.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { connect, embeddedServer } from '../../src/coord/connect.js';
import type { CoordClient } from '../../src/coord/types.js';
import { awaitOutcome } from '../../src/runtime/job/outcome.js';
import { jobLeader } from '../../src/runtime/client/job-list.js';
import { requestJob } from '../../src/runtime/client/job-requests.js';
import { submitJob } from '../../src/runtime/client/submit.js';
import { taskPoolJob } from '../../src/runtime/pool/task-pool-ref.js';
import { TidepoolNode } from '../../src/runtime/node/node.js';
import { InProcessNetwork, InProcessTransport } from '../../src/transport/in-process-transport.js';
import { waitFor, withDeadline } from '../support/wait.js';
import { rootState } from './apps/compositions.js';
import { openGate } from '../support/gate.js';
import { ClusterSecret } from '../../src/util/cluster-secret.js';

const HELD = { module: new URL('./apps/held-compositions.ts', import.meta.url).href, export: 'default' };

describe('leader session expiry', () => {
  it('the expired leader stops leading; another member leads; the count stays exact', { timeout: 90_000 }, async () => {
    const name = `expiry-${randomBytes(3).toString('hex')}`;
    const secret = ClusterSecret.random();
    const admin = await connect(`embedded:${name}`, { secret });
    const network = InProcessNetwork.get(name);
    const nodes: Array<{ node: TidepoolNode; client: CoordClient }> = [];
    try {
      for (const id of ['n-a', 'n-b', 'n-c']) {
        const client = await connect(`embedded:${name}`, { secret });
        nodes.push({ node: await TidepoolNode.start({ client, transport: new InProcessTransport(id, network), workers: 1, nodeId: id, seed: 5, secret }), client });
      }
      const spec = await submitJob(admin, { ...taskPoolJob(HELD, rootState(18)), nodes: 3, secret });
      const outcome = awaitOutcome(admin, spec.id);
      await waitFor(async () => nodes.every((n) => n.node.currentJob === spec.id) && (await jobLeader(admin, spec.id)) !== null, 'the job on three nodes with a leader');
      const first = await jobLeader(admin, spec.id);
      const old = nodes.find((n) => n.node.id === first)!;
      await waitFor(() => old.node.leading, 'the leader to serve its duties');
      embeddedServer(name).expire(old.client.sessionId);
      await waitFor(() => !old.node.leading && !old.node.isLeader, 'the expired leader to stop leading');
      await waitFor(async () => { const now = await jobLeader(admin, spec.id); return now !== null && now !== first; }, 'another member to lead');
      const status = await requestJob(admin, spec.id, 'status', null, { timeoutMs: 20_000 }) as { leader: string };
      assert.notEqual(status.leader, first, 'the control channel is served by the new leader');
      await openGate(admin, spec.id);
      const end = await withDeadline(outcome, 'the outcome', 60_000);
      assert.equal(end.status, 'done', JSON.stringify(end));
      if (end.status === 'done') assert.equal(end.value, 2 ** 18);
    } finally {
      for (const n of nodes) {
        await n.node.crash();
        await n.client.close().catch(() => undefined);
      }
      await admin.close();
    }
  });
});
