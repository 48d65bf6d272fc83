/**
 * Across test hosts (test/support/hosts.ts), under a fault: a 3-server ZooKeeper ensemble on three
 * hosts, nodes on two more; the client is the test process on the hosts' bridge. Its (test) task
 * module is a file of the project, which every host sees at the project's own path (installs
 * 'project'): nodes run it from their installation, as they would an installed package. How code
 * travels between installations at other paths is job-kinds-across-hosts.test.ts's part.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Cluster } from '../../src/runtime/client/cluster.js';
import { listNodes } from '../../src/runtime/scheduler/node-list.js';
import { taskOwners } from '../support/ledger-probes.js';
import { openGate } from '../support/gate.js';
import { startHostEnsemble, type HostZkEnsemble } from '../support/host-zookeeper.js';
import { TestHosts, type HostNode, type TestHost } from '../support/hosts.js';
import { waitFor, withDeadline } from '../support/wait.js';

/** A node's ZooKeeper session (src/cli/commands/node.ts). */
const NODE_SESSION_MS = 6_000;

describe('several machines: a node host partitioned', () => {
  let hosts: TestHosts;
  let zk: HostZkEnsemble;
  let n1: TestHost;
  let n2: TestHost;
  let secretFile: string;
  const nodes: HostNode[] = [];

  before(async () => {
    hosts = await TestHosts.create({ names: ['zk1', 'zk2', 'zk3', 'n1', 'n2', 'client'], installs: 'project' });
    [n1, n2] = ['n1', 'n2'].map((n) => hosts.host(n)) as [TestHost, TestHost];
    zk = await startHostEnsemble(['zk1', 'zk2', 'zk3'].map((n) => hosts.host(n)));
    secretFile = `${hosts.host('client').dir()}/secret`;
    writeFileSync(secretFile, `cross-host-${process.pid}-${Date.now()}-secret`, { mode: 0o600 });
  });
  after(() => hosts.teardown());

  it('a node host cut off for longer than its session: its tasks are recovered elsewhere and the count is exact', async () => {
    for (const host of [n1, n2]) nodes.push(await host.startNode({ zk: zk.connectionString, secretFile, workers: 1, id: `node-${host.name}`, typescript: true }));
    // The client here is the test process, on the bridge; nodes load the (test) task module from their installation.
    const cluster = await Cluster.connect(zk.connectionString, { secret: readFileSync(secretFile), host: hosts.bridgeAddress });
    try {
      const units = 1_000_000;
      const job = await cluster.submit({ module: new URL('./apps/held-range.ts', import.meta.url).href, export: 'default' }, { lo: 0, hi: units }, { nodes: 2 });
      const coord = cluster.coordination;
      let ended: unknown;
      job.result().then((v) => (ended = `finished with ${String(v)}`), (err: Error) => (ended = `failed: ${err.message}`));
      // Both nodes hold tasks that cannot finish before the gate opens.
      await waitFor(async () => {
        if (ended) throw new Error(`the job ended before the partition: ${String(ended)}`);
        const owners = await taskOwners(coord, job.id);
        return owners.has('node-n1') && owners.has('node-n2');
      }, 'both nodes to own tasks of the job', 60_000).catch(async (err: Error) => {
        throw new Error(`${err.message}; nodes: ${JSON.stringify(await listNodes(coord))}; owners: ${JSON.stringify([...await taskOwners(coord, job.id)])}`);
      });
      const cutAt = Date.now();
      await hosts.partition(n1);
      // The ensemble sees n1's session end (its registration goes) and n2 takes its tasks over.
      await waitFor(async () => !(await listNodes(coord)).some((x) => x.id === 'node-n1'), 'node-n1 to leave the cluster', 60_000);
      assert.ok(Date.now() - cutAt >= NODE_SESSION_MS - 1_000, `node-n1 left ${Date.now() - cutAt} ms after the partition, before its session could expire`);
      await waitFor(async () => {
        const owners = await taskOwners(coord, job.id);
        return !owners.has('node-n1') && owners.has('node-n2');
      }, 'node-n2 to own every task of the job', 60_000);
      await hosts.heal(n1);
      await openGate(coord, job.id);
      const outcome = await withDeadline(job.result(), 'the job to finish', 120_000);
      assert.equal(outcome, units, 'each unit counted exactly once');
      // Healed, n1 finds its session expired and exits (3), so that nothing it did is counted again.
      assert.equal(await withDeadline(nodes[0]!.process.exited, 'node-n1 to exit after the heal', 60_000), 3);
    } finally {
      await cluster.close();
    }
  });
});
