/**
 * The service (seed 002 §3.4): HTTPS, tenants with bearer tokens and quotas (service-tenants.ts), and a
 * session per client connection. Its operations: open a session, send blobs (`put`), start a batch —
 * whose answer streams the batch's outcomes as they come (one round trip) —, read the outcome stream
 * again from a position (a broken stream), cancel tasks, report the client's costs, close the session.
 * Requests are MessagePack, compressed as `Content-Encoding` says (wire-format.ts), schema-validated and
 * size-limited. Every batch runs on the service's one long-lived job on its cluster (service-job.ts).
 */
import { SERVICE_KIND } from './service-kind-ref.js';
import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hashOf } from '../../data/content-hash.js';
import type { Cluster } from '../../runtime/client/cluster.js';
import { EventPublisher } from '../../runtime/node/event-source.js';
import type { KindRef } from '../../runtime/job/job-spec.js';
import type { TaskRef } from '../../runtime/worker/task.js';
import { log } from '../../util/log.js';
import { batchCostEvent, clientCosts } from './batch-cost-event.js';
import type { CaptureGraph, PackageSpec } from './graph-format.js';
import type { SandboxLimits } from './sandbox-pool.js';
import { ServiceBatch, type StreamFrame } from './service-batch.js';
import { ServiceJob } from './service-job.js';
import { ServicePackages } from './service-packages.js';
import { ServiceSession } from './service-session.js';
import { ServiceTenants, type Refusal, type Tenant, type TenantSpec } from './service-tenants.js';
import { serviceUrl } from './service-url.js';
import { BodyError, decompress, ENCODINGS, FRAMES, frame, MSGPACK, unpack } from './wire-format.js';
import { fastify } from './service-dependencies.js';
import { NO_METRICS, type Metrics } from '../../runtime/metrics/metrics-registry.js';
import { BATCH_LATENCY } from './batch-histogram.js';

export interface ServiceOptions {
  cluster: Cluster;
  port?: number;
  host?: string;
  /** Certificate and key (PEM); without them the service runs plain HTTP, which must be asked for (`insecure`). */
  tls?: { cert: string | Buffer; key: string | Buffer };
  insecure?: boolean;
  /** One tenant ("default", no quotas) with this token; or `tenants`. */
  token?: string;
  tenants?: TenantSpec[];
  /** Largest request body, compressed or not (bytes; default 64 MiB). */
  maxBodyBytes?: number;
  /** Largest batch (tasks; default 100 000). */
  maxTasks?: number;
  limits?: SandboxLimits;
  /** The task type and job kind as the cluster's nodes load them (default: this installation's modules). */
  taskRef?: TaskRef;
  kindRef?: KindRef;
  /** How long a finished batch stays readable (ms; default 10 min). */
  retainMs?: number;
  /** A session unused this long is closed (ms; default 10 min). */
  sessionIdleMs?: number;
  /** Blobs kept per session (bytes; default 1 GiB). */
  sessionBlobBytes?: number;
  /** The service's job ends after this long without a batch, freeing the cluster's nodes (ms; default 60 s). */
  idleReleaseMs?: number;
  /**
   * Packages the service has (names found in node_modules from its working directory up, or package
   * directories): batches refer to them by name, version and module instead of sending their code.
   */
  packages?: string[];
  /** Where batch latencies are recorded (a `MetricsRegistry`, served with `startMetricsServer`; default: nowhere). */
  metrics?: Metrics;
}

export interface RunningService {
  url: string;
  app: FastifyInstance;
  /** The service's tenants (their counters: batches, tasks, refusals). */
  tenants: ServiceTenants;
  /** The id of the service's job (started if none runs). */
  jobId(): Promise<string>;
  close(): Promise<void>;
}

