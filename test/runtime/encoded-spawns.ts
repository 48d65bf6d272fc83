/**
 * Harness for spawned children that reach the node as their encoded first records (see
 * encoded-spawns-*.test.ts): real JobRunners, Ledgers, membership and leader duties on a coordination
 * backend; each node's one worker slot is the test's, reporting as a worker thread with an `owner` does
 * (its spawned children encoded, a task sent as its record decoded). Nothing runs until the test steps it.
 */
import assert from 'node:assert/strict';
import { GroupMembership } from '../../src/coord/recipes/group-membership.js';
import { TerminationList } from '../../src/coord/recipes/termination-detection.js';
import type { CoordClient } from '../../src/coord/types.js';
import { decode, encode } from '../../src/util/codec.js';
import { jobPaths } from '../../src/runtime/job/job-paths.js';
import { ledgerPaths } from '../../src/runtime/pool/task-pool-spec.js';
import { JobRunner } from '../../src/runtime/pool/job-runner.js';
import type { JobOutcome } from '../../src/runtime/job/outcome.js';
import { TaskPoolLeaderDuties } from '../../src/runtime/pool/task-pool-leader.js';
import { Ledger } from '../../src/runtime/pool/ledger.js';
import type { RuntimeMessage } from '../../src/runtime/pool/pool-messages.js';
import { encodeRecords, type TaskRecord } from '../../src/runtime/worker/task-record.js';
import type { RunRequest } from '../../src/runtime/worker/messages.js';
import type { WorkerEvent, Workers } from '../../src/runtime/worker/worker-pool.js';
import { Rng } from '../../src/util/rng.js';
import { waitFor } from '../support/wait.js';

export interface Fan {
  root: boolean;
  /** Children spawned so far (a checkpoint carries it). */
  next: number;
  n: number;
  value: number;
}
export interface Tally {
  count: number;
  sum: number;
}
export const BATCH = 32;
const reducer = { initial: (): Tally => ({ count: 0, sum: 0 }), combine: (a: unknown, b: unknown) => ({ count: (a as Tally).count + (b as Tally).count, sum: (a as Tally).sum + (b as Tally).sum }) };
export const rootState = (n: number): Fan => ({ root: true, next: 0, n, value: 0 });

/** One slot: the root hands over BATCH children per step as encoded records (the last with its completion); a child completes with its value. */
export class EncodedFanWorkers implements Workers {
  readonly size = 1;
  private current: { req: RunRequest; state: Fan } | undefined;
  private migrate = false;
  /** Every task started here, with the state it started from and whether it came as its record. */
  readonly starts: Array<{ taskId: string; state: Fan; encoded: boolean }> = [];

  constructor(private readonly onEvent: (e: WorkerEvent) => void) {}

  get busy(): boolean {
    return this.current !== undefined;
  }

  idleSlots(): number[] {
    return this.current ? [] : [0];
  }

  run(_slot: number, req: RunRequest): void {
    if (this.current) throw new Error('the slot is busy');
    this.migrate = false;
    // As worker-main does: a task sent as its encoded record is decoded here.
    const state = req.encoded ? decode<TaskRecord>(req.encoded).state as Fan : structuredClone(req.state as Fan);
    this.current = { req, state };
    this.starts.push({ taskId: req.taskId, state: { ...state }, encoded: req.encoded !== undefined });
  }

  requestSplit(): void {}
  clearSplit(): void {}
  splitRequested(): boolean {
    return false;
  }
  requestMigrate(): void {
    this.migrate = true;
  }
  cancel(): void {
    this.current = undefined;
  }

  step(): void {
    const run = this.current;
    if (!run) return;
    const { req, state: s } = run;
    if (this.migrate) {
      this.current = undefined;
      return this.onEvent({ slot: 0, type: 'migrated', taskId: req.taskId, state: structuredClone(s), partial: req.partial });
    }
    if (!s.root) {
      this.current = undefined;
      return this.onEvent({ slot: 0, type: 'done', taskId: req.taskId, partial: { count: 1, sum: s.value } satisfies Tally });
    }
    const states: Fan[] = [];
    while (states.length < BATCH && s.next < s.n) states.push({ root: false, next: 0, n: 0, value: ++s.next });
    const records = encodeRecords(req.owner!, states);
    const partial = req.partial ?? reducer.initial();
    if (s.next < s.n) return this.onEvent({ slot: 0, type: 'encoded-children', taskId: req.taskId, records, checkpoint: structuredClone({ state: s, partial }) });
    this.current = undefined;
    this.onEvent({ slot: 0, type: 'done', taskId: req.taskId, partial: { count: 1, sum: 0 } satisfies Tally, encodedChildren: records });
  }
}

export interface FanNode {
  id: string;
  client: CoordClient;
  workers: EncodedFanWorkers;
  runner: JobRunner;
  members: GroupMembership;
  duties?: TaskPoolLeaderDuties;
}

