/**
 * Who may do what in the coordination service: ZooKeeper's access lists (ACLs) and digest
 * credentials, shared by both backends.
 *
 * A session presents credentials (`digest` scheme, "user:password"); the service turns each into
 * the id "user:" + base64(SHA-1("user:password")) and keeps the ids with the connection. Every znode
 * carries an access list of (permissions, id) entries; an operation is allowed when an entry whose
 * id the session holds (or `world:anyone`) grants its permission:
 *   create and delete: CREATE / DELETE on the parent;  setData: WRITE;  getData, getChildren, and
 *   `check` in a transaction: READ;  setACL: ADMIN;  getACL: READ or ADMIN (without ADMIN the
 *   digests of the list come back as "user:x");  exists: no permission.
 * A refused operation fails with NO_AUTH. An access list is set when a znode is created and not
 * inherited: every znode's list is the one its creator gave it.
 *
 * tidepool's use: the cluster secret yields the digest credential `tidepool:<key>` (all permissions)
 * and the read-only `tidepool-monitor:<key>` (READ); a session with the secret gives every znode it
 * creates the list {tidepool: all, tidepool-monitor: read} (one pair per accepted secret while
 * rotating). Nothing is granted to `world:anyone`, so a client without the secret can neither read
 * nor change the cluster's state. A session without credentials creates open znodes, as ZooKeeper
 * does by default (the contract suite's own trees).
 */
import { createHash } from 'node:crypto';
import { ClusterSecret, type SecretInput } from '../util/cluster-secret.js';

/** ZooKeeper's permission bits of an access-list entry (cdrwa). */
export const Perm = { read: 1, write: 2, create: 4, delete: 8, admin: 16, all: 31 } as const;

/** One entry of a znode's access list: who (scheme and id) may do what (permission bits). */
export interface AclEntry {
  /** A sum of Perm bits. */
  perms: number;
  scheme: 'world' | 'digest';
  /** `anyone` for world; "user:base64(sha1(user:password))" for digest. */
  id: string;
}

/** A znode's access list. */
export type Acl = readonly AclEntry[];

/** ZooKeeper's default, which lets anyone do anything (OPEN_ACL_UNSAFE). */
export const OPEN_ACL: Acl = [{ perms: Perm.all, scheme: 'world', id: 'anyone' }];

export const CLUSTER_USER = 'tidepool';
export const MONITOR_USER = 'tidepool-monitor';

/** What a session presents and what it gives the znodes it creates. */
export interface SessionAccess {
  /** Digest credentials, "user:password", presented on every connection. */
  credentials: readonly string[];
  /** The access list of every znode the session creates. */
  acl: Acl;
  /** What the session holds, for errors: nothing, a read-only monitor credential, or the secret. */
  holds: 'nothing' | 'monitor credential' | 'secret';
}

export const NO_ACCESS: SessionAccess = { credentials: [], acl: OPEN_ACL, holds: 'nothing' };

/** The id ZooKeeper's digest provider makes of a credential "user:password". */
export function digestId(credential: string): string {
  const user = credential.slice(0, credential.indexOf(':'));
  return `${user}:${createHash('sha1').update(credential).digest('base64')}`;
}

/** The access list a cluster's znodes carry: all for the secret's credential, read for the monitor's (each accepted secret). */
export function clusterAcl(secret: ClusterSecret): Acl {
  const cluster = secret.keys('zookeeper-digest').map((k): AclEntry => ({ perms: Perm.all, scheme: 'digest', id: digestId(`${CLUSTER_USER}:${k.toString('base64url')}`) }));
  const monitor = secret.monitorPasswords().map((p): AclEntry => ({ perms: Perm.read, scheme: 'digest', id: digestId(`${MONITOR_USER}:${p}`) }));
  return [...cluster, ...monitor];
}

