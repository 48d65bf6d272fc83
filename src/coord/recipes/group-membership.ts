import { Emitter } from '../../util/emitter.js';
import { isCoordError } from '../errors.js';
import { joinPath } from '../paths.js';
import { mkdirp } from '../tree-ops.js';
import type { CoordClient } from '../types.js';
import { watchChildren, watchData, type WatchHandle } from '../watch.js';
import { emptyStats, type RecipeStats } from './recipe-stats.js';

/** What a member publishes about itself (JSON). */
export interface MemberMeta {
  address?: string;
  workers?: number;
  job?: string | null;
  [key: string]: unknown;
}

export interface Member {
  id: string;
  meta: MemberMeta;
}

type Events = { joined: Member; left: Member; updated: Member; change: ReadonlyMap<string, Member> };

/**
 * Group membership: each member is an ephemeral znode `<group>/<id>` holding its metadata, so a
 * member that crashes or loses its session leaves the group by itself. `watch()` keeps a live view
 * (children watch for joins and leaves, a data watch per member for metadata updates).
 */
export class GroupMembership {
  readonly stats: RecipeStats = emptyStats();
  private readonly events = new Emitter<Events>();
  private readonly members = new Map<string, Member>();
  private readonly memberWatches = new Map<string, WatchHandle>();
  private groupWatch: WatchHandle | undefined;
  private selfId: string | undefined;

  constructor(private readonly client: CoordClient, readonly groupPath: string) {}

  on<K extends keyof Events>(event: K, listener: (payload: Events[K]) => void): () => void {
    return this.events.on(event, listener);
  }

  /** Registers this session as member `id`. Fails with NODE_EXISTS if another live session holds that id. */
  async join(id: string, meta: MemberMeta = {}): Promise<void> {
    validateId(id);
    await mkdirp(this.client, this.groupPath);
    const path = joinPath(this.groupPath, id);
    this.stats.writes++;
    try {
      await this.client.create(path, encode(meta), 'ephemeral');
    } catch (err) {
      // After a connection loss our own earlier create may have gone through.
      if (!isCoordError(err, 'NODE_EXISTS')) throw err;
      this.stats.reads++;
      const stat = await this.client.exists(path);
      if (stat?.ephemeralOwner !== this.client.sessionId) throw err;
    }
    this.selfId = id;
  }

  /** Publishes new metadata for this member. */
  async update(meta: MemberMeta): Promise<void> {
    if (this.selfId === undefined) throw new Error('update() before join()');
    this.stats.writes++;
    await this.client.setData(joinPath(this.groupPath, this.selfId), encode(meta));
  }

  async leave(): Promise<void> {
    if (this.selfId === undefined) return;
    const path = joinPath(this.groupPath, this.selfId);
    this.selfId = undefined;
    this.stats.writes++;
    try {
      await this.client.delete(path);
    } catch (err) {
      if (!isCoordError(err, 'NO_NODE')) throw err;
    }
  }

  /** Starts the live view; resolves once it reflects the group as it is now. */
  async watch(): Promise<void> {
    if (this.groupWatch) return this.groupWatch.ready;
    await mkdirp(this.client, this.groupPath);
    this.groupWatch = watchChildren(this.client, this.groupPath, (children) => this.onChildren(children ?? []));
    await this.groupWatch.ready;
    await Promise.all([...this.memberWatches.values()].map((w) => w.ready));
  }

  /** The current view: member id to member. */
  view(): ReadonlyMap<string, Member> {
    return this.members;
  }

  /** Stops watching (membership itself is unaffected; use leave()). */
  stop(): void {
    this.groupWatch?.close();
    this.groupWatch = undefined;
    for (const w of this.memberWatches.values()) w.close();
    this.memberWatches.clear();
  }

  private onChildren(children: string[]): void {
    this.stats.reads++;
    const present = new Set(children);
    for (const [id, handle] of this.memberWatches) {
      if (present.has(id)) continue;
      handle.close();
      this.memberWatches.delete(id);
      const member = this.members.get(id);
      if (member) {
        this.members.delete(id);
        this.events.emit('left', member);
        this.events.emit('change', this.members);
      }
    }
    for (const id of children) {
      if (this.memberWatches.has(id)) continue;
      const handle = watchData(this.client, joinPath(this.groupPath, id), (data) => {
        this.stats.reads++;
        if (data === null) return; // gone: the children watch reports the departure
        const member = { id, meta: decode(data.data) };
        const known = this.members.has(id);
        this.members.set(id, member);
        this.events.emit(known ? 'updated' : 'joined', member);
        this.events.emit('change', this.members);
      });
      this.memberWatches.set(id, handle);
    }
  }
}

function validateId(id: string): void {
  if (!/^[\w.:@-]{1,200}$/.test(id)) throw new Error(`invalid member id "${id}": use letters, digits and _ . : @ - (at most 200)`);
}

function encode(meta: MemberMeta): Buffer {
  return Buffer.from(JSON.stringify(meta));
}

function decode(data: Buffer): MemberMeta {
  try {
    const value: unknown = JSON.parse(data.toString('utf8'));
    return value !== null && typeof value === 'object' ? (value as MemberMeta) : {};
  } catch {
    return {};
  }
}
