/**
 * Workflows on node processes over a real 3-server ZooKeeper ensemble: a replay where no task starts
 * before its inputs exist, a member killed with SIGKILL mid-replay (its tasks dispatched again, lost
 * intermediate files recreated by re-running their producers, a new node joining), a member drained
 * mid-replay (a graceful leave), a workflow stopped and resumed from its journal without re-running a
 * finished task, a flaky real command retried, a command task adding tasks (every member applies
 * them), and `tidepool workflow run --zk` with its progress lines. Outputs are checked byte for byte
 * and every task is completed exactly once (the journal in the shared directory counts completions). The CLI test runs the built command (`npm run build`).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Cluster } from '../../../src/runtime/client/cluster.js';
import { jobLeader } from '../../../src/runtime/client/job-list.js';
import { requestJob } from '../../../src/runtime/client/job-requests.js';
import { Journal } from '../../../src/frameworks/workflow/journal.js';
import { loadWorkflow } from '../../../src/frameworks/workflow/load-workflow.js';
import { replayBytes } from '../../../src/frameworks/workflow/replay-bytes.js';
import { submitWorkflow } from '../../../src/frameworks/workflow/run-workflow.js';
import { sharedPath } from '../../../src/frameworks/workflow/task-execution.js';
import { WorkflowBuilder } from '../../../src/frameworks/workflow/workflow-builder.js';
import type { WorkflowResult } from '../../../src/frameworks/workflow/workflow-kind.js';
import { finalOutputs, type Workflow } from '../../../src/frameworks/workflow/workflow.js';
import { tidepool } from '../../support/cli.js';
import { secretFile, secretIn, startNodeProcess, type NodeProcess } from '../../support/node-process.js';
import { waitFor, withDeadline } from '../../support/wait.js';
import { startEnsemble, type ZkEnsemble } from '../../support/zk-ensemble.js';
import { checkOrder } from './check-order.js';

const DIR = fileURLToPath(new URL('../../data/workflows/pegasus-dax-2.1/', import.meta.url));
const FILE = DIR + 'Montage_100.xml';
const SCALE = 0.01;
const T = { timeout: 240_000 };

function assertOutputs(wf: Workflow, shared: string, scale = SCALE): void {
  for (const f of finalOutputs(wf)) {
    const file = wf.files[f]!;
    assert.deepEqual(new Uint8Array(readFileSync(sharedPath(shared, file.name))), replayBytes(file.key, Math.round(file.size * scale)), file.name);
  }
}

/** Across the runs (run directories) of one workflow, every task completed exactly once. */
function assertOnce(wf: Workflow, ...runs: string[]): { recreations: number } {
  const completions = new Map<number, number>();
  let recreations = 0;
  for (const run of runs) {
    const scan = Journal.scan(run);
    for (const [t, n] of scan.completions) completions.set(t, (completions.get(t) ?? 0) + n);
    recreations += scan.recreations;
  }
  for (const [t, n] of completions) assert.equal(n, 1, `task ${wf.tasks[t]!.id} completed ${n} times`);
  assert.equal(completions.size, wf.tasks.length, 'every task finished');
  return { recreations };
}

