import zookeeper from 'node-zookeeper-client';
import type { Client, Event as LibEvent, Stat as LibStat } from 'node-zookeeper-client';
import { Emitter } from '../../util/emitter.js';
import { log } from '../../util/log.js';
import { aclBytes, NO_ACCESS, nextAccess, refusalDetail, validateAcl, type Acl, type AclEntry, type SessionAccess } from '../access.js';
import type { SecretInput } from '../../util/cluster-secret.js';
import { CoordError } from '../errors.js';
import { validatePath } from '../paths.js';
import { checkRequestSize, MAX_REQUEST_BYTES } from '../request-size.js';
import type {
  ClientStats, ConnectOptions, CoordClient, CreateMode, DataResult, Op, OpResult, SessionState, Stat, WatchEvent, Watcher,
} from '../types.js';
import { CM_CLOSING, CM_CONNECTING, connectionManagerOf, credentialsFirst, fixLastOpVersion, permissionsOf } from './library-internals.js';
import { OK, RUNTIME_INCONSISTENCY, codeOf, toCoordError } from './zookeeper-errors.js';

const { createClient, CreateMode: LibMode, State, Event, ACL: LibACL, Id: LibId } = zookeeper;
type LibAcl = InstanceType<typeof LibACL>;
const SESSION_EXPIRED_CODE = -112;

const MODES: Record<CreateMode, number> = {
  persistent: LibMode.PERSISTENT,
  ephemeral: LibMode.EPHEMERAL,
  persistent_sequential: LibMode.PERSISTENT_SEQUENTIAL,
  ephemeral_sequential: LibMode.EPHEMERAL_SEQUENTIAL,
};

const EVENT_TYPES: Record<number, WatchEvent['type']> = {
  [Event.NODE_CREATED]: 'created',
  [Event.NODE_DELETED]: 'deleted',
  [Event.NODE_DATA_CHANGED]: 'dataChanged',
  [Event.NODE_CHILDREN_CHANGED]: 'childrenChanged',
};

export interface ZooKeeperClientOptions extends Omit<ConnectOptions, 'secret'> {
  hosts: Array<{ host: string; port: number }>;
  /** Path prefix applied to every operation; created on connect when missing. */
  chroot?: string;
  /** Credentials to present and the access list of created znodes (access.ts; default: none, open znodes). */
  access?: SessionAccess;
}

/**
 * CoordClient on Apache ZooKeeper through node-zookeeper-client, with what that library lacks:
 * promises and typed errors, a read timeout (a silent connection is dropped after 2/3 of the
 * session timeout, like the Java client), and local session-expiry detection (a client cut off from
 * every server declares its session expired once the session timeout has passed since it lost contact).
 */
export class ZooKeeperClient implements CoordClient {
  readonly backend = 'zookeeper' as const;
  readonly stats: ClientStats = { reads: 0, writes: 0, transactions: 0, failures: 0 };

  private readonly lib: Client;
  private readonly root: string;
  private readonly states = new Emitter<{ state: SessionState }>();
  private currentState: SessionState = 'connecting';
  private lastReceive = Date.now();
  private disconnectedAt: number | undefined;
  private readonly requestedTimeoutMs: number;
  private watchdog: NodeJS.Timeout | undefined;
  /** When the library began its current connection attempt. */
  private attemptStartedAt: number | undefined;
  private access: SessionAccess;
  private libAcl: LibAcl[];
  private aclSize: number;

  private constructor(opts: ZooKeeperClientOptions) {
    this.root = opts.chroot ?? '';
    this.requestedTimeoutMs = opts.sessionTimeoutMs ?? 10_000;
    this.access = opts.access ?? NO_ACCESS;
    this.libAcl = toLibAcl(this.access.acl);
    this.aclSize = aclBytes(this.access.acl);
    const hosts = opts.hosts.map((h) => `${h.host.includes(':') ? `[${h.host}]` : h.host}:${h.port}`).join(',');
    this.lib = createClient(hosts, { sessionTimeout: this.requestedTimeoutMs, spinDelay: 100, retries: 0 });
    // Presented on every connection (the library re-sends them when it reconnects), ahead of any request.
    for (const credential of this.access.credentials) this.lib.addAuthInfo('digest', Buffer.from(credential));
    credentialsFirst(this.lib);
    const cm = connectionManagerOf(this.lib);
    const connect = cm.connect;
    cm.connect = () => {
      this.attemptStartedAt = Date.now();
      connect.call(cm);
    };
    const onData = cm.onSocketData;
    cm.onSocketData = (buffer: Buffer) => {
      this.lastReceive = Date.now();
      onData.call(cm, buffer);
    };
    this.lib.on('state', (s) => this.onLibState(s));
  }

