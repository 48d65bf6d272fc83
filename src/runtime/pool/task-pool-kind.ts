/**
 * The task pool (TASKWORK, seed 000): a splittable task pool with one reduced result. At submission
 * `prepareTaskPool` checks the task type and writes the job's ledger with the root task; on each
 * member a JobRunner holds the local pool, steals and migrates; on the leader its duties
 * (task-pool-leader.ts) detect termination, fold the result and recover the tasks of vanished members.
 * Kinds built on the pool (iterative, the tests' probe) reuse its prepare, member and leader.
 */
import { TerminationList } from '../../coord/recipes/termination-detection.js';
import { INLINE_STATE_BYTES } from '../../data/blob-values.js';
import { encode } from '../../util/codec.js';
import { log } from '../../util/log.js';
import { durableBlobs, onHold, secureBeforeLeaving, type HoldMessage } from '../job/durable-blobs.js';
import { moduleOnNode, obtainInput } from '../job/job-inputs.js';
import type { JobSpec } from '../job/job-spec.js';
import { defineJobKind, type LayerBody, type LeaderContext, type LeaderRole, type MemberContext, type MemberRole, type PrepareContext, type Prepared } from '../kinds/job-kind.js';
import { loadTaskType, reducerOf, type TaskRef, type TaskType } from '../worker/task.js';
import type { TaskRecord } from '../worker/task-record.js';
import { VarBoard } from '../worker/var-board.js';
import { taskPoolHistograms } from './task-pool-histograms.js';
import { JobRunner, type JobRunnerDeps } from './job-runner.js';
import { Ledger } from './ledger.js';
import { validateTaskPoolMessage, type RuntimeMessage } from './pool-messages.js';
import type { StealPlannerOptions } from './steal-planner.js';
import { TaskPoolLeaderDuties } from './task-pool-leader.js';
import { poolBudgetError } from './pool-budget.js';
import { ledgerPaths, ROOT_TASK_ID, type TaskPoolSpec, type TaskPoolSubmission } from './task-pool-spec.js';
import type { TaskSnapshot } from './task-snapshot.js';

/** A node's settings for the task pool (NodeOptions.kindOptions['task-pool']). */
export interface TaskPoolOptions {
  steal?: StealPlannerOptions;
}

const isRef = (v: unknown): v is TaskRef => typeof v === 'object' && v !== null && typeof (v as TaskRef).module === 'string' && typeof (v as TaskRef).export === 'string';

/** The job's task-pool spec, checked (a spec is data from the coordination service, never trusted to match its type). */
export function taskPoolSpecOf(spec: JobSpec): TaskPoolSpec {
  const s = spec.kindSpec as Partial<TaskPoolSpec> | undefined;
  if (!s || !isRef(s.ref)) throw new Error(`job ${spec.id}: its kind spec has no task type reference "ref" {module, export}`);
  if (!Array.isArray(s.varNames) || !s.varNames.every((n) => typeof n === 'string')) throw new Error(`job ${spec.id}: its kind spec has no list of variable names "varNames"`);
  const budgetError = poolBudgetError(s.poolMemoryBytes);
  if (budgetError) throw new Error(`job ${spec.id}: its kind spec's ${budgetError}`);
  return { ref: s.ref, varNames: s.varNames, ...(s.poolMemoryBytes !== undefined ? { poolMemoryBytes: s.poolMemoryBytes } : {}) };
}

/**
 * At submission: loads the task type (a clear error now rather than on every node), names its global
 * variables in the spec, and returns the ledger holding the root task (unowned until a node claims
 * it), created with the spec. A large root state goes to the submitter's data plane, the ledger holds
 * its reference.
 */