describe('workflows on node processes over ZooKeeper', () => {
  let zk: ZkEnsemble;
  let secret: string;
  const processes: NodeProcess[] = [];
  const dirs: string[] = [];
  const fresh = () => {
    const d = mkdtempSync(join(tmpdir(), 'wf-zk-'));
    dirs.push(d);
    return d;
  };

  before(async () => {
    zk = await startEnsemble({ size: 3 });
    secret = secretFile();
    // One with a longer coordination session (`--session-timeout`): a node on a machine too busy to answer for 6 s stays a member.
    processes.push(...await Promise.all(Array.from({ length: 3 }, (_, i) => startNodeProcess({ zk: zk.connectionString, secretFile: secret, workers: 1, ...(i === 0 ? { extraArgs: ['--session-timeout', '12s'] } : {}) }))));
  });
  after(async () => {
    for (const p of processes) p.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await zk.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  const idle = async (cluster: Cluster, n: number) =>
    waitFor(async () => (await cluster.nodes()).filter((x) => x.job === null && x.assignment === '').length >= n, `${n} idle nodes`, 60_000);

  /** Submits a replay of FILE on 3 nodes and waits until `done` tasks finished; the victim is a member that does not lead. */
  const midReplay = async (cluster: Cluster, wf: Workflow, shared: string, done: number) => {
    await idle(cluster, 3);
    const job = await submitWorkflow(cluster, wf, { file: FILE, shared, replay: SCALE, nodes: 3 });
    const journal = job.dir;
    await waitFor(() => Journal.scan(journal).completions.size >= done, `${done} tasks finished`, 120_000);
    const leader = await jobLeader(cluster.coordination, job.id);
    const members = (await cluster.nodes()).filter((n) => n.job === job.id).map((n) => n.id);
    const victim = processes.find((p) => p.id !== leader && members.includes(p.id) && p.process.exitCode === null)!;
    return { job, journal, victim };
  };

  it('tidepool node --session-timeout: the session ZooKeeper granted is the one asked for (6 s without it)', () => {
    assert.deepEqual(processes.slice(0, 3).map((p) => p.sessionTimeoutMs), [12_000, 6_000, 6_000]);
  });

  it('SIGKILL of a member mid-replay: tasks dispatched again, lost files recreated, a new node joins; each task completed once', T, async () => {
    const wf = await loadWorkflow(FILE);
    const shared = fresh();
    const cluster = await Cluster.connect(zk.connectionString, { secret: secretIn(secret) });
    try {
      const { job, journal, victim } = await midReplay(cluster, wf, shared, 35);
      victim.kill('SIGKILL');
      await victim.exited;
      processes.push(await startNodeProcess({ zk: zk.connectionString, secretFile: secret, workers: 1 }));
      const result = await withDeadline(job.result<WorkflowResult>(), 'the workflow', 180_000);
      assert.ok(result.members.length >= 2);
      assertOnce(wf, journal);
      assertOutputs(wf, shared);
    } finally {
      await cluster.close();
    }
  });

  it('a member drained mid-replay (a graceful leave): right outputs, no task finished twice, the node lives on', T, async () => {
    const wf = await loadWorkflow(FILE);
    const shared = fresh();
    const cluster = await Cluster.connect(zk.connectionString, { secret: secretIn(secret) });
    try {
      const { job, journal, victim } = await midReplay(cluster, wf, shared, 20);
      assert.equal(await cluster.drain(victim.id), true, 'the node was in the job when drained');
      await waitFor(async () => (await cluster.nodes()).some((n) => n.id === victim.id && n.job === null), 'the drained node left the job', 60_000);
      const result = await withDeadline(job.result<WorkflowResult>(), 'the workflow', 180_000);
      assert.ok(!result.members.some((m) => m.node === victim.id), 'the drained node is no member at the end');
      assert.equal(victim.process.exitCode, null, 'the drained node process is still running');
      assertOnce(wf, journal);
      assertOutputs(wf, shared);
    } finally {
      await cluster.close();
    }
  });

  it('a stopped workflow resumes from its journal and re-runs no finished task', T, async () => {
    const wf = await loadWorkflow(FILE);
    const shared = fresh();
    const cluster = await Cluster.connect(zk.connectionString, { secret: secretIn(secret) });
    try {
      await idle(cluster, 3);
      const first = await submitWorkflow(cluster, wf, { file: FILE, shared, replay: SCALE, nodes: 3 });
      const journal = first.dir;
      await waitFor(() => Journal.scan(journal).completions.size >= 30, '30 tasks finished', 120_000);
      assert.deepEqual(await requestJob(cluster.coordination, first.id, 'stop', null, { timeoutMs: 120_000 }), { stopped: true });
      const stopped = await withDeadline(first.result<WorkflowResult>(), 'the stopped run', 60_000);
      assert.equal(stopped.stopped, true);
      const before = Journal.scan(journal).completions.size;
      assert.ok(before < wf.tasks.length, 'stopped before the end');
      await idle(cluster, 3);
      const second = await submitWorkflow(cluster, wf, { file: FILE, shared, replay: SCALE, nodes: 3 });
      const resumed = await withDeadline(second.result<WorkflowResult>(), 'the resumed run', 180_000);
      assert.equal(resumed.tasks, wf.tasks.length - before, 'the resumed run completed only what was left');
      assert.equal(second.prepared.plan.upToDate, before, 'the tasks the stopped run finished are up to date');
      assert.equal(assertOnce(wf, first.dir, second.dir).recreations, 0, 'no finished task ran again: the files it needed were saved');
      assertOutputs(wf, shared);
    } finally {
      await cluster.close();
    }
  });

  it('a flaky real command is retried and the workflow ends with the right output', T, async () => {
    const shared = fresh();
    const flag = join(fresh(), 'failed-once');
    const builder = new WorkflowBuilder('flaky')
      .command('make', ['sh', '-c', 'seq 1 5 > numbers.txt'], { outputs: ['numbers.txt'] })
      .command('flaky-sum', ['sh', '-c', `if [ ! -e ${flag} ]; then touch ${flag}; exit 1; fi; paste -sd+ numbers.txt | bc > sum.txt`], { inputs: ['numbers.txt'], outputs: ['sum.txt'] });
    const cluster = await Cluster.connect(zk.connectionString, { secret: secretIn(secret) });
    try {
      await idle(cluster, 2);
      const job = await submitWorkflow(cluster, builder.build(), { builder, shared, nodes: 2 });
      const result = await withDeadline(job.result<WorkflowResult>(), 'the workflow', 120_000);
      assert.equal(result.tasks, 2);
      assert.equal(result.members.reduce((n, m) => n + m.retries, 0), 1);
      assert.equal(readFileSync(join(shared, 'sum.txt'), 'utf8'), '15\n');
    } finally {
      await cluster.close();
    }
  });

  it('a command task adds tasks on node processes ($TIDEPOOL_ADD_TASKS): every member applies them, each runs once', T, async () => {
    const shared = fresh();
    // seed writes 12 numbers and adds a task per number (each squares one) and a sum of the squares.
    const added = [
      ...Array.from({ length: 12 }, (_, i) => ({ id: `sq-${i}`, command: ['sh', '-c', `n=$(sed -n ${i + 1}p numbers.txt); echo $((n * n)) > sq-${i}.txt`], inputs: ['numbers.txt'], outputs: [`sq-${i}.txt`] })),
      { id: 'total', command: ['sh', '-c', 'cat sq-*.txt | paste -sd+ | bc > total.txt'], inputs: Array.from({ length: 12 }, (_, i) => `sq-${i}.txt`), outputs: ['total.txt'] },
    ];
    const builder = new WorkflowBuilder('adds')
      .command('seed', ['sh', '-c', `seq 1 12 > numbers.txt; printf '%s' '${JSON.stringify(added)}' > "$TIDEPOOL_ADD_TASKS"`], { outputs: ['numbers.txt'] });
    const cluster = await Cluster.connect(zk.connectionString, { secret: secretIn(secret) });
    try {
      await idle(cluster, 2);
      const job = await submitWorkflow(cluster, builder.build(), { builder, shared, nodes: 2 });
      const result = await withDeadline(job.result<WorkflowResult>(), 'the workflow', 120_000);
      assert.equal(result.tasks, 14);
      assert.equal(readFileSync(join(shared, 'total.txt'), 'utf8'), '650\n', '1² + … + 12²');
      assert.deepEqual([...Journal.scan(job.dir).completions.values()].filter((n) => n !== 1), []);
      assert.equal(result.members.filter((m) => m.completed > 0).length, 2, 'both node processes ran tasks');
    } finally {
      await cluster.close();
    }
  });

  it('a replay on three node processes respects every dependency: no task starts before its inputs exist', T, async () => {
    const file = DIR + 'Montage_50.xml';
    const wf = await loadWorkflow(file);
    const shared = fresh();
    const cluster = await Cluster.connect(zk.connectionString, { secret: secretIn(secret) });
    try {
      await idle(cluster, 3);
      const job = await submitWorkflow(cluster, wf, { file, shared, replay: SCALE, nodes: 3, trace: true });
      const result = await withDeadline(job.result<WorkflowResult>(), 'the workflow', 180_000);
      assert.equal(result.tasks, wf.tasks.length, 'each task completed once');
      assert.equal(result.members.filter((m) => m.trace.length > 0).length, 3, 'tasks ran on every node process');
      assert.equal(checkOrder(wf, result), wf.counts.edges, 'every dependency checked');
      assertOutputs(wf, shared);
    } finally {
      await cluster.close();
    }
  });

  it('tidepool workflow run --zk CONN --progress: the node processes run it; progress lines count tasks and bytes', T, async () => {
    const file = DIR + 'Montage_25.xml';
    const scale = 0.02;
    const wf = await loadWorkflow(file);
    const shared = fresh();
    const cluster = await Cluster.connect(zk.connectionString, { secret: secretIn(secret) });
    try {
      await idle(cluster, 2);
    } finally {
      await cluster.close();
    }
    const r = await tidepool(['workflow', 'run', file, '--replay', String(scale), '--zk', zk.connectionString, '--secret-file', secret, '--nodes', '2', '--shared', shared, '--progress', '--json'], 180_000);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { completed: number; nodes: number; bytesToShared: number; bytesFromShared: number; bytesPeer: number };
    const finals = finalOutputs(wf).reduce((n, f) => n + Math.round(wf.files[f]!.size * scale), 0);
    assert.deepEqual({ completed: out.completed, nodes: out.nodes, bytesToShared: out.bytesToShared }, { completed: 25, nodes: 2, bytesToShared: finals });
    assert.ok(out.bytesFromShared > 0 && out.bytesPeer > 0, 'inputs came from shared storage, intermediates peer to peer');
    const lines = r.stderr.split('\n').filter((l) => l.startsWith('tasks '));
    assert.ok(lines.length >= 1, `progress lines on stderr:\n${r.stderr}`);
    for (const line of lines) assert.match(line, /^tasks \d+\/25 done, \d+ running, \d+ ready, \d+ waiting; moved \d+\.\d MB from shared, \d+\.\d MB to shared, \d+\.\d MB peer to peer$/);
    const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
    assert.equal(lines.at(-1), `tasks 25/25 done, 0 running, 0 ready, 0 waiting; moved ${mb(out.bytesFromShared)} from shared, ${mb(finals)} to shared, ${mb(out.bytesPeer)} peer to peer`);
    assertOutputs(wf, shared, scale);
  });
});