/** A session's access from the cluster secret, a monitor credential, or nothing. */
export function sessionAccess(secret: SecretInput | undefined): SessionAccess {
  if (secret === undefined) return NO_ACCESS;
  const s = ClusterSecret.from(secret);
  if (!s.isSecret) return { credentials: [`${MONITOR_USER}:${s.monitorPassword()}`], acl: OPEN_ACL, holds: 'monitor credential' };
  return { credentials: s.keys('zookeeper-digest').map((k) => `${CLUSTER_USER}:${k.toString('base64url')}`), acl: clusterAcl(s), holds: 'secret' };
}

/** A session's access after it takes another secret (a rotation); refused for a monitor credential or a session without a secret. */
export function nextAccess(current: SessionAccess, secret: SecretInput): SessionAccess {
  if (current.holds !== 'secret') throw new Error(`a session opened with ${current.holds === 'nothing' ? 'no credential' : 'a monitor credential'} cannot take a secret: open a new one`);
  const next = sessionAccess(secret);
  if (next.holds !== 'secret') throw new Error('a session with the cluster secret takes another secret, not a monitor credential');
  return next;
}

/** The digest ids a session holds once its credentials are presented. */
export function sessionIds(access: SessionAccess): Set<string> {
  return new Set(access.credentials.map(digestId));
}

/** Whether `acl` grants `perm` to a session holding `ids` (an empty list grants everything, as in ZooKeeper). */
export function grants(acl: Acl, ids: ReadonlySet<string>, perm: number): boolean {
  if (acl.length === 0) return true;
  for (const e of acl) {
    if ((e.perms & perm) === 0) continue;
    if (e.scheme === 'world' ? e.id === 'anyone' : ids.has(e.id)) return true;
  }
  return false;
}

/** The detail of a NO_AUTH error: what was refused and what the session holds. */
export function refusalDetail(access: SessionAccess, read: boolean): string {
  const need = read ? 'cluster secret or monitor credential required to read' : 'cluster secret required';
  switch (access.holds) {
    case 'nothing': return `${need}: this session holds no credential (give the secret: --secret-file or TIDEPOOL_SECRET, or connect(…, { secret }))`;
    case 'monitor credential': return `${need}: this session holds a read-only monitor credential`;
    case 'secret': return `${need}: this session's secret is not one this znode's access list accepts (another cluster's, or rotated out)`;
  }
}

/** Serialized size of an access list in a request (jute: a vector of (int perms, ustring scheme, ustring id)). */
export function aclBytes(acl: Acl): number {
  let n = 4;
  for (const e of acl) n += 4 + 4 + Buffer.byteLength(e.scheme) + 4 + Buffer.byteLength(e.id);
  return n;
}

/** Checks an access list given to setACL: non-empty, known schemes, permissions 1..31. */
export function validateAcl(acl: Acl): string | undefined {
  if (!Array.isArray(acl) || acl.length === 0) return 'an access list needs at least one entry';
  for (const e of acl) {
    if (!Number.isInteger(e.perms) || e.perms < 1 || e.perms > Perm.all) return `permissions ${String(e.perms)} are not 1..31`;
    if (e.scheme === 'world' && e.id !== 'anyone') return `world:${e.id} is not an id (only world:anyone)`;
    if (e.scheme === 'digest' && !/^[^:]+:[A-Za-z0-9+/]{27}=$/.test(e.id)) return `digest:${e.id} is not a digest id (user:base64 of SHA-1)`;
    if (e.scheme !== 'world' && e.scheme !== 'digest') return `scheme ${String(e.scheme)} is not supported (world, digest)`;
  }
  return undefined;
}

/** getACL without ADMIN: digests hidden as "user:x", as ZooKeeper answers. */
export function redactAcl(acl: Acl): AclEntry[] {
  return acl.map((e) => (e.scheme === 'digest' ? { ...e, id: e.id.replace(/:.*/, ':x') } : { ...e }));
}

/** "digest:tidepool:… cdrwa" for messages. */
export function describeAcl(acl: Acl): string {
  const letters = (p: number) => ['r', 'w', 'c', 'd', 'a'].filter((_, i) => (p & (1 << i)) !== 0).join('');
  return acl.map((e) => `${e.scheme}:${e.id.replace(/:.*/, '')} ${letters(e.perms)}`).join(', ');
}
