/**
 * A simulated cluster for the malleable kind's protocol, without I/O or timing: the real member and
 * leader code over an in-memory network that delivers messages one at a time in a seeded random
 * order (no FIFO between any two nodes), an in-memory data plane and durable-state store, and a
 * membership the test changes (join, graceful release, crash). Each node runs `threads` object
 * threads (the real ObjectThread code, in-process), whose messages (to their member and to each
 * other, copied as a port copies them) are delivered one at a time in the same random order as the
 * network's, first in first out per channel as ports are. Every run of a seed is the same run.
 */
import { createHash } from 'node:crypto';
import { CoordError } from '../../../src/coord/errors.js';
import type { DataPlane } from '../../../src/data/data-plane.js';
import type { JobOutcome } from '../../../src/runtime/job/outcome.js';
import type { JobSpec } from '../../../src/runtime/job/job-spec.js';
import { jobPaths } from '../../../src/runtime/job/job-paths.js';
import type { LayerBody, LeaderContext, LeaderRole, MemberContext } from '../../../src/runtime/kinds/job-kind.js';
import { Emitter } from '../../../src/util/emitter.js';
import { Rng } from '../../../src/util/rng.js';
import { malleableLeader } from '../../../src/frameworks/malleable/leader.js';
import type { AnyMalleableApp } from '../../../src/frameworks/malleable/malleable-app.js';
import { inlineThreads } from '../../../src/frameworks/malleable/inline-threads.js';
import { malleableMember, type MalleableMember } from '../../../src/frameworks/malleable/member.js';
import type { MalleableSpec } from '../../../src/frameworks/malleable/runtime-options.js';

interface Frame { from: string; to: string; body: LayerBody; bounce: boolean }

interface SimMember { id: string; meta: { workers: number } }

class SimMembership {
  readonly events = new Emitter<{ joined: SimMember; left: SimMember; change: ReadonlyMap<string, SimMember> }>();
  readonly members = new Map<string, SimMember>();
  on(event: 'joined' | 'left' | 'change', listener: (p: never) => void): () => void {
    return this.events.on(event, listener as never);
  }
  view(): ReadonlyMap<string, SimMember> {
    return this.members;
  }
  add(id: string, workers: number): void {
    const m = { id, meta: { workers } };
    this.members.set(id, m);
    this.events.emit('joined', m);
    this.events.emit('change', this.members);
  }
  remove(id: string): void {
    const m = this.members.get(id);
    if (!m) return;
    this.members.delete(id);
    this.events.emit('left', m);
    this.events.emit('change', this.members);
  }
}

/** The durable-state znode and the blob store: what outlives any simulated node. */
function memoryClient() {
  const znodes = new Map<string, { data: Buffer; version: number }>();
  return {
    getData: async (path: string) => {
      const z = znodes.get(path);
      if (!z) throw new CoordError('NO_NODE', path);
      return { data: z.data, stat: { version: z.version } };
    },
    create: async (path: string, data: Uint8Array) => {
      if (znodes.has(path)) throw new CoordError('NODE_EXISTS', path);
      znodes.set(path, { data: Buffer.from(data), version: 0 });
      return path;
    },
    setData: async (path: string, data: Uint8Array, version?: number) => {
      const z = znodes.get(path);
      if (!z) throw new CoordError('NO_NODE', path);
      if (version !== undefined && version !== z.version) throw new CoordError('BAD_VERSION', path);
      z.data = Buffer.from(data);
      z.version++;
      return { version: z.version };
    },
  };
}

