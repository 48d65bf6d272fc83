/**
 * A job kind written the way a framework would write one, used by the tests to exercise every part
 * of the job-kind seam: it builds on the task pool (member and leader code), greets every member
 * with layer messages and counts the answers, answers its tasks' requests on the node-to-worker
 * channel (the member list for placement, a budget in shared memory), sums its workers' progress,
 * serves a `census` control request on the leader by asking every member for its figures, and a
 * `finish` request that ends the job from its handler.
 */
import { defineJobKind, type LayerBody, type MemberRole } from '../../../src/runtime/kinds/job-kind.js';
import { prepareTaskPool, taskPoolLeader, taskPoolMember } from '../../../src/runtime/pool/task-pool-kind.js';
import { validateRuntimeMessage } from '../../../src/runtime/pool/pool-messages.js';

/** The value of a job ended by a `finish` control request. */
export const FINISHED_ON_REQUEST = 'finished on request';
/** In-process tests hold the `finish` handler after it has called `finish` with this global hook. */
export const FINISH_HOOK = Symbol.for('tidepool.test.probe-finish');

/** How long a task's request for the member list waits for the job's nodes to join (ms). */
const MEMBERS_WAIT_MS = 10_000;

/** Items per block a task may run before it checkpoints (granted through TaskContext.budget). */
export const BUDGET = 2_000;

export interface MemberFigures {
  node: string;
  hellosIn: number;
  hellosAcked: number;
  taskMessages: number;
  progress: number;
  checkpoints: number;
  placementsOut: number;
  tasksDone: number;
}

interface ProbeMember extends MemberRole {
  figures(): MemberFigures;
  onReport(listener: ((from: string, figures: MemberFigures) => void) | undefined): void;
}

export default defineJobKind({
  name: 'probe',
  prepare: prepareTaskPool,
  async member(ctx) {
    const counts = { hellosIn: 0, hellosAcked: 0, taskMessages: 0 };
    let toLeader: ((from: string, figures: MemberFigures) => void) | undefined;
    // The member list a task asks for, once every node the job asked for has joined (the root places a
    // slice on each other member: asked too early, it would place nothing); at the latest after MEMBERS_WAIT_MS.
    const answerPeers = (slot: number) => {
      const complete = () => ctx.peers().length + 1 >= ctx.spec.nodes.requested;
      const answer = () => {
        clearTimeout(timer);
        off();
        ctx.workers.post?.(slot, { peers: ctx.peers() });
      };
      const timer = setTimeout(answer, MEMBERS_WAIT_MS);
      const off = ctx.membership.on('joined', () => complete() && answer());
      if (complete()) answer();
    };
    const pool = await taskPoolMember(ctx, {
      onTaskMessage: (_taskId, body, slot) => {
        counts.taskMessages++;
        const type = (body as { type?: unknown }).type;
        if (type === 'want-peers') answerPeers(slot);
        if (type === 'want-budget') ctx.workers.setBudget?.(slot, BUDGET);
      },
    });
    const greeted = new Set<string>();
    const greet = () => {
      for (const peer of ctx.peers()) {
        if (greeted.has(peer)) continue;
        greeted.add(peer);
        void ctx.send(peer, { type: 'probe-hello', from: ctx.nodeId }).catch(() => greeted.delete(peer));
      }
    };
    const figures = (): MemberFigures => {
      let progress = 0;
      for (let slot = 0; slot < ctx.workers.size; slot++) progress += ctx.workers.progress?.(slot) ?? 0;
      const st = pool.runner.stats;
      return { node: ctx.nodeId, ...counts, progress, checkpoints: st.checkpoints, placementsOut: st.placementsOut, tasksDone: st.tasksDone };
    };
    const role: ProbeMember = {
      ...pool,
      onMessage(from, body) {
        switch (body.type) {
          case 'probe-hello':
            counts.hellosIn++;
            return void ctx.send(from, { type: 'probe-hello-ack' }).catch(() => undefined);
          case 'probe-hello-ack':
            counts.hellosAcked++;
            return;
          case 'probe-report':
            return void ctx.send(from, { type: 'probe-figures', figures: figures() as never }).catch(() => undefined);
          case 'probe-figures':
            return toLeader?.(from, body.figures as MemberFigures);
          default:
            return pool.onMessage!(from, body);
        }
      },
      peersJoined() {
        pool.peersJoined!();
        greet();
      },
      counters: () => ({ ...pool.counters!(), figures: { ...counts, progress: figures().progress } }),
      figures,
      onReport(listener) {
        toLeader = listener;
      },
    };
    return role;
  },
  leader(ctx) {
    const base = taskPoolLeader(ctx);
    const own = ctx.member as ProbeMember;
    return {
      stop: () => base.stop(),
      async onControl(type) {
        if (type === 'finish') {
          // Ends the job from the handler (as a workflow's `stop` does), then waits for the test's hook.
          await ctx.finish({ status: 'done', value: FINISHED_ON_REQUEST, finishedAt: Date.now(), completions: 0 });
          await (globalThis as { [FINISH_HOOK]?: () => Promise<void> })[FINISH_HOOK]?.();
          return { finished: true };
        }
        if (type !== 'census') throw new Error(`probe: unknown request "${type}"`);
        const peers = ctx.peers();
        const all = new Map<string, MemberFigures>([[ctx.nodeId, own.figures()]]);
        return new Promise((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`probe: census answered by ${all.size - 1} of ${peers.length} members`)), 10_000);
          const done = () => {
            clearTimeout(timer);
            own.onReport(undefined);
            resolve([...all.values()].sort((a, b) => (a.node < b.node ? -1 : 1)));
          };
          own.onReport((from, figures) => {
            all.set(from, figures);
            if (all.size === peers.length + 1) done();
          });
          if (peers.length === 0) return done();
          for (const peer of peers) void ctx.send(peer, { type: 'probe-report' }).catch(() => undefined);
        });
      },
    };
  },
  validateMessage(body: LayerBody) {
    switch (body.type) {
      case 'probe-hello': return typeof body.from === 'string' ? undefined : 'probe-hello needs a string "from"';
      case 'probe-hello-ack':
      case 'probe-report': return undefined;
      case 'probe-figures': return typeof body.figures === 'object' && body.figures !== null ? undefined : 'probe-figures needs "figures"';
      default: return validateRuntimeMessage(body);
    }
  },
});
