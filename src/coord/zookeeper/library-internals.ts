import type { Client } from 'node-zookeeper-client';

/**
 * The parts of node-zookeeper-client's internals that the wrapper reaches into, typed in one place.
 * Each use is a workaround for a documented gap of that library (see docs/dependencies.md):
 * - it has no read timeout, so a silent (partitioned) connection is never noticed;
 * - it never reports expiry while it cannot reach any server;
 * - its Transaction turns version 0 into -1 (`version || -1`), so conditional ops on a fresh znode would be unconditional.
 */
export interface ConnectionManagerInternals {
  socket?: { destroy(): void };
  state: number;
  onSocketData(buffer: Buffer): void;
  connect(): void;
  cleanupPendingQueue(errorCode: number): void;
  packetQueue: { shift(): { callback?: (err: unknown) => void } | undefined };
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

/** ConnectionManager.STATES.CLOSING: while in it, the manager neither reconnects nor sends anything but close. */
export const CM_CLOSING = -1;