/** One store for the whole simulated cluster: a blob stays while some scope references it. */
function memoryDataPlane(blobs: Map<string, Buffer>, scopes: Map<string, Set<string>>): DataPlane {
  return {
    share: async (bytes: Uint8Array, _job: string, _name: string, scope = '') => {
      const hash = createHash('sha256').update(bytes).digest('hex');
      blobs.set(hash, Buffer.from(bytes));
      scopes.set(hash, (scopes.get(hash) ?? new Set()).add(scope));
      return { hash, size: bytes.length };
    },
    discard: async (ref: { hash: string }, _job: string, scope: string) => {
      scopes.get(ref.hash)?.delete(scope);
      if (scopes.get(ref.hash)?.size === 0) {
        scopes.delete(ref.hash);
        blobs.delete(ref.hash);
      }
    },
    collectLocal: async () => [],
    obtain: async (ref: { hash: string }) => {
      const b = blobs.get(ref.hash);
      if (!b) throw new Error(`no blob ${ref.hash}`);
      return b;
    },
    awaitReplicated: async () => ['a', 'b'],
  } as unknown as DataPlane;
}

/** Where each object has been seen (node and thread), for tests that check objects moved between threads. */
export class PlacementLog {
  private readonly seen = new Map<number, Set<string>>();

  record(sim: SimCluster): void {
    for (const [node, role] of sim.roles) {
      for (const [i, thread] of role.placement()) this.seen.set(i, (this.seen.get(i) ?? new Set()).add(`${node}/${thread}`));
    }
  }

  /** Every (node, thread) place some object was on. */
  places(): Set<string> {
    return new Set([...this.seen.values()].flatMap((s) => [...s]));
  }

  /** How many objects were on two threads of one node. */
  movedBetweenThreads(): number {
    let moved = 0;
    for (const places of this.seen.values()) {
      const nodes = [...places].map((p) => p.split('/')[0]!);
      if (new Set(nodes).size < nodes.length) moved++;
    }
    return moved;
  }
}

export class SimCluster {
  readonly rng: Rng;
  readonly membership = new SimMembership();
  readonly roles = new Map<string, MalleableMember>();
  private readonly queue: Frame[] = [];
  /** Messages between a node's main thread and its object threads, and between those threads: per channel, in order. */
  private readonly channels = new Map<string, Array<() => void>>();
  /** Releases asked for and not yet carried out (each is delivered like a message). */
  private readonly releases: Array<{ node: string; resolve(): void }> = [];
  private readonly client = memoryClient();
  /** Checkpoint blobs in the simulated data plane, and the scopes referencing each. */
  readonly blobs = new Map<string, Buffer>();
  private readonly scopes = new Map<string, Set<string>>();
  private leaderRole: LeaderRole | undefined;
  leaderId = '';
  outcome: JobOutcome | undefined;
  delivered = 0;
  /** Told of each command the leader sends, as it is sent (before any delivery): a test acts at that point. */
  onCommand: ((to: string, type: string) => void) | undefined;
  private readonly spec: JobSpec;

  private readonly malleable: MalleableSpec;
  /** Object threads each node runs (its worker threads, as its membership says). */
  private readonly threads: number;

  constructor(seed: number, private readonly app: AnyMalleableApp, input: Omit<MalleableSpec, 'app'>, nodes: string[], opts: { threads?: number } = {}) {
    this.threads = opts.threads ?? 1;
    this.rng = new Rng(seed);
    this.malleable = { app: { module: 'sim', export: 'default' }, ...input };
    this.spec = {
      id: 'sim-job', kind: { module: 'builtin:malleable', export: 'malleableKind' }, kindSpec: this.malleable, label: 'sim', createdAt: 0,
      nodes: { requested: nodes.length, min: 1 }, managedBy: 'sim',
    };
    for (const n of nodes) this.join(n);
    this.startLeader(nodes[0]!);
  }

  private ctx(nodeId: string): MemberContext {
    return {
      nodeId, spec: this.spec, client: this.client as never, paths: jobPaths(this.spec.id), workers: {} as never, vars: {} as never,
      rng: this.rng, membership: this.membership as never, data: memoryDataPlane(this.blobs, this.scopes),
      send: async (to, body) => {
        this.queue.push({ from: nodeId, to, body, bounce: false });
        if (body.type === 'mall-cmd') this.onCommand?.(to, (body.cmd as { type: string }).type);
      },
      peers: () => [...this.membership.members.keys()].filter((id) => id !== nodeId),
      report: () => undefined,
      fail: (error) => {
        throw new Error(`a member failed the simulated job: ${error}`);
      },
      code: { admitModule: () => undefined, admitJobModule: () => undefined } as never,
    };
  }

