/**
 * Spawned children recorded in batches: a worker hands a parent's children to its node several at a
 * time, with the parent's checkpoint (it runs on) or with its completion, and the node records each
 * batch in one ledger group. Real JobRunners, Ledgers, membership and leader duties on the embedded
 * backend; the workers are the test's, reporting as worker threads do. A node crashes after a batch's
 * records committed and before its children ran; the next leader recovers them: every child counts
 * exactly once (count and checksum), and the parent resumes after the batch instead of spawning it again.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EmbeddedClient } from '../../src/coord/embedded/embedded-client.js';
import { EmbeddedServer } from '../../src/coord/embedded/embedded-server.js';
import { GroupMembership } from '../../src/coord/recipes/group-membership.js';
import { TerminationList } from '../../src/coord/recipes/termination-detection.js';
import { decode, encode } from '../../src/util/codec.js';
import { jobPaths } from '../../src/runtime/job/job-paths.js';
import { ledgerPaths } from '../../src/runtime/pool/task-pool-spec.js';
import { JobRunner } from '../../src/runtime/pool/job-runner.js';
import type { JobOutcome } from '../../src/runtime/job/outcome.js';
import { TaskPoolLeaderDuties } from '../../src/runtime/pool/task-pool-leader.js';
import { Ledger } from '../../src/runtime/pool/ledger.js';
import type { TaskRecord } from '../../src/runtime/worker/task-record.js';
import type { RunRequest } from '../../src/runtime/worker/messages.js';
import type { WorkerEvent, Workers } from '../../src/runtime/worker/worker-pool.js';
import { Rng } from '../../src/util/rng.js';
import { waitFor } from '../support/wait.js';

interface Fan {
  root: boolean;
  /** Children spawned so far (the root's progress: a checkpoint carries it). */
  next: number;
  n: number;
  value: number;
}
interface Tally {
  count: number;
  sum: number;
}
const BATCH = 32;
const reducer = { initial: (): Tally => ({ count: 0, sum: 0 }), combine: (a: unknown, b: unknown) => ({ count: (a as Tally).count + (b as Tally).count, sum: (a as Tally).sum + (b as Tally).sum }) };

/**
 * One worker slot running the fan as a worker thread reports it: each step of the root spawns the next
 * BATCH children and hands them over with its checkpoint, its last batch rides with its completion;
 * a child completes with its value. Nothing runs until the test steps it.
 */
class FanWorkers implements Workers {
  readonly size = 1;
  private current: RunRequest | undefined;
  /** The root's state each time it started here. */
  readonly rootStarts: Fan[] = [];

  constructor(private readonly onEvent: (e: WorkerEvent) => void) {}

  idleSlots(): number[] {
    return this.current ? [] : [0];
  }

  run(_slot: number, req: RunRequest): void {
    if (this.current) throw new Error('the slot is busy');
    this.current = structuredClone(req);
    const s = this.current.state as Fan;
    if (s.root) this.rootStarts.push({ ...s });
  }

  requestSplit(): void {}
  clearSplit(): void {}
  splitRequested(): boolean {
    return false;
  }
  requestMigrate(): void {}
  cancel(): void {}

  step(): void {
    const req = this.current;
    if (!req) return;
    const s = req.state as Fan;
    if (!s.root) {
      this.current = undefined;
      return this.onEvent({ slot: 0, type: 'done', taskId: req.taskId, partial: { count: 1, sum: s.value } satisfies Tally });
    }
    const states: Fan[] = [];
    while (states.length < BATCH && s.next < s.n) states.push({ root: false, next: 0, n: 0, value: ++s.next });
    if (s.next < s.n) return this.onEvent({ slot: 0, type: 'children', taskId: req.taskId, states, checkpoint: structuredClone({ state: s, partial: req.partial }) });
    this.current = undefined;
    this.onEvent({ slot: 0, type: 'done', taskId: req.taskId, partial: { count: 1, sum: 0 } satisfies Tally, children: states });
  }

  crash(): void {
    this.current = undefined;
  }
}

const flush = async () => {
  for (let i = 0; i < 4; i++) await new Promise((r) => setImmediate(r));
};

async function startNode(server: EmbeddedServer, id: string, paths: ReturnType<typeof jobPaths>, rng: Rng) {
  const client = new EmbeddedClient(server, 600_000);
  const ledger = new Ledger(client, { tasks: ledgerPaths(paths).tasks, txns: ledgerPaths(paths).txns }, id);
  const members = new GroupMembership(client, paths.members);
  const workers: FanWorkers = new FanWorkers((e) => runner.onWorker(e));
  const runner: JobRunner = new JobRunner({
    nodeId: id, jobId: 'fan', ref: { module: 'fan', export: 'default' }, ledger, workers, board: undefined, varNames: [],
    send: () => Promise.reject(new Error('alone in the job')),
    peers: () => [],
    setVar: () => undefined,
    onEvent: () => undefined,
    rng,
  });
  await members.join(id);
  await members.watch();
  const duties = new TaskPoolLeaderDuties(client, paths, ledger, members, reducer, (s) => runner.adopt(s));
  duties.start();
  return { id, client, ledger, members, workers, runner, duties };
}

