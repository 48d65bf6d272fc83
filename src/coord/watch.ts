import { log } from '../util/log.js';
import { isCoordError } from './errors.js';
import type { CoordClient, DataResult } from './types.js';

/** A persistent view of a znode built from one-shot watches. */
export interface WatchHandle {
  /** Resolves after the first state has been delivered. */
  readonly ready: Promise<void>;
  close(): void;
}

/**
 * Why a watch stopped for good: its session expired or was closed, or a read failed in a way no retry
 * mends (NO_AUTH: the session may not read the znode; `ready` then rejects with that error).
 */
export type WatchEndReason = 'expired' | 'closed' | 'failed';

export interface WatchOptions {
  /** Called once when the watch stops for good; `err` is the failure when the reason is 'failed'. */
  onEnd?: (reason: WatchEndReason, err?: unknown) => void;
  /**
   * How long to wait after a change before re-reading (default 0). Changes in between are not
   * lost (the next read sees them) but coalesce into one delivery: a watcher of a list that
   * changes thousands of times a second (a termination list) bounds its reads this way.
   */
  rearmDelayMs?: () => number;
}

/**
 * Keeps a watch armed on `path` and delivers its children after every change. Each delivery
 * comes from a read that re-arms the watch in the same request, so no change is ever missed
 * (bursts may be coalesced into one delivery of the latest state). A missing znode delivers
 * null and waits for it to be created; a connection loss re-reads on reconnect.
 */
export function watchChildren(client: CoordClient, path: string, onChange: (children: string[] | null) => void, opts: WatchOptions = {}): WatchHandle {
  return rearming(client, path, opts, async (rearm) => {
    try {
      return await client.getChildren(path, rearm);
    } catch (err) {
      if (!isCoordError(err, 'NO_NODE')) throw err;
      // Set an existence watch; if the node appeared in between, read again at once.
      return (await client.exists(path, rearm)) ? undefined : null;
    }
  }, onChange);
}

/** Like watchChildren, for a znode's data (null while the znode does not exist). */
export function watchData(client: CoordClient, path: string, onChange: (data: DataResult | null) => void, opts: WatchOptions = {}): WatchHandle {
  return rearming(client, path, opts, async (rearm) => {
    try {
      return await client.getData(path, rearm);
    } catch (err) {
      if (!isCoordError(err, 'NO_NODE')) throw err;
      return (await client.exists(path, rearm)) ? undefined : null;
    }
  }, onChange);
}

/**
 * The shared re-arm loop. `read` returns the value to deliver, or undefined to read again now.
 * Only the newest read's watcher counts: an older one firing late is ignored, since the newer
 * read already reflects everything before it and its own watcher covers everything after.
 */
function rearming<T>(client: CoordClient, path: string, opts: WatchOptions, read: (rearm: () => void) => Promise<T | undefined>, deliver: (value: T) => void): WatchHandle {
  let closed = false;
  let generation = 0;
  let delayed: NodeJS.Timeout | undefined;
  let markReady!: () => void;
  let markFailed!: (err: unknown) => void;
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    markFailed = reject;
  });
  ready.catch(() => undefined); // a caller that never awaits `ready` learns of a failure through onEnd
  const stop = (): boolean => {
    if (closed) return false;
    closed = true;
    clearTimeout(delayed);
    offState();
    markReady();
    return true;
  };
  const end = (reason: WatchEndReason, err?: unknown) => {
    if (err !== undefined) markFailed(err);
    if (stop()) opts.onEnd?.(reason, err);
  };

  const arm = (): void => {
    if (closed) return;
    const mine = ++generation;
    const rearm = () => {
      if (mine !== generation) return;
      const delay = opts.rearmDelayMs?.() ?? 0;
      if (delay <= 0) return arm();
      delayed = setTimeout(() => {
        if (mine === generation) arm();
      }, delay);
    };
    read(rearm).then(
      (value) => {
        if (closed || mine !== generation) return;
        if (value === undefined) return arm();
        deliver(value);
        markReady();
      },
      (err: unknown) => {
        if (closed || mine !== generation) return;
        if (isCoordError(err, 'CONNECTION_LOSS', 'OPERATION_TIMEOUT')) return; // the state listener re-arms
        if (isCoordError(err, 'SESSION_EXPIRED')) return end('expired');
        if (isCoordError(err, 'CLOSED')) return end('closed');
        // Nothing mends it by retrying (NO_AUTH, a malformed path): the watch ends, and says why.
        log.warn('coord', `watch on ${path} failed`, err);
        end('failed', err);
      },
    );
  };

  const offState = client.onState((state) => {
    if (state === 'connected') arm();
    else if (state === 'expired') end('expired');
    else if (state === 'closed') end('closed');
  });
  arm();
  return { ready, close: () => void stop() };
}
