/** What a malleable job carries in its spec: the application, its parameters and the runtime's settings. */
import type { Strategy } from './load-balance.js';
import type { AppRef } from './malleable-app.js';

export interface MalleableRuntimeOptions {
  /** Take a coordinated checkpoint every this many iterations (0: only at rescales). Default 0. */
  checkpointEvery?: number;
  /**
   * Iterations between synchronization points (default 1: every boundary). Members run the iterations
   * in between on their own; requests, checkpoints, balancing and rescales wait for the next sync point.
   */
  syncEvery?: number;
  /** Balance load every this many iterations (0: only at rescales). Default 0. */
  lbEvery?: number;
  /**
   * Object threads per node: at most this many of each node's worker threads (default: all of them, one
   * per usable core of the node). Objects are balanced over every thread of every node.
   */
  workers?: number;
  /** Balancing strategy at rescales and periodic balancing (default 'refine', as the seed's runs). */
  strategy?: Strategy;
  /** What balancing weighs: each object's measured step time (default), or every object alike ('uniform': objects of equal work, or reproducible mappings). */
  loads?: 'measured' | 'uniform';
  /** Rescales the job asks of itself when it reaches an iteration (the seed's application-initiated rescale). */
  rescaleAt?: Array<{ iteration: number; nodes: number }>;
  /** Iterations at whose sync point the job waits, serving requests, until a `resume` request. */
  pauseAt?: number[];
  /** How long the leader waits at start for the nodes the job asked for (ms, default 5000). */
  startWaitMs?: number;
  /** How long an expand waits for its new nodes to join (ms, default 30 000). */
  joinWaitMs?: number;
}

/** A malleable job's part of the job spec: its application, the application's parameters and the runtime's options. */
export interface MalleableSpec {
  app: AppRef;
  params: unknown;
  runtime?: MalleableRuntimeOptions;
}

/** One rescale as acknowledged (the resource manager's interface; see docs/malleable.md). */
export interface RescaleAck {
  /** The job's nodes after the rescale. */
  nodes: string[];
  /** Measured T_rescale, ms, from the sync point to the job ready to run again. */
  tRescaleMs: number;
  phases: { lb: number; checkpoint: number; reconnect: number; restore: number };
  /** The iteration the job resumes at. */
  iteration: number;
  kind: 'shrink' | 'expand' | 'replace' | 'none';
  /** When the rescale began (ms since the epoch; absent in the histories of jobs from before it was recorded). */
  startedAt?: number;
}

export interface MalleableStats {
  /** Iterations run: the application's count, or fewer when its convergence test (`done`) ended the job. */
  iterations: number;
  objects: number;
  rescales: RescaleAck[];
  rollbacks: number;
  checkpoints: number;
  /** Wall time of each iteration at the leader (ms), and the nodes it ran on. */
  iterationMs: number[];
  nodesPerIteration: number[];
  /** The object threads it ran on (every node's together: the places). */
  threadsPerIteration: number[];
  /** Sync points the current leader reached (before each span of `syncEvery` iterations), and periodic balancings (`lbEvery`) among them. */
  syncPoints: number;
  balancings: number;
  /** Resize requests of the application (an evolving job), in order: after which iteration, and the bounds. */
  resizeRequests: Array<{ iteration: number; min: number; max: number }>;
}

/** A finished malleable job's value: the application's result and what the runtime did. */
export interface MalleableOutcome<R = unknown> {
  result: R;
  stats: MalleableStats;
}

export function checkRuntimeOptions(o: MalleableRuntimeOptions | undefined): string | undefined {
  if (o === undefined) return undefined;
  for (const k of ['syncEvery', 'workers'] as const) {
    if (o[k] !== undefined && !(Number.isInteger(o[k]) && o[k]! >= 1)) return `runtime.${k} must be a whole number ≥ 1, got ${String(o[k])}`;
  }
  for (const k of ['checkpointEvery', 'lbEvery', 'startWaitMs', 'joinWaitMs'] as const) {
    if (o[k] !== undefined && !(Number.isInteger(o[k]) && o[k]! >= 0)) return `runtime.${k} must be a whole number ≥ 0, got ${String(o[k])}`;
  }
  if (o.loads !== undefined && o.loads !== 'measured' && o.loads !== 'uniform') return `runtime.loads must be 'measured' or 'uniform', got ${String(o.loads)}`;
  if (o.strategy !== undefined && o.strategy !== 'greedy' && o.strategy !== 'refine') return `runtime.strategy must be 'greedy' or 'refine', got ${String(o.strategy)}`;
  if (o.pauseAt !== undefined && !(Array.isArray(o.pauseAt) && o.pauseAt.every((i) => Number.isInteger(i) && i >= 0))) return 'runtime.pauseAt must be a list of iterations ≥ 0';
  for (const [i, r] of (o.rescaleAt ?? []).entries()) {
    if (!Number.isInteger(r?.iteration) || r.iteration < 1 || !Number.isInteger(r?.nodes) || r.nodes < 1) return `runtime.rescaleAt[${i}] must be { iteration ≥ 1, nodes ≥ 1 }`;
  }
  return undefined;
}
