/**
 * The ssh node provider for real, on test hosts: OpenSSH servers run inside node hosts (key
 * authentication with a key made by the test), ZooKeeper on another host, and the provisioner and
 * the client in the test process on the hosts' bridge. Nodes start for a waiting job, run it, and
 * are drained and stopped after the idle time; a host that cannot be reached is reported and retried
 * while the job finishes on the node that did start.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Cluster } from '../../src/runtime/client/cluster.js';
import { listNodes } from '../../src/runtime/scheduler/node-list.js';
import type { ProviderEvent } from '../../src/runtime/providers/node-provider.js';
import { Provisioner } from '../../src/runtime/providers/provisioner.js';
import { SshDriver } from '../../src/runtime/providers/ssh-driver.js';
import { ClusterSecret } from '../../src/util/cluster-secret.js';
import { countSequentially, rootState } from '../runtime/apps/compositions.js';
import { startHostEnsemble, type HostZkEnsemble } from '../support/host-zookeeper.js';
import { sshKeyPair, startSshd, TEST_SSH_OPTIONS } from '../support/host-sshd.js';
import { TestHosts, type HostProcess, type TestHost } from '../support/hosts.js';
import { waitFor, withDeadline } from '../support/wait.js';

const COMPOSITIONS = { module: new URL('../runtime/apps/compositions.ts', import.meta.url).href, export: 'default' };
const SECRET = ClusterSecret.from(`ssh-provider-${process.pid}-${Date.now()}-secret`);

/** The command lines of the processes in a host, but its sshd listener's. */
async function processesBut(host: TestHost, sshd: HostProcess): Promise<string[]> {
  const ps = await host.run('ps', ['-e', '-o', 'pid=,args=']);
  const mine = new Set(await host.pids());
  return ps.stdout.split('\n').map((l) => l.trim()).filter((l) => {
    const pid = Number(l.split(' ')[0]);
    return l !== '' && mine.has(pid) && pid !== sshd.pid && !/^\d+ ps -e/.test(l);
  });
}

describe('ssh node provider on test hosts', () => {
  let hosts: TestHosts;
  let zk: HostZkEnsemble;
  let key: { privateKey: string; publicKey: string };
  const sshd = new Map<string, HostProcess>();
  let cluster: Cluster;

  before(async () => {
    hosts = await TestHosts.create({ names: ['zk', 'n1', 'n2', 'n3'], installs: 'project' });
    zk = await startHostEnsemble([hosts.host('zk')]);
    key = sshKeyPair(hosts.host('zk').dir('client-key'));
    // n3 runs no sshd: a machine that cannot be reached.
    for (const name of ['n1', 'n2']) sshd.set(name, await startSshd(hosts.host(name), key.publicKey));
    cluster = await Cluster.connect(zk.connectionString, { secret: SECRET, host: hosts.bridgeAddress });
  });
  after(async () => {
    await cluster?.close();
    await hosts.teardown();
  });

  /** A wait that fails with the provider's events so far (why a node did not start or join). */
  const withEvents = <T>(p: Promise<T>, events: ProviderEvent[]) => p.catch((err: Error) => {
    throw new Error(`${err.message}; provider events: ${JSON.stringify(events)}`);
  });

  /** The node's tidepool from the host's sources, run in its install directory (where a worker finds tsx). */
  const sourcesCommand = (host: TestHost) => ['env', '-C', host.installDir, ...host.tidepoolFromSources].join(' ');

  const driverFor = (names: string[]) => new SshDriver({
    hosts: names.map((n) => ({ host: `root@${hosts.host(n).address}`, command: sourcesCommand(hosts.host(n)) })),
    identityFile: key.privateKey, sshOptions: TEST_SSH_OPTIONS, secret: SECRET,
  });

  it('starts two nodes over SSH for a waiting job, runs it on them, and stops both after the idle time', async () => {
    const events: ProviderEvent[] = [];
    const provider = await Provisioner.start({
      client: cluster.coordination, driver: driverFor(['n1', 'n2']), spec: { zk: zk.connectionString, workers: 1 },
      scale: { maxNodes: 2, idleMs: 1_500 },
    });
    provider.on((e) => events.push(e));
    try {
      const n = 16;
      const job = await cluster.submit(COMPOSITIONS, rootState(n, 20), { nodes: 2, minNodes: 2 });
      assert.equal(await withEvents(withDeadline(job.result(), 'the job to finish on nodes started over SSH', 180_000), events), countSequentially(n));
      const joined = events.flatMap((e) => (e.type === 'state' && e.state === 'joined' ? [e.where ?? ''] : []));
      assert.equal(joined.length, 2);
      assert.deepEqual(joined.map((w) => w.replace(/ \(pid \d+\)$/, '')).sort(), [`root@${hosts.host('n1').address}`, `root@${hosts.host('n2').address}`]);
      await waitFor(() => provider.nodes().every((x) => x.state === 'released'), 'both nodes to be released', 60_000);
      await waitFor(async () => (await listNodes(cluster.coordination)).length === 0, 'the cluster to have no node');
      // Nothing but sshd's listener is left on the node hosts.
      for (const name of ['n1', 'n2']) assert.deepEqual(await processesBut(hosts.host(name), sshd.get(name)!), [], `processes left on ${name}`);
    } finally {
      await provider.stop();
    }
  });

  it('reports a host it cannot start a node on, retries it, and the job finishes on the node that started', async () => {
    const events: ProviderEvent[] = [];
    const provider = await Provisioner.start({
      client: cluster.coordination, driver: driverFor(['n3', 'n1']), spec: { zk: zk.connectionString, workers: 1 },
      scale: { maxNodes: 2, idleMs: 60_000 }, pool: { retryBaseMs: 300, retryMaxMs: 1_000 },
    });
    provider.on((e) => events.push(e));
    try {
      const n = 15;
      const job = await cluster.submit(COMPOSITIONS, rootState(n, 20), { nodes: 2, minNodes: 1 });
      assert.equal(await withEvents(withDeadline(job.result(), 'the job to finish on the one node', 180_000), events), countSequentially(n));
      await waitFor(() => events.filter((e) => e.type === 'state' && e.state === 'failed').length >= 2, 'a second failed start on n3 (the retry)', 60_000);
      const failures = events.flatMap((e) => (e.type === 'state' && e.state === 'failed' ? [e.error ?? ''] : []));
      for (const f of failures) assert.match(f, new RegExp(`^could not be started: ssh root@${hosts.host('n3').address.replaceAll('.', '\\.')} ended before the node started \\(exit 255: .*(No route to host|Connection refused|timed out)`));
      assert.ok(events.some((e) => e.type === 'retry'), 'retries are reported');
      assert.equal(events.filter((e) => e.type === 'state' && e.state === 'joined').length, 1);
    } finally {
      await provider.stop();
    }
    assert.ok(provider.nodes().every((x) => x.state === 'released' || x.state === 'failed'));
    assert.deepEqual(await processesBut(hosts.host('n1'), sshd.get('n1')!), []);
  });
});