  join(id: string): void {
    const threads = inlineThreads(this.app, {
      clone: true,
      schedule: (channel, deliver) => {
        const queue = this.channels.get(channel);
        if (queue) queue.push(deliver);
        else this.channels.set(channel, [deliver]);
      },
    });
    this.roles.set(id, malleableMember(this.ctx(id), this.app, this.malleable.params, threads));
    this.membership.add(id, this.threads);
  }

  private startLeader(id: string): void {
    this.leaderId = id;
    const ctx: LeaderContext = {
      ...this.ctx(id), member: this.roles.get(id)!,
      finish: async (o) => {
        this.outcome ??= o;
        return true;
      },
    };
    // A released node drains (it must hold nothing by then) and leaves, as TidepoolNode.leave does —
    // later, as a step of the simulation: a real release goes through the coordination service.
    this.leaderRole = malleableLeader(ctx, this.app, this.malleable, (node) => new Promise<void>((resolve) => this.releases.push({ node, resolve })));
  }

  leave(id: string): void {
    this.roles.get(id)?.stop();
    this.roles.delete(id);
    this.membership.remove(id);
    if (id === this.leaderId) {
      this.leaderRole?.stop();
      const next = [...this.membership.members.keys()].sort()[0];
      if (next) this.startLeader(next); // the next in the election takes over from the durable state
    }
  }

  /** kill -9: gone at once, its messages in flight with it. */
  crash(id: string): void {
    for (let i = this.queue.length - 1; i >= 0; i--) if (this.queue[i]!.to === id || this.queue[i]!.from === id) this.queue.splice(i, 1);
    for (const channel of [...this.channels.keys()]) if (channel.startsWith(`${id}:`)) this.channels.delete(channel);
    this.leave(id);
  }

  request(type: string, body: unknown): Promise<unknown> {
    return this.leaderRole!.onControl!(type, body);
  }

  progress(): Promise<{ iteration: number; nodes: string[] }> {
    return this.leaderRole!.onControl!('progress', null) as Promise<{ iteration: number; nodes: string[] }>;
  }

  /** Delivers one message (chosen at random among those in flight), then lets the code react. */
  async step(): Promise<boolean> {
    await new Promise((r) => setImmediate(r));
    const busy = [...this.channels].filter(([, q]) => q.length > 0).map(([c]) => c);
    if (this.queue.length + this.releases.length + busy.length === 0) return false;
    let pick = this.rng.int(0, this.queue.length + this.releases.length + busy.length - 1);
    if (pick < busy.length) {
      this.delivered++;
      this.channels.get(busy[pick]!)!.shift()!();
      return true;
    }
    pick -= busy.length;
    if (pick >= this.queue.length) {
      const [r] = this.releases.splice(pick - this.queue.length, 1);
      this.delivered++;
      await this.roles.get(r!.node)?.drain();
      this.leave(r!.node);
      r!.resolve();
      return true;
    }
    const [f] = this.queue.splice(pick, 1);
    this.delivered++;
    const role = this.roles.get(f!.to);
    if (f!.bounce) role?.onBounce?.(f!.from, f!.body);
    else if (!role) this.queue.push({ from: f!.to, to: f!.from, body: f!.body, bounce: true }); // not in the job: bounce
    else role.onMessage?.(f!.from, f!.body);
    return true;
  }

  /** Runs until the job has an outcome (or `maxSteps` deliveries), calling `hook` between deliveries. */
  async run(hook: () => Promise<void> | void = () => undefined, maxSteps = 200_000): Promise<JobOutcome> {
    let idle = 0;
    while (!this.outcome && this.delivered < maxSteps) {
      await hook();
      idle = (await this.step()) ? 0 : idle + 1;
      if (idle > 1_000) throw new Error(`the simulated job is stuck with nothing in flight (delivered ${this.delivered})`);
    }
    if (!this.outcome) throw new Error(`no outcome after ${maxSteps} deliveries`);
    return this.outcome;
  }
}
