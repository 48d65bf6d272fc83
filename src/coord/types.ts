/**
 * The coordination contract: ZooKeeper's data model (znodes with data and versions, one-shot
 * watches, atomic multi-op transactions, sessions with expiry, access lists), typed and promise-based.
 * Both backends (embedded and zookeeper) implement it and pass one contract suite.
 */
import type { SecretInput } from '../util/cluster-secret.js';
import type { Acl, AclEntry } from './access.js';

export type CreateMode = 'persistent' | 'ephemeral' | 'persistent_sequential' | 'ephemeral_sequential';

export interface Stat {
  /** Number of changes to the data of this znode. */
  version: number;
  /** Number of changes to the children of this znode. */
  cversion: number;
  numChildren: number;
  dataLength: number;
  /** Session id (hex) of the owner of an ephemeral znode, or null. */
  ephemeralOwner: string | null;
  /** Transaction ids of creation and last modification. */
  czxid: bigint;
  mzxid: bigint;
  ctime: number;
  mtime: number;
}

export type WatchEventType = 'created' | 'deleted' | 'dataChanged' | 'childrenChanged';

export interface WatchEvent {
  type: WatchEventType;
  path: string;
}

/** A one-shot watcher, as in ZooKeeper: it fires at most once and must be re-armed by reading again. */
export type Watcher = (event: WatchEvent) => void;

/**
 * Session states. `connected` and `disconnected` alternate while the session lives;
 * `expired` (the cluster dropped the session: ephemerals are gone) and `closed` are final.
 */
export type SessionState = 'connecting' | 'connected' | 'disconnected' | 'expired' | 'closed';

export type Op =
  | { op: 'create'; path: string; data?: Uint8Array; mode?: CreateMode }
  | { op: 'delete'; path: string; version?: number }
  | { op: 'setData'; path: string; data: Uint8Array; version?: number }
  | { op: 'check'; path: string; version: number };

export type OpResult =
  | { op: 'create'; path: string }
  | { op: 'delete' }
  | { op: 'setData'; stat: Stat }
  | { op: 'check' };

export interface DataResult {
  data: Buffer;
  stat: Stat;
}

/** Counters every client keeps, so recipes and benchmarks can report read/write ratios. */
export interface ClientStats {
  reads: number;
  writes: number;
  transactions: number;
  failures: number;
}

export interface CoordClient {
  readonly backend: 'embedded' | 'zookeeper';
  /** Session id as 16 hex digits; stable for the life of the session. */
  readonly sessionId: string;
  readonly state: SessionState;
  /** Negotiated session timeout in milliseconds. */
  readonly sessionTimeoutMs: number;
  readonly stats: Readonly<ClientStats>;

  /** Creates a znode; returns its actual path (with the sequence suffix for sequential modes). */
  create(path: string, data?: Uint8Array, mode?: CreateMode): Promise<string>;
  /** Deletes a childless znode; `version` -1 (default) matches any version. */
  delete(path: string, version?: number): Promise<void>;
  /** Stat of the znode or null. The watcher fires on creation, deletion or data change. */
  exists(path: string, watcher?: Watcher): Promise<Stat | null>;
  /** Data and stat; throws NO_NODE. The watcher fires on data change or deletion. */
  getData(path: string, watcher?: Watcher): Promise<DataResult>;
  setData(path: string, data: Uint8Array, version?: number): Promise<Stat>;
  /** Child names (not paths), unsorted; throws NO_NODE. The watcher fires on child change or deletion. */
  getChildren(path: string, watcher?: Watcher): Promise<string[]>;
  /** Applies all operations atomically or none; a failure names the failing op in `opIndex`. */
  multi(ops: readonly Op[]): Promise<OpResult[]>;
  /** The access list of every znode this session creates (access.ts: the cluster's with the secret, open without). */
  readonly acl: Acl;
  /** A znode's access list and stat; throws NO_NODE, or NO_AUTH without READ or ADMIN (without ADMIN digests read "user:x"). */
  getACL(path: string): Promise<{ acl: AclEntry[]; stat: Stat }>;
  /** Replaces a znode's access list (needs ADMIN); `version` -1 (default) matches any access-list version. */
  setACL(path: string, acl: Acl, version?: number): Promise<void>;
  /**
   * Takes another secret (a rotation): the session presents its credentials from now on (besides those it
   * presented before: ZooKeeper cannot take credentials back from a session) and its creates carry its
   * access list. A monitor credential, or a session opened without a secret, cannot take one.
   */
  useSecret(secret: SecretInput): void;
  /** Subscribes to session state changes; returns the unsubscribe function. */
  onState(listener: (state: SessionState) => void): () => void;
  /** Ends the session: its ephemeral znodes are deleted. */
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** Requested session timeout (the server may adjust it). */
  sessionTimeoutMs?: number;
  /** How long `connect` waits for the first connection before failing. */
  connectTimeoutMs?: number;
  /**
   * The cluster secret (or a read-only monitor credential): the session presents the credentials derived
   * from it and gives every znode it creates the cluster's access list (access.ts). Without it the session
   * reaches only open znodes, and creates open ones.
   */
  secret?: SecretInput;
}
