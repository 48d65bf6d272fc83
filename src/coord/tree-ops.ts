import { isCoordError, isRetryable } from './errors.js';
import { joinPath, parentOf } from './paths.js';
import type { CoordClient } from './types.js';

/**
 * Creates `path` and any missing ancestors as persistent znodes; existing ones are left alone.
 * Works upwards from the path (one read, one create when only the last segment is missing) rather
 * than creating every ancestor from the root: each refused create is a write the ensemble's leader
 * has to process.
 */
export async function mkdirp(client: CoordClient, path: string): Promise<void> {
  if (path === '/') return;
  if (await client.exists(path)) return;
  await createMissing(client, path);
}

async function createMissing(client: CoordClient, path: string): Promise<void> {
  try {
    await client.create(path);
    return;
  } catch (err) {
    if (isCoordError(err, 'NODE_EXISTS')) return;
    if (!isCoordError(err, 'NO_NODE')) throw err;
  }
  const parent = parentOf(path);
  if (parent !== '/') await createMissing(client, parent);
  try {
    await client.create(path);
  } catch (err) {
    if (!isCoordError(err, 'NODE_EXISTS')) throw err;
  }
}

/**
 * Brings this session's server up to date before a read: after it, the session reads every write that
 * any session completed before it began. ZooKeeper serves reads from the server a session is
 * connected to, which may lag behind the others (another session's write can be invisible for a few
 * milliseconds); a transaction goes through the leader and returns only once this server has applied it
 * and everything committed before it. A check of `path` at any version is such a transaction that
 * changes nothing (the client library has no `sync`). `path` must exist (NO_NODE otherwise).
 */
export async function catchUp(client: CoordClient, path: string): Promise<void> {
  await client.multi([{ op: 'check', path, version: -1 }]);
}

/** Deletes `path` and everything below it; a znode that vanishes meanwhile is not an error. */
export async function deleteRecursive(client: CoordClient, path: string): Promise<void> {
  let children: string[];
  try {
    children = await client.getChildren(path);
  } catch (err) {
    if (isCoordError(err, 'NO_NODE')) return;
    throw err;
  }
  await Promise.all(children.map((c) => deleteRecursive(client, joinPath(path, c))));
  try {
    await client.delete(path);
  } catch (err) {
    if (isCoordError(err, 'NO_NODE')) return;
    if (isCoordError(err, 'NOT_EMPTY')) return deleteRecursive(client, path); // a child appeared meanwhile
    throw err;
  }
}

/** Resolves when the client reaches `state`, or rejects after `timeoutMs`. */
export function waitForState(client: CoordClient, state: CoordClient['state'], timeoutMs: number): Promise<void> {
  if (client.state === state) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`session ${client.sessionId} did not become ${state} within ${timeoutMs} ms (now ${client.state})`));
    }, timeoutMs);
    const off = client.onState((s) => {
      if (s !== state) return;
      clearTimeout(timer);
      off();
      resolve();
    });
  });
}

/**
 * After a connection loss: resolves once the session is connected again. Fails at once if the
 * session has ended (expired or closed), and after two session timeouts otherwise.
 */
export function reconnected(client: CoordClient): Promise<void> {
  if (client.state === 'expired' || client.state === 'closed') {
    return Promise.reject(new Error(`the coordination session has ended (${client.state})`));
  }
  return waitForState(client, 'connected', client.sessionTimeoutMs * 2);
}

/**
 * Runs `step` again after each connection loss, once the session has reconnected; fails when the
 * session ends. For steps that may run twice: reads, and writes that take their own earlier success
 * as success (a create that accepts NODE_EXISTS).
 */
export async function acrossLosses<T>(client: CoordClient, step: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await step();
    } catch (err) {
      if (!isRetryable(err)) throw err;
      await reconnected(client);
    }
  }
}

/**
 * Whether `path` exists, reading again across connection losses. This is how a transaction marker
 * tells whether a commit whose reply was lost went through (seed 000, Algorithm 2).
 */
export async function existsAcrossLosses(client: CoordClient, path: string): Promise<boolean> {
  return acrossLosses(client, async () => (await client.exists(path)) !== null);
}