/** A job of the fan on `connect`'s backend, its nodes wired to each other (messages delivered a turn later). */
export async function fanJob(connect: () => Promise<CoordClient>, jobId: string, n: number) {
  const paths = jobPaths(jobId);
  const znodes = ledgerPaths(paths);
  const admin = await connect();
  await new TerminationList(admin, znodes.termination).init('root', encode({ owner: '', state: rootState(n), partial: undefined } satisfies TaskRecord));
  const nodes = new Map<string, FanNode>();

  async function start(id: string, seed: number, lead: boolean): Promise<FanNode> {
    const client = await connect();
    const ledger = new Ledger(client, { tasks: znodes.tasks, txns: znodes.txns }, id);
    const members = new GroupMembership(client, paths.members);
    const workers: EncodedFanWorkers = new EncodedFanWorkers((e) => runner.onWorker(e));
    const runner: JobRunner = new JobRunner({
      nodeId: id, jobId, ref: { module: 'fan', export: 'default' }, ledger, workers, board: undefined, varNames: [],
      send: (to: string, m: RuntimeMessage) => {
        const peer = nodes.get(to);
        if (!peer) return Promise.reject(new Error(`${to} is gone`));
        setImmediate(() => peer.runner.onMessage(id, m));
        return Promise.resolve();
      },
      peers: () => [...members.view().keys()].filter((m) => m !== id && nodes.has(m)),
      setVar: () => undefined,
      onEvent: () => undefined,
      rng: new Rng(seed),
      stealWaitMs: 1,
    });
    const node: FanNode = { id, client, workers, runner, members };
    nodes.set(id, node);
    members.on('joined', () => runner.peersJoined());
    members.on('left', (who) => runner.peerLeft(who.id));
    await members.join(id);
    await members.watch();
    if (lead) node.duties = leadOn(node, ledger);
    return node;
  }

  function leadOn(node: FanNode, ledger: Ledger): TaskPoolLeaderDuties {
    const duties = new TaskPoolLeaderDuties(node.client, paths, ledger, node.members, reducer, (s) => node.runner.adopt(s));
    duties.start();
    return duties;
  }

  /** The node's process dies: its workers, runner and session are gone; it holds whatever it held. */
  function crash(node: FanNode, expire: (client: CoordClient) => Promise<void>): Promise<void> {
    nodes.delete(node.id);
    node.workers.cancel();
    node.runner.stop();
    node.duties?.stop();
    node.members.stop();
    return expire(node.client);
  }

  /** Owner of every live record. */
  async function owners(): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const id of await admin.getChildren(znodes.tasks)) {
      const data = await admin.getData(`${znodes.tasks}/${id}`).then((d) => d.data, () => undefined); // gone meanwhile: not live
      if (data) out.set(id, decode<TaskRecord>(data).owner);
    }
    return out;
  }

  async function outcome(): Promise<JobOutcome | undefined> {
    return (await admin.exists(paths.result)) ? decode<JobOutcome>((await admin.getData(paths.result)).data) : undefined;
  }

  /** Steps every live node's slot until the outcome is published (or the deadline passes). */
  async function runToEnd(timeoutMs = 60_000): Promise<JobOutcome | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (const node of nodes.values()) node.workers.step();
      for (let i = 0; i < 4; i++) await new Promise((r) => setImmediate(r));
      const o = await outcome();
      if (o || Date.now() > deadline) return o;
    }
  }

  function stop(): void {
    for (const node of nodes.values()) {
      node.runner.stop();
      node.duties?.stop();
      node.members.stop();
    }
  }

  return { paths, admin, nodes, start, crash, owners, outcome, runToEnd, stop };
}

export const expected = (n: number): Tally => ({ count: n + 1, sum: (n * (n + 1)) / 2 });

/**
 * The root of 70 children (batches of 32, 32 and the last 6 with its completion) runs on n0, then five children
 * run there from their records and complete; n0 crashes while a sixth runs. n1, the next leader, recovers the
 * records left: it must run exactly those, and the result counts every child once (count and checksum).
 */
export async function crashAfterPartDone(connect: () => Promise<CoordClient>, expire: (client: CoordClient) => Promise<void>): Promise<void> {
  const n = 70;
  const j = await fanJob(connect, 'crash', n);
  try {
    const n0 = await j.start('n0', 3, true);
    await waitFor(() => n0.workers.busy, 'n0 to recover the root and start it', 30_000);
    for (let b = 0; b < 3; b++) n0.workers.step();
    await waitFor(async () => (await j.owners()).size === n, 'every child recorded, the root completed', 30_000);
    for (let k = 0; k < 5; k++) {
      await waitFor(() => n0.workers.busy, `child ${k} to start`, 30_000);
      n0.workers.step();
      await waitFor(async () => (await j.owners()).size === n - 1 - k, `child ${k}'s completion to commit`, 30_000);
    }
    assert.ok(n0.workers.starts.slice(1).every((s) => s.encoded), 'children ran from their encoded records');
    await waitFor(() => n0.workers.busy, 'a sixth child to start', 30_000);
    const left = new Set((await j.owners()).keys());
    assert.equal(left.size, n - 5);
    await j.crash(n0, expire);
    const n1 = await j.start('n1', 4, true);
    const outcome = await j.runToEnd();
    assert.deepEqual(outcome && (outcome as { value: Tally }).value, expected(n));
    assert.deepEqual(new Set(n1.workers.starts.map((s) => s.taskId)), left, 'n1 ran exactly the children not completed');
  } finally {
    j.stop();
  }
}
