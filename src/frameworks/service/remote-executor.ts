/**
 * The client of a tidepool service over HTTPS (seed 002 §3.4), one session per connection: a batch
 * goes in one request whose answer streams its outcomes as they come (service-server.ts). The blobs a
 * batch names travel with it only when the service does not hold them yet for this session (the
 * capture cache's other side); a 409 naming blobs the service dropped sends them again. Bodies are
 * MessagePack, compressed with the best encoding the service announced (wire-format.ts).
 */
import http from 'node:http';
import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { Arrival, BatchCosts, BatchExecutor, BatchRun, EncodedBatch, TransferStats } from './executor.js';
import type { TaskOutcome } from './graph-format.js';
import { unpackChunk } from './outcome-chunks.js';
import { OutcomeQueue } from './outcome-queue.js';
import type { SandboxLimits } from './sandbox-pool.js';
import type { StreamFrame } from './service-batch.js';
import { connectionError, ServiceConnectionError } from './tls-errors.js';
import { chooseEncoding, compress, ENCODINGS, FrameReader, MSGPACK, pack, type ContentEncoding } from './wire-format.js';

export interface ConnectOptions {
  token: string;
  /** CA certificate(s) to trust (a self-signed service certificate). */
  ca?: string | Buffer;
}

interface Reply { status: number; body: Buffer; ms: number }

const guarded = new WeakSet<object>();
/** A broken outcome stream is read again from where it broke, this many times. */
const STREAM_RETRIES = 3;

export class RemoteExecutor implements BatchExecutor {
  readonly transfers: TransferStats = { blobHits: 0, blobMisses: 0, uploadedBytes: 0 };
  private readonly agent: http.Agent;
  /** The packages the service declared it has (name → version). */
  private packages: Record<string, string> = {};
  private encoding: ContentEncoding = 'identity';
  private session = '';
  /** Blobs the service holds for this session (as far as this client knows). */
  private readonly held = new Set<string>();

  private constructor(private readonly base: URL, private readonly opts: ConnectOptions) {
    this.agent = base.protocol === 'https:' ? new https.Agent({ keepAlive: true, ca: opts.ca }) : new http.Agent({ keepAlive: true });
  }

  static async open(url: string, opts: ConnectOptions): Promise<RemoteExecutor> {
    let base: URL;
    try {
      base = new URL(url);
    } catch {
      throw new ServiceConnectionError(`${url}: not a URL (expected https://host:port)`);
    }
    if (base.protocol !== 'https:' && base.protocol !== 'http:') throw new ServiceConnectionError(`${url}: the service URL must be https:// (or http:// for an --insecure loopback service)`);
    const ex = new RemoteExecutor(base, opts);
    const hello = await ex.request('GET', '/v1/health');
    if (hello.status !== 200) throw new ServiceConnectionError(`${base.origin}: the service answered ${hello.status}: ${hello.body.toString('utf8')}`);
    const { packages, encodings } = JSON.parse(hello.body.toString('utf8')) as { packages?: unknown; encodings?: unknown };
    if (typeof packages === 'object' && packages !== null) ex.packages = packages as Record<string, string>;
    ex.encoding = ENCODINGS.find((e) => Array.isArray(encodings) && encodings.includes(e)) ?? 'identity';
    const opened = await ex.request('POST', '/v1/sessions');
    if (opened.status !== 201) throw new ServiceConnectionError(`${base.origin}: could not open a session (${opened.status}): ${opened.body.toString('utf8')}`);
    ex.session = (JSON.parse(opened.body.toString('utf8')) as { session: string }).session;
    return ex;
  }

  hasPackage(name: string, version: string): boolean {
    return Object.prototype.hasOwnProperty.call(this.packages, name) && this.packages[name] === version;
  }

  /** A MessagePack body, compressed when that pays. */
  private body(value: unknown): { bytes: Buffer; headers: Record<string, string> } {
    const raw = pack(value);
    const encoding = chooseEncoding(raw, this.encoding);
    return { bytes: compress(raw, encoding), headers: { 'content-type': MSGPACK, ...(encoding !== 'identity' ? { 'content-encoding': encoding } : {}) } };
  }

