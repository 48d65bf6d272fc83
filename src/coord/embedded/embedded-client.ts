import { Emitter } from '../../util/emitter.js';
import { log } from '../../util/log.js';
import { NO_ACCESS, nextAccess, type Acl, type AclEntry, type SessionAccess } from '../access.js';
import type { SecretInput } from '../../util/cluster-secret.js';
import { CoordError } from '../errors.js';
import { validatePath } from '../paths.js';
import type {
  ClientStats, CoordClient, CreateMode, DataResult, Op, OpResult, SessionState, Stat, WatchEvent, Watcher,
} from '../types.js';
import { watchKindsFor, type EmbeddedServer, type SessionMessage, type WatchKind } from './embedded-server.js';

type Delivery = () => void;

/**
 * A session on an EmbeddedServer. Operations run synchronously on the server, but every reply,
 * watch event and state change reaches the caller through one FIFO queue drained asynchronously,
 * so a client observes them in server order, as with ZooKeeper (a watch event arrives before
 * the reply to any later read that would show the change).
 */
export class EmbeddedClient implements CoordClient {
  readonly backend = 'embedded' as const;
  readonly sessionId: string;
  readonly sessionTimeoutMs: number;
  readonly stats: ClientStats = { reads: 0, writes: 0, transactions: 0, failures: 0 };

  private currentState: SessionState = 'connected';
  private readonly states = new Emitter<{ state: SessionState }>();
  private readonly watchers: Record<WatchKind, Map<string, Set<Watcher>>> = {
    data: new Map(),
    exist: new Map(),
    child: new Map(),
  };
  private readonly queue: Delivery[] = [];
  private flushing = false;

  private access: SessionAccess;

  constructor(private readonly server: EmbeddedServer, sessionTimeoutMs = 10_000, access: SessionAccess = NO_ACCESS) {
    const session = server.openSession(sessionTimeoutMs, { push: (m) => this.onMessage(m) }, access);
    this.sessionId = session.id;
    this.sessionTimeoutMs = session.timeoutMs;
    this.access = access;
  }

  get acl(): Acl {
    return this.access.acl;
  }

  useSecret(secret: SecretInput): void {
    this.access = nextAccess(this.access, secret);
    this.server.addCredentials(this.sessionId, this.access);
  }

  get state(): SessionState {
    return this.currentState;
  }

  onState(listener: (state: SessionState) => void): () => void {
    return this.states.on('state', listener);
  }

  create(path: string, data?: Uint8Array, mode: CreateMode = 'persistent'): Promise<string> {
    return this.writeOp([{ op: 'create', path, ...(data ? { data } : {}), mode }], false).then((r) => (r[0] as { path: string }).path);
  }

  delete(path: string, version = -1): Promise<void> {
    return this.writeOp([{ op: 'delete', path, version }], false).then(() => undefined);
  }

  setData(path: string, data: Uint8Array, version = -1): Promise<Stat> {
    return this.writeOp([{ op: 'setData', path, data, version }], false).then((r) => (r[0] as { stat: Stat }).stat);
  }

  multi(ops: readonly Op[]): Promise<OpResult[]> {
    this.stats.transactions++;
    if (ops.length === 0) return this.reply(() => ({ value: [] }));
    return this.writeOp(ops, true);
  }

  exists(path: string, watcher?: Watcher): Promise<Stat | null> {
    return this.readOp(path, () => {
      const stat = this.server.exists(this.sessionId, path, watcher !== undefined);
      return { value: stat, kind: stat ? 'data' : 'exist' };
    }, watcher);
  }

  getData(path: string, watcher?: Watcher): Promise<DataResult> {
    return this.readOp(path, () => ({ value: this.server.getData(this.sessionId, path, watcher !== undefined), kind: 'data' }), watcher);
  }

  getChildren(path: string, watcher?: Watcher): Promise<string[]> {
    return this.readOp(path, () => ({ value: this.server.getChildren(this.sessionId, path, watcher !== undefined), kind: 'child' }), watcher);
  }

