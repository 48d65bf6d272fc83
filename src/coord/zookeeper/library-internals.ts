import type { ACL, Client } from 'node-zookeeper-client';

/**
 * The parts of node-zookeeper-client's internals that the wrapper reaches into, typed in one place.
 * Each use is a workaround for a documented gap of that library (see docs/dependencies.md):
 * - it has no read timeout, so a silent (partitioned) connection is never noticed, and no timeout on
 *   the connection handshake once TCP has connected;
 * - it never reports expiry while it cannot reach any server;
 * - its Transaction turns version 0 into -1 (`version || -1`), so conditional ops on a fresh znode would be unconditional;
 * - on a new connection it queues its credentials behind the requests made while disconnected, so
 *   those would reach the server unauthenticated (and fail NO_AUTH).
 */
export interface ConnectionManagerInternals {
  socket?: { destroy(): void };
  state: number;
  /** How long a connection attempt may take (the session timeout over the number of servers). */
  connectTimeout: number;
  onSocketData(buffer: Buffer): void;
  onSocketConnected(): void;
  connect(): void;
  cleanupPendingQueue(errorCode: number): void;
  packetQueue: { queue: unknown[]; shift(): { callback?: (err: unknown) => void } | undefined };
}

export interface TransactionInternals {
  ops: Array<{ version?: number }>;
}

export function connectionManagerOf(client: Client): ConnectionManagerInternals {
  return (client as unknown as { connectionManager: ConnectionManagerInternals }).connectionManager;
}

/** Sets the version of the last op added to a library Transaction, bypassing its `|| -1`. */
export function fixLastOpVersion(txn: unknown, version: number): void {
  const ops = (txn as TransactionInternals).ops;
  const last = ops[ops.length - 1];
  if (last) last.version = version;
}

/**
 * Sends a new connection's credentials (and watch re-registration) before any request queued while
 * the client was disconnected: the library appends them to its queue when the socket connects; this
 * moves what that step appended to the front. ZooKeeper applies an auth packet before it reads the
 * next request on the connection, so every request then runs with the session's credentials.
 */
export function credentialsFirst(client: Client): void {
  const cm = connectionManagerOf(client);
  const onConnected = cm.onSocketConnected;
  cm.onSocketConnected = function (this: ConnectionManagerInternals) {
    const queued = cm.packetQueue.queue.length;
    onConnected.call(cm);
    const queue = cm.packetQueue.queue;
    if (queued > 0 && queue.length > queued) queue.unshift(...queue.splice(queued));
  };
}

/** ConnectionManager.STATES.CLOSING: while in it, the manager neither reconnects nor sends anything but close. */
export const CM_CLOSING = -1;
/** ConnectionManager.STATES.CONNECTING: a connection is open or opening, its handshake not answered yet. */
export const CM_CONNECTING = 1;

/** An access-list entry's permissions: the library keeps them as `permission`, though its typings say `perms`. */
export function permissionsOf(entry: ACL): number {
  return (entry as unknown as { permission: number }).permission;
}
