/**
 * The malleable kind on one member node. Its objects run on the node's object threads (one per core it
 * gives the job: object-thread.ts), which step them and exchange messages among themselves directly;
 * the member, on the main thread, answers the leader's commands by commanding its threads, sends each
 * other node one batch per iteration with what its threads' objects sent there, splits the batches it
 * receives by thread, moves objects between threads and nodes at sync points, and stores its part of
 * coordinated checkpoints in the data plane (copied to a second member). A node that leaves keeps
 * nothing: its objects moved before it was let go.
 */
import { durableBlobs, onHold, type HoldMessage } from '../../runtime/job/durable-blobs.js';
import type { LayerBody, MemberContext, MemberRole } from '../../runtime/kinds/job-kind.js';
import { EventRing, type TimedEvent } from '../../runtime/kinds/kind-events.js';
import { decode, encode } from '../../util/codec.js';
import { log } from '../../util/log.js';
import type { CollectivePart } from './collectives.js';
import { inlineThreads } from './inline-threads.js';
import type { AnyMalleableApp, AppRef } from './malleable-app.js';
import type { PackedObject, Routed } from './object-host.js';
import { ObjectThreads, type ThreadLauncher } from './object-threads.js';
import { objectsByThread, threadsOn } from './placement.js';
import type { Command, HaloBody, Mapping, MoveBody, RunReply } from './protocol.js';
import type { FromThread, PackedPart, ThreadOut } from './thread-protocol.js';
import { workerThreads } from './worker-threads.js';

/** What the leader on this node hears through its own member (replies, bounces, evacuation wishes). */
export interface LeaderHooks {
  onReply(from: string, body: LayerBody): void;
  onBounce(to: string, id: number): void;
  onLeaving(node: string): void;
}

export interface MalleableMember extends MemberRole {
  /** Runs a command of epoch `epoch` (the leader calls its own node's member directly). */
  command(cmd: Command, epoch: number): Promise<unknown>;
  setLeaderHooks(hooks: LeaderHooks | undefined): void;
  /** Objects hosted here (tests check that a node that left holds none). */
  hosted(): number[];
  /** The objects hosted here and the object thread each is on, [object, thread] in object order. */
  placement(): Array<[number, number]>;
  /** Adds an event to one of the lists this node publishes for the job (the leader's rescales, say). */
  noteEvent(list: string, event: TimedEvent): void;
}

interface Waiter {
  ready(): boolean;
  resolve(): void;
}

/** What the threads' objects sent other nodes in one iteration, gathered until every thread has stepped it. */
interface Outgoing {
  threads: number;
  byNode: Map<string, Routed[]>;
  collective: CollectivePart;
}

/** What a run's iterations came to so far, over every thread. */
interface RunTally {
  first: number;
  loads: Map<number, number>;
  times: number[];
  sentTo: string[];
  resize: RunReply['resize'];
}

/**
 * Where a node runs the object threads of application `app` (loaded from `ref`): on its worker threads,
 * or (a node without any that can host them) on its main thread.
 */
export function objectThreadsOn(ctx: MemberContext, app: AnyMalleableApp, ref: AppRef): ThreadLauncher {
  return typeof ctx.workers?.attach === 'function' ? workerThreads(ctx.workers, ref) : inlineThreads(app);
}

/** Events kept per list this node publishes (the newest). */
const EVENTS_PER_LIST = 100;

