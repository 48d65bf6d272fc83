/**
 * The slurm node provider for real: a one-machine Slurm cluster (Debian's slurm-wlm with MUNGE,
 * test/support/slurm-cluster.ts) and a ZooKeeper ensemble; the provisioner asks Slurm for two nodes
 * when a job waits, the job runs on them, and once idle both are released: no Slurm job and no
 * `tidepool node` process left.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { connect } from '../../../src/coord/connect.js';
import type { CoordClient } from '../../../src/coord/types.js';
import { awaitOutcome } from '../../../src/runtime/job/outcome.js';
import { submitJob } from '../../../src/runtime/client/submit.js';
import { taskPoolJob } from '../../../src/runtime/pool/task-pool-ref.js';
import { listNodes } from '../../../src/runtime/scheduler/node-list.js';
import type { ProviderEvent } from '../../../src/runtime/providers/node-provider.js';
import { ClusterSecret } from '../../../src/util/cluster-secret.js';
import { Provisioner } from '../../../src/runtime/providers/provisioner.js';
import { SlurmDriver } from '../../../src/runtime/providers/slurm-driver.js';
import { countSequentially, rootState } from '../apps/compositions.js';
import { PROJECT_ROOT } from '../../support/hosts.js';
import { startSlurm, type SlurmCluster } from '../../support/slurm-cluster.js';
import { startEnsemble, type ZkEnsemble } from '../../support/zk-ensemble.js';
import { waitFor, withDeadline } from '../../support/wait.js';

const COMPOSITIONS = { module: new URL('../apps/compositions.ts', import.meta.url).href, export: 'default' };
/** `tidepool node` from the sources (the test's task module is TypeScript); jobs start in the project's directory, where tsx resolves. */
const TIDEPOOL = `${process.execPath} --import tsx ${fileURLToPath(new URL('../../../src/cli/run.ts', import.meta.url))}`;
const SECRET = ClusterSecret.from(`slurm-provider-${process.pid}-${Date.now()}-secret`);

/** Pids of processes running `tidepool node … --id ID` (from /proc). */
function processesOf(id: string): number[] {
  const found: number[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    let args: string[];
    try {
      args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue; // gone meanwhile
    }
    const at = args.indexOf('--id');
    if (args.includes('node') && at >= 0 && args[at + 1] === id) found.push(Number(pid));
  }
  return found;
}

describe('slurm node provider on ZooKeeper', () => {
  let zk: ZkEnsemble;
  let slurm: SlurmCluster;
  let client: CoordClient;

  before(async () => {
    [zk, slurm] = await Promise.all([startEnsemble({ size: 1 }), startSlurm()]);
    client = await connect(zk.connectionString, { secret: SECRET });
  });
  after(async () => {
    await client?.close();
    await slurm?.stop();
    await zk?.stop();
  });

  it('asks Slurm for two nodes for a waiting job, runs it on them, and cancels both after the idle time', async () => {
    const driver = new SlurmDriver({ command: TIDEPOOL, env: slurm.env, secret: SECRET, sbatchArgs: ['--chdir', PROJECT_ROOT], outputDir: slurm.dir, pollMs: 300 });
    const events: ProviderEvent[] = [];
    const provider = await Provisioner.start({
      client, driver, spec: { zk: zk.connectionString, workers: 1 }, scale: { maxNodes: 2, idleMs: 1_500 }, pool: { startTimeoutMs: 90_000 },
    });
    provider.on((e) => events.push(e));
    try {
      const n = 16;
      const spec = await submitJob(client, { ...taskPoolJob(COMPOSITIONS, rootState(n, 20)), secret: SECRET, nodes: 2, minNodes: 2 });
      // Both Slurm jobs run while the tidepool job does.
      await waitFor(() => slurm.command('squeue', ['-h', '-t', 'running', '-o', '%j']).trim().split('\n').filter((j) => j.startsWith('tidepool-')).length === 2, 'two running Slurm jobs', 90_000);
      const outcome = await withDeadline(awaitOutcome(client, spec.id), 'the job to finish on Slurm nodes', 180_000);
      assert.equal((outcome as { value: number }).value, countSequentially(n));
      const joined = events.flatMap((e) => (e.type === 'state' && e.state === 'joined' ? [e.where ?? ''] : []));
      assert.equal(joined.length, 2);
      for (const where of joined) assert.match(where, /^slurm job \d+$/);
      await waitFor(() => provider.nodes().every((x) => x.state === 'released'), 'both nodes to be released', 90_000);
      // No Slurm job is left running or waiting, and no node is left in the cluster.
      assert.equal(slurm.command('squeue', ['-h', '-t', 'pending,running,completing', '-o', '%i %j %T']).trim(), '');
      await waitFor(async () => (await listNodes(client)).length === 0, 'the cluster to have no node');
      for (const node of provider.nodes()) assert.deepEqual(processesOf(node.id), [], `processes of node ${node.id}`);
      const states = slurm.command('squeue', ['-h', '-t', 'all', '-o', '%T']).trim().split('\n').filter(Boolean);
      assert.ok(states.every((s) => s === 'COMPLETED'), `the nodes' Slurm jobs ended by draining: ${states.join(', ')}`);
    } finally {
      await provider.stop();
    }
  });
});
