import { grants, OPEN_ACL, Perm, redactAcl, type Acl, type AclEntry } from '../access.js';
import { CoordError } from '../errors.js';
import { parentOf, basename, sequenceSuffix } from '../paths.js';
import type { CreateMode, Op, OpResult, Stat, WatchEventType } from '../types.js';

interface Znode {
  data: Buffer;
  acl: Acl;
  /** Changes to the access list (setACL's version). */
  aversion: number;
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

/** Who asks: the digest ids the session holds, the access list it gives new znodes, and how to word a refusal. */
export interface Caller {
  ids: ReadonlySet<string>;
  acl: Acl;
  refusal(read: boolean): string;
  /** The service itself (deleting an ended session's ephemerals): no access list applies. */
  service?: boolean;
}

/** A caller that holds nothing and creates open znodes (tests of the tree alone). */
export const ANYONE: Caller = { ids: new Set(), acl: OPEN_ACL, refusal: () => 'no credential' };

/** The service acting on its own (ZooKeeper deletes an ended session's ephemerals whatever their parents' lists). */
export const SERVICE: Caller = { ...ANYONE, service: true };

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
 * `apply` runs a list of writes atomically (all or none) by keeping an undo log. Every operation
 * checks the znodes' access lists as ZooKeeper does (access.ts), in ZooKeeper's order of checks.
 */
export class ZnodeTree {
  private readonly nodes = new Map<string, Znode>();

  constructor() {
    this.nodes.set('/', this.fresh(Buffer.alloc(0), 0n, 0, null, OPEN_ACL));
  }

  /** exists(): ZooKeeper asks no permission for it. */
  stat(path: string): Stat | null {
    const n = this.nodes.get(path);
    return n ? toStat(n) : null;
  }

  getData(path: string, who: Caller = ANYONE): { data: Buffer; stat: Stat } {
    const n = this.require(path);
    allow(n, path, who, Perm.read);
    return { data: Buffer.from(n.data), stat: toStat(n) };
  }

  getChildren(path: string, who: Caller = ANYONE): string[] {
    const n = this.require(path);
    allow(n, path, who, Perm.read);
    return [...(n.children ?? [])];
  }

  /** The access list (digests shown as "user:x" to a caller without ADMIN) and stat; needs READ or ADMIN. */
  getAcl(path: string, who: Caller = ANYONE): { acl: AclEntry[]; stat: Stat } {
    const n = this.require(path);
    allow(n, path, who, Perm.read | Perm.admin);
    const acl = grants(n.acl, who.ids, Perm.admin) ? n.acl.map((e) => ({ ...e })) : redactAcl(n.acl);
    return { acl, stat: toStat(n) };
  }

  /** Replaces the access list (needs ADMIN); `version` is the access list's own version (-1: any). Fires no watch. */
  setAcl(path: string, acl: Acl, version: number, who: Caller = ANYONE): void {
    const n = this.require(path);
    allow(n, path, who, Perm.admin);
    if (version !== -1 && n.aversion !== version) throw new CoordError('BAD_VERSION', path);
    n.acl = acl.map((e) => ({ ...e }));
    n.aversion++;
  }

  has(path: string): boolean {
    return this.nodes.has(path);
  }

  /**
   * Applies `ops` atomically at transaction id `zxid`; throws CoordError (with opIndex for multi) on failure.
   * Paths are well-formed: the client checked each before the request (EmbeddedClient.writeOp), once per op.
   */
  apply(ops: readonly Op[], zxid: bigint, now: number, owner: string, isMulti: boolean, who: Caller = ANYONE): ApplyResult {
    const undo: Array<() => void> = [];
    const out: ApplyResult = { results: [], triggers: [], createdEphemerals: [], deletedPaths: [] };
    try {
      ops.forEach((op, i) => {
        try {
          out.results.push(this.applyOne(op, zxid, now, owner, who, undo, out));
        } catch (err) {
          if (isMulti && err instanceof CoordError) throw new CoordError(err.code, err.path, i, err.detail);
          throw err;
        }
      });
    } catch (err) {
      for (let i = undo.length - 1; i >= 0; i--) undo[i]!();
      throw err;
    }
    return out;
  }

  private applyOne(op: Op, zxid: bigint, now: number, owner: string, who: Caller, undo: Array<() => void>, out: ApplyResult): OpResult {
    switch (op.op) {
      case 'create':
        return { op: 'create', path: this.create(op.path, op.data, op.mode ?? 'persistent', zxid, now, owner, who, undo, out) };
      case 'delete':
        this.delete(op.path, op.version ?? -1, who, undo, out);
        return { op: 'delete' };
      case 'setData':
        return { op: 'setData', stat: this.setData(op.path, op.data, op.version ?? -1, zxid, now, who, undo, out) };
      case 'check': {
        const n = this.require(op.path);
        allow(n, op.path, who, Perm.read);
        if (op.version !== -1 && n.version !== op.version) throw new CoordError('BAD_VERSION', op.path);
        return { op: 'check' };
      }
    }
  }

  private create(path: string, data: Uint8Array | undefined, mode: CreateMode, zxid: bigint, now: number, owner: string, who: Caller, undo: Array<() => void>, out: ApplyResult): string {
    if (path === '/') throw new CoordError('NODE_EXISTS', path);
    const parentPath = parentOf(path);
    const parent = this.nodes.get(parentPath);
    if (!parent) throw new CoordError('NO_NODE', parentPath);
    allow(parent, path, who, Perm.create);
    if (parent.ephemeralOwner !== null) throw new CoordError('NO_CHILDREN_FOR_EPHEMERALS', parentPath);
    checkSize(path, data);
    const sequential = mode === 'persistent_sequential' || mode === 'ephemeral_sequential';
    const actual = sequential ? path + sequenceSuffix(parent.cversion) : path;
    if (this.nodes.has(actual)) throw new CoordError('NODE_EXISTS', actual);
    const ephemeral = mode === 'ephemeral' || mode === 'ephemeral_sequential';
    const node = this.fresh(Buffer.from(data ?? new Uint8Array()), zxid, now, ephemeral ? owner : null, who.acl);
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

  private delete(path: string, version: number, who: Caller, undo: Array<() => void>, out: ApplyResult): void {
    if (path === '/') throw new CoordError('BAD_ARGUMENTS', path, undefined, 'cannot delete the root');
    // ZooKeeper asks the parent's DELETE permission before it looks at the znode itself.
    const above = this.nodes.get(parentOf(path));
    if (above) allow(above, path, who, Perm.delete);
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

  private setData(path: string, data: Uint8Array, version: number, zxid: bigint, now: number, who: Caller, undo: Array<() => void>, out: ApplyResult): Stat {
    const node = this.require(path);
    allow(node, path, who, Perm.write);
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

  private fresh(data: Buffer, zxid: bigint, now: number, owner: string | null, acl: Acl): Znode {
    return { data, acl, aversion: 0, version: 0, cversion: 0, czxid: zxid, mzxid: zxid, ctime: now, mtime: now, ephemeralOwner: owner, children: undefined };
  }
}

/** Throws NO_AUTH at `path` unless the znode's access list grants `perm` (any of its bits) to the caller. */
function allow(n: Znode, path: string, who: Caller, perm: number): void {
  if (who.service !== true && !grants(n.acl, who.ids, perm)) throw new CoordError('NO_AUTH', path, undefined, who.refusal(perm === Perm.read || perm === (Perm.read | Perm.admin)));
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
