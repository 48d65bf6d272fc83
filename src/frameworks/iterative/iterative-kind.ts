/**
 * The iterative framework's job kind. It builds on the task pool (blocks are accounted exactly once
 * by its ledger: drain, scale-out and kill -9 are the core's) and adds the balancers:
 *
 * - `steal`: nothing added; the runtime splits ranges for idle threads and nodes.
 * - `static`: the first task spreads the blocks equally over the nodes, then their threads; no
 *   stealing between nodes, no rebalancing.
 * - `ruper`: the same start, then seed 001's two levels: ThreadBalancer on every node (reports read
 *   from shared memory, checkpoints, finish rules) and ProcessBalancer on the leader (guess workers,
 *   report schedule, assignments), with process-level messages as layer messages.
 */
import { defineJobKind, type LayerBody, type MemberContext, type MemberRole } from '../../runtime/kinds/job-kind.js';
import { prepareTaskPool, taskPoolLeader, taskPoolMember } from '../../runtime/pool/task-pool-kind.js';
import { validateTaskPoolMessage } from '../../runtime/pool/pool-messages.js';
import { ProcessMonitorMember, type Assignment, type MemberSend } from './balance/monitor.js';
import type { IterativeInput } from './iterative-types.js';
import { ProcessBalancer, type Instruction, type ProcessReport, type Transfer } from './process-balancer.js';
import { ThreadBalancer } from './thread-balancer.js';
import { fromTask } from './worker-messages.js';
import { collectFigures, figuresOf, finishEventsOf, type NodeFigures } from './figures.js';

/** How long the first task waits for the job's nodes to join before spreading over those present (ms). */
const LAYOUT_WAIT_MS = 3000;

const now = () => performance.now() / 1000;

interface LeaderSink {
  onStart(from: string): void;
  onReport(from: string, report: ProcessReport, finish: boolean): void;
  onFigures(from: string, figures: NodeFigures): void;
}

export interface IterativeMember extends MemberRole {
  readonly threads: ThreadBalancer;
  figures(): NodeFigures;
  report(): ProcessReport;
  applyAssignment(instruction: Instruction, a: Assignment, transfers: Transfer[]): void;
  sink(s: LeaderSink | undefined): void;
  setLeader(node: string): void;
}

async function member(ctx: MemberContext): Promise<IterativeMember> {
  const input = ctx.spec.input as IterativeInput<unknown>;
  const ruper = input.balance === 'ruper';
  const joinedAt = Date.now();
  let pooled: () => number = () => 0;
  let onLocalEnd = (_idle: boolean) => undefined as void;
  const threads = new ThreadBalancer({
    workers: ctx.workers, now, blockSize: input.blockSize, iterations: input.iterations,
    params: input.ruper, orders: ruper,
    poolEmpty: () => pooled() === 0,
    onLocalEnd: (idle) => onLocalEnd(idle),
  });
  const answerLayout = (slot: number) => {
    const ready = ctx.peers().length + 1 >= ctx.spec.nodes.requested || Date.now() - joinedAt >= LAYOUT_WAIT_MS;
    if (!ready) return void setTimeout(() => answerLayout(slot), 20).unref?.();
    ctx.workers.post?.(slot, { type: 'it-layout', peers: ctx.peers(), workers: ctx.workers.size });
  };
  const pool = await taskPoolMember(ctx, {
    onTaskMessage: (_task, body, slot) => {
      const m = fromTask(body);
      if (!m) return;
      if (m.type === 'it-layout?') return answerLayout(slot);
      threads.onTaskMessage(slot, m);
    },
    // Static and RUPER move blocks only where a balancer says (and drain/recovery): no stealing between nodes.
    ...(input.balance !== 'steal' ? { victims: () => [] } : {}),
  });
  // Fig. 4 right: this node's side of the process level.
  const side = new ProcessMonitorMember();
  let sink: LeaderSink | undefined;
  let leader: string | undefined; // learnt from the leader's announcements and report requests
  const report = (): ProcessReport => ({ predictedDone: threads.predictedDone(), held: threads.held() });
  const toLeader = (m: MemberSend) => {
    if (!leader) return void (m.instruction === 2 && side.lost());
    const body = m.instruction === 0 ? undefined : { predictedDone: m.predictedDone, held: threads.held() };
    if (leader === ctx.nodeId) {
      if (!sink) return void (m.instruction === 2 && side.lost());
      return body ? sink.onReport(ctx.nodeId, body, m.instruction === 2) : sink.onStart(ctx.nodeId);
    }
    const type = m.instruction === 0 ? 'it-start' : m.instruction === 1 ? 'it-report' : 'it-finish';
    void ctx.send(leader, { type, ...body }).catch(() => m.instruction === 2 && side.lost());
  };
  /** The leader is `node`: a new one means starting again with it (instruction 0 until it answers). */
  const learnLeader = (node: string) => {
    if (node !== leader) side.restart();
    leader = node;
    const petition = ruper ? side.begin() : undefined;
    if (petition) toLeader(petition);
  };
  pooled = () => pool.runner.pooledTasks().length;
  // §2.2: the local task wants to finish while the process-level balance is on (or, beyond the seed, every thread ran out).
  onLocalEnd = (idle) => {
    const t = now();
    const request = side.requestFinish(t, threads.predictedDone(t), idle);
    if (request) toLeader(request);
  };
  threads.start();
  const role: IterativeMember = {
    ...pool,
    threads,
    onWorker(ev) {
      pool.onWorker!(ev);
      if (ev.type === 'done' || ev.type === 'migrated' || ev.type === 'cancelled' || ev.type === 'failed') {
        threads.onSlotDone(ev.slot, ctx.workers.idleSlots().includes(ev.slot));
      }
    },
    onMessage(from, body) {
      switch (body.type) {
        case 'it-leader':
          return learnLeader(body.node as string);
        case 'it-report?':
          if (from !== leader) learnLeader(from);
          return toLeader(side.onRequest(1, now(), threads.predictedDone()));
        case 'it-assign':
          return role.applyAssignment(body.instruction as Instruction, body as unknown as Assignment, (body.transfers as Transfer[]) ?? []);
        case 'it-start':
          return sink?.onStart(from);
        case 'it-report':
        case 'it-finish':
          return sink?.onReport(from, body as unknown as ProcessReport, body.type === 'it-finish');
        case 'it-figures?':
          return void ctx.send(from, { type: 'it-figures', figures: role.figures() as unknown as Record<string, unknown> }).catch(() => undefined);
        case 'it-figures':
          return sink?.onFigures(from, body.figures as unknown as NodeFigures);
        default:
          return pool.onMessage!(from, body);
      }
    },
    drain(opts) {
      threads.stop();
      return pool.drain(opts);
    },
    stop() {
      threads.stop();
      pool.stop();
    },
    counters: () => {
      const own = role.figures();
      return { ...pool.counters!(), figures: { ...pool.counters!().figures, ...figuresOf(own) }, events: { finish: finishEventsOf(own, joinedAt) } };
    },
    figures: () => ({
      node: ctx.nodeId,
      done: threads.done(),
      held: threads.held(),
      speeds: threads.speeds(),
      doneBySlot: Array.from({ length: ctx.workers.size }, (_, s) => threads.doneBy(s)),
      idleSince: threads.idleSince.map((x) => (x === undefined ? -1 : x)),
      now: now(),
      checkpoints: threads.checkpoints,
      orders: threads.ordersSent,
      assigned: side.assigned,
    }),
    report,
    applyAssignment(instruction, a, transfers) {
      side.onAssignment(instruction, a);
      for (const t of transfers) threads.shed(t.iterations, t.to);
    },
    sink(s) {
      sink = s;
    },
    setLeader: learnLeader,
  };
  return role;
}

