/**
 * `tidepool monitor` (formerly `tidepool coordinator`) on a real ZooKeeper ensemble: it follows node
 * processes as they join and leave and a job to its end, on its dashboard API and its Prometheus endpoint.
 * It reads with the read-only monitor credential; the commands that change the cluster hold the secret.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { DashboardHello } from '../../src/dashboard/snapshot.js';
import { childEnv } from '../support/child-env.js';
import { assertCleanError, tidepool } from '../support/cli.js';
import { secretFile, secretIn, startNodeProcess, type NodeProcess } from '../support/node-process.js';
import { waitFor, withDeadline } from '../support/wait.js';
import { startEnsemble, type ZkEnsemble } from '../support/zk-ensemble.js';

const BIN = fileURLToPath(new URL('../../bin/tidepool.mjs', import.meta.url));
const GR17 = fileURLToPath(new URL('../data/tsplib/gr17.tsp', import.meta.url));

/** Starts the monitor (by `name`, reading with the credential in `credentialFile`) and resolves with its ready line. */
async function startMonitor(zk: string, credentialFile: string, name = 'monitor', interval = '200ms'): Promise<{ child: ChildProcess; dashboard: string; metrics: string; stderr: () => string }> {
  const child = spawn(process.execPath, [BIN, name, '--zk', zk, '--secret-file', credentialFile, '--dashboard', '0', '--interval', interval, '--json'], { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv() });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const lines = createInterface({ input: child.stdout! });
  const first = await withDeadline(new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${name} exited (${code}) before it was ready: ${stderr}`)));
  }), `the ${name} to be ready`, 30_000);
  const ready = JSON.parse(first) as { dashboard: string; metrics: string };
  return { child, ...ready, stderr: () => stderr };
}

async function hello(url: string): Promise<DashboardHello> {
  return (await fetch(new URL('api/snapshot', url))).json() as Promise<DashboardHello>;
}

describe('tidepool monitor (ZooKeeper ensemble)', () => {
  let zk: ZkEnsemble;
  const nodes: NodeProcess[] = [];
  const secret = secretFile();
  const monitor = `${secret}.monitor`;
  before(async () => {
    zk = await startEnsemble({ size: 3 });
    writeFileSync(monitor, secretIn(secret).monitorCredential(), { mode: 0o600 });
  });
  after(async () => {
    for (const n of nodes) n.kill('SIGKILL');
    await Promise.all(nodes.map((n) => n.exited));
    await zk.stop();
  });

  it('shows nodes joining and leaving and a job to its end; metrics per node and job', { timeout: 180_000 }, async () => {
    const coordinator = await startMonitor(zk.hosts, monitor);
    try {
      nodes.push(...await Promise.all([1, 2].map(() => startNodeProcess({ zk: zk.connectionString, secretFile: secret }))));
      await waitFor(async () => (await hello(coordinator.dashboard)).snapshot.nodes.length === 2, 'the dashboard to show both nodes', 30_000);
      const solved = await tidepool(['solve', 'tsp', GR17, '--zk', zk.connectionString, '--secret-file', secret, '--json']);
      assert.equal(solved.code, 0, solved.stderr);
      assert.equal((JSON.parse(solved.stdout) as { objective: number }).objective, 2085);
      await waitFor(async () => (await hello(coordinator.dashboard)).snapshot.jobs.some((j) => j.state === 'done'), 'the dashboard to show the job done', 30_000);
      const done = (await hello(coordinator.dashboard)).snapshot.jobs.find((j) => j.state === 'done')!;
      assert.ok(done.tasksDone >= 1);
      assert.ok(done.finishedAt !== null && done.finishedAt >= done.createdAt);
      // The nodes leave the finished job a moment after its result appears: wait until both are idle again.
      const idle = (text: string) => nodes.every((n) => new RegExp(`^tidepool_node_workers\\{node="${n.id}",job=""\\} 1$`, 'm').test(text));
      let metrics = '';
      await waitFor(async () => idle((metrics = await (await fetch(coordinator.metrics)).text())), 'the metrics to show both nodes idle', 30_000);
      assert.match(metrics, /^tidepool_nodes 2$/m);
      assert.match(metrics, /^tidepool_monitor_process_cpu_seconds_total /m);
      // The probes a node's endpoint answers, on the monitor's port: it reads the cluster.
      const readyz = await fetch(new URL('readyz', coordinator.dashboard));
      assert.deepEqual({ status: readyz.status, body: await readyz.json() as unknown }, { status: 200, body: { ready: true } });
      assert.match(metrics, new RegExp(`^tidepool_job_tasks_completed\\{job="${done.id}",state="done"\\} ${done.tasksDone}$`, 'm'));
      // Finished jobs can be removed (running ones never are); the dashboard drops them too.
      assertCleanError(await tidepool(['jobs', '--zk', zk.connectionString, '--secret-file', monitor, '--prune', '0']), /holds a read-only monitor credential; this command changes the cluster/);
      const pruned = await tidepool(['jobs', '--zk', zk.connectionString, '--secret-file', secret, '--prune', '0', '--grace', '0s', '--json']);
      assert.equal(pruned.code, 0, pruned.stderr);
      assert.deepEqual(JSON.parse(pruned.stdout), { pruned: [done.id] });
      await waitFor(async () => (await hello(coordinator.dashboard)).snapshot.jobs.length === 0, 'the dashboard to drop the removed job', 30_000);
      assertCleanError(await tidepool(['jobs', '--zk', zk.connectionString, '--prune', 'all']), /--prune: "all" is not a whole number/);
      // A node leaves (SIGTERM: it drains and deregisters): the dashboard follows.
      nodes[0]!.kill('SIGTERM');
      await nodes[0]!.exited;
      await waitFor(async () => (await hello(coordinator.dashboard)).snapshot.nodes.map((n) => n.id).join() === nodes[1]!.id, 'the dashboard to drop the node that left', 30_000);
      const history = (await hello(coordinator.dashboard)).history;
      assert.ok(history.some((p) => p.nodes === 2) && history.at(-1)!.nodes === 1, 'the timeline shows the cluster shrinking');
    } finally {
      coordinator.child.kill('SIGTERM');
      const code = await new Promise<number | null>((resolve) => coordinator.child.once('exit', resolve));
      assert.equal(code, 0, 'the monitor stops cleanly on SIGTERM');
      assert.equal(coordinator.stderr(), '', 'nothing on stderr');
    }
  });

  it('the old name `coordinator` (and its bare-millisecond --interval) still work, each with a note', { timeout: 60_000 }, async () => {
    const old = await startMonitor(zk.connectionString, monitor, 'coordinator', '200');
    try {
      assert.equal((await hello(old.dashboard)).snapshot.nodes.length, nodes.filter((n) => n.process.exitCode === null).length);
      assert.match(old.stderr(), /^warning: deprecated: tidepool coordinator is now tidepool monitor/m);
      assert.match(old.stderr(), /^warning: deprecated: --interval 200: a number without a unit \(ms\) is the old form; write 200ms/m);
    } finally {
      old.child.kill('SIGTERM');
      await new Promise((resolve) => old.child.once('exit', resolve));
    }
  });

  it('bad flags: clear errors, exit 2', { timeout: 60_000 }, async () => {
    assertCleanError(await tidepool(['monitor']), /--zk is required/);
    assertCleanError(await tidepool(['monitor', '--zk', 'zk://127.0.0.1:1', '--dashboard', 'web']), /--dashboard: "web" is not a port number/);
    assertCleanError(await tidepool(['monitor', '--zk', 'zk://127.0.0.1:1', '--interval', '0']), /--interval: "0" is not more than 0/);
    assertCleanError(await tidepool(['monitor', '--zk', 'zk://127.0.0.1:1', '--retain-jobs', '-1']), /--retain-jobs: "-1" is not a whole number/);
  });
});