  /** GET and DELETE are idempotent: a connection reset (a keep-alive socket closed under us) is retried. */
  private async request(method: string, path: string, body?: Buffer, headers?: Record<string, string>): Promise<Reply> {
    for (let attempt = 1; ; attempt++) {
      try {
        const res = await this.open(method, path, body, headers);
        const t0 = performance.now();
        const chunks: Buffer[] = [];
        for await (const c of res) chunks.push(c as Buffer);
        return { status: res.statusCode ?? 0, body: Buffer.concat(chunks), ms: performance.now() - t0 };
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        const retryable = method !== 'POST' && (code === 'ECONNRESET' || code === 'EPIPE' || /socket hang up/.test((e as Error).message));
        if (!retryable || attempt >= 3) throw await connectionError(this.base, e);
      }
    }
  }

  /** Sends a request and resolves with the response once its headers are in (its body still to read). */
  private open(method: string, path: string, body?: Buffer, headers: Record<string, string> = {}): Promise<IncomingMessage> {
    const mod = this.base.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const req = mod.request(new URL(path, this.base), {
        method, agent: this.agent,
        headers: { authorization: `Bearer ${this.opts.token}`, ...headers, ...(body !== undefined ? { 'content-length': body.length } : {}) },
      }, resolve);
      req.on('error', reject);
      // The request's 'error' reports a socket failure; this listener only keeps it from also being uncaught.
      req.on('socket', (socket) => {
        if (guarded.has(socket)) return; // keep-alive sockets serve many requests: one listener each
        guarded.add(socket);
        socket.on('error', () => undefined);
      });
      req.end(body);
    });
  }

  private sessionPath(rest = ''): string {
    return `/v1/sessions/${this.session}${rest}`;
  }

  async upload(blobs: ReadonlyMap<string, Uint8Array>): Promise<void> {
    const send = [...blobs].filter(([h]) => !this.held.has(h));
    this.transfers.blobHits += blobs.size - send.length;
    if (send.length === 0) return;
    const { bytes, headers } = this.body({ blobs: Object.fromEntries(send) });
    const r = await this.request('POST', this.sessionPath('/blobs'), bytes, headers);
    if (r.status !== 200) throw new Error(`the service refused the upload (${r.status}): ${r.body.toString('utf8')}`);
    for (const [h, b] of send) {
      this.held.add(h);
      this.transfers.blobMisses++;
      this.transfers.uploadedBytes += b.length;
    }
  }

  async start(batch: EncodedBatch, limits?: SandboxLimits, client?: { serializationMs: number }): Promise<BatchRun> {
    const named = Object.keys(batch.graph.blobs ?? {});
    let send = named.filter((h) => !this.held.has(h));
    const t0 = performance.now();
    let res: IncomingMessage;
    let requestBytes = 0;
    for (let attempt = 1; ; attempt++) {
      const { bytes, headers } = this.body({
        graph: batch.graph, ...(limits ? { limits } : {}), ...(client ? { client } : {}),
        ...(send.length > 0 ? { blobs: Object.fromEntries(send.map((h) => [h, batch.blobs.get(h)!])) } : {}),
      });
      requestBytes = bytes.length;
      try {
        res = await this.open('POST', this.sessionPath('/batches'), bytes, headers);
      } catch (e) {
        throw await connectionError(this.base, e);
      }
      if (res.statusCode === 202) break;
      const body = await readAll(res);
      const answer = parseJson(body) as { error?: string; missing?: string[] };
      // The service dropped blobs it held for this session (its budget): send them again, once.
      if (res.statusCode === 409 && Array.isArray(answer.missing) && attempt === 1) {
        for (const h of answer.missing) this.held.delete(h);
        send = named.filter((h) => !this.held.has(h));
        continue;
      }
      throw new Error(`the service refused the batch (${res.statusCode}): ${answer.error ?? body.toString('utf8')}`);
    }
    for (const h of send) {
      this.held.add(h);
      this.transfers.uploadedBytes += batch.blobs.get(h)!.length;
    }
    this.transfers.blobMisses += send.length;
    this.transfers.blobHits += named.length - send.length;
    return this.follow(res, batch.graph.tasks.length, t0, requestBytes);
  }

  /** Reads a batch's outcome stream (again from where it broke, if it breaks) into arrivals. */
  private async follow(first: IncomingMessage, tasks: number, t0: number, requestBytes: number): Promise<BatchRun> {
    const arrivals = new OutcomeQueue<Arrival[]>();
    const costs: Partial<BatchCosts> = { requestBytes, responseBytes: 0, roundTrips: 1, transferMs: 0 };
    let chunksSeen = 0;
    let batchId = '';
    let ended = false;
    const read = async (res: IncomingMessage, onHead?: (f: { batch: string; tasks: number; serverMs?: number }) => void) => {
      const reader = new FrameReader<StreamFrame>();
      for await (const piece of res) {
        costs.responseBytes! += (piece as Buffer).length;
        for (const f of reader.push(piece as Buffer)) {
          if ('batch' in f) onHead?.(f);
          else if ('c' in f) {
            chunksSeen += f.c.length;
            arrivals.push(f.c.flatMap((c) => unpackChunk(c.z, tasks).map(([i, text]): Arrival => [i, JSON.parse(text) as TaskOutcome])));
          } else {
            ended = true;
            Object.assign(costs, f.costs, { requestBytes, responseBytes: costs.responseBytes, roundTrips: costs.roundTrips, transferMs: costs.transferMs });
            if (f.end === 'failed') arrivals.fail(new Error(`batch ${batchId} failed: ${f.error ?? 'unknown reason'}`));
            else arrivals.end();
          }
        }
      }
    };
    const head = new Promise<void>((resolve, reject) => {
      void (async () => {
        let res = first;
        for (let attempt = 0; ; attempt++) {
          try {
            await read(res, (f) => {
              batchId = f.batch;
              costs.transferMs = Math.max(0, performance.now() - t0 - (f.serverMs ?? 0));
              resolve();
            });
            if (ended) return;
            throw new Error('the outcome stream ended early');
          } catch (e) {
            if (!batchId) return reject(await connectionError(this.base, e));
            if (attempt >= STREAM_RETRIES) return arrivals.fail(new Error(`batch ${batchId}: its outcome stream broke ${attempt + 1} times (${(e as Error).message})`));
          }
          try {
            res = await this.open('GET', this.sessionPath(`/batches/${batchId}/outcomes?from=${chunksSeen}`));
            costs.roundTrips!++;
            if (res.statusCode !== 200) {
              const body = await readAll(res);
              return arrivals.fail(new Error(`batch ${batchId}: the service answered ${res.statusCode} for its outcomes: ${body.toString('utf8')}`));
            }
          } catch (e) {
            return arrivals.fail(await connectionError(this.base, e));
          }
        }
      })();
    });
    await head;
    return {
      arrivals,
      cancel: async (indexes) => {
        const r = await this.request('POST', this.sessionPath(`/batches/${batchId}/cancel`), Buffer.from(JSON.stringify({ indexes })), { 'content-type': 'application/json' });
        if (r.status !== 200 && r.status !== 404) throw new Error(`the service refused to cancel tasks of batch ${batchId} (${r.status}): ${r.body.toString('utf8')}`);
      },
      costs: () => costs,
      // The client's side of the costs, for the service's dashboard (not awaited).
      report: (c) => {
        void this.request('POST', this.sessionPath(`/batches/${batchId}/costs`), Buffer.from(JSON.stringify(c)), { 'content-type': 'application/json' }).catch(() => undefined);
      },
    };
  }

  async close(): Promise<void> {
    if (this.session) await this.request('DELETE', this.sessionPath()).catch(() => undefined);
    this.agent.destroy();
  }
}

async function readAll(res: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return {};
  }
}
