/**
 * The first job kind: a splittable task pool with one reduced result (seed 000). On each member a
 * JobRunner holds the local pool, steals and migrates; on the leader its duties (task-pool-leader.ts) detect
 * termination, folds the result and recovers the tasks of vanished members.
 */
import { durableBlobs, onHold, secureBeforeLeaving, type HoldMessage } from '../job/durable-blobs.js';
import { obtainInput, taskRefOnNode } from './job-inputs.js';
import { log } from '../../util/log.js';
import { TaskPoolLeaderDuties } from './task-pool-leader.js';
import { taskPoolHistograms } from '../metrics/task-pool-histograms.js';
import { JobRunner, type JobRunnerDeps } from './job-runner.js';
import { Ledger } from './ledger.js';
import { validateTaskPoolMessage, type RuntimeMessage } from './pool-messages.js';
import { loadTaskType, reducerOf, type TaskType } from '../worker/task.js';
import type { TaskSnapshot } from './task-snapshot.js';
import { defineJobKind, type LayerBody, type LeaderContext, type LeaderRole, type MemberContext, type MemberRole } from '../kinds/job-kind.js';

/** The reference a job spec carries for the task pool (built in: no module to load). */
export const TASK_POOL_KIND = { module: 'builtin:task-pool', export: 'default' } as const;

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
  // Shipped code is loaded from this node's code cache (workers too); installed modules as they are.
  const ref = await taskRefOnNode(spec, data, ctx.nodeId);
  const type = await loadTaskType(ref);
  for (const name of spec.varNames) {
    const rule = type.vars?.[name] ?? 'replace';
    await ctx.vars.define(name, { rule: rule as never });
  }
  const side = data ? { jobId: spec.id, nodeId: ctx.nodeId, data, peers: ctx.peers, send: (to: string, body: HoldMessage) => ctx.send(to, body) } : undefined;
  const ledger = new Ledger(ctx.client, { tasks: ctx.paths.tasks, txns: ctx.paths.txns }, ctx.nodeId, undefined, side ? durableBlobs(side) : undefined);
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
    board: ctx.board,
    varNames: spec.varNames,
    send: (to, message) => ctx.send(to, message as unknown as LayerBody),
    peers: ctx.peers,
    setVar: (name, value) => {
      ctx.vars.setVar(name, value).catch((err: unknown) => (ctx.log ?? log).warn('node', `setVar ${name} failed`, err));
    },
    onEvent: (e) => ctx.report(e),
    rng: ctx.rng,
    ...(ctx.metrics ? { histograms: taskPoolHistograms(ctx.metrics) } : {}),
    ...(ctx.log ? { log: ctx.log } : {}),
    ...(ctx.steal ? { steal: ctx.steal } : {}),
    ...(type.retries !== undefined ? { retries: type.retries } : {}),
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
    for (const name of ctx.spec.varNames) {
      const value = await ctx.vars.settled(name);
      if (value !== undefined) values[name] = value;
    }
    return values;
  };
  const coordinator = new TaskPoolLeaderDuties(ctx.client, ctx.paths, own.ledger, ctx.membership, reducerOf(own.type), (s) => own.runner.adopt(s), (o) => ctx.finish(o), finalVars);
  coordinator.start();
  return { stop: () => coordinator.stop() };
}

export const taskPoolKind = defineJobKind({
  name: 'task-pool',
  member: (ctx) => taskPoolMember(ctx),
  leader: taskPoolLeader,
  validateMessage: validateTaskPoolMessage,
});