export function malleableMember(ctx: MemberContext, app: AnyMalleableApp, params: unknown, launcher: ThreadLauncher): MalleableMember {
  const me = ctx.nodeId;
  let threads: ObjectThreads | undefined;
  let epoch = 0;
  let map: Mapping | undefined;
  let leader: string | undefined;
  let hooks: LeaderHooks | undefined;
  let stopped = false;
  let moveSeq = 0;
  let iterationNow = -1;
  /** A thread (here or on another node) found the job done: the iterations from this one do not run (this epoch). */
  let endedAt: number | undefined;
  /** The objects hosted here, and the thread each is on. */
  const located = new Map<number, number>();
  const outgoing = new Map<number, Outgoing>();
  let tally: RunTally | undefined;
  const future: HaloBody[] = [];
  const waiters = new Set<Waiter>();
  const inTransit = new Map<number, { resolve(): void; reject(err: Error): void }>();
  /** The event lists this node publishes for the job (the leader's rescale phases). */
  const events = new Map<string, EventRing>();

  const notify = () => {
    for (const w of waiters) if (w.ready()) {
      waiters.delete(w);
      w.resolve();
    }
  };
  const until = (ready: () => boolean) => (ready() ? Promise.resolve() : new Promise<void>((resolve) => waiters.add({ ready, resolve })));
  const ownerOf = (index: number) => (map ? map.nodes[map.owner[index]!] : undefined);
  const others = () => (map?.nodes ?? []).filter((n) => n !== me);
  const running = (): ObjectThreads => {
    if (!threads) throw new Error(`${me} runs no object threads for this job`);
    return threads;
  };

  /** Runs `count` object threads (launched afresh if they are not running, or one of them is gone). */
  const runThreads = (count: number) => {
    if (threads && threads.count === count && !threads.lost) return;
    if (located.size > 0) throw new Error(threads?.lost ?? `${me} would change its object threads (${threads?.count ?? 0} → ${count}) while it holds objects`);
    threads?.close();
    threads = count > 0 ? new ObjectThreads(launcher, count, { node: me, params }, onThread) : undefined;
  };

  /** Every thread has stepped the iteration before `iteration`: one batch to every other node of the mapping, even an empty one. */
  const sendOut = (iteration: number, out: Outgoing) => {
    const { contributions, broadcasts } = out.collective;
    const collective = contributions.length + broadcasts.length > 0 ? { collective: out.collective } : {};
    const to = others();
    for (const node of to) {
      const body: HaloBody = { type: 'mall-halo', epoch, iteration, items: out.byNode.get(node) ?? [], ...collective };
      ctx.send(node, body).catch((err: unknown) => log.warn('malleable', `halo to ${node} failed`, err));
    }
    if (tally) tally.sentTo = to;
  };

  const gather = (out: ThreadOut) => {
    let o = outgoing.get(out.iteration);
    if (!o) outgoing.set(out.iteration, (o = { threads: 0, byNode: new Map(), collective: { contributions: [], broadcasts: [] } }));
    for (const m of out.items) {
      const node = ownerOf(m.to)!;
      const list = o.byNode.get(node);
      if (list) list.push(m);
      else o.byNode.set(node, [m]);
    }
    o.collective.contributions.push(...out.collective.contributions);
    o.collective.broadcasts.push(...out.collective.broadcasts);
    if (tally && out.ms !== undefined) {
      const k = out.iteration - 1 - tally.first;
      tally.times[k] = Math.max(tally.times[k] ?? 0, out.ms);
      for (let j = 0; j < out.loads.length; j += 2) tally.loads.set(out.loads[j]!, Math.min(tally.loads.get(out.loads[j]!) ?? Infinity, out.loads[j + 1]!));
      // The last iteration's request counts, and in one iteration the lowest index's.
      const r = out.resize;
      if (r && (!tally.resize || r.iteration > tally.resize.iteration || (r.iteration === tally.resize.iteration && r.from < tally.resize.from))) tally.resize = r;
      iterationNow = out.iteration - 1;
    }
    if (++o.threads === running().count) {
      outgoing.delete(out.iteration);
      sendOut(out.iteration, o);
    }
  };

  /** The job ends before `iteration`: every thread here stops there (and, when a thread here found it, every other node). */
  const end = (iteration: number, tellOthers: boolean) => {
    if (endedAt !== undefined && endedAt <= iteration) return;
    endedAt = iteration;
    for (let k = 0; k < (threads?.count ?? 0); k++) threads!.post(k, { type: 'end', epoch, iteration });
    if (tellOthers) {
      for (const node of others()) ctx.send(node, { type: 'mall-halo', epoch, iteration, items: [], ended: true } satisfies HaloBody).catch(() => undefined);
    }
  };

  function onThread(_slot: number, msg: Exclude<FromThread, { type: 'reply' }>): void {
    // (A thread let go may still have had something on its way.)
    if (msg.epoch !== epoch || stopped || !threads) return;
    if (msg.type === 'ended') return end(msg.iteration, true);
    gather(msg);
  }

  /** A batch from another node: each thread gets its part (an empty one too: it counts batches) and the collective traffic whole. */
  const acceptHalo = (h: HaloBody) => {
    if (h.ended === true) return end(h.iteration, false);
    if (!threads || !map) return log.error('malleable', `a halo batch for iteration ${h.iteration} reached ${me}, which runs no objects of the job`);
    const parts = Array.from({ length: threads.count }, (): Routed[] => []);
    for (const m of h.items) {
      if (ownerOf(m.to) !== me) log.error('malleable', `halo for object ${m.to} reached ${me}, which does not host it`);
      else parts[map.thread[m.to]!]!.push(m);
    }
    for (let k = 0; k < threads.count; k++) {
      threads.post(k, { type: 'remote', epoch, iteration: h.iteration, items: parts[k]!, ...(h.collective ? { collective: h.collective } : {}) });
    }
  };

  /** A newer epoch (a restore, or a joiner's first command): forget the old traffic. */
  const adopt = (e: number) => {
    if (e === epoch) return;
    epoch = e;
    endedAt = undefined;
    outgoing.clear();
    for (const h of future.splice(0)) if (h.epoch === e) acceptHalo(h);
      else if (h.epoch > e) future.push(h);
  };

  /** Runs `count` iterations from `iteration` on every thread; the first waits for `expect` batches from other nodes. */
  const run = async (iteration: number, count: number, expect: number): Promise<RunReply> => {
    const mine = epoch;
    const t: RunTally = { first: iteration, loads: new Map(), times: [], sentTo: [], resize: undefined };
    tally = t;
    try {
      await running().all({ type: 'run', iteration, count, expect }, epoch);
    } finally {
      if (tally === t) tally = undefined;
    }
    if (epoch !== mine || stopped) throw new Error('superseded by a newer configuration');
    return { sentTo: t.sentTo, loads: [...t.loads].flat(), times: t.times, ...(endedAt !== undefined ? { ended: endedAt } : {}), ...(t.resize ? { resize: t.resize } : {}) };
  };

  const migrate = async (next: Mapping, iteration: number): Promise<{ moved: number }> => {
    const dest = (i: number) => ({ node: next.nodes[next.owner[i]!]!, thread: next.thread[i]! });
    const byThread = new Map<number, number[]>();
    for (const [i, k] of located) {
      const d = dest(i);
      if (d.node === me && d.thread === k) continue;
      const list = byThread.get(k);
      if (list) list.push(i);
      else byThread.set(k, [i]);
    }
    const taken = (await Promise.all([...byThread].map(([k, indices]) => running().call<PackedObject[]>(k, { type: 'take', indices: indices.sort((a, b) => a - b), iteration }, epoch)))).flat();
    for (const o of taken) located.delete(o.index);
    const staying = new Map<number, PackedObject[]>();
    const sends = taken.flatMap((object) => {
      const d = dest(object.index);
      if (d.node === me) {
        staying.set(d.thread, [...(staying.get(d.thread) ?? []), object]);
        return [];
      }
      const seq = ++moveSeq;
      return [new Promise<void>((resolve, reject) => {
        inTransit.set(seq, { resolve, reject });
        const body: MoveBody = { type: 'mall-move', epoch, seq, object, thread: d.thread };
        ctx.send(d.node, body).catch((err: unknown) => {
          inTransit.delete(seq);
          reject(new Error(`object ${object.index} could not be sent to ${d.node}: ${(err as Error).message}`));
        });
      })];
    });
    const moves = [...staying].map(async ([k, objects]) => {
      await running().call(k, { type: 'put', objects }, epoch);
      for (const o of objects) located.set(o.index, k);
      notify();
    });
    const arriving = next.owner.flatMap((_, i) => (dest(i).node === me ? [i] : []));
    await Promise.all([...sends, ...moves, until(() => arriving.every((i) => located.has(i)))]);
    map = next;
    // Every message of `iteration` is where it is read now: moved objects brought theirs.
    if (threads) await threads.all({ type: 'map', map: next, settledAt: iteration }, epoch);
    notify();
    return { moved: taken.length - [...staying.values()].reduce((a, l) => a + l.length, 0) };
  };

  const checkpoint = async (iteration: number, peers: string[], scope: string) => {
    const parts = threads ? await threads.all<PackedPart>({ type: 'pack', iteration }, epoch) : [];
    const bytes = encode({ iteration, parts });
    if (!ctx.data) throw new Error(`node ${me} has no data plane for checkpoints`);
    const data = ctx.data;
    const side = { jobId: ctx.spec.id, nodeId: me, data, peers: () => peers, send: (to: string, body: HoldMessage) => ctx.send(to, body) };
    const ref = await durableBlobs(side).store(bytes, `checkpoint of ${ctx.spec.id} at iteration ${iteration} on ${me}`, scope);
    // The leader discarded the checkpoints this one's predecessor superseded: drop the local copies of
    // those (parts this node wrote or holds for others) now, not at the node's next periodic collection.
    data.collectLocal().catch((err: unknown) => log.warn('malleable', 'dropping superseded checkpoint copies failed', err));
    return { ref, indices: parts.flatMap((p) => p.indices).sort((a, b) => a - b) };
  };

  const restore = async (next: Mapping, manifest: Extract<Command, { type: 'restore' }>['manifest']) => {
    notify(); // a node that was leaving holds nothing now
    const mine = objectsByThread(next, me);
    if (!threads) return { sentTo: [] };
    if (!manifest) {
      const t: RunTally = { first: -1, loads: new Map(), times: [], sentTo: [], resize: undefined };
      tally = t;
      try {
        // Each thread builds its objects; the batches of their first messages go out once every thread's is in.
        await threads.all((k) => ({ type: 'restore', map: next, init: mine[k]! }), epoch);
      } finally {
        if (tally === t) tally = undefined;
      }
      mine.forEach((indices, k) => indices.forEach((i) => located.set(i, k)));
      return { sentTo: t.sentTo };
    }
    const threadOf = new Map(mine.flatMap((indices, k) => indices.map((i): [number, number] => [i, k])));
    const objects = mine.map((): PackedObject[] => []);
    for (const part of manifest.parts.filter((p) => p.indices.some((i) => threadOf.has(i)))) {
      if (!ctx.data) throw new Error(`node ${me} has no data plane for checkpoints`);
      const bytes = await ctx.data.obtain(part.ref, ctx.spec.id, `checkpoint part of ${part.node}`);
      // Decode a private copy: the store's bytes are shared memory, and objects must never alias them.
      const { parts } = decode<{ parts: PackedPart[] }>(Buffer.from(bytes));
      for (const p of parts.filter((q) => q.indices.some((i) => threadOf.has(i)))) {
        for (const o of decode<{ objects: PackedObject[] }>(p.bytes).objects) if (threadOf.has(o.index)) objects[threadOf.get(o.index)!]!.push(o);
      }
    }
    await threads.all((k) => ({ type: 'restore', map: next, objects: objects[k]!, settledAt: manifest.iteration }), epoch);
    for (const [i, k] of threadOf) located.set(i, k);
    return { sentTo: [] };
  };

  const command = async (cmd: Command, e: number): Promise<unknown> => {
    if (e < epoch) throw new Error(`stale command of epoch ${e} (this node is at epoch ${epoch})`);
    if (cmd.type === 'restore') {
      // Forget everything first, then take in halos of the new epoch that arrived early.
      located.clear();
      map = cmd.map;
      runThreads(threadsOn(cmd.map, me));
      epoch = -1;
    }
    adopt(e);
    switch (cmd.type) {
      case 'restore': return restore(cmd.map, cmd.manifest);
      case 'configure':
        runThreads(cmd.threads);
        map = cmd.map;
        if (threads) await threads.all({ type: 'map', map: cmd.map }, epoch);
        return { objects: located.size };
      case 'settle':
        if (threads) await threads.all({ type: 'settle', iteration: cmd.iteration, expect: cmd.expect }, epoch);
        return {};
      case 'run': return run(cmd.iteration, cmd.count, cmd.expect);
      case 'migrate': return migrate(cmd.map, cmd.iteration);
      case 'checkpoint': return checkpoint(cmd.iteration, cmd.peers, cmd.scope);
      case 'collect': return { summaries: threads ? (await threads.all<Array<[number, unknown]>>({ type: 'collect' }, epoch)).flat() : [] };
    }
  };

  const reply = (to: string, id: number, result: Promise<unknown>) => {
    result.then(
      (value) => ctx.send(to, { type: 'mall-reply', id, ok: true, value: value as never }),
      (err: unknown) => ctx.send(to, { type: 'mall-reply', id, ok: false, error: err instanceof Error ? err.message : String(err) }),
    ).catch(() => undefined);
  };

  /** An object moving here: its thread takes it in, then the sender hears it arrived. */
  const arrive = (from: string, m: MoveBody) => {
    const ack = () => void ctx.send(from, { type: 'mall-move-ack', epoch: m.epoch, seq: m.seq }).catch(() => undefined);
    // A move of an older configuration was superseded (a rollback): nothing of it may come back.
    if (m.epoch !== epoch) return ack();
    running().call(m.thread, { type: 'put', objects: [m.object] }, epoch).then(() => {
      located.set(m.object.index, m.thread);
      notify();
      ack();
    }, (err: Error) => log.warn('malleable', `object ${m.object.index} from ${from} could not be taken in: ${err.message}`));
  };

  return {
    command,
    hosted: () => [...located.keys()].sort((a, b) => a - b),
    placement: () => [...located].sort((a, b) => a[0] - b[0]),
    setLeaderHooks(h) {
      hooks = h;
    },
    onMessage(from, body) {
      if (stopped) return;
      switch (body.type) {
        case 'mall-cmd':
          leader = from;
          return reply(from, body.id as number, command(body.cmd as Command, body.epoch as number));
        case 'mall-reply': return hooks?.onReply(from, body);
        case 'mall-leaving': return hooks?.onLeaving(from);
        case 'mall-halo': {
          const h = body as HaloBody;
          if (h.epoch > epoch) future.push(h);
          else if (h.epoch === epoch) acceptHalo(h);
          return;
        }
        case 'mall-move': {
          try {
            return arrive(from, body as MoveBody);
          } catch (err) {
            return log.warn('malleable', `an object from ${from} could not be taken in: ${(err as Error).message}`);
          }
        }
        case 'mall-move-ack': {
          const t = inTransit.get(body.seq as number);
          inTransit.delete(body.seq as number);
          return t?.resolve();
        }
        case 'hold': return onHold({ jobId: ctx.spec.id, data: ctx.data! }, from, body as HoldMessage);
      }
    },
    onBounce(to, body) {
      if (body.type === 'mall-cmd') hooks?.onBounce(to, body.id as number);
      if (body.type === 'mall-move') {
        const t = inTransit.get(body.seq as number);
        inTransit.delete(body.seq as number);
        t?.reject(new Error(`${to} is no longer in the job`));
      }
    },
    async drain(opts) {
      // Told to leave (an operator, the scheduler): ask the leader to evacuate this node at its next sync point.
      if (opts?.handOver !== false && located.size > 0 && !stopped) {
        if (hooks) hooks.onLeaving(me);
        else if (leader) await ctx.send(leader, { type: 'mall-leaving' }).catch(() => undefined);
        await until(() => located.size === 0 || stopped);
      }
      located.clear();
      threads?.close();
      threads = undefined;
    },
    stop() {
      stopped = true;
      located.clear();
      threads?.close();
      threads = undefined;
      for (const t of inTransit.values()) t.reject(new Error('stopped'));
      inTransit.clear();
      for (const w of waiters) w.resolve();
      waiters.clear();
    },
    load: () => ({ running: 0, pooled: located.size }),
    noteEvent(list, event) {
      let ring = events.get(list);
      if (!ring) events.set(list, (ring = new EventRing(EVENTS_PER_LIST)));
      ring.put(event);
    },
    counters: () => ({
      tasksDone: 0, splits: 0, stealsIn: 0, stealsOut: 0, migrationsIn: 0, migrationsOut: 0, figures: { objects: located.size, threads: threads?.count ?? 0, iteration: iterationNow, epoch },
      ...(events.size > 0 ? { events: Object.fromEntries([...events].map(([name, ring]) => [name, ring.list()])) } : {}),
    }),
  };
}