/** Owner of every live record. */
async function owners(client: EmbeddedClient, paths: ReturnType<typeof jobPaths>): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const id of await client.getChildren(ledgerPaths(paths).tasks)) out.set(id, decode<TaskRecord>((await client.getData(`${ledgerPaths(paths).tasks}/${id}`)).data).owner);
  return out;
}

/**
 * The root of `n` children runs on n0 for `batches` steps (each records a batch), then n0 crashes
 * before any child ran; n1 becomes the leader, recovers every record and runs the job to its end.
 */
async function crashAfter(n: number, batches: number, seed: number) {
  const server = new EmbeddedServer();
  const paths = jobPaths('fan');
  const setup = new EmbeddedClient(server, 600_000);
  await new TerminationList(setup, ledgerPaths(paths).termination).init('root', encode({ owner: '', state: { root: true, next: 0, n, value: 0 } satisfies Fan, partial: undefined }));
  const rng = new Rng(seed);
  const n0 = await startNode(server, 'n0', paths, rng);
  await waitFor(() => n0.workers.rootStarts.length === 1, 'n0 to recover the root and start it');
  for (let b = 1; b <= batches; b++) {
    n0.workers.step();
    const live = Math.min(n, b * BATCH) + (b * BATCH < n ? 1 : 0); // the root's record goes with its last batch
    await waitFor(async () => (await setup.getChildren(ledgerPaths(paths).tasks)).length === live, `batch ${b} to be recorded (${live} records)`);
  }
  const before = await owners(setup, paths);
  // The crash: n0's workers, runner and session are gone; nothing of its children ran.
  n0.workers.crash();
  n0.runner.stop();
  n0.duties.stop();
  n0.members.stop();
  server.expire(n0.client.sessionId);

  const n1 = await startNode(server, 'n1', paths, new Rng(seed + 1));
  let outcome: JobOutcome | undefined;
  const deadline = Date.now() + 30_000;
  while (!outcome && Date.now() < deadline) {
    n1.workers.step();
    await flush();
    if (await setup.exists(paths.result)) outcome = decode<JobOutcome>((await setup.getData(paths.result)).data);
  }
  n1.duties.stop();
  n1.members.stop();
  return { before, outcome, rootStartsOnN1: n1.workers.rootStarts };
}

describe('spawned children recorded in batches, through a crash', () => {
  it('a crash after the first batch: its children run once, and the root resumes after them', { timeout: 60_000 }, async () => {
    const n = 150;
    const r = await crashAfter(n, 1, 1);
    assert.equal(r.before.size, 1 + BATCH, 'the root and its first batch were recorded');
    assert.ok([...r.before.values()].every((o) => o === 'n0'), 'all owned by the node that crashed');
    assert.deepEqual(r.outcome && { status: r.outcome.status, value: (r.outcome as { value: Tally }).value }, { status: 'done', value: { count: n + 1, sum: (n * (n + 1)) / 2 } });
    assert.deepEqual(r.rootStartsOnN1.map((s) => s.next), [BATCH], 'the recovered root resumed from the checkpoint recorded with the batch');
  });

  it('a crash after the root completed with its last batch: no child lost or doubled, the root not run again', { timeout: 60_000 }, async () => {
    const n = 100; // batches of 32, 32, 32 and the last 4 with the completion
    const r = await crashAfter(n, 4, 2);
    assert.equal(r.before.size, n, 'every child recorded, the root gone');
    assert.ok(!r.before.has('root'));
    assert.deepEqual(r.outcome && { status: r.outcome.status, value: (r.outcome as { value: Tally }).value }, { status: 'done', value: { count: n + 1, sum: (n * (n + 1)) / 2 } });
    assert.deepEqual(r.rootStartsOnN1, [], 'the root completed before the crash');
  });

  for (const seed of [3, 4, 5]) {
    it(`a crash after a random number of batches (seed ${seed}): exact`, { timeout: 60_000 }, async () => {
      const rng = new Rng(seed);
      const n = rng.int(40, 200);
      const batches = rng.int(1, Math.ceil(n / BATCH));
      const r = await crashAfter(n, batches, seed);
      assert.deepEqual(r.outcome && (r.outcome as { value: Tally }).value, { count: n + 1, sum: (n * (n + 1)) / 2 }, `n ${n}, crash after ${batches} batches`);
    });
  }
});