export async function prepareTaskPool(spec: JobSpec, ctx: PrepareContext): Promise<Prepared> {
  const submitted = spec.kindSpec as Partial<TaskPoolSubmission> | undefined;
  if (!submitted || !isRef(submitted.ref)) throw new Error(`job ${spec.id}: a task-pool job needs a task type reference "ref" {module, export}`);
  const budgetError = poolBudgetError(submitted.poolMemoryBytes);
  if (budgetError) throw new Error(`job ${spec.id}: ${budgetError}`);
  const type = await loadTaskType(submitted.ref);
  let rootRecord = encode({ owner: '', state: submitted.root, partial: undefined } satisfies TaskRecord);
  if (rootRecord.length > INLINE_STATE_BYTES && ctx.share) {
    const ref = await ctx.share(encode({ state: submitted.root, partial: undefined }), 'root task state');
    rootRecord = encode({ owner: '', state: null, partial: null, ref } satisfies TaskRecord);
  }
  const ledger = new TerminationList(ctx.client, ledgerPaths(ctx.paths).termination);
  return {
    kindSpec: {
      ref: submitted.ref, varNames: Object.keys(type.vars ?? {}).sort(),
      ...(submitted.poolMemoryBytes !== undefined ? { poolMemoryBytes: submitted.poolMemoryBytes } : {}),
    } satisfies TaskPoolSpec,
    ops: ledger.initOps(ROOT_TASK_ID, rootRecord),
  };
}

/** A member role that also exposes its runner (the leader adopts recovered tasks into it; kinds built on the pool place tasks with it). */
export interface TaskPoolMember extends MemberRole {
  readonly runner: JobRunner;
  readonly ledger: Ledger;
  readonly type: TaskType<unknown, unknown>;
}

/** What a kind built on the task pool may add to it: locality choices and the task-to-kind message channel. */
export type TaskPoolHooks = Pick<JobRunnerDeps, 'forThief' | 'victims' | 'onTaskMessage'>;