  /** Connects and waits for the session; rejects with CONNECTION_LOSS after `connectTimeoutMs`. */
  static async connect(opts: ZooKeeperClientOptions): Promise<ZooKeeperClient> {
    const client = new ZooKeeperClient(opts);
    await client.start(opts.connectTimeoutMs ?? 15_000);
    return client;
  }

  get state(): SessionState {
    return this.currentState;
  }

  get sessionId(): string {
    return this.lib.getSessionId().toString('hex');
  }

  get sessionTimeoutMs(): number {
    return this.lib.getSessionTimeout();
  }

  get acl(): Acl {
    return this.access.acl;
  }

  useSecret(secret: SecretInput): void {
    const next = nextAccess(this.access, secret);
    // The library keeps every credential and presents it on each (re)connection; only new ones are added.
    for (const credential of next.credentials) if (!this.access.credentials.includes(credential)) this.lib.addAuthInfo('digest', Buffer.from(credential));
    this.access = { ...next, credentials: [...new Set([...this.access.credentials, ...next.credentials])] };
    this.libAcl = toLibAcl(next.acl);
    this.aclSize = aclBytes(next.acl);
  }

  /** The session password, for tests that expire a session by opening it a second time. */
  get sessionPassword(): Buffer {
    return this.lib.getSessionPassword();
  }

  onState(listener: (state: SessionState) => void): () => void {
    return this.states.on('state', listener);
  }

  create(path: string, data?: Uint8Array, mode: CreateMode = 'persistent'): Promise<string> {
    this.stats.writes++;
    return this.call<string>(path, (cb) => {
      this.sized([{ op: 'create', path, ...(data ? { data } : {}) }], false);
      this.lib.create(this.abs(path), toBuffer(data), this.libAcl, MODES[mode], cb);
    }, 'write').then((p) => this.rel(p));
  }

  delete(path: string, version = -1): Promise<void> {
    this.stats.writes++;
    return this.call<void>(path, (cb) => this.lib.remove(this.abs(path), version, cb), 'write');
  }

  setData(path: string, data: Uint8Array, version = -1): Promise<Stat> {
    this.stats.writes++;
    return this.call<LibStat>(path, (cb) => {
      this.sized([{ op: 'setData', path, data }], false);
      this.lib.setData(this.abs(path), toBuffer(data), version, cb);
    }, 'write').then(toStat);
  }

  exists(path: string, watcher?: Watcher): Promise<Stat | null> {
    this.stats.reads++;
    return this.call<LibStat | null>(path, (cb) =>
      watcher ? this.lib.exists(this.abs(path), this.wrap(watcher), cb) : this.lib.exists(this.abs(path), cb),
    ).then((s) => (s ? toStat(s) : null));
  }

  getData(path: string, watcher?: Watcher): Promise<DataResult> {
    this.stats.reads++;
    return this.call<DataResult>(path, (cb) => {
      const done = (err: unknown, data: Buffer | undefined, stat: LibStat) =>
        cb(err, err ? (undefined as never) : { data: data ?? Buffer.alloc(0), stat: toStat(stat) });
      if (watcher) this.lib.getData(this.abs(path), this.wrap(watcher), done);
      else this.lib.getData(this.abs(path), done);
    });
  }

  getChildren(path: string, watcher?: Watcher): Promise<string[]> {
    this.stats.reads++;
    return this.call<string[]>(path, (cb) =>
      watcher ? this.lib.getChildren(this.abs(path), this.wrap(watcher), cb) : this.lib.getChildren(this.abs(path), cb),
    );
  }

