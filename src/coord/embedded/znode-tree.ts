import { CoordError } from '../errors.js';
import { parentOf, basename, sequenceSuffix } from '../paths.js';
import type { CreateMode, Op, OpResult, Stat, WatchEventType } from '../types.js';

interface Znode {
  data: Buffer;
  version: number;
  cversion: number;
  czxid: bigint;
  mzxid: bigint;
  ctime: number;
  mtime: number;
  ephemeralOwner: string | null;
  /** Created on the first child: most znodes (task records, markers) never have one. */
  children: Set<string> | undefined;
}

/** A change that fires watches: which event, on which path. */
export interface Trigger {
  type: WatchEventType;
  path: string;
}

/** The outcome of applying writes: results plus the watch triggers and ephemeral bookkeeping. */
export interface ApplyResult {
  results: OpResult[];
  triggers: Trigger[];
  createdEphemerals: string[];
  deletedPaths: string[];
}

// Per znode; the whole request is limited too (and more tightly), see EmbeddedServer.write.
const MAX_DATA_BYTES = 1024 * 1024;

/**
 * The in-memory znode tree of the embedded backend. Pure data: no sessions, no timers.
 * `apply` runs a list of writes atomically (all or none) by keeping an undo log.
 */
export class ZnodeTree {
  private readonly nodes = new Map<string, Znode>();

  constructor() {
    this.nodes.set('/', this.fresh(Buffer.alloc(0), 0n, 0, null));
  }

  stat(path: string): Stat | null {
    const n = this.nodes.get(path);
    return n ? toStat(n) : null;
  }

  getData(path: string): { data: Buffer; stat: Stat } {
    const n = this.require(path);
    return { data: Buffer.from(n.data), stat: toStat(n) };
  }

  getChildren(path: string): string[] {
    return [...(this.require(path).children ?? [])];
  }

  has(path: string): boolean {
    return this.nodes.has(path);
  }

  /**
   * Applies `ops` atomically at transaction id `zxid`; throws CoordError (with opIndex for multi) on failure.
   * Paths are well-formed: the client checked each before the request (EmbeddedClient.writeOp), once per op.
   */
  apply(ops: readonly Op[], zxid: bigint, now: number, owner: string, isMulti: boolean): ApplyResult {
    const undo: Array<() => void> = [];
    const out: ApplyResult = { results: [], triggers: [], createdEphemerals: [], deletedPaths: [] };
    try {
      ops.forEach((op, i) => {
        try {
          out.results.push(this.applyOne(op, zxid, now, owner, undo, out));
        } catch (err) {
          if (isMulti && err instanceof CoordError) throw new CoordError(err.code, err.path, i);
          throw err;
        }
      });
    } catch (err) {
      for (let i = undo.length - 1; i >= 0; i--) undo[i]!();
      throw err;
    }
    return out;
  }

  private applyOne(op: Op, zxid: bigint, now: number, owner: string, undo: Array<() => void>, out: ApplyResult): OpResult {
    switch (op.op) {
      case 'create':
        return { op: 'create', path: this.create(op.path, op.data, op.mode ?? 'persistent', zxid, now, owner, undo, out) };
      case 'delete':
        this.delete(op.path, op.version ?? -1, undo, out);
        return { op: 'delete' };
      case 'setData':
        return { op: 'setData', stat: this.setData(op.path, op.data, op.version ?? -1, zxid, now, undo, out) };
      case 'check': {
        const n = this.require(op.path);
        if (op.version !== -1 && n.version !== op.version) throw new CoordError('BAD_VERSION', op.path);
        return { op: 'check' };
      }
    }
  }