const HASH = '^[0-9a-f]{64}$';
const graphSchema = {
  type: 'object',
  required: ['codes', 'nodes', 'tasks'],
  additionalProperties: false,
  properties: {
    codes: { type: 'array', items: { type: 'object', required: ['src', 'env', 'form'], properties: { src: { type: 'string' }, env: { type: 'array', items: { type: 'string', pattern: '^[A-Za-z_$][A-Za-z0-9_$]*$' } }, g: { type: 'array', items: { type: 'string', pattern: '^[A-Z][A-Za-z0-9]*$' } }, form: { enum: ['expression', 'method'] }, at: { type: 'string' }, strict: { const: 1 } } } },
    nodes: { type: 'array', items: { type: 'object', required: ['t'], properties: { t: { enum: ['o', 'a', 'ta', 'ab', 'm', 's', 'd', 're', 'f', 'i', 'y', 'pk', 'sh'] }, h: { type: 'string', pattern: HASH } } } },
    packages: {
      type: 'array',
      maxItems: 1000,
      items: {
        type: 'object',
        required: ['name', 'version', 'files'],
        additionalProperties: false,
        properties: {
          name: { type: 'string', maxLength: 214, pattern: '^(@[A-Za-z0-9._~-]+/)?[A-Za-z0-9._~-]+$' },
          version: { type: 'string', maxLength: 256 },
          files: { type: 'array', minItems: 1, maxItems: 10_000, items: { type: 'string', minLength: 1, maxLength: 1024 } },
          code: { type: 'string' },
        },
      },
    },
    tasks: { type: 'array', minItems: 1, items: { type: 'object', required: ['f'], properties: { f: { type: 'integer', minimum: 0 }, a: { type: 'array' }, label: { type: 'string' } } } },
    blobs: { type: 'object', propertyNames: { pattern: HASH }, additionalProperties: { type: 'integer', minimum: 0 } },
  },
} as const;
const limitsSchema = { type: 'object', additionalProperties: false, properties: { timeoutMs: { type: 'integer', minimum: 1 }, memoryMb: { type: 'integer', minimum: 8 } } } as const;
const blobsSchema = { type: 'object', propertyNames: { pattern: HASH } } as const;
const batchSchema = {
  type: 'object',
  required: ['graph'],
  additionalProperties: false,
  properties: { graph: graphSchema, limits: limitsSchema, blobs: blobsSchema, client: { type: 'object', properties: { serializationMs: { type: 'number' } } } },
} as const;
const sessionParams = { type: 'object', properties: { session: { type: 'string', maxLength: 64 } } } as const;
const batchParams = { type: 'object', properties: { session: { type: 'string', maxLength: 64 }, batch: { type: 'string', maxLength: 100 } } } as const;

declare module 'fastify' {
  interface FastifyRequest {
    tenant: Tenant | null;
    decodedBytes: number;
  }
}

