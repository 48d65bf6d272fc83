/**
 * The service (seed 002 §3.4): HTTPS with a bearer token, three operations — start a batch, await it
 * (long poll), cancel it — with schema-validated requests and size limits. A batch becomes a job of
 * the service-batch task type on the service's tidepool cluster.
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Cluster, JobHandle } from '../../runtime/cluster.js';
import type { TaskRef } from '../../runtime/task.js';
import type { BatchCosts } from './executor.js';
import type { SandboxLimits } from './sandbox-pool.js';
import { unpackOutcomes, type OutcomeChunk } from './outcome-chunks.js';
import { EventPublisher } from '../../runtime/event-source.js';
import { batchCostEvent, CLIENT_COSTS_HEADER, clientCosts, type ClientCosts } from './batch-cost-event.js';
import { ServicePackages } from './service-packages.js';
import { fastify } from './service-dependencies.js';
import type { PackageSpec } from './graph-format.js';
import { NO_METRICS, type Metrics } from '../../runtime/metrics/metrics-registry.js';
import { BATCH_LATENCY } from './batch-histogram.js';

export interface ServiceOptions {
  cluster: Cluster;
  port?: number;
  host?: string;
  /** Certificate and key (PEM); without them the service runs plain HTTP, which must be asked for (`insecure`). */
  tls?: { cert: string | Buffer; key: string | Buffer };
  insecure?: boolean;
  token: string;
  /** Largest request body (bytes; default 64 MiB). */
  maxBodyBytes?: number;
  /** Largest batch (tasks; default 100 000). */
  maxTasks?: number;
  limits?: SandboxLimits;
  /** The service-batch task type as the cluster's nodes load it (default: this installation's module). */
  taskRef?: TaskRef;
  /** How long a finished batch is kept for its await (ms; default 10 min). */
  retainMs?: number;
  /**
   * Packages the service has (names found in node_modules from its working directory up, or package
   * directories): batches refer to them by name, version and module instead of sending their code.
   */
  packages?: string[];
  /** Where batch latencies are recorded (a `MetricsRegistry`, served with `startMetricsServer`; default: nowhere). */
  metrics?: Metrics;
}

interface Batch {
  id: string;
  job: JobHandle;
  tasks: number;
  state: 'running' | 'done' | 'failed' | 'cancelled';
  error?: string;
  outcomes?: string[];
  /** The outcomes as the nodes packed them (compressed): what a client asking for `form=chunks` gets. */
  chunks?: OutcomeChunk[];
  costs: Partial<BatchCosts>;
  finished: Promise<void>;
  /** What the client reported with its latest await (serialization, transfer so far), for the dashboard. */
  client?: ClientCosts;
  doneAt?: number;
}

const graphSchema = {
  type: 'object',
  required: ['graph'],
  additionalProperties: false,
  properties: {
    limits: {
      type: 'object',
      additionalProperties: false,
      properties: { timeoutMs: { type: 'integer', minimum: 1 }, memoryMb: { type: 'integer', minimum: 8 } },
    },
    graph: {
      type: 'object',
      required: ['codes', 'nodes', 'tasks'],
      additionalProperties: false,
      properties: {
        codes: { type: 'array', items: { type: 'object', required: ['src', 'env', 'form'], properties: { src: { type: 'string' }, env: { type: 'array', items: { type: 'string', pattern: '^[A-Za-z_$][A-Za-z0-9_$]*$' } }, g: { type: 'array', items: { type: 'string', pattern: '^[A-Z][A-Za-z0-9]*$' } }, form: { enum: ['expression', 'method'] }, at: { type: 'string' } } } },
        nodes: { type: 'array', items: { type: 'object', required: ['t'], properties: { t: { enum: ['o', 'a', 'ta', 'ab', 'm', 's', 'd', 're', 'f', 'i', 'y', 'pk'] } } } },
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
      },
    },
  },
} as const;

export interface RunningService {
  url: string;
  app: FastifyInstance;
  close(): Promise<void>;
}

