/**
 * The client of a tidepool service over HTTPS (seed 002 §3.4): one request starts a batch, one
 * long-polling request awaits it, one cancels it. Authenticated with a bearer token.
 */
import http from 'node:http';
import https from 'node:https';
import type { BatchCosts, BatchExecutor, BatchRun } from './executor.js';
import type { TaskOutcome } from './graph-format.js';
import { unpackOutcomes } from './outcome-chunks.js';
import type { SandboxLimits } from './sandbox-pool.js';
import { CLIENT_COSTS_HEADER } from './batch-cost-event.js';

export interface ConnectOptions {
  token: string;
  /** CA certificate(s) to trust (a self-signed service certificate). */
  ca?: string | Buffer;
  /** How long one await request waits on the service before asking again (ms; default 25 000). */
  pollMs?: number;
}

interface Reply { status: number; body: string; ms: number }

const guarded = new WeakSet<object>();

export class RemoteExecutor implements BatchExecutor {
  private readonly agent: http.Agent;
  /** The packages the service declared it has (name → version). */
  private packages: Record<string, string> = {};

  private constructor(private readonly base: URL, private readonly opts: ConnectOptions) {
    this.agent = base.protocol === 'https:' ? new https.Agent({ keepAlive: true, ca: opts.ca }) : new http.Agent({ keepAlive: true });
  }

  static async open(url: string, opts: ConnectOptions): Promise<RemoteExecutor> {
    const base = new URL(url);
    if (base.protocol !== 'https:' && base.protocol !== 'http:') throw new Error(`${url}: the service URL must be https:// (or http:// for an --insecure loopback service)`);
    const ex = new RemoteExecutor(base, opts);
    const hello = await ex.request('GET', '/v1/health');
    if (hello.status !== 200) throw new Error(`${url}: the service answered ${hello.status}: ${hello.body}`);
    const declared = (JSON.parse(hello.body) as { packages?: unknown }).packages;
    if (typeof declared === 'object' && declared !== null) ex.packages = declared as Record<string, string>;
    return ex;
  }

  hasPackage(name: string, version: string): boolean {
    return Object.prototype.hasOwnProperty.call(this.packages, name) && this.packages[name] === version;
  }

  /** GET and DELETE are idempotent: a connection reset (a keep-alive socket closed under us) is retried. */
  private async request(method: string, path: string, body?: string, headers?: Record<string, string>): Promise<Reply> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once(method, path, body, headers);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        const retryable = method !== 'POST' && (code === 'ECONNRESET' || code === 'EPIPE' || /socket hang up/.test((e as Error).message));
        if (!retryable || attempt >= 3) throw e;
      }
    }
  }

  private once(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<Reply> {
    const mod = this.base.protocol === 'https:' ? https : http;
    const t0 = performance.now();
    return new Promise((resolve, reject) => {
      const req = mod.request(new URL(path, this.base), {
        method, agent: this.agent,
        headers: { authorization: `Bearer ${this.opts.token}`, ...headers, ...(body !== undefined ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {}) },
      }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - t0 }));
        res.on('error', reject);
      });
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

  async start(graphJson: string, taskCount: number, limits?: SandboxLimits, client?: { serializationMs: number }): Promise<BatchRun> {
    const body = `{${limits ? `"limits":${JSON.stringify(limits)},` : ''}"graph":${graphJson}}`;
    const started = await this.request('POST', '/v1/batches', body);
    if (started.status !== 202) throw new Error(`the service refused the batch (${started.status}): ${started.body}`);
    const { batch, serverMs } = JSON.parse(started.body) as { batch: string; serverMs: number };
    let transferMs = started.ms - serverMs;
    let roundTrips = 1;
    let cancelled = false;
    return {
      outcomes: async () => {
        for (;;) {
          if (cancelled) throw new Error(`batch ${batch} was cancelled`);
          // The client's side of the costs so far, for the service's dashboard.
          const costs = JSON.stringify({ serializationMs: client?.serializationMs ?? 0, transferMs: Math.max(0, transferMs) });
          const r = await this.request('GET', `/v1/batches/${batch}?waitMs=${this.opts.pollMs ?? 25_000}&form=chunks`, undefined, { [CLIENT_COSTS_HEADER]: costs });
          roundTrips++;
          if (r.status !== 200) throw new Error(`the service answered ${r.status} for batch ${batch}: ${r.body}`);
          const reply = JSON.parse(r.body) as { state: string; error?: string; chunks?: unknown; costs?: Partial<BatchCosts>; waitedMs?: number };
          transferMs += r.ms - (reply.waitedMs ?? 0);
          if (reply.state === 'running') continue;
          if (reply.state !== 'done') throw new Error(`batch ${batch} ${reply.state}: ${reply.error ?? ''}`);
          const outcomes = outcomesOf(reply.chunks, taskCount, batch);
          return { outcomes, costs: { ...reply.costs, transferMs: Math.max(0, transferMs), roundTrips, requestBytes: body.length, responseBytes: r.body.length } };
        }
      },
      cancel: async () => {
        cancelled = true;
        await this.request('DELETE', `/v1/batches/${batch}`);
      },
    };
  }

  async close(): Promise<void> {
    this.agent.destroy();
  }
}

/** The outcomes of a batch from the compressed chunks of the service's answer, or an error naming what is wrong. */
function outcomesOf(chunks: unknown, taskCount: number, batch: string): TaskOutcome[] {
  if (!Array.isArray(chunks) || !chunks.every((c) => typeof c === 'string')) throw new Error(`batch ${batch}: the service's answer has no outcome chunks`);
  let texts: (string | undefined)[];
  try {
    texts = unpackOutcomes(chunks, taskCount);
  } catch (e) {
    throw new Error(`batch ${batch}: outcome chunks that do not decompress (${(e as Error).message})`);
  }
  return texts.map((text, i) => {
    if (text === undefined) throw new Error(`batch ${batch}: no outcome for task ${i} of ${taskCount}`);
    try {
      return JSON.parse(text) as TaskOutcome;
    } catch {
      throw new Error(`batch ${batch}: the outcome of task ${i} is not JSON`);
    }
  });
}
