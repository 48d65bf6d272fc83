/**
 * A branch-and-bound keeps the optimum its finding run published when that run's node crashes before the
 * task completes (lost-incumbent.ts), on the embedded backend: two in-process nodes, one crashed (its
 * workers terminated, its session closed).
 */
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { connect } from '../../../src/coord/connect.js';
import type { CoordClient } from '../../../src/coord/types.js';
import { Cluster } from '../../../src/runtime/client/cluster.js';
import { TidepoolNode } from '../../../src/runtime/node/node.js';
import { InProcessNetwork, InProcessTransport } from '../../../src/transport/in-process-transport.js';
import { ClusterSecret } from '../../../src/util/cluster-secret.js';
import { optimumFoundByALostRun } from './lost-incumbent.js';

describe('branch-and-bound: the optimum of a run that does not count (embedded)', () => {
  it('a node crashes after publishing the optimum: the job answers with it, each search node counted once', { timeout: 120_000 }, async () => {
    const name = `lost-incumbent-${randomBytes(3).toString('hex')}`;
    const secret = ClusterSecret.random();
    const cluster = await Cluster.connect(`embedded:${name}`, { secret });
    const network = InProcessNetwork.get(name);
    const nodes = new Map<string, { node: TidepoolNode; client: CoordClient }>();
    try {
      for (const id of ['n-a', 'n-b']) {
        const client = await connect(`embedded:${name}`, { secret });
        nodes.set(id, { node: await TidepoolNode.start({ client, transport: new InProcessTransport(id, network), workers: 1, nodeId: id, seed: 7, secret }), client });
      }
      await optimumFoundByALostRun(cluster, async (id) => {
        const victim = nodes.get(id)!;
        nodes.delete(id);
        await victim.node.crash();
        await victim.client.close();
      });
    } finally {
      for (const n of nodes.values()) {
        await n.node.crash();
        await n.client.close().catch(() => undefined);
      }
      await cluster.close();
    }
  });
});
