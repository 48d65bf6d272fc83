import { randomUUID } from 'node:crypto';
import { log } from '../../util/log.js';
import { isCoordError, isRetryable } from '../errors.js';
import { joinPath, sequenceOf } from '../paths.js';
import { catchUp, mkdirp, reconnected } from '../tree-ops.js';
import type { CoordClient } from '../types.js';
import { watchChildren, watchData, type WatchEndReason, type WatchHandle } from '../watch.js';
import { emptyStats, type RecipeStats } from './recipe-stats.js';

/** Largest request or acknowledgement, encoded (JSON). */
export const CONTROL_MESSAGE_LIMIT = 64 * 1024;

/** What a serving handler gets. `seq` is the request's place in the channel's order. */
export interface ControlRequest {
  name: string;
  seq: number;
  type: string;
  body: unknown;
  from: string;
  at: number;
  /**
   * Runs `action` once this request's acknowledgement is written (in registration order), e.g. to end
   * the job the request stopped: its requester then sees the acknowledgement before the job's end.
   * Not run when the server stops without acknowledging (the next server serves the request again);
   * registered after the acknowledgement (by work the handler left running), it runs at once.
   */
  afterAck(action: () => unknown): void;
}

export type ControlAck = { ok: true; result: unknown; at: number } | { ok: false; error: string; at: number };

export interface RequestOptions {
  /** Reject when not acknowledged within this time (default 30 s). The request stays queued. */
  timeoutMs?: number;
  /** Who asks (stored in the request; default "client"). */
  from?: string;
  /**
   * Stop waiting when aborted (e.g. the job ended: nobody will acknowledge any more). An
   * acknowledgement already written still wins; otherwise the promise rejects with the signal's reason.
   */
  signal?: AbortSignal;
}

export interface ControlServer {
  /** Stops taking requests; resolves once the one in progress (if any) is acknowledged. */
  stop(): Promise<void>;
  /** Resolves when serving ends: stopped, or the session expired or closed. */
  readonly ended: Promise<'stopped' | WatchEndReason>;
}

/**
 * A request/acknowledge channel in the coordination service (e.g. one per job, for an operator or a
 * resource manager to ask a running job for something and know when it is done).
 *
 * - `requests/req-<seq>`: persistent sequential, JSON `{type, body, from, at, id}`; the sequence
 *   number is the order in which requests are served.
 * - `acks/req-<seq>`: JSON `{ok, result | error, at}`, created once by the server.
 *
 * The server takes requests strictly in sequence order, one at a time, and skips those already
 * acknowledged, so a new server after a failover resumes at the first unacknowledged request. A
 * server that dies between acting on a request and acknowledging it leaves it unacknowledged: the
 * next server runs it again, so handlers should be idempotent. Malformed requests are acknowledged
 * with an error naming the problem. The client watches its ack (never polls) and, once it has it,
 * deletes the request and the ack together.
 */
export class ControlChannel {
  readonly stats: RecipeStats = emptyStats();
  readonly requests: string;
  readonly acks: string;

  constructor(private readonly client: CoordClient, readonly path: string) {
    this.requests = joinPath(path, 'requests');
    this.acks = joinPath(path, 'acks');
  }

