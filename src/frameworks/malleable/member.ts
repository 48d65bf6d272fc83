/**
 * The malleable kind on one member node: hosts objects (ObjectHost), answers the leader's commands,
 * routes messages between objects to the node hosting the receiver under the current mapping, moves
 * objects at sync points and stores its part of coordinated checkpoints in the data plane (copied to
 * a second member). A node that leaves keeps nothing: its objects moved before it was let go.
 */
import { performance } from 'node:perf_hooks';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { durableBlobs, onHold, type HoldMessage } from '../../runtime/job/durable-blobs.js';
import type { LayerBody, MemberContext, MemberRole } from '../../runtime/kinds/job-kind.js';
import { decode, encode } from '../../util/codec.js';
import { log } from '../../util/log.js';
import type { AnyMalleableApp } from './malleable-app.js';
import { emptyOutbox, ObjectHost, type Outbox, type PackedObject } from './object-host.js';
import type { Command, HaloBody, Mapping, MoveBody, RunReply } from './protocol.js';

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
}

interface Waiter {
  ready(): boolean;
  resolve(): void;
}

export function malleableMember(ctx: MemberContext, app: AnyMalleableApp, params: unknown): MalleableMember {
  const host = new ObjectHost(app, params);
  let epoch = 0;
  let map: Mapping | undefined;
  let leader: string | undefined;
  let hooks: LeaderHooks | undefined;
  let stopped = false;
  let moveSeq = 0;
  let iterationNow = -1;
  /** The last iteration this member stepped in this epoch (it then has every collective contribution of it). */
  let ranThrough = -1;
  /** A peer found the job done: the iterations from this one do not run (this epoch). */
  let endedAt: number | undefined;
  const batches = new Map<number, number>();
  const future: HaloBody[] = [];
  const waiters = new Set<Waiter>();
  const inTransit = new Map<number, { resolve(): void; reject(err: Error): void }>();

  const notify = () => {
    for (const w of waiters) if (w.ready()) {
      waiters.delete(w);
      w.resolve();
    }
  };
  const until = (ready: () => boolean) => (ready() ? Promise.resolve() : new Promise<void>((resolve) => waiters.add({ ready, resolve })));
  const ownerOf = (index: number) => (map ? map.nodes[map.owner[index]!] : undefined);

  const acceptHalo = (h: HaloBody) => {
    if (h.ended === true) {
      endedAt = Math.min(endedAt ?? Infinity, h.iteration);
      return notify();
    }
    for (const m of h.items) if (ownerOf(m.to) !== ctx.nodeId) log.error('malleable', `halo for object ${m.to} reached ${ctx.nodeId}, which does not host it`);
    host.deliver(h.iteration, h.items);
    if (h.collective) host.deliverCollective(h.iteration, h.collective);
    batches.set(h.iteration, (batches.get(h.iteration) ?? 0) + 1);
    notify();
  };

  /** A newer epoch (a restore, or a joiner's first command): forget the old message counts. */
  const adopt = (e: number) => {
    if (e === epoch) return;
    epoch = e;
    batches.clear();
    endedAt = undefined;
    ranThrough = -1;
    for (const h of future.splice(0)) if (h.epoch === e) acceptHalo(h);
      else if (h.epoch > e) future.push(h);
  };

  /** Routes what objects sent: to objects here directly, to other nodes one batch per node (with the collective traffic, the same to each). */
  const route = (iteration: number, out: Outbox): string[] => {
    // One batch to every other node of the mapping, even an empty one: a receiver then knows how many
    // to wait for (one from each) without asking the leader, iteration after iteration.
    const byNode = new Map<string, HaloBody['items']>((map?.nodes ?? []).filter((n) => n !== ctx.nodeId).map((n) => [n, []]));
    const local: HaloBody['items'] = [];
    for (const m of out.messages) {
      const node = ownerOf(m.to);
      if (node === undefined) throw new Error(`object ${m.from} sent to object ${m.to}, which does not exist`);
      if (node === ctx.nodeId) local.push(m);
      else byNode.get(node)!.push(m);
    }
    host.deliver(iteration, local);
    host.deliverCollective(iteration, out.collective);
    const { contributions, broadcasts } = out.collective;
    const collective = contributions.length + broadcasts.length > 0 ? { collective: out.collective } : {};
    const sent = epoch;
    for (const [node, items] of byNode) {
      const body: HaloBody = { type: 'mall-halo', epoch: sent, iteration, items, ...collective };
      ctx.send(node, body).catch((err: unknown) => log.warn('malleable', `halo to ${node} failed`, err));
    }
    return [...byNode.keys()];
  };

  /**
   * Whether the application's convergence test ends the job before iteration `it`. Only a member that
   * has every contribution of iteration it − 1 decides (it stepped that iteration here, or its objects
   * brought the combined collectives with them); it tells the others, which may hold no object and
   * so know nothing of the collectives.
   */
  const endsBefore = (it: number): boolean => {
    if (it === 0 || !app.done || (ranThrough !== it - 1 && !host.collectiveAdopted(it))) return false;
    if (!app.done(host.collectiveView(it).reduced, it - 1, params)) return false;
    endedAt = it;
    for (const node of map?.nodes ?? []) {
      if (node !== ctx.nodeId) ctx.send(node, { type: 'mall-halo', epoch, iteration: it, items: [], ended: true } satisfies HaloBody).catch(() => undefined);
    }
    return true;
  };

  /** Runs `count` iterations from `iteration`; only the first waits for `expect` batches, later ones for one from each peer. */
  const run = async (iteration: number, count: number, expect: number): Promise<RunReply> => {
    const mine = epoch;
    const peers = (map?.nodes.length ?? 1) - 1;
    const loads = new Map<number, number>();
    const times: number[] = [];
    let sentTo: string[] = [];
    let resize: RunReply['resize'];
    let sinceYield = 0;
    const reply = (): RunReply => ({ sentTo, loads: [...loads].flat(), times, ...(endedAt !== undefined ? { ended: endedAt } : {}), ...(resize ? { resize } : {}) });
    for (let k = 0; k < count; k++) {
      const it = iteration + k;
      const started = performance.now();
      await until(() => (batches.get(it) ?? 0) >= (k === 0 ? expect : peers) || epoch !== mine || stopped || endedAt !== undefined);
      // A restore (rollback) woke us: this run belongs to an older configuration and must touch nothing.
      if (epoch !== mine || stopped) throw new Error('superseded by a newer configuration');
      if (endedAt !== undefined || endsBefore(it)) return reply();
      const out = emptyOutbox();
      iterationNow = it;
      for (const index of host.indices()) {
        if (epoch !== mine || stopped) throw new Error('superseded by a newer configuration');
        const took = host.step(index, it, out);
        loads.set(index, Math.min(loads.get(index) ?? Infinity, took));
        // Keep the node responsive (coordination, transfers) during long iterations.
        if ((sinceYield += took) > 20) {
          sinceYield = 0;
          await yieldToLoop();
        }
      }
      if (epoch !== mine) throw new Error('superseded by a newer configuration');
      batches.delete(it);
      host.endIteration(it);
      ranThrough = it;
      if (out.resize) resize = { ...out.resize, iteration: it };
      sentTo = route(it + 1, out);
      times.push(performance.now() - started);
    }
    return reply();
  };

  const migrate = async (next: Mapping, iteration: number): Promise<{ moved: number }> => {
    const newOwner = (index: number) => next.nodes[next.owner[index]!]!;
    const leaving = host.indices().filter((i) => newOwner(i) !== ctx.nodeId);
    const arriving = next.owner.flatMap((_, i) => (newOwner(i) === ctx.nodeId ? [i] : []));
    const sends = host.take(leaving, iteration).map((object) => {
      const seq = ++moveSeq;
      const to = newOwner(object.index);
      return new Promise<void>((resolve, reject) => {
        inTransit.set(seq, { resolve, reject });
        const body: MoveBody = { type: 'mall-move', epoch, seq, object };
        ctx.send(to, body).catch((err: unknown) => {
          inTransit.delete(seq);
          reject(new Error(`object ${object.index} could not be sent to ${to}: ${(err as Error).message}`));
        });
      });
    });
    await Promise.all([...sends, until(() => arriving.every((i) => host.has(i)))]);
    map = next;
    notify();
    return { moved: leaving.length };
  };

  const checkpoint = async (iteration: number, peers: string[], scope: string) => {
    const indices = host.indices();
    const bytes = encode({ iteration, objects: indices.map((i) => host.peek(i, iteration)) });
    if (!ctx.data) throw new Error(`node ${ctx.nodeId} has no data plane for checkpoints`);
    const data = ctx.data;
    const side = { jobId: ctx.spec.id, nodeId: ctx.nodeId, data, peers: () => peers, send: (to: string, body: HoldMessage) => ctx.send(to, body) };
    const ref = await durableBlobs(side).store(bytes, `checkpoint of ${ctx.spec.id} at iteration ${iteration} on ${ctx.nodeId}`, scope);
    // The leader discarded the checkpoints this one's predecessor superseded: drop the local copies of
    // those (parts this node wrote or holds for others) now, not at the node's next periodic collection.
    data.collectLocal().catch((err: unknown) => log.warn('malleable', 'dropping superseded checkpoint copies failed', err));
    return { ref, indices };
  };

  const restore = async (next: Mapping, manifest: Extract<Command, { type: 'restore' }>['manifest']) => {
    const mine = next.owner.flatMap((slot, i) => (next.nodes[slot] === ctx.nodeId ? [i] : []));
    notify(); // a node that was leaving holds nothing now
    if (!manifest) return { sentTo: route(0, { ...emptyOutbox(), messages: host.init(mine) }) };
    const wanted = new Set(mine);
    for (const part of manifest.parts.filter((p) => p.indices.some((i) => wanted.has(i)))) {
      if (!ctx.data) throw new Error(`node ${ctx.nodeId} has no data plane for checkpoints`);
      const bytes = await ctx.data.obtain(part.ref, ctx.spec.id, `checkpoint part of ${part.node}`);
      // Decode a private copy: the store's bytes are shared memory, and objects must never alias them.
      const { objects } = decode<{ objects: PackedObject[] }>(Buffer.from(bytes));
      host.put(objects.filter((o) => wanted.has(o.index)));
    }
    return { sentTo: [] };
  };

  const command = async (cmd: Command, e: number): Promise<unknown> => {
    if (e < epoch) throw new Error(`stale command of epoch ${e} (this node is at epoch ${epoch})`);
    if (cmd.type === 'restore') {
      // Forget everything first, then take in halos of the new epoch that arrived early.
      host.clear();
      map = cmd.map;
      batches.clear();
      epoch = -1;
    }
    adopt(e);
    switch (cmd.type) {
      case 'restore': return restore(cmd.map, cmd.manifest);
      case 'configure':
        map = cmd.map;
        return { objects: host.size };
      case 'settle':
        await until(() => (batches.get(cmd.iteration) ?? 0) >= cmd.expect);
        return {};
      case 'run': return run(cmd.iteration, cmd.count, cmd.expect);
      case 'migrate': return migrate(cmd.map, cmd.iteration);
      case 'checkpoint': return checkpoint(cmd.iteration, cmd.peers, cmd.scope);
      case 'collect': return { summaries: host.summaries() };
    }
  };

  const reply = (to: string, id: number, result: Promise<unknown>) => {
    result.then(
      (value) => ctx.send(to, { type: 'mall-reply', id, ok: true, value: value as never }),
      (err: unknown) => ctx.send(to, { type: 'mall-reply', id, ok: false, error: err instanceof Error ? err.message : String(err) }),
    ).catch(() => undefined);
  };

  return {
    command,
    hosted: () => host.indices(),
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
          const m = body as MoveBody;
          host.put([m.object]);
          notify();
          return void ctx.send(from, { type: 'mall-move-ack', epoch: m.epoch, seq: m.seq }).catch(() => undefined);
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
      if (opts?.handOver !== false && host.size > 0 && !stopped) {
        if (hooks) hooks.onLeaving(ctx.nodeId);
        else if (leader) await ctx.send(leader, { type: 'mall-leaving' }).catch(() => undefined);
        await until(() => host.size === 0 || stopped);
      }
      host.clear();
    },
    stop() {
      stopped = true;
      host.clear();
      for (const t of inTransit.values()) t.reject(new Error('stopped'));
      inTransit.clear();
      for (const w of waiters) w.resolve();
      waiters.clear();
    },
    load: () => ({ running: 0, pooled: host.size }),
    counters: () => ({ tasksDone: 0, splits: 0, stealsIn: 0, stealsOut: 0, migrationsIn: 0, migrationsOut: 0, figures: { objects: host.size, iteration: iterationNow, epoch } }),
  };
}
