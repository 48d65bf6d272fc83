/**
 * Cluster security end to end on a 3-server ZooKeeper ensemble with `tidepool node` processes
 * (cluster-security.ts), plus what only nodes elsewhere exercise: shipped code. A module from a
 * client directory ships signed and runs; the same spec with its code reference changed after signing
 * runs nothing; a bundle tampered with in a node's code cache is not what the node runs.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { connect } from '../../src/coord/connect.js';
import { Cluster } from '../../src/runtime/client/cluster.js';
import { decode, encode } from '../../src/util/codec.js';
import { awaitOutcome } from '../../src/runtime/job/outcome.js';
import { jobPaths } from '../../src/runtime/job/job-paths.js';
import type { JobSpec } from '../../src/runtime/job/job-spec.js';
import { startNodeProcess, type NodeProcess } from '../../src/runtime/client/node-processes.js';
import { secretFile, secretIn } from '../support/node-process.js';
import { waitFor, withDeadline } from '../support/wait.js';
import { startEnsemble, type ZkEnsemble } from '../support/zk-ensemble.js';
import { clusterSecuritySuite } from './cluster-security.js';

const RUN = fileURLToPath(new URL('../../src/cli/run.ts', import.meta.url));
const T = { timeout: 240_000 };

describe('cluster security (ZooKeeper, node processes)', () => {
  let zk: ZkEnsemble;
  let clusters = 0;
  before(async () => {
    zk = await startEnsemble({ size: 3 });
  });
  after(async () => zk.stop());

  /** Node processes with their own code cache; each cluster under its own chroot with its own secret. */
  const startNodes = (conn: string, secret: string, count: number, extraArgs: string[], cache: string) => Promise.all(Array.from({ length: count }, () => startNodeProcess({
    zk: conn, secretFile: secret, entry: { execArgv: ['--import', 'tsx'], script: RUN }, extraArgs,
    env: { ...process.env, TIDEPOOL_LOG: process.env.TIDEPOOL_LOG ?? 'warn', TIDEPOOL_CODE_CACHE: cache },
  })));

  clusterSecuritySuite(async ({ nodes, allowCode }) => {
    const conn = `${zk.connectionString}/security-${++clusters}`;
    const secret = secretFile();
    const cluster = await Cluster.connect(conn, { secret: secretIn(secret) });
    const processes = await startNodes(conn, secret, nodes, (allowCode ?? []).flatMap((a) => ['--allow-code', a]), mkdtempSync(join(os.tmpdir(), 'tidepool-cache-')));
    await waitFor(async () => (await cluster.nodes()).length === nodes, 'the nodes to register');
    const stranger = await connect(conn);
    const monitor = await connect(conn, { secret: secretIn(secret).monitorCredential() });
    return {
      cluster, stranger, monitor, nodes: processes.map((p) => p.id).sort(),
      close: async () => {
        await stranger.close();
        await monitor.close();
        await cluster.close();
        for (const p of processes) p.kill('SIGKILL');
        await Promise.all(processes.map((p) => p.exited));
      },
    };
  });

  it('shipped code runs signed; changed after signing it runs nothing; a tampered cached bundle is not run', T, async () => {
    const conn = `${zk.connectionString}/security-shipped`;
    const secret = secretFile();
    const cache = mkdtempSync(join(os.tmpdir(), 'tidepool-cache-'));
    const cluster = await Cluster.connect(conn, { secret: secretIn(secret) });
    // A module outside any installation: each process that imports it leaves a canary named by its pid.
    const dir = mkdtempSync(join(os.tmpdir(), 'tidepool-shipped-'));
    writeFileSync(join(dir, 'task.mjs'), [
      "import { writeFileSync } from 'node:fs';",
      `writeFileSync(${JSON.stringify(dir)} + '/canary-' + process.pid, 'ran');`,
      "export default { kind: 'tidepool.task', name: 'shipped', run(s, ctx) { ctx.emit(s.n + 1); }, result: { initial: () => 0, combine: (a, b) => a + b } };",
    ].join('\n'));
    const ref = { module: pathToFileURL(join(dir, 'task.mjs')).href, export: 'default' };
    let processes: NodeProcess[] = [];
    try {
      processes = await startNodes(conn, secret, 1, [], cache);
      const node = processes[0]!;
      await waitFor(async () => (await cluster.nodes()).length === 1, 'the node to register');
      // Signed and shipped: it runs on the node, which has no copy of the module.
      const first = await cluster.submit(ref, { n: 41 }, { nodes: 1 });
      assert.equal(await withDeadline(first.result<number>(), 'the shipped job'), 42);
      assert.ok(existsSync(join(dir, `canary-${node.process.pid}`)), 'the node imported the shipped bundle');
      const shipped = decode<JobSpec>((await cluster.coordination.getData(jobPaths(first.id).spec)).data);
      assert.ok(shipped.code && shipped.signature, 'the spec references the bundle and is signed');

      // The same spec with its code reference pointed elsewhere (what a writer without the signing key could do): refused before import.
      const second = await cluster.submit(ref, { n: 1 }, { nodes: 0 });
      const spec = decode<JobSpec>((await cluster.coordination.getData(jobPaths(second.id).spec)).data);
      const other = { ...spec.code!, bundle: { hash: 'a'.repeat(64), size: spec.code!.bundle.size } };
      await cluster.coordination.setData(jobPaths(second.id).spec, encode({ ...spec, code: other }));
      const outcome = awaitOutcome(cluster.coordination, second.id);
      await cluster.scale(second.id, 1);
      const refused = await withDeadline(outcome, 'the refused job');
      assert.equal(refused.status, 'failed');
      if (refused.status === 'failed') assert.match(refused.error, /task module file:.*task\.mjs \(shipped, aaaaaaaaaaaa…\) refused: shipped code runs only when its spec carries an HMAC by the cluster secret over the code's hash; this one does not verify/);

      // A bundle changed in the node's code cache (another process wrote it) is replaced from the verified bytes before import.
      node.kill('SIGKILL');
      await node.exited;
      const [entry] = readdirSync(cache);
      const tampered = join(dir, 'tampered');
      writeFileSync(join(cache, entry!, 'task.mjs'), `import { writeFileSync } from 'node:fs'; writeFileSync(${JSON.stringify(tampered)}, 'ran'); export default { kind: 'tidepool.task', name: 'x', run(s, ctx) { ctx.emit(-1); }, result: { initial: () => 0, combine: (a, b) => a + b } };`);
      processes = await startNodes(conn, secret, 1, [], cache);
      await waitFor(async () => (await cluster.nodes()).map((n) => n.id).join() === processes[0]!.id, 'the new node to register alone');
      const third = await cluster.submit(ref, { n: 99 }, { nodes: 1 });
      assert.equal(await withDeadline(third.result<number>(), 'the job after tampering'), 100);
      assert.equal(existsSync(tampered), false, 'the tampered bundle never ran');
      assert.ok(existsSync(join(dir, `canary-${processes[0]!.process.pid}`)), 'the new node ran the genuine bundle');
    } finally {
      await cluster.close();
      for (const p of processes) p.kill('SIGKILL');
      await Promise.all(processes.map((p) => p.exited));
    }
  });
});