  private create(path: string, data: Uint8Array | undefined, mode: CreateMode, zxid: bigint, now: number, owner: string, undo: Array<() => void>, out: ApplyResult): string {
    if (path === '/') throw new CoordError('NODE_EXISTS', path);
    const parentPath = parentOf(path);
    const parent = this.nodes.get(parentPath);
    if (!parent) throw new CoordError('NO_NODE', parentPath);
    if (parent.ephemeralOwner !== null) throw new CoordError('NO_CHILDREN_FOR_EPHEMERALS', parentPath);
    checkSize(path, data);
    const sequential = mode === 'persistent_sequential' || mode === 'ephemeral_sequential';
    const actual = sequential ? path + sequenceSuffix(parent.cversion) : path;
    if (this.nodes.has(actual)) throw new CoordError('NODE_EXISTS', actual);
    const ephemeral = mode === 'ephemeral' || mode === 'ephemeral_sequential';
    const node = this.fresh(Buffer.from(data ?? new Uint8Array()), zxid, now, ephemeral ? owner : null);
    const name = basename(actual);
    const saved = { cversion: parent.cversion };
    this.nodes.set(actual, node);
    (parent.children ??= new Set()).add(name);
    parent.cversion++;
    undo.push(() => {
      this.nodes.delete(actual);
      parent.children!.delete(name);
      parent.cversion = saved.cversion;
    });
    out.triggers.push({ type: 'created', path: actual }, { type: 'childrenChanged', path: parentPath });
    if (ephemeral) out.createdEphemerals.push(actual);
    return actual;
  }

  private delete(path: string, version: number, undo: Array<() => void>, out: ApplyResult): void {
    if (path === '/') throw new CoordError('BAD_ARGUMENTS', path, undefined, 'cannot delete the root');
    const node = this.require(path);
    if (version !== -1 && node.version !== version) throw new CoordError('BAD_VERSION', path);
    if (node.children !== undefined && node.children.size > 0) throw new CoordError('NOT_EMPTY', path);
    const parentPath = parentOf(path);
    const parent = this.nodes.get(parentPath)!;
    const name = basename(path);
    this.nodes.delete(path);
    parent.children!.delete(name);
    parent.cversion++;
    undo.push(() => {
      this.nodes.set(path, node);
      parent.children!.add(name);
      parent.cversion--;
    });
    out.triggers.push({ type: 'deleted', path }, { type: 'childrenChanged', path: parentPath });
    out.deletedPaths.push(path);
  }

  private setData(path: string, data: Uint8Array, version: number, zxid: bigint, now: number, undo: Array<() => void>, out: ApplyResult): Stat {
    const node = this.require(path);
    if (version !== -1 && node.version !== version) throw new CoordError('BAD_VERSION', path);
    checkSize(path, data);
    const saved = { data: node.data, version: node.version, mzxid: node.mzxid, mtime: node.mtime };
    node.data = Buffer.from(data);
    node.version++;
    node.mzxid = zxid;
    node.mtime = now;
    undo.push(() => Object.assign(node, saved));
    out.triggers.push({ type: 'dataChanged', path });
    return toStat(node);
  }

  private require(path: string): Znode {
    const n = this.nodes.get(path);
    if (!n) throw new CoordError('NO_NODE', path);
    return n;
  }

  private fresh(data: Buffer, zxid: bigint, now: number, owner: string | null): Znode {
    return { data, version: 0, cversion: 0, czxid: zxid, mzxid: zxid, ctime: now, mtime: now, ephemeralOwner: owner, children: undefined };
  }
}

function checkSize(path: string, data: Uint8Array | undefined): void {
  if (data && data.byteLength > MAX_DATA_BYTES) {
    throw new CoordError('BAD_ARGUMENTS', path, undefined, `data of ${data.byteLength} bytes exceeds ${MAX_DATA_BYTES}`);
  }
}

function toStat(n: Znode): Stat {
  return {
    version: n.version,
    cversion: n.cversion,
    numChildren: n.children?.size ?? 0,
    dataLength: n.data.length,
    ephemeralOwner: n.ephemeralOwner,
    czxid: n.czxid,
    mzxid: n.mzxid,
    ctime: n.ctime,
    mtime: n.mtime,
  };
}
