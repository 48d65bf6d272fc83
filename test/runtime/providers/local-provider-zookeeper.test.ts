/**
 * The local node provider for real: a Provisioner following the scheduler on a ZooKeeper ensemble
 * starts `tidepool node` child processes when a job waits with no node in the cluster, the job runs on
 * them, and they are drained and stopped once idle. A start that fails is reported and retried.
 */
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { connect } from '../../../src/coord/connect.js';
import type { CoordClient } from '../../../src/coord/types.js';
import { awaitOutcome } from '../../../src/runtime/job/outcome.js';
import { submitJob } from '../../../src/runtime/client/submit.js';
import { taskPoolJob } from '../../../src/runtime/pool/task-pool-ref.js';
import { listNodes } from '../../../src/runtime/scheduler/node-list.js';
import { LocalDriver } from '../../../src/runtime/providers/local-driver.js';
import type { NodeDriver, ProviderEvent } from '../../../src/runtime/providers/node-provider.js';
import { Provisioner } from '../../../src/runtime/providers/provisioner.js';
import { countSequentially, rootState } from '../apps/compositions.js';
import { secretFile, secretIn } from '../../support/node-process.js';
import { startEnsemble, type ZkEnsemble } from '../../support/zk-ensemble.js';
import { waitFor, withDeadline } from '../../support/wait.js';

const COMPOSITIONS = { module: new URL('../apps/compositions.ts', import.meta.url).href, export: 'default' };
/** `tidepool node` from the sources (the test's task module is TypeScript). */
const TIDEPOOL = [process.execPath, '--import', 'tsx', fileURLToPath(new URL('../../../src/cli/run.ts', import.meta.url))];

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('local node provider on ZooKeeper', () => {
  let zk: ZkEnsemble;
  let client: CoordClient;
  let secret: string;

  before(async () => {
    zk = await startEnsemble({ size: 1 });
    secret = secretFile();
    client = await connect(zk.connectionString, { secret: secretIn(secret) });
  });
  after(async () => {
    await client?.close();
    await zk?.stop();
  });

  it('starts two nodes (its maxNodes) for a waiting job that wants three, runs it on them, and releases both after the idle time', async () => {
    const driver = new LocalDriver({ command: TIDEPOOL });
    const events: ProviderEvent[] = [];
    const provider = await Provisioner.start({
      client, driver, spec: { zk: zk.connectionString, workers: 1, args: ['--secret-file', secret] },
      scale: { maxNodes: 2, idleMs: 1_500 }, pool: { startTimeoutMs: 60_000 },
    });
    provider.on((e) => events.push(e));
    try {
      assert.deepEqual(await listNodes(client), [], 'no node before the job');
      const n = 16;
      // It wants three and starts with two: the provider's maxNodes (2) caps what it asks for.
      const spec = await submitJob(client, { ...taskPoolJob(COMPOSITIONS, rootState(n, 20)), secret: secretIn(secret), nodes: 3, minNodes: 2 });
      const outcome = await withDeadline(awaitOutcome(client, spec.id), 'the job to finish on provided nodes', 120_000);
      assert.equal(outcome.status, 'done');
      assert.equal((outcome as { value: number }).value, countSequentially(n));
      const joined = events.filter((e) => e.type === 'state' && e.state === 'joined').map((e) => (e as { node: string }).node);
      assert.equal(joined.length, 2, `two nodes joined: ${JSON.stringify(provider.nodes())}`);
      const requested = events.filter((e) => e.type === 'state' && e.state === 'requested').length;
      assert.equal(requested, 2, `no more than maxNodes were asked for: ${JSON.stringify(provider.nodes())}`);
      const pids = driver.pids();
      assert.equal(pids.length, 2);
      // Idle for 1.5 s after the job: both drained and stopped.
      await waitFor(() => provider.nodes().every((x) => x.state === 'released'), 'both provided nodes to be released', 60_000);
      assert.deepEqual(provider.nodes().map((x) => x.state), ['released', 'released']);
      assert.deepEqual(driver.pids(), []);
      for (const pid of pids) assert.ok(!alive(pid), `node process ${pid} is gone`);
      await waitFor(async () => (await listNodes(client)).length === 0, 'the cluster to have no node');
    } finally {
      await provider.stop();
    }
  });

  it('reports a node that fails to start, retries, and the job finishes', async () => {
    const local = new LocalDriver({ command: TIDEPOOL });
    let starts = 0;
    // The first launch fails for real: a program that does not exist.
    const broken = new LocalDriver({ command: ['/nonexistent/tidepool'] });
    const driver: NodeDriver = {
      name: 'local',
      start: (id, spec) => (++starts === 1 ? broken.start(id, spec) : local.start(id, spec)),
      stop: (id, force) => local.stop(id, force),
    };
    const events: ProviderEvent[] = [];
    const provider = await Provisioner.start({
      client, driver, spec: { zk: zk.connectionString, workers: 1, args: ['--secret-file', secret] },
      scale: { maxNodes: 1, idleMs: 1_000 }, pool: { retryBaseMs: 200 },
    });
    provider.on((e) => events.push(e));
    try {
      const spec = await submitJob(client, { ...taskPoolJob(COMPOSITIONS, rootState(12)), secret: secretIn(secret), nodes: 1 });
      const outcome = await withDeadline(awaitOutcome(client, spec.id), 'the job to finish after a retry', 120_000);
      assert.equal((outcome as { value: number }).value, countSequentially(12));
      const failed = events.find((e) => e.type === 'state' && e.state === 'failed') as { error: string } | undefined;
      assert.match(failed?.error ?? '', /^could not be started: cannot run \/nonexistent\/tidepool: spawn \/nonexistent\/tidepool ENOENT/);
      assert.ok(events.some((e) => e.type === 'retry' && e.failures === 1), 'the retry is reported');
      assert.equal(starts, 2);
      await waitFor(() => provider.nodes().filter((x) => x.state === 'released').length === 1, 'the node to be released', 60_000);
    } finally {
      await provider.stop();
    }
  });
});
