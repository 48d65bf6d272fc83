/**
 * The data plane in jobs on node processes over a 3-server ZooKeeper ensemble and real TCP: a 5 MB
 * task state stolen, migrated on drain (SIGTERM) and recovered after SIGKILL of its node; a 200 MB
 * binary input fetched exactly once by each of 3 nodes (counted in their logs); a task module shipped
 * from a client directory to nodes where it does not exist; a 3 MB final value delivered by reference
 * (and a clear error for a client without the secret); MANN_a27 (ω = 126) with `tidepool solve`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleTaskModule } from '../../src/data/code-bundle.js';
import { decode } from '../../src/util/codec.js';
import { Cluster } from '../../src/runtime/client/cluster.js';
import { jobCommitters, taskOwners } from '../support/ledger-probes.js';
import { awaitOutcome, resolveOutcome } from '../../src/runtime/job/outcome.js';
import { jobLeader } from '../../src/runtime/client/job-list.js';
import { jobPaths } from '../../src/runtime/job/job-paths.js';
import { ledgerPaths } from '../../src/runtime/pool/task-pool-spec.js';
import { startNodeProcess as startProcess } from '../../src/runtime/client/node-processes.js';
import type { TaskRecord } from '../../src/runtime/worker/task-record.js';
import type { TaskRef } from '../../src/runtime/worker/task.js';
import { tidepool } from '../support/cli.js';
import { secretFile, secretIn, startNodeProcess, type NodeProcess } from '../support/node-process.js';
import { openGate } from '../support/gate.js';
import { waitFor, withDeadline } from '../support/wait.js';
import { startEnsemble, type ZkEnsemble } from '../support/zk-ensemble.js';
import { expectedSum, rootBigState } from '../runtime/apps/big-state.js';
import { binaryInput } from './binary-input.js';
import { assemble, streamBytes, type Piece } from '../runtime/apps/big-result.js';
import { childEnv } from '../support/child-env.js';

const app = (name: string): TaskRef => ({ module: new URL(`../runtime/apps/${name}.ts`, import.meta.url).href, export: 'default' });
const RUN = fileURLToPath(new URL('../../src/cli/run.ts', import.meta.url));
const TIDEPOOL_BIN = fileURLToPath(new URL('../../bin/tidepool.mjs', import.meta.url));
const T = { timeout: 240_000 };

describe('the data plane in jobs (node processes, ZooKeeper)', () => {
  let zk: ZkEnsemble;
  let secret: string;
  let cluster: Cluster;
  const processes: NodeProcess[] = [];
  const start = async (count: number, opts: { infoLogs?: boolean } = {}) => {
    const started = await Promise.all(Array.from({ length: count }, () => opts.infoLogs
      // Info logs: each completed blob fetch is logged, so the test can count them per node.
      ? startProcess({ zk: zk.connectionString, secretFile: secret, entry: { execArgv: ['--import', 'tsx'], script: RUN }, env: childEnv({ TIDEPOOL_LOG: 'info' }) })
      : startNodeProcess({ zk: zk.connectionString, secretFile: secret })));
    processes.push(...started);
    await waitFor(async () => { const ids = new Set((await cluster.nodes()).map((n) => n.id)); return started.every((p) => ids.has(p.id)); }, 'the new nodes to be visible');
    return started;
  };
  const stopAll = async () => {
    const live = processes.splice(0);
    for (const p of live) p.kill('SIGKILL');
    await Promise.all(live.map((p) => p.exited));
    await waitFor(async () => (await cluster.nodes()).length === 0, 'the cluster to be empty', 60_000);
  };

  before(async () => {
    zk = await startEnsemble({ size: 3 });
    secret = secretFile();
    cluster = await Cluster.connect(zk.connectionString, { secret: secretIn(secret) });
  });
  after(async () => {
    await cluster?.close();
    for (const p of processes) p.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await zk?.stop();
  });

  it('a 5 MB task state is stolen, migrated on drain, and recovered after SIGKILL of its node: exact result', T, async () => {
    const nodes = await start(3);
    const n = 60_000;
    const job = await cluster.submit(app('big-state'), rootBigState(n, 20_000, { hold: true }), { nodes: 3 });
    const leader = await (async () => { let l: string | null = null; await waitFor(async () => (l = await jobLeader(cluster.coordination, job.id)) !== null, 'a leader'); return l!; })();
    const owner = async (except: string[]) => [...(await taskOwners(cluster.coordination, job.id)).keys()].find((id) => id !== '' && !except.includes(id));
    let thief: string | undefined;
    await waitFor(async () => (thief = await owner([leader])) !== undefined, 'a 5 MB task stolen by a second node', 60_000);
    // What the ledger holds is a reference, not 5 MB.
    const dir = ledgerPaths(jobPaths(job.id)).tasks;
    const raw = await Promise.all((await cluster.coordination.getChildren(dir)).map((id) => cluster.coordination.getData(`${dir}/${id}`).then((d) => d.data, () => null)));
    const records = raw.filter((d): d is Buffer => d !== null);
    assert.ok(records.some((d) => decode<TaskRecord>(d).ref !== undefined), 'a record references its state');
    for (const d of records) assert.ok(d.length < 1024, `a ledger record of ${d.length} bytes`);
    // Drain the thief (SIGTERM): its tasks migrate, by reference, to the others.
    const draining = nodes.find((p) => p.id === thief)!;
    draining.kill('SIGTERM');
    assert.equal(await withDeadline(draining.exited, 'the drained node to exit', 60_000), 0);
    const third = nodes.find((p) => p.id !== leader && p.id !== thief)!;
    await waitFor(async () => (await taskOwners(cluster.coordination, job.id)).has(third.id), 'a task on the third node', 60_000);
    third.kill('SIGKILL');
    await third.exited;
    await openGate(cluster.coordination, job.id);
    const outcome = await withDeadline(job.outcome(), 'the outcome', 150_000).catch((err: Error) => {
      // What the surviving node was doing says where a hang is (its log level follows TIDEPOOL_LOG).
      throw new Error(`${err.message}\n${nodes.map((p) => `--- ${p.id} stderr (last 6000 chars) ---\n${p.stderr().slice(-6000)}`).join('\n')}`);
    });
    assert.equal(outcome.status, 'done', JSON.stringify(outcome));
    assert.equal(await job.result<number>(), expectedSum(n));
    await stopAll();
  });

  it('a 200 MB binary input runs on 3 node processes; each fetches it exactly once', T, async () => {
    const nodes = await start(3, { infoLogs: true });
    const { bytes, sum } = binaryInput(200 * 1024 * 1024);
    const job = await cluster.submit(app('byte-sum'), { lo: 0, hi: bytes.length, sum: 0, work: 2_000_000 }, { nodes: 3, input: bytes });
    assert.equal(await withDeadline(job.result<number>(), 'the result', 180_000), sum);
    const committers = await jobCommitters(cluster.coordination, job.id);
    for (const p of nodes) assert.ok(committers.has(p.id), `node ${p.id} ran tasks of the job`);
    for (const p of nodes) assert.equal(p.stderr().match(/fetched job input/g)?.length ?? 0, 1, `node ${p.id} fetched the input once`);
    await stopAll();
  });

  it('a 3 MB final value reaches a client with the secret byte for byte; a monitor gets a clear error, a client without the secret cannot submit', T, async () => {
    await start(2);
    const total = 3 * 1024 * 1024 + 5;
    const job = await cluster.submit(app('big-result'), { lo: 0, hi: total }, { nodes: 2 });
    const pieces = await withDeadline(job.result<Piece[]>(), 'the result', 120_000);
    assert.equal(Buffer.compare(Buffer.from(assemble(pieces, total)), Buffer.from(streamBytes(0, total))), 0, 'every byte, once, in place');
    // A client with a monitor credential reads the outcome but has no data plane: it is told how to fetch the value.
    const monitor = await Cluster.connect(zk.connectionString, { secret: secretIn(secret).monitorCredential() });
    try {
      const outcome = await awaitOutcome(monitor.coordination, job.id);
      await assert.rejects(resolveOutcome(outcome, job.id, undefined), /result of job .* \(\d+ bytes\) is held in the data plane: connect with the cluster secret/);
      await assert.rejects(monitor.submit(app('big-result'), { lo: 0, hi: 10 }, { nodes: 1 }), /submitting a job needs the cluster secret/);
    } finally {
      await monitor.close();
    }
    await assert.rejects(Cluster.connect(zk.connectionString), /NO_AUTH at \/tidepool\/nodes: cluster secret or monitor credential required to read/);
    await stopAll();
  });

  it('a task module from a client directory runs on nodes where it does not exist (shipped, bundled with its imports)', T, async () => {
    const dir = mkdtempSync(join(os.tmpdir(), 'tidepool-client-'));
    writeFileSync(join(dir, 'weights.mjs'), 'export const weight = (i) => (i % 7) + 1;\n');
    writeFileSync(join(dir, 'task.mjs'), [
      "import { weight } from './weights.mjs';",
      'export default {',
      "  kind: 'tidepool.task', name: 'weighted-sum',",
      '  run(s, ctx) { let sum = 0; for (let i = s.lo; i < s.hi; i++) sum += weight(i); ctx.emit(sum); },',
      '  split(s) { if (s.hi - s.lo < 1000) return undefined; const mid = (s.lo + s.hi) >> 1; const c = { lo: mid, hi: s.hi }; s.hi = mid; return c; },',
      '  result: { initial: () => 0, combine: (a, b) => a + b },',
      '};',
    ].join('\n'));
    const ref = { module: pathToFileURL(join(dir, 'task.mjs')).href, export: 'default' };
    const job = await cluster.submit(ref, { lo: 0, hi: 100_000 }, { nodes: 2 });
    // The module is gone before any node starts: only the shipped bundle can run the job. The nodes run
    // the installed command (bin/tidepool.mjs, built) in an empty directory of their own: no project, no
    // node_modules beside them, no copy of the module or what it imports.
    rmSync(dir, { recursive: true, force: true });
    const nodeDir = mkdtempSync(join(os.tmpdir(), 'tidepool-node-'));
    const started = await Promise.all([0, 1].map(() => startProcess({
      zk: zk.connectionString, secretFile: secret, cwd: nodeDir, entry: { execArgv: [], script: TIDEPOOL_BIN },
    })));
    processes.push(...started);
    let expected = 0;
    for (let i = 0; i < 100_000; i++) expected += (i % 7) + 1;
    assert.equal(await withDeadline(job.result<number>(), 'the result', 120_000), expected);
    const spec = decode<{ code?: { module: string; bundle: { size: number } } }>((await cluster.coordination.getData(jobPaths(job.id).spec)).data);
    assert.equal(spec.code?.module, ref.module, 'the spec names the module it ships');
    assert.ok((spec.code?.bundle.size ?? 0) > 0, 'and references its bundle');
    await stopAll();
    rmSync(nodeDir, { recursive: true, force: true });
  });

  it('tidepool solve clique MANN_a27 proves ω = 126 on 3 node processes and embedded', T, async () => {
    const file = fileURLToPath(new URL('../data/clique/MANN_a27.clq', import.meta.url));
    for (const args of [['--zk', zk.connectionString, '--nodes', '3', '--workers', '1', '--secret-file', secret], []]) {
      const run = await tidepool(['solve', 'clique', file, '--json', ...args], 180_000);
      assert.equal(run.code, 0, run.stderr);
      const out = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { objective: number; solution: number[]; verified: boolean };
      assert.equal(out.objective, 126, run.stdout);
      assert.equal(out.verified, true);
      assert.equal(out.solution.length, 126);
    }
  });
});

describe('code shipping refuses native addons', () => {
  it('names the package that is a native addon', async () => {
    const dir = mkdtempSync(join(os.tmpdir(), 'tidepool-native-'));
    try {
      const pkg = join(dir, 'node_modules', 'fast-native');
      writeFileSync(join(dir, 'task.mjs'), "import { go } from 'fast-native';\nexport default { kind: 'tidepool.task', name: 'n', run() { go(); } };\n");
      rmSync(pkg, { recursive: true, force: true });
      await import('node:fs/promises').then((fs) => fs.mkdir(pkg, { recursive: true }));
      writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'fast-native', main: 'index.js', gypfile: true }));
      writeFileSync(join(pkg, 'index.js'), "module.exports = require('./build/Release/fast.node');\n");
      writeFileSync(join(pkg, 'binding.gyp'), '{}');
      await assert.rejects(bundleTaskModule(pathToFileURL(join(dir, 'task.mjs')).href), /imports "fast-native", a native addon \(it has a binding\.gyp\)/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