  getACL(path: string): Promise<{ acl: AclEntry[]; stat: Stat }> {
    this.stats.reads++;
    return this.reply(() => {
      validatePath(path);
      return { value: this.server.getAcl(this.sessionId, path) };
    });
  }

  setACL(path: string, acl: Acl, version = -1): Promise<void> {
    this.stats.writes++;
    return this.reply(() => {
      validatePath(path);
      this.server.setAcl(this.sessionId, path, acl, version);
      return { value: undefined };
    });
  }

  async close(): Promise<void> {
    if (this.currentState === 'closed' || this.currentState === 'expired') return;
    this.server.closeSession(this.sessionId);
    this.setState('closed');
    this.clearWatchers();
  }

  // ---- internals ---------------------------------------------------------------------

  private writeOp(ops: readonly Op[], isMulti: boolean): Promise<OpResult[]> {
    this.stats.writes++;
    return this.reply(() => {
      for (const op of ops) validatePath(op.path);
      return { value: this.server.write(this.sessionId, ops, isMulti) };
    });
  }

  private readOp<T>(path: string, run: () => { value: T; kind: WatchKind }, watcher: Watcher | undefined): Promise<T> {
    this.stats.reads++;
    return this.reply(() => {
      validatePath(path);
      const { value, kind } = run();
      // The watcher becomes live when the reply is delivered, after any earlier queued event.
      return { value, onDeliver: watcher ? () => this.addWatcher(kind, path, watcher) : undefined };
    });
  }

  /** Runs `op` now against the server and settles the promise in queue order. */
  private reply<T>(op: () => { value: T; onDeliver?: (() => void) | undefined }): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      try {
        this.checkUsable();
        const { value, onDeliver } = op();
        this.enqueue(() => {
          onDeliver?.();
          resolve(value);
        });
      } catch (err) {
        this.stats.failures++;
        this.enqueue(() => reject(err));
      }
    });
  }

  private checkUsable(): void {
    if (this.currentState === 'closed') throw new CoordError('CLOSED');
    if (this.currentState === 'expired' || !this.server.hasSession(this.sessionId)) throw new CoordError('SESSION_EXPIRED');
    if (!this.server.isConnected(this.sessionId)) throw new CoordError('CONNECTION_LOSS');
  }

  private onMessage(m: SessionMessage): void {
    if (m.kind === 'state') {
      this.enqueue(() => {
        if (m.state === 'expired') this.clearWatchers();
        this.setState(m.state);
      });
      return;
    }
    // Events wait while the simulated connection is down, as they would on the wire.
    this.enqueue(() => this.dispatch(m.event));
  }

  private dispatch(event: WatchEvent): void {
    const fire = new Set<Watcher>();
    for (const kind of watchKindsFor(event.type)) {
      const set = this.watchers[kind].get(event.path);
      if (!set) continue;
      for (const w of set) fire.add(w);
      this.watchers[kind].delete(event.path);
    }
    for (const w of fire) w(event);
  }

  private addWatcher(kind: WatchKind, path: string, watcher: Watcher): void {
    if (this.currentState === 'expired' || this.currentState === 'closed') return;
    let set = this.watchers[kind].get(path);
    if (!set) {
      set = new Set();
      this.watchers[kind].set(path, set);
    }
    set.add(watcher);
  }

  private clearWatchers(): void {
    for (const kind of ['data', 'exist', 'child'] as const) this.watchers[kind].clear();
  }

  private setState(state: SessionState): void {
    if (this.currentState === state) return;
    if (this.currentState === 'expired' || this.currentState === 'closed') return;
    this.currentState = state;
    this.states.emit('state', state);
  }

  private enqueue(d: Delivery): void {
    this.queue.push(d);
    if (!this.flushing) {
      this.flushing = true;
      setImmediate(() => this.flush());
    }
  }

  private flush(): void {
    // Deliveries that arrive while flushing join this same pass, keeping FIFO order.
    for (let i = 0; i < this.queue.length; i++) {
      try {
        this.queue[i]!();
      } catch (err) {
        log.error('coord', 'a watcher or state listener threw', err);
      }
    }
    this.queue.length = 0;
    this.flushing = false;
  }
}
