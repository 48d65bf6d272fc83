import { aclBytes, NO_ACCESS, refusalDetail, sessionIds, validateAcl, type Acl, type AclEntry, type SessionAccess } from '../access.js';
import { CoordError } from '../errors.js';
import { checkRequestSize, MAX_REQUEST_BYTES } from '../request-size.js';
import type { DataResult, Op, OpResult, Stat, WatchEvent } from '../types.js';
import { SERVICE, ZnodeTree, type Caller, type Trigger } from './znode-tree.js';

/** Which kind of watch a session holds on a path, as ZooKeeper's server distinguishes them. */
export type WatchKind = 'data' | 'exist' | 'child';

const KINDS_FOR: Record<WatchEvent['type'], readonly WatchKind[]> = {
  created: ['exist'],
  dataChanged: ['data', 'exist'],
  deleted: ['data', 'exist', 'child'],
  childrenChanged: ['child'],
};

/** Which watches an event of this type consumes (ZooKeeper's rules). The list is shared: do not change it. */
export function watchKindsFor(type: WatchEvent['type']): readonly WatchKind[] {
  return KINDS_FOR[type];
}

/** What the server pushes to a session; the client delivers these in order. */
export type SessionMessage =
  | { kind: 'event'; event: WatchEvent }
  | { kind: 'state'; state: 'connected' | 'disconnected' | 'expired' };

/** Where a session's messages go (the embedded client). */
export interface SessionSink {
  push(message: SessionMessage): void;
}

/**
 * A fault to inject into one write of a session: `before` loses the connection before the
 * write is applied, `after` applies it and loses the reply, the two cases a client cannot tell apart.
 */
export type InjectedFault = 'before' | 'after' | undefined;
export type FaultInjector = (ops: readonly Op[]) => InjectedFault;

interface Session {
  id: string;
  timeoutMs: number;
  sink: SessionSink;
  connected: boolean;
  ephemerals: Set<string>;
  expiryTimer: NodeJS.Timeout | undefined;
  faults: FaultInjector | undefined;
  /** The ids its credentials gave it and the access list its creates carry. */
  caller: Caller;
  aclBytes: number;
}

export const MIN_SESSION_TIMEOUT_MS = 100;
export const MAX_SESSION_TIMEOUT_MS = 600_000;

/**
 * The embedded coordination service: one znode tree, sessions with expiry, and watches,
 * with ZooKeeper's semantics (one-shot watches, FIFO delivery per session, ephemerals bound to a session).
 * Several nodes in one process share an instance; tests use its fault controls.
 */
export class EmbeddedServer {
  private readonly tree = new ZnodeTree();
  private readonly sessions = new Map<string, Session>();
  private readonly watches: Record<WatchKind, Map<string, Set<string>>> = {
    data: new Map(),
    exist: new Map(),
    child: new Map(),
  };
  private zxid = 0n;
  private nextSession = BigInt(Date.now()) << 16n;

  /** Opens a session presenting `access`'s credentials (as a ZooKeeper client does on every connection). */
  openSession(requestedTimeoutMs: number, sink: SessionSink, access: SessionAccess = NO_ACCESS): { id: string; timeoutMs: number } {
    const timeoutMs = Math.min(MAX_SESSION_TIMEOUT_MS, Math.max(MIN_SESSION_TIMEOUT_MS, requestedTimeoutMs));
    const id = (this.nextSession++).toString(16).padStart(16, '0');
    const caller: Caller = { ids: sessionIds(access), acl: access.acl, refusal: (read) => refusalDetail(access, read) };
    this.sessions.set(id, {
      id, timeoutMs, sink, connected: true, ephemerals: new Set(), expiryTimer: undefined, faults: undefined, caller, aclBytes: aclBytes(access.acl),
    });
    return { id, timeoutMs };
  }

  /** Ends a session on the client's request: its ephemerals go, its watches are dropped. */
  closeSession(id: string): void {
    const s = this.sessions.get(id);
    if (!s) return;
    this.endSession(s);
  }

  /** A session takes more credentials (a rotation): its ids grow, its creates carry the new list. */
  addCredentials(sessionId: string, access: SessionAccess): void {
    const s = this.sessions.get(sessionId);
    if (!s) return;
    const ids = new Set([...s.caller.ids, ...sessionIds(access)]);
    s.caller = { ids, acl: access.acl, refusal: (read) => refusalDetail(access, read) };
    s.aclBytes = aclBytes(access.acl);
  }

  // ---- reads -------------------------------------------------------------------------

  exists(sessionId: string, path: string, watch: boolean): Stat | null {
    this.live(sessionId);
    const stat = this.tree.stat(path);
    if (watch) this.addWatch(stat ? 'data' : 'exist', path, sessionId);
    return stat;
  }

  getData(sessionId: string, path: string, watch: boolean): DataResult {
    const s = this.live(sessionId);
    const result = this.tree.getData(path, s.caller);
    if (watch) this.addWatch('data', path, sessionId);
    return result;
  }

  getChildren(sessionId: string, path: string, watch: boolean): string[] {
    const s = this.live(sessionId);
    const children = this.tree.getChildren(path, s.caller);
    if (watch) this.addWatch('child', path, sessionId);
    return children;
  }

  getAcl(sessionId: string, path: string): { acl: AclEntry[]; stat: Stat } {
    return this.tree.getAcl(path, this.live(sessionId).caller);
  }