  /** Asks the serving side; resolves with its result, rejects with its error, on timeout, or when the session ends. */
  async request(type: string, body: unknown, opts: RequestOptions = {}): Promise<unknown> {
    if (typeof type !== 'string' || type === '') throw new Error('a control request needs a non-empty string type');
    const id = randomUUID();
    const data = encodeLimited({ type, body, from: opts.from ?? 'client', at: Date.now(), id }, 'control request');
    await Promise.all([mkdirp(this.client, this.requests), mkdirp(this.client, this.acks)]);
    const name = await this.createOnce(data, id);
    const timeoutMs = opts.timeoutMs ?? 30_000;
    const ackPath = joinPath(this.acks, name);
    const ack = await new Promise<ControlAck>((resolve, reject) => {
      const settle = (outcome: () => ControlAck | Error) => {
        clearTimeout(timer);
        handle.close();
        opts.signal?.removeEventListener('abort', onAbort);
        let value: ControlAck | Error;
        try {
          value = outcome();
        } catch (err) {
          value = err as Error;
        }
        if (value instanceof Error) reject(value);
        else resolve(value);
      };
      const timer = setTimeout(() => settle(() => new Error(`control request ${name} (${type}) was not acknowledged within ${timeoutMs} ms; it stays queued`)), timeoutMs);
      const handle: WatchHandle = watchData(this.client, ackPath, (d) => {
        if (!d) return;
        this.stats.reads++;
        settle(() => parseAck(d.data));
      }, {
        onEnd: (reason, err) => settle(() => new Error(reason === 'failed'
          ? `control request ${name} (${type}): its acknowledgement cannot be read: ${err instanceof Error ? err.message : String(err)}`
          : `control request ${name} (${type}): the coordination session ${reason === 'expired' ? 'expired' : 'was closed'} before it was acknowledged`)),
      });
      // Aborted: an acknowledgement written meanwhile (by the server's session, so possibly not on this
      // session's server yet: catch up first) still counts; without one the caller stops waiting.
      const onAbort = () => {
        void catchUp(this.client, this.acks).then(() => this.client.getData(ackPath)).then(
          (d) => settle(() => parseAck(d.data)),
          () => settle(() => (opts.signal!.reason instanceof Error ? opts.signal!.reason : new Error(`control request ${name} (${type}) was abandoned`))),
        );
      };
      if (opts.signal?.aborted) onAbort();
      else opts.signal?.addEventListener('abort', onAbort, { once: true });
    });
    await this.client.multi([{ op: 'delete', path: joinPath(this.acks, name) }, { op: 'delete', path: joinPath(this.requests, name) }]).catch((err: unknown) => {
      log.debug('coord', `could not remove control request ${name}`, err); // left for whoever removes the channel
    });
    if (!ack.ok) throw new Error(ack.error);
    return ack.result;
  }

  /** Creates the request once, also across connection losses (the id finds a create whose reply was lost). */
  private async createOnce(data: Buffer, id: string): Promise<string> {
    for (;;) {
      try {
        this.stats.writes++;
        return basenameOf(await this.client.create(joinPath(this.requests, 'req-'), data, 'persistent_sequential'));
      } catch (err) {
        if (!isRetryable(err)) throw err;
        this.stats.retries++;
        await reconnected(this.client);
        const mine = await this.findRequest(id);
        if (mine) return mine;
      }
    }
  }

  private async findRequest(id: string): Promise<string | undefined> {
    for (const name of await this.client.getChildren(this.requests)) {
      try {
        if ((JSON.parse((await this.client.getData(joinPath(this.requests, name))).data.toString('utf8')) as { id?: unknown }).id === id) return name;
      } catch {
        // vanished or not ours to parse: not the one
      }
    }
    return undefined;
  }

  /** Serves requests in sequence order with `handler`, one at a time, until stopped or the session ends. */
  serve(handler: (req: ControlRequest) => unknown): ControlServer {
    let stopped = false;
    let wake: (() => void) | undefined;
    let pending = true; // the children changed since the last scan
    let finish!: (reason: 'stopped' | WatchEndReason) => void;
    const ended = new Promise<'stopped' | WatchEndReason>((resolve) => (finish = resolve));
    const done = new Set<string>();
    let watch: WatchHandle | undefined;
    const end = (reason: 'stopped' | WatchEndReason) => {
      stopped = true;
      watch?.close();
      wake?.();
      finish(reason);
    };

    const loop = (async () => {
      await Promise.all([mkdirp(this.client, this.requests), mkdirp(this.client, this.acks)]);
      watch = watchChildren(this.client, this.requests, () => {
        pending = true;
        wake?.();
      }, { onEnd: end });
      for (const name of await this.client.getChildren(this.acks)) done.add(name);
      while (!stopped) {
        if (!pending) await new Promise<void>((resolve) => (wake = resolve));
        pending = false;
        try {
          const names = (await this.client.getChildren(this.requests)).filter((n) => !done.has(n) && Number.isFinite(sequenceOf(n)));
          this.stats.reads++;
          for (const name of names.sort((a, b) => sequenceOf(a) - sequenceOf(b))) {
            if (stopped) break;
            await this.serveOne(name, handler, () => stopped);
            done.add(name);
          }
        } catch (err) {
          if (!isRetryable(err)) throw err;
          // A connection loss: scan again once connected (an unacknowledged request is served again).
          this.stats.retries++;
          await reconnected(this.client);
          pending = true;
        }
      }
    })().catch((err: unknown) => {
      if (isCoordError(err, 'SESSION_EXPIRED')) return end('expired');
      if (isCoordError(err, 'CLOSED')) return end('closed');
      log.error('coord', `control channel ${this.path} stopped serving`, err);
      end('closed');
    });

    return {
      ended,
      stop: async () => {
        if (!stopped) end('stopped');
        await loop;
      },
    };
  }