/** The task pool's member role; other kinds build on it by passing hooks and wrapping the result. */
export async function taskPoolMember(ctx: MemberContext, hooks: TaskPoolHooks = {}): Promise<TaskPoolMember> {
  const { spec, data } = ctx;
  const pool = taskPoolSpecOf(spec);
  // Shipped code is loaded from this node's code cache (workers too); installed modules as they are.
  const ref = { module: await moduleOnNode(spec, pool.ref.module, data, ctx.nodeId, ctx.code), export: pool.ref.export };
  const type = await loadTaskType(ref);
  // The variables' values in shared memory, for the workers (before they are defined: every change reaches it).
  const board = VarBoard.mirror(ctx.vars, pool.varNames, spec.id);
  for (const name of pool.varNames) {
    const rule = type.vars?.[name] ?? 'replace';
    await ctx.vars.define(name, { rule: rule as never });
  }
  const steal = (ctx.options as TaskPoolOptions | undefined)?.steal;
  const side = data ? { jobId: spec.id, nodeId: ctx.nodeId, data, peers: ctx.peers, send: (to: string, body: HoldMessage) => ctx.send(to, body) } : undefined;
  const ledger = new Ledger(ctx.client, ledgerPaths(ctx.paths), ctx.nodeId, undefined, side ? durableBlobs(side) : undefined);
  if (spec.inputBlob && !data) throw new Error(`job ${spec.id} has its input in the data plane and node ${ctx.nodeId} has none`);
  const runner = new JobRunner({
    nodeId: ctx.nodeId,
    jobId: spec.id,
    ref,
    ...(spec.input !== undefined ? { input: spec.input } : {}),
    // A large input is obtained when the first task is about to run here, once per node.
    ...(spec.inputBlob && data ? { loadInput: () => obtainInput(spec, data) } : {}),
    ledger,
    workers: ctx.workers,
    board,
    varNames: pool.varNames,
    send: (to, message) => ctx.send(to, message as unknown as LayerBody),
    peers: ctx.peers,
    setVar: (name, value) => {
      ctx.vars.setVar(name, value).catch((err: unknown) => (ctx.log ?? log).warn('node', `setVar ${name} failed`, err));
    },
    onEvent: (e) => (e.type === 'failed' ? ctx.fail(e.error) : ctx.report(e)),
    rng: ctx.rng,
    ...(ctx.metrics ? { histograms: taskPoolHistograms(ctx.metrics) } : {}),
    ...(ctx.log ? { log: ctx.log } : {}),
    ...(steal ? { steal } : {}),
    ...(type.retries !== undefined ? { retries: type.retries } : {}),
    ...(pool.poolMemoryBytes !== undefined ? { poolMemoryBytes: pool.poolMemoryBytes } : {}),
    ...(type.failures === 'collect' ? { collectFailures: true } : {}),
    ...(type.forThief ? { forThief: (pool: readonly TaskSnapshot[], thief: string) => type.forThief!(pool.map((t) => t.state), thief) } : {}),
    ...hooks,
  });
  return {
    runner,
    ledger,
    type,
    onMessage: (from, body) => {
      if (body.type === 'hold') return side && onHold(side, from, body as HoldMessage);
      runner.onMessage(from, body as unknown as RuntimeMessage);
    },
    onBounce: (from, body) => {
      const m = body as unknown as RuntimeMessage;
      // The receiver is not in this job: a steal finds nothing there, an offer is refused.
      if (m.type === 'steal') runner.onMessage(from, { type: 'steal-empty', job: spec.id, requestId: m.requestId });
      else if (m.type === 'offer') runner.onMessage(from, { type: 'offer-ack', job: spec.id, taskId: m.task.id, claimed: false });
    },
    onWorker: (ev) => runner.onWorker(ev),
    peersJoined: () => runner.peersJoined(),
    peerLeft: (id) => runner.peerLeft(id),
    drain: async (opts) => {
      await runner.drain(opts);
      // Handed over, the job's blobs here must not be left on a single other member (see secureBeforeLeaving).
      if (side && opts?.handOver !== false) await secureBeforeLeaving(side);
    },
    stop: () => runner.stop(),
    load: () => runner.load,
    counters: () => {
      const st = runner.stats;
      return {
        workerMs: st.workerMs, tasksDone: st.tasksDone, splits: st.splits, stealsIn: st.stealsIn, stealsOut: st.stealsOut, migrationsIn: st.migrationsIn, migrationsOut: st.migrationsOut,
        figures: { checkpoints: st.checkpoints, placements: st.placementsOut, retries: st.retries, failedTasks: st.failedTasks },
      };
    },
    coordStats: () => ledger.stats,
  };
}

/** The task pool's leader role (termination, result, recovery) for the member built by `taskPoolMember`. */
export function taskPoolLeader(ctx: LeaderContext): LeaderRole {
  const own = ctx.member as TaskPoolMember;
  // The first node of a job takes the input from its submitter at once, so the job does not depend on that client.
  if (ctx.spec.inputBlob && ctx.data) void obtainInput(ctx.spec, ctx.data).catch((err: unknown) => (ctx.log ?? log).warn('job', 'could not obtain the job input', err));
  const finalVars = async () => {
    const values: Record<string, unknown> = {};
    for (const name of taskPoolSpecOf(ctx.spec).varNames) {
      const value = await ctx.vars.settled(name);
      if (value !== undefined) values[name] = value;
    }
    return values;
  };
  const leaderDuties = new TaskPoolLeaderDuties(ctx.client, ctx.paths, own.ledger, ctx.membership, reducerOf(own.type), (s) => own.runner.adopt(s), (o) => ctx.finish(o), finalVars);
  leaderDuties.start();
  return { stop: () => leaderDuties.stop() };
}

/** The task pool as a job kind (built in as `TASK_POOL_KIND`): kinds built on the pool reuse its `prepare` and message validator. */
export const taskPoolKind = defineJobKind({
  name: 'task-pool',
  prepare: prepareTaskPool,
  member: (ctx) => taskPoolMember(ctx),
  leader: taskPoolLeader,
  validateMessage: validateTaskPoolMessage,
});