export default defineJobKind({
  name: 'iterative',
  // Built on the task pool: the same spec and ledger.
  prepare: prepareTaskPool,
  member,
  leader(ctx) {
    const base = taskPoolLeader(ctx);
    const own = ctx.member as IterativeMember;
    const input = ctx.spec.input as IterativeInput<unknown>;
    let figuresWanted: ((from: string, f: NodeFigures) => void) | undefined;
    let balancer: ProcessBalancer | undefined;
    const invite = (peer: string) => void ctx.send(peer, { type: 'it-leader', node: ctx.nodeId }).catch(() => undefined);
    const announce = () => {
      for (const peer of ctx.peers()) invite(peer);
    };
    if (input.balance === 'ruper') {
      balancer = new ProcessBalancer({
        nodeId: ctx.nodeId, iterations: input.iterations, blockSize: input.blockSize, params: input.ruper, now,
        members: () => [ctx.nodeId, ...ctx.peers()],
        invite: (node) => (node === ctx.nodeId ? own.setLeader(ctx.nodeId) : invite(node)),
        requestReport: (node) => {
          if (node === ctx.nodeId) balancer!.onReport(node, own.report(), false);
          else void ctx.send(node, { type: 'it-report?', leader: ctx.nodeId }).catch(() => undefined);
        },
        answer: (node, instruction, a, transfers) => {
          if (node === ctx.nodeId) own.applyAssignment(instruction, a, transfers);
          else void ctx.send(node, { type: 'it-assign', instruction, ...a, transfers: transfers as unknown as LayerBody[] }).catch(() => undefined);
        },
      });
    }
    own.sink({
      onStart: (from) => balancer?.onStart(from),
      onReport: (from, r, finish) => balancer?.onReport(from, r, finish),
      onFigures: (from, f) => figuresWanted?.(from, f),
    });
    own.setLeader(ctx.nodeId);
    announce();
    balancer?.start();
    const announcer = setInterval(announce, 1000);
    announcer.unref?.();
    return {
      stop() {
        clearInterval(announcer);
        balancer?.stop();
        own.sink(undefined);
        base.stop();
      },
      async onControl(type) {
        if (type !== 'figures') throw new Error(`iterative: unknown request "${type}" (known: figures, status)`);
        return collectFigures(own.figures(), ctx.peers(), (peer) => ctx.send(peer, { type: 'it-figures?' }), (listener) => (figuresWanted = listener));
      },
    };
  },
  validateMessage(body: LayerBody) {
    switch (body.type) {
      case 'it-report?':
      case 'it-figures?':
      case 'it-start':
        return undefined;
      case 'it-leader':
        return typeof body.node === 'string' ? undefined : 'it-leader needs a string "node"';
      case 'it-report':
      case 'it-finish':
        return typeof body.predictedDone === 'number' && typeof body.held === 'number' ? undefined : `${body.type} needs numbers "predictedDone" and "held"`;
      case 'it-assign':
        return [0, 1, 2].includes(body.instruction as number) && typeof body.assigned === 'number' && typeof body.finished === 'boolean' && Array.isArray(body.transfers)
          ? undefined
          : 'it-assign needs "instruction" (0, 1 or 2), "assigned", "finished" and "transfers"';
      case 'it-figures':
        return typeof body.figures === 'object' && body.figures !== null ? undefined : 'it-figures needs "figures"';
      default:
        return validateTaskPoolMessage(body);
    }
  },
});