  private async serveOne(name: string, handler: (req: ControlRequest) => unknown, stopped: () => boolean): Promise<void> {
    let raw: Buffer;
    try {
      this.stats.reads++;
      raw = (await this.client.getData(joinPath(this.requests, name))).data;
    } catch (err) {
      if (isCoordError(err, 'NO_NODE')) return; // withdrawn (acknowledged and removed by its client)
      throw err;
    }
    let ack: ControlAck;
    const parsed = parseRequest(name, raw);
    const afterAck: Array<() => unknown> = [];
    let acknowledged = false;
    if (typeof parsed === 'string') {
      ack = { ok: false, error: `malformed control request ${name}: ${parsed}`, at: Date.now() };
    } else {
      const req: ControlRequest = {
        ...parsed,
        afterAck: (action) => (acknowledged ? void runAfterAck(name, action) : void afterAck.push(action)),
      };
      try {
        ack = { ok: true, result: await handler(req), at: Date.now() };
      } catch (err) {
        // A handler that gave up because its server was stopped (a leader that lost its role) leaves the
        // request unacknowledged: the next server serves it, as after a crash.
        if (stopped()) return;
        ack = { ok: false, error: err instanceof Error ? err.message : String(err), at: Date.now() };
      }
    }
    let data: Buffer;
    try {
      data = encodeLimited(ack, `result of control request ${name}`);
    } catch (err) {
      data = encodeLimited({ ok: false, error: (err as Error).message, at: Date.now() }, 'control ack');
    }
    await this.writeAck(name, data);
    acknowledged = true;
    for (const action of afterAck) await runAfterAck(name, action);
  }

  private async writeAck(name: string, data: Buffer): Promise<void> {
    for (;;) {
      try {
        this.stats.writes++;
        await this.client.create(joinPath(this.acks, name), data);
        return;
      } catch (err) {
        if (isCoordError(err, 'NODE_EXISTS')) return; // ours (a lost reply) or a second server's
        if (!isRetryable(err)) throw err;
        this.stats.retries++;
        await reconnected(this.client);
      }
    }
  }
}

async function runAfterAck(name: string, action: () => unknown): Promise<void> {
  try {
    await action();
  } catch (err) {
    log.error('coord', `an action after acknowledging control request ${name} failed`, err);
  }
}

function basenameOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** JSON of at most CONTROL_MESSAGE_LIMIT bytes, or an error naming what is wrong. */
function encodeLimited(value: unknown, what: string): Buffer {
  let text: string;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw new Error(`${what} is not JSON-serializable: ${(err as Error).message}`);
  }
  const data = Buffer.from(text, 'utf8');
  if (data.length > CONTROL_MESSAGE_LIMIT) throw new Error(`${what} is ${data.length} bytes, over the ${CONTROL_MESSAGE_LIMIT}-byte limit`);
  return data;
}

/** A request as the handler sees it (without `afterAck`), or what is wrong with it. */
function parseRequest(name: string, raw: Buffer): Omit<ControlRequest, 'afterAck'> | string {
  if (raw.length > CONTROL_MESSAGE_LIMIT) return `${raw.length} bytes, over the ${CONTROL_MESSAGE_LIMIT}-byte limit`;
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch {
    return 'not JSON';
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'not a JSON object';
  const r = value as Record<string, unknown>;
  if (typeof r.type !== 'string' || r.type === '') return 'no "type" string';
  return { name, seq: sequenceOf(name), type: r.type, body: r.body, from: typeof r.from === 'string' ? r.from : '', at: typeof r.at === 'number' ? r.at : 0 };
}

function parseAck(raw: Buffer): ControlAck {
  const value = JSON.parse(raw.toString('utf8')) as Partial<ControlAck> & { error?: unknown };
  if (value.ok === true) return { ok: true, result: (value as { result?: unknown }).result, at: value.at ?? 0 };
  return { ok: false, error: typeof value.error === 'string' ? value.error : 'the job acknowledged the request with an error', at: value.at ?? 0 };
}