  /** Replaces a znode's access list; a refused list is INVALID_ACL, as ZooKeeper answers. */
  setAcl(sessionId: string, path: string, acl: Acl, version: number): void {
    const s = this.live(sessionId);
    const wrong = validateAcl(acl);
    if (wrong) throw new CoordError('INVALID_ACL', path, undefined, wrong);
    ++this.zxid;
    this.tree.setAcl(path, acl, version, s.caller);
  }

  // ---- writes ------------------------------------------------------------------------

  /** Applies writes atomically for a session, honouring an injected fault (their paths checked by the client). */
  write(sessionId: string, ops: readonly Op[], isMulti: boolean): OpResult[] {
    const s = this.live(sessionId);
    // ZooKeeper refuses a request longer than jute.maxbuffer as a whole, not only per znode.
    checkRequestSize(ops, isMulti, 0, MAX_REQUEST_BYTES, s.aclBytes);
    const fault = s.faults?.(ops);
    if (fault === 'before') {
      this.blip(s);
      throw new CoordError('CONNECTION_LOSS', ops[0]?.path);
    }
    const zxid = ++this.zxid;
    const applied = this.tree.apply(ops, zxid, Date.now(), sessionId, isMulti, s.caller);
    for (const p of applied.createdEphemerals) s.ephemerals.add(p);
    for (const p of applied.deletedPaths) this.forgetEphemeral(p);
    this.fire(applied.triggers);
    if (fault === 'after') {
      this.blip(s);
      throw new CoordError('CONNECTION_LOSS', ops[0]?.path);
    }
    return applied.results;
  }

  // ---- fault controls (tests and chaos tooling) --------------------------------------

  /** Simulates a lost connection: operations fail, events wait, and the session expires after its timeout. */
  disconnect(sessionId: string): void {
    const s = this.sessions.get(sessionId);
    if (!s || !s.connected) return;
    s.connected = false;
    s.sink.push({ kind: 'state', state: 'disconnected' });
    s.expiryTimer = setTimeout(() => this.expire(sessionId), s.timeoutMs);
    s.expiryTimer.unref();
  }

  /** Re-establishes a simulated connection within the session timeout. */
  reconnect(sessionId: string): void {
    const s = this.sessions.get(sessionId);
    if (!s || s.connected) return;
    clearTimeout(s.expiryTimer);
    s.expiryTimer = undefined;
    s.connected = true;
    s.sink.push({ kind: 'state', state: 'connected' });
  }

  /** Expires a session now, as the ensemble does when a client is silent past its timeout. */
  expire(sessionId: string): void {
    const s = this.sessions.get(sessionId);
    if (!s) return;
    this.endSession(s);
    s.sink.push({ kind: 'state', state: 'expired' });
  }

  /** Installs (or removes, with undefined) a fault injector for a session's writes. */
  injectFaults(sessionId: string, injector: FaultInjector | undefined): void {
    const s = this.sessions.get(sessionId);
    if (s) s.faults = injector;
  }

  isConnected(sessionId: string): boolean {
    return this.sessions.get(sessionId)?.connected ?? false;
  }

  hasSession(sessionId: string): boolean {
    return this.sessions.has(sessionId);
  }

  // ---- internals ---------------------------------------------------------------------

  private live(sessionId: string): Session {
    const s = this.sessions.get(sessionId);
    if (!s) throw new CoordError('SESSION_EXPIRED');
    if (!s.connected) throw new CoordError('CONNECTION_LOSS');
    return s;
  }

  /** A connection loss that heals at once: the client sees disconnected, then connected. */
  private blip(s: Session): void {
    s.sink.push({ kind: 'state', state: 'disconnected' });
    s.sink.push({ kind: 'state', state: 'connected' });
  }

  private endSession(s: Session): void {
    clearTimeout(s.expiryTimer);
    this.sessions.delete(s.id);
    for (const kind of ['data', 'exist', 'child'] as const) {
      for (const [path, set] of this.watches[kind]) {
        set.delete(s.id);
        if (set.size === 0) this.watches[kind].delete(path);
      }
    }
    // Deepest first, so that no ephemeral is deleted before a (hypothetical) child.
    const paths = [...s.ephemerals].sort((a, b) => b.length - a.length);
    if (paths.length > 0) {
      const zxid = ++this.zxid;
      for (const p of paths) {
        if (!this.tree.has(p)) continue;
        const applied = this.tree.apply([{ op: 'delete', path: p }], zxid, Date.now(), s.id, false, SERVICE);
        this.fire(applied.triggers);
      }
    }
    s.ephemerals.clear();
  }

  private forgetEphemeral(path: string): void {
    for (const s of this.sessions.values()) if (s.ephemerals.delete(path)) return;
  }

  private addWatch(kind: WatchKind, path: string, sessionId: string): void {
    let set = this.watches[kind].get(path);
    if (!set) {
      set = new Set();
      this.watches[kind].set(path, set);
    }
    set.add(sessionId);
  }

  /** Delivers each trigger once per watching session, consuming the one-shot watches. */
  private fire(triggers: Trigger[]): void {
    for (const t of triggers) {
      // Most changes (task records, markers) have no watcher: nothing is allocated for them.
      let targets: Set<string> | undefined;
      for (const kind of watchKindsFor(t.type)) {
        const set = this.watches[kind].get(t.path);
        if (!set) continue;
        targets ??= new Set<string>();
        for (const id of set) targets.add(id);
        this.watches[kind].delete(t.path);
      }
      if (targets) for (const id of targets) this.sessions.get(id)?.sink.push({ kind: 'event', event: { type: t.type, path: t.path } });
    }
  }
}

