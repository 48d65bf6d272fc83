/**
 * `tidepool up` / `tidepool down` as a user runs them: a cluster on this machine (ZooKeeper from
 * Debian's package, two nodes, the monitor), a job submitted to the address it printed, and nothing
 * left running after `tidepool down` — nor after Ctrl-C, nor after `up` itself was killed.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { alive, stopRecordedCluster, type ClusterRecord } from '../../src/cli/local-cluster/local-cluster.js';
import { assertCleanError, tidepool } from '../support/cli.js';
import { withDeadline } from '../support/wait.js';

const BIN = fileURLToPath(new URL('../../bin/tidepool.mjs', import.meta.url));
const GR17 = fileURLToPath(new URL('../data/tsplib/gr17.tsp', import.meta.url));
const OPTIMA = JSON.parse(readFileSync(new URL('../data/tsplib/optima.json', import.meta.url), 'utf8')) as Record<string, { optimal_tour_length: number }>;

interface Up {
  child: ChildProcess;
  ready: { zk: string; secretFile: string; dashboard: string; nodes: string[]; dir: string };
  record: ClusterRecord;
  exited: Promise<number | null>;
  stderr: () => string;
}

const dirs: string[] = [];
// A failed case still leaves nothing running: what each cluster recorded is stopped.
after(async () => {
  for (const dir of dirs) {
    if (existsSync(path.join(dir, 'cluster.json'))) await stopRecordedCluster(dir);
    rmSync(dir, { recursive: true, force: true });
  }
});

function clusterDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tidepool-up-'));
  dirs.push(dir);
  return dir;
}

async function up(dir: string, nodes = 2): Promise<Up> {
  const child = spawn(process.execPath, [BIN, 'up', '--nodes', String(nodes), '--workers', '1', '--dashboard', '0', '--dir', dir, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = await withDeadline(new Promise<Up['ready']>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line) as Up['ready']);
    });
    void exited.then((code) => reject(new Error(`tidepool up ended (${code}) before it was ready: ${stderr}`)));
  }), 'tidepool up to be ready', 180_000);
  const record = JSON.parse(readFileSync(path.join(dir, 'cluster.json'), 'utf8')) as ClusterRecord;
  return { child, ready, record, exited, stderr: () => stderr };
}

/** Every process the cluster record names. */
const pidsOf = (r: ClusterRecord) => [r.pid, ...r.zookeeper.map((z) => z.pid), ...r.nodes.map((n) => n.pid), ...(r.monitor ? [r.monitor.pid] : [])];

describe('tidepool up and down', () => {
  it('starts ZooKeeper, two nodes and the monitor; a job runs on them; tidepool down leaves no process behind', async () => {
    const dir = clusterDir();
    const cluster = await up(dir);
    assert.match(cluster.ready.zk, /^127\.0\.0\.1:\d+$/);
    assert.equal(cluster.ready.nodes.length, 2);
    assert.equal(cluster.record.nodes.length, 2);
    assert.equal(cluster.record.zookeeper.length, 1);
    const dashboard = await fetch(cluster.ready.dashboard);
    assert.equal(dashboard.status, 200);
    const status = await tidepool(['status', '--zk', cluster.ready.zk, '--secret-file', cluster.ready.secretFile, '--json']);
    assert.equal(status.code, 0, status.stderr);
    assert.equal((JSON.parse(status.stdout) as { nodes: unknown[] }).nodes.length, 2, 'two nodes registered');
    const solved = await tidepool(['solve', 'tsp', GR17, '--zk', cluster.ready.zk, '--secret-file', cluster.ready.secretFile, '--json'], 120_000);
    assert.equal(solved.code, 0, solved.stderr);
    assert.equal((JSON.parse(solved.stdout) as { objective: number }).objective, OPTIMA.gr17!.optimal_tour_length);
    const pids = pidsOf(cluster.record);
    const down = await tidepool(['down', '--dir', dir, '--json'], 180_000);
    assert.equal(down.code, 0, down.stderr);
    assert.deepEqual((JSON.parse(down.stdout) as { stopped: string[] }).stopped, [`tidepool up (pid ${cluster.record.pid})`]);
    assert.equal(await withDeadline(cluster.exited, 'tidepool up to exit', 60_000), 0, cluster.stderr());
    for (const pid of pids) assert.ok(!alive(pid), `process ${pid} is gone`);
    assert.ok(!existsSync(path.join(dir, 'cluster.json')));
    assertCleanError(await tidepool(['down', '--dir', dir]), /no cluster is up in .*cluster\.json/);
  });

  it('stops it all on Ctrl-C, and tidepool down stops what a killed tidepool up left', async () => {
    const dir = clusterDir();
    const first = await up(dir, 1);
    assertCleanError(await tidepool(['up', '--dir', dir, '--dashboard', '0']), /a cluster is already up in .*: tidepool down --dir .* first/);
    first.child.kill('SIGINT');
    assert.equal(await withDeadline(first.exited, 'tidepool up to exit on Ctrl-C', 120_000), 0, first.stderr());
    for (const pid of pidsOf(first.record)) assert.ok(!alive(pid), `process ${pid} is gone after Ctrl-C`);

    const second = await up(dir, 1);
    second.child.kill('SIGKILL');
    await second.exited;
    const survivors = pidsOf(second.record).filter((p) => p !== second.record.pid);
    assert.ok(survivors.every(alive), 'its ZooKeeper, node and monitor outlive a killed tidepool up');
    const down = await tidepool(['down', '--dir', dir, '--json'], 180_000);
    assert.equal(down.code, 0, down.stderr);
    assert.equal((JSON.parse(down.stdout) as { stopped: string[] }).stopped.length, survivors.length);
    for (const pid of survivors) assert.ok(!alive(pid), `process ${pid} is gone after tidepool down`);
  });
});