  getACL(path: string): Promise<{ acl: AclEntry[]; stat: Stat }> {
    this.stats.reads++;
    return this.call<{ acl: AclEntry[]; stat: Stat }>(path, (cb) => this.lib.getACL(this.abs(path), (err, acls, stat) =>
      cb(err, err ? (undefined as never) : { acl: (acls ?? []).map((a) => ({ perms: permissionsOf(a), scheme: a.id.scheme as AclEntry['scheme'], id: a.id.id })), stat: toStat(stat) })));
  }

  setACL(path: string, acl: Acl, version = -1): Promise<void> {
    this.stats.writes++;
    return this.call<void>(path, (cb) => {
      const wrong = validateAcl(acl);
      if (wrong) throw new CoordError('INVALID_ACL', path, undefined, wrong);
      this.lib.setACL(this.abs(path), toLibAcl(acl), version, (err) => cb(err, undefined));
    }, 'write');
  }

  multi(ops: readonly Op[]): Promise<OpResult[]> {
    this.stats.writes++;
    this.stats.transactions++;
    if (ops.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      try {
        this.checkUsable(ops[0]!.path);
        this.sized(ops, true);
        const txn = this.lib.transaction();
        for (const op of ops) {
          validatePath(op.path);
          const p = this.abs(op.path);
          switch (op.op) {
            case 'create': txn.create(p, toBuffer(op.data), this.libAcl, MODES[op.mode ?? 'persistent']); break;
            case 'delete': txn.remove(p, op.version ?? -1); fixLastOpVersion(txn, op.version ?? -1); break;
            case 'setData': txn.setData(p, toBuffer(op.data), op.version ?? -1); fixLastOpVersion(txn, op.version ?? -1); break;
            case 'check': txn.check(p, op.version); fixLastOpVersion(txn, op.version); break;
          }
        }
        txn.commit((err, results: Array<{ type: number; err?: number; path?: string; stat?: LibStat }> | undefined) => {
          if (!err) {
            resolve(ops.map((op, i) => this.toOpResult(op, results?.[i])));
            return;
          }
          // A failed multi returns one result per op: OK before the culprit, RUNTIME_INCONSISTENCY after it.
          const index = results?.findIndex((r) => r.err !== undefined && r.err !== OK && r.err !== RUNTIME_INCONSISTENCY) ?? -1;
          if (index >= 0) {
            this.stats.failures++;
            const code = codeOf(results![index]!.err!);
            reject(new CoordError(code, ops[index]!.path, index, code === 'NO_AUTH' ? refusalDetail(this.access, ops[index]!.op === 'check') : undefined));
          } else {
            this.fail(reject, err, ops[0]!.path, 'write');
          }
        });
      } catch (err) {
        this.fail(reject, err, ops[0]?.path, 'write');
      }
    });
  }

  async close(): Promise<void> {
    if (this.currentState === 'closed') return;
    const wasLive = this.currentState === 'connected';
    this.stopWatchdog();
    if (wasLive) {
      // Ask the server to end the session (so ephemerals go at once), but never wait long for it.
      await new Promise<void>((resolve) => {
        const done = () => { clearTimeout(timer); resolve(); };
        const timer = setTimeout(done, 2_000);
        this.lib.once('disconnected', done);
        this.lib.close();
      });
    }
    this.abandon(-4);
    this.setState('closed');
  }

  // ---- internals ---------------------------------------------------------------------

  private async start(connectTimeoutMs: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        off();
        this.stopWatchdog();
        this.abandon(-4);
        this.currentState = 'closed';
        reject(new CoordError('CONNECTION_LOSS', undefined, undefined, `no ZooKeeper server answered within ${connectTimeoutMs} ms`));
      }, connectTimeoutMs);
      const off = this.onState((s) => {
        if (s !== 'connected') return;
        clearTimeout(timer);
        off();
        resolve();
      });
      // From the first connection attempt: one that gets no answer is dropped for the next server.
      this.startWatchdog();
      this.lib.connect();
    });
    // A round trip behind the credentials: ZooKeeper answers in order, so once it returns they are in effect.
    if (this.access.credentials.length > 0) {
      await new Promise<void>((resolve, reject) => this.lib.exists('/', (err: unknown) => (err ? reject(this.coordError(err, '/', 'read')) : resolve())));
    }
    if (this.root !== '') await this.ensureRoot();
  }

  /** Creates the chroot's znodes that are missing, with this session's access list (an existing one is not touched: its parent may refuse this session a create). */
  private async ensureRoot(): Promise<void> {
    let path = '';
    for (const segment of this.root.slice(1).split('/')) {
      path += `/${segment}`;
      const at = path;
      if (await new Promise<boolean>((resolve, reject) => this.lib.exists(at, (err: unknown, stat: unknown) => (err ? reject(this.coordError(err, at, 'read')) : resolve(stat !== null && stat !== undefined))))) continue;
      await new Promise<void>((resolve, reject) =>
        this.lib.create(path, this.libAcl, (err: unknown) => (err && toCoordError(err).code !== 'NODE_EXISTS' ? reject(this.coordError(err, path, 'write')) : resolve())),
      );
    }
  }

  /**
   * Every third of the session timeout: drop a connection that has been silent for 2/3 of it
   * (the library pings when idle, so silence means a dead link), and declare the session expired
   * once we have been cut off for a whole session timeout.
   */
  private startWatchdog(): void {
    const period = Math.max(50, Math.floor(this.sessionTimeoutMs / 6));
    this.watchdog = setInterval(() => {
      const now = Date.now();
      if (this.currentState === 'connected' && now - this.lastReceive > (this.sessionTimeoutMs * 2) / 3) {
        log.debug('zookeeper', 'connection silent, reconnecting', { sessionId: this.sessionId });
        connectionManagerOf(this.lib).socket?.destroy();
      } else if (this.currentState === 'disconnected' && this.disconnectedAt !== undefined && now - this.disconnectedAt >= this.sessionTimeoutMs) {
        log.info('zookeeper', 'session expired while cut off from the ensemble', { sessionId: this.sessionId });
        this.expireLocally();
      } else if (this.currentState === 'disconnected' || this.currentState === 'connecting') {
        this.dropUnansweredConnect(now);
      }
    }, period);
    this.watchdog.unref();
  }

  /**
   * A connection the library opened that has had no answer to its handshake for its connect timeout
   * (the session timeout over the number of servers) is dropped, so that the library tries the next
   * server. The library times out only the TCP connect: a server that accepts and then says nothing
   * (hung, or cut off behind a proxy or a load balancer that accepts for it) would hold it until the
   * session is lost.
   */
  private dropUnansweredConnect(now: number): void {
    const cm = connectionManagerOf(this.lib);
    if (cm.state !== CM_CONNECTING || !cm.socket || this.attemptStartedAt === undefined) return;
    if (now - this.attemptStartedAt >= cm.connectTimeout) {
      log.debug('zookeeper', 'no answer to the connection handshake, trying the next server', { sessionId: this.sessionId });
      this.attemptStartedAt = undefined; // the next attempt restarts the clock
      cm.socket.destroy();
    }
  }

  private stopWatchdog(): void {
    clearInterval(this.watchdog);
    this.watchdog = undefined;
  }

  private onLibState(s: unknown): void {
    if (s === State.SYNC_CONNECTED) {
      this.lastReceive = Date.now();
      this.disconnectedAt = undefined;
      this.setState('connected');
    } else if (s === State.DISCONNECTED) {
      if (this.currentState === 'connected') this.disconnectedAt = Date.now();
      this.setState('disconnected');
    } else if (s === State.EXPIRED) {
      this.expireLocally();
    }
  }

  private expireLocally(): void {
    if (this.currentState === 'expired' || this.currentState === 'closed') return;
    this.stopWatchdog();
    this.abandon(SESSION_EXPIRED_CODE);
    this.setState('expired');
  }

  /** Stops the library for good: no reconnects, every queued request fails with `code`. */
  private abandon(code: number): void {
    const cm = connectionManagerOf(this.lib);
    cm.connect = () => undefined;
    cm.state = CM_CLOSING;
    cm.socket?.destroy();
    cm.cleanupPendingQueue(code);
    for (let p = cm.packetQueue.shift(); p; p = cm.packetQueue.shift()) p.callback?.(libException(code));
  }

  private setState(state: SessionState): void {
    if (this.currentState === state) return;
    if (this.currentState === 'expired' || this.currentState === 'closed') return;
    this.currentState = state;
    this.states.emit('state', state);
  }

  private wrap(watcher: Watcher): (event: LibEvent) => void {
    return (event) => {
      const type = EVENT_TYPES[event.getType()];
      if (!type) return;
      try {
        watcher({ type, path: this.rel(event.getPath()) });
      } catch (err) {
        log.error('coord', 'a watcher threw', err);
      }
    };
  }

  private call<T>(path: string, start: (cb: (err: unknown, value: T) => void) => void, kind: 'read' | 'write' = 'read'): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      try {
        validatePath(path);
        this.checkUsable(path);
        start((err, value) => (err ? this.fail(reject, err, path, kind) : resolve(value)));
      } catch (err) {
        this.fail(reject, err, path, kind);
      }
    });
  }

  /**
   * The server would drop the connection on a request over jute.maxbuffer, which the library reports
   * as a connection loss — retried forever by callers. Refusing it here makes it a clear, final error.
   */
  private sized(ops: readonly Op[], isMulti: boolean): void {
    checkRequestSize(ops, isMulti, Buffer.byteLength(this.root), MAX_REQUEST_BYTES, this.aclSize);
  }

  private checkUsable(path: string | undefined): void {
    if (this.currentState === 'closed') throw new CoordError('CLOSED', path);
    if (this.currentState === 'expired') throw new CoordError('SESSION_EXPIRED', path);
  }

  private fail(reject: (err: unknown) => void, err: unknown, path: string | undefined, kind: 'read' | 'write'): void {
    this.stats.failures++;
    reject(this.coordError(err, path, kind));
  }

  /** The library's error as a CoordError; a refusal says what the session holds (refusalDetail). */
  private coordError(err: unknown, path: string | undefined, kind: 'read' | 'write'): CoordError {
    const e = toCoordError(err, path);
    return e.code === 'NO_AUTH' && e.detail === undefined ? new CoordError('NO_AUTH', e.path, e.opIndex, refusalDetail(this.access, kind === 'read')) : e;
  }

  private toOpResult(op: Op, r: { path?: string; stat?: LibStat } | undefined): OpResult {
    switch (op.op) {
      case 'create': return { op: 'create', path: this.rel(r?.path ?? this.abs(op.path)) };
      case 'delete': return { op: 'delete' };
      case 'setData': return { op: 'setData', stat: toStat(r!.stat!) };
      case 'check': return { op: 'check' };
    }
  }

  private abs(path: string): string {
    return this.root === '' ? path : path === '/' ? this.root : this.root + path;
  }

  private rel(path: string): string {
    if (this.root === '' || !path.startsWith(this.root)) return path;
    return path.slice(this.root.length) || '/';
  }
}

function toLibAcl(acl: Acl): LibAcl[] {
  return acl.map((e) => new LibACL(e.perms, new LibId(e.scheme, e.id)));
}

function toBuffer(data: Uint8Array | undefined): Buffer {
  if (data === undefined) return Buffer.alloc(0);
  return Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

/** The library's own exception object, so its internal callbacks see the shape they expect. */
function libException(code: number): unknown {
  return (zookeeper.Exception as unknown as { create(code: number): unknown }).create(code);
}

function toStat(s: LibStat): Stat {
  const owner = s.ephemeralOwner.readBigUInt64BE(0);
  return {
    version: s.version,
    cversion: s.cversion,
    numChildren: s.numChildren,
    dataLength: s.dataLength,
    ephemeralOwner: owner === 0n ? null : s.ephemeralOwner.toString('hex'),
    czxid: s.czxid.readBigUInt64BE(0),
    mzxid: s.mzxid.readBigUInt64BE(0),
    ctime: Number(s.ctime.readBigInt64BE(0)),
    mtime: Number(s.mtime.readBigInt64BE(0)),
  };
}