export async function startService(opts: ServiceOptions): Promise<RunningService> {
  if (!opts.tls && !opts.insecure) throw new Error('the service needs --tls-cert and --tls-key (or --insecure for loopback development)');
  if (!opts.token || opts.token.length < 16) throw new Error('the service needs a token of at least 16 characters (--token-file)');
  const here = import.meta.url;
  const taskRef = opts.taskRef ?? { module: new URL(`./service-task${here.endsWith('.ts') ? '.ts' : '.js'}`, here).href, export: 'default' };
  const app = fastify()({ https: opts.tls ? { cert: opts.tls.cert, key: opts.tls.key } : null, bodyLimit: opts.maxBodyBytes ?? 64 * 1024 * 1024, logger: false }) as unknown as FastifyInstance;
  const expected = Buffer.from(`Bearer ${opts.token}`);
  const packages = ServicePackages.resolve(opts.packages);
  const batches = new Map<string, Batch>();
  const latency = (opts.metrics ?? NO_METRICS).histogram(BATCH_LATENCY);
  let seq = 0;

  app.addHook('onRequest', async (req, reply) => {
    const given = Buffer.from(req.headers.authorization ?? '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return reply.code(401).send({ error: 'missing or wrong token (Authorization: Bearer …)' });
  });
  app.setErrorHandler((err: { statusCode?: number; message: string }, _req, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    void reply.code(status).send({ error: err.message });
  });

  app.get('/v1/health', async () => ({ ok: true, packages: packages.declared() }));

  app.post('/v1/batches', { schema: { body: graphSchema } }, async (req, reply) => {
    const t0 = performance.now();
    const { graph, limits: asked } = req.body as { graph: { tasks: unknown[]; nodes: unknown[]; packages?: PackageSpec[] }; limits?: SandboxLimits };
    // A client may ask for tighter limits than the service's, never for looser ones.
    const limits = { ...opts.limits, timeoutMs: Math.min(asked?.timeoutMs ?? Infinity, opts.limits?.timeoutMs ?? 60_000), memoryMb: Math.min(asked?.memoryMb ?? Infinity, opts.limits?.memoryMb ?? 128) };
    if (graph.tasks.length > (opts.maxTasks ?? 100_000)) return reply.code(413).send({ error: `a batch of ${graph.tasks.length} tasks exceeds the maximum of ${opts.maxTasks ?? 100_000}` });
    const bad = graph.tasks.findIndex((t) => (t as { f: number }).f >= graph.nodes.length);
    if (bad >= 0) return reply.code(400).send({ error: `tasks[${bad}].f refers to no node` });
    try {
      for (const spec of graph.packages ?? []) await packages.supply(spec);
    } catch (e) {
      return reply.code(400).send({ error: (e as Error).message });
    }
    const json = JSON.stringify(graph);
    const job = await opts.cluster.submit(taskRef, { lo: 0, hi: graph.tasks.length }, { input: { graph: json, limits } });
    const dispatchMs = performance.now() - t0;
    const id = `b${++seq}-${job.id}`;
    const batch: Batch = { id, job, tasks: graph.tasks.length, state: 'running', costs: { dispatchMs }, finished: Promise.resolve() };
    const jobStart = performance.now();
    batch.finished = job.result<OutcomeChunk[]>().then(
      (chunks) => {
        batch.costs.executionMs = performance.now() - jobStart;
        const outcomes = unpackOutcomes(chunks, batch.tasks);
        batch.outcomes = outcomes as string[];
        batch.chunks = chunks;
        batch.doneAt = Date.now();
        batch.state = outcomes.every((o) => o !== undefined) ? 'done' : 'failed';
        if (batch.state === 'failed') batch.error = 'the job ended without an outcome for every task';
        // The dashboard's cost breakdown reads every outcome: after the waiting client has its answer.
        setImmediate(() => source.put('batches', batchCostEvent(id, job.id, batch.doneAt!, batch.costs, outcomes, batch.client)));
      },
      (e: Error) => {
        if (batch.state === 'running') batch.state = /cancelled/.test(e.message) ? 'cancelled' : 'failed';
        batch.error = e.message;
      },
    ).finally(() => {
      latency.observe((performance.now() - t0) / 1000, { state: batch.state === 'running' ? 'failed' : batch.state });
      setTimeout(() => batches.delete(id), opts.retainMs ?? 600_000).unref();
    });
    batches.set(id, batch);
    return reply.code(202).send({ batch: id, tasks: batch.tasks, serverMs: performance.now() - t0 });
  });

  app.get('/v1/batches/:id', { schema: { params: { type: 'object', properties: { id: { type: 'string', maxLength: 200 } } }, querystring: { type: 'object', additionalProperties: false, properties: { waitMs: { type: 'integer', minimum: 0, maximum: 60_000 }, form: { type: 'string', enum: ['outcomes', 'chunks'] } } } } }, async (req, reply) => {
    const batch = batches.get((req.params as { id: string }).id);
    if (!batch) return reply.code(404).send({ error: 'no such batch' });
    batch.client = clientCosts(req.headers[CLIENT_COSTS_HEADER]) ?? batch.client;
    const { waitMs = 0, form = 'outcomes' } = req.query as { waitMs?: number; form?: 'outcomes' | 'chunks' };
    const t0 = performance.now();
    if (batch.state === 'running' && waitMs > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([batch.finished, new Promise((r) => (timer = setTimeout(r, waitMs)))]);
      clearTimeout(timer);
    }
    const waitedMs = performance.now() - t0;
    if (batch.state === 'done' && batch.client) source.put('batches', batchCostEvent(batch.id, batch.job.id, batch.doneAt!, batch.costs, batch.outcomes!, batch.client));
    if (batch.state !== 'done') return reply.send({ state: batch.state, error: batch.error, waitedMs });
    const head = `{"state":"done","waitedMs":${waitedMs},"costs":${JSON.stringify(batch.costs)},`;
    // Chunks: the outcomes compressed as the nodes packed them (a Mandelbrot image's 13 MB are ~2 MB),
    // unpacked by the client. Outcomes: JSON already, spliced in rather than parsed and re-encoded.
    const text = form === 'chunks'
      ? `${head}"tasks":${batch.tasks},"chunks":${JSON.stringify(batch.chunks)}}`
      : `${head}"outcomes":[${batch.outcomes!.join(',')}]}`;
    return reply.type('application/json').send(text);
  });

  app.delete('/v1/batches/:id', async (req, reply) => {
    const batch = batches.get((req.params as { id: string }).id);
    if (!batch) return reply.code(404).send({ error: 'no such batch' });
    if (batch.state === 'running') {
      batch.state = 'cancelled';
      await batch.job.cancel();
    }
    return reply.send({ state: batch.state });
  });

  const address = await app.listen({ port: opts.port ?? 7480, host: opts.host ?? '127.0.0.1' });
  // The recent batches' costs, for the dashboard of the cluster.
  const source = new EventPublisher(opts.cluster.coordination, `service.${new URL(address).port}`);
  source.start();
  const url = address.replace('http://', opts.tls ? 'https://' : 'http://');
  return { url, app, close: () => app.close().then(() => source.stop()) };
}