export async function startService(opts: ServiceOptions): Promise<RunningService> {
  if (!opts.tls && !opts.insecure) throw new Error('the service needs --tls-cert and --tls-key (or --insecure for loopback development)');
  if (opts.token !== undefined && (opts.token.length < 16)) throw new Error('the service needs a token of at least 16 characters (--token-file)');
  const tenants = new ServiceTenants(opts.tenants ?? (opts.token !== undefined ? [{ name: 'default', token: opts.token }] : []));
  // Each node resolves the service's code in its own installation (runtime/worker/builtin-code.ts).
  const taskRef = opts.taskRef ?? { module: 'builtin:service-task', export: 'default' };
  const kindRef = opts.kindRef ?? SERVICE_KIND;
  const maxBody = opts.maxBodyBytes ?? 64 * 1024 * 1024;
  const maxTasks = opts.maxTasks ?? 100_000;
  const app = fastify()({ https: opts.tls ? { cert: opts.tls.cert, key: opts.tls.key } : null, bodyLimit: maxBody, logger: false }) as unknown as FastifyInstance;
  const packages = ServicePackages.resolve(opts.packages);
  const job = new ServiceJob({ cluster: opts.cluster, taskRef, kindRef, ...(opts.idleReleaseMs !== undefined ? { idleReleaseMs: opts.idleReleaseMs } : {}) });
  const sessions = new Map<string, ServiceSession>();
  const latency = (opts.metrics ?? NO_METRICS).histogram(BATCH_LATENCY);
  const sessionIdleMs = opts.sessionIdleMs ?? 600_000;
  const sweep = setInterval(() => {
    for (const [id, s] of sessions) {
      if (Date.now() - s.lastUsed < sessionIdleMs || [...s.batches.values()].some((b) => b.state === 'running')) continue;
      sessions.delete(id);
      void s.close();
      log.info('service', `session ${id} of tenant ${s.tenant.name} closed after ${sessionIdleMs} ms unused`);
    }
  }, Math.min(60_000, sessionIdleMs)).unref();

  app.decorateRequest('tenant', null);
  app.decorateRequest('decodedBytes', 0);
  app.addHook('onRequest', async (req, reply) => {
    req.tenant = tenants.authenticate(req.headers.authorization) ?? null;
    if (!req.tenant) return reply.code(401).send({ error: 'missing or wrong token (Authorization: Bearer …)' });
  });
  app.addContentTypeParser(MSGPACK, { parseAs: 'buffer' }, (req, body, done) => {
    try {
      const raw = decompress(body as Buffer, req.headers['content-encoding'] as string | undefined, maxBody);
      req.decodedBytes = raw.length;
      done(null, unpack(raw));
    } catch (e) {
      const status = e instanceof BodyError ? e.status : 400;
      done(Object.assign(new Error(e instanceof BodyError ? e.message : `the body is not MessagePack: ${(e as Error).message}`), { statusCode: status }), undefined);
    }
  });
  app.setErrorHandler((err: { statusCode?: number; message: string }, _req, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 500) log.warn('service', 'a request failed', err);
    void reply.code(status).send({ error: err.message });
  });

  const refuse = (reply: FastifyReply, tenant: Tenant, r: Refusal) => {
    log.info('service', `tenant ${tenant.name}: refused`, { tenant: tenant.name, reason: r.reason });
    if (r.retryAfterS !== undefined) void reply.header('retry-after', String(r.retryAfterS));
    return reply.code(r.status).send({ error: r.reason });
  };
  const sessionOf = (req: FastifyRequest, reply: FastifyReply): ServiceSession | undefined => {
    const s = sessions.get((req.params as { session: string }).session);
    if (!s || s.tenant !== req.tenant) {
      void reply.code(404).send({ error: 'no such session (it may have been closed after being unused; open a new one)' });
      return undefined;
    }
    s.lastUsed = Date.now();
    return s;
  };
  /** Checks blobs sent against their hashes and keeps them in the session. */
  const keepBlobs = (session: ServiceSession, blobs: Record<string, unknown> | undefined, keep: ReadonlySet<string>): string | undefined => {
    for (const [hash, bytes] of Object.entries(blobs ?? {})) {
      if (!(bytes instanceof Uint8Array)) return `blob ${hash.slice(0, 12)} is not binary`;
      if (hashOf(bytes) !== hash) return `blob ${hash.slice(0, 12)}: its bytes do not have that SHA-256`;
      session.putBlob(hash, bytes, keep);
    }
    return undefined;
  };

  /** Batches and blobs travel as MessagePack only (binary blobs; JSON would need base64). */
  const msgpackOnly = async (req: FastifyRequest, reply: FastifyReply) => {
    if (!String(req.headers['content-type'] ?? '').startsWith(MSGPACK)) return reply.code(415).send({ error: `send ${MSGPACK} (see docs/service.md, "Protocol")` });
  };

  app.get('/v1/health', async () => ({ ok: true, packages: packages.declared(), encodings: ENCODINGS }));

  app.post('/v1/sessions', async (req, reply) => {
    const tenant = req.tenant!;
    const id = randomBytes(8).toString('hex');
    sessions.set(id, new ServiceSession(id, tenant, opts.sessionBlobBytes ?? 1024 ** 3));
    log.info('service', `tenant ${tenant.name}: session ${id} opened`, { tenant: tenant.name });
    return reply.code(201).send({ session: id });
  });

  app.delete('/v1/sessions/:session', { schema: { params: sessionParams } }, async (req, reply) => {
    const session = sessionOf(req, reply);
    if (!session) return reply;
    sessions.delete(session.id);
    await session.close();
    return reply.send({ closed: true });
  });

  app.post('/v1/sessions/:session/blobs', { preValidation: msgpackOnly, schema: { params: sessionParams, body: { type: 'object', required: ['blobs'], additionalProperties: false, properties: { blobs: blobsSchema } } } }, async (req, reply) => {
    const session = sessionOf(req, reply);
    if (!session) return reply;
    const over = session.tenant.refuseBytes(req.decodedBytes);
    if (over) return refuse(reply, session.tenant, over);
    const blobs = (req.body as { blobs: Record<string, unknown> }).blobs;
    const bad = keepBlobs(session, blobs, new Set(Object.keys(blobs)));
    if (bad) return reply.code(400).send({ error: bad });
    return reply.send({ stored: Object.keys(blobs).length });
  });

  app.post('/v1/sessions/:session/batches', { preValidation: msgpackOnly, schema: { params: sessionParams, body: batchSchema } }, async (req, reply) => {
    const t0 = performance.now();
    const session = sessionOf(req, reply);
    if (!session) return reply;
    const tenant = session.tenant;
    const body = req.body as { graph: CaptureGraph & { packages?: PackageSpec[] }; limits?: SandboxLimits; blobs?: Record<string, unknown>; client?: { serializationMs?: number } };
    const { graph } = body;
    if (graph.tasks.length > maxTasks) return reply.code(413).send({ error: `a batch of ${graph.tasks.length} tasks exceeds the maximum of ${maxTasks}` });
    const bad = graph.tasks.findIndex((t) => t.f >= graph.nodes.length);
    if (bad >= 0) return reply.code(400).send({ error: `tasks[${bad}].f refers to no node` });
    const over = tenant.refuseBytes(req.decodedBytes) ?? tenant.refuseBatch(graph.tasks.length);
    if (over) return refuse(reply, tenant, over);
    const named = new Set(Object.keys(graph.blobs ?? {}));
    const badBlob = keepBlobs(session, body.blobs, named);
    if (badBlob) return reply.code(400).send({ error: badBlob });
    const missing = [...named].filter((h) => !session.hasBlob(h));
    if (missing.length > 0) return reply.code(409).send({ error: `the service does not hold ${missing.length} blob(s) the batch names: send them`, missing });
    try {
      for (const spec of graph.packages ?? []) await packages.supply(spec);
    } catch (e) {
      return reply.code(400).send({ error: (e as Error).message });
    }
    // A client may ask for tighter limits than the service's, never for looser ones.
    const limits = { ...opts.limits, timeoutMs: Math.min(body.limits?.timeoutMs ?? Infinity, opts.limits?.timeoutMs ?? 60_000), memoryMb: Math.min(body.limits?.memoryMb ?? Infinity, opts.limits?.memoryMb ?? 128) };
    const id = session.nextBatchId();
    const serialization = typeof body.client?.serializationMs === 'number' ? body.client.serializationMs : undefined;
    let jobIdOf = '';
    const batch = new ServiceBatch(id, graph.tasks.length, (b) => {
      tenant.running--;
      latency.observe((performance.now() - t0) / 1000, { state: b.state === 'done' && b.cancelledAll ? 'cancelled' : b.state });
      log.info('service', `tenant ${tenant.name}: batch ${b.id} ${b.state}`, { tenant: tenant.name, tasks: b.tasks, cpuMs: Math.round(b.cpuMs), executionMs: Math.round(b.costs.executionMs) });
      setTimeout(() => session.batches.delete(b.id), opts.retainMs ?? 600_000).unref();
      source.put('batches', batchCostEvent(b.id, jobIdOf, b.doneAt, b.costs, serialization === undefined ? undefined : { serializationMs: serialization, transferMs: 0 }));
    });
    tenant.running++;
    tenant.counts.batches++;
    tenant.counts.tasks += graph.tasks.length;
    session.batches.set(id, batch);
    const blobs = new Map([...named].map((h) => [h, session.blob(h)!]));
    try {
      const posted = await job.post(graph, blobs, limits, {
        onChunks: (chunks) => tenant.recordCpu(batch.onChunks(chunks)),
        onFailure: (e) => batch.fail(e),
      });
      jobIdOf = await job.jobId();
      batch.posted(posted, performance.now() - t0);
    } catch (e) {
      batch.fail(e as Error);
      return reply.code(503).send({ error: `the service could not start the batch: ${(e as Error).message}` });
    }
    log.info('service', `tenant ${tenant.name}: batch ${id} started`, { tenant: tenant.name, tasks: graph.tasks.length, bytes: req.decodedBytes });
    const out = new PassThrough();
    out.write(frame({ batch: id, tasks: graph.tasks.length, serverMs: performance.now() - t0 } satisfies StreamFrame));
    batch.stream(out);
    return reply.code(202).type(FRAMES).send(out);
  });

  app.get('/v1/sessions/:session/batches/:batch/outcomes', { schema: { params: batchParams, querystring: { type: 'object', additionalProperties: false, properties: { from: { type: 'integer', minimum: 0 } } } } }, async (req, reply) => {
    const session = sessionOf(req, reply);
    if (!session) return reply;
    const batch = session.batches.get((req.params as { batch: string }).batch);
    if (!batch) return reply.code(404).send({ error: 'no such batch' });
    const out = new PassThrough();
    batch.stream(out, (req.query as { from?: number }).from ?? 0);
    return reply.type(FRAMES).send(out);
  });

  app.post('/v1/sessions/:session/batches/:batch/cancel', { schema: { params: batchParams, body: { type: 'object', additionalProperties: false, properties: { indexes: { type: 'array', items: { type: 'integer', minimum: 0 }, maxItems: 1_000_000 } } } } }, async (req, reply) => {
    const session = sessionOf(req, reply);
    if (!session) return reply;
    const batch = session.batches.get((req.params as { batch: string }).batch);
    if (!batch) return reply.code(404).send({ error: 'no such batch' });
    const indexes = (req.body as { indexes?: number[] } | undefined)?.indexes;
    return reply.send({ cancelled: await batch.cancel(indexes ?? 'all') });
  });

  app.post('/v1/sessions/:session/batches/:batch/costs', { schema: { params: batchParams } }, async (req, reply) => {
    const session = sessionOf(req, reply);
    if (!session) return reply;
    const batch = session.batches.get((req.params as { batch: string }).batch);
    const client = clientCosts(req.body);
    if (!batch || !client) return reply.code(batch ? 400 : 404).send({ error: batch ? 'expected {serializationMs, transferMs}' : 'no such batch' });
    source.put('batches', batchCostEvent(batch.id, await job.jobId().catch(() => ''), batch.doneAt || Date.now(), batch.costs, client));
    return reply.send({ ok: true });
  });

  const address = await app.listen({ port: opts.port ?? 7480, host: opts.host ?? '127.0.0.1' });
  const port = Number(new URL(address).port);
  // The recent batches' costs, for the dashboard of the cluster (named by the port, known once listening; set
  // before any request is handled: this continues right after listening, before the next I/O).
  const source = new EventPublisher(opts.cluster.coordination, `service.${port}`);
  source.start();
  const url = serviceUrl(opts.host ?? '127.0.0.1', port, opts.tls?.cert);
  return {
    url, app, tenants,
    jobId: () => job.jobId(),
    close: async () => {
      clearInterval(sweep);
      for (const s of sessions.values()) await s.close();
      await app.close();
      await job.close();
      await source.stop();
    },
  };
}
