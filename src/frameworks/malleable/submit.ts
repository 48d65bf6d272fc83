/**
 * Submitting a malleable application and talking to it: the client side of the kind.
 */
import type { Cluster, JobHandle } from '../../runtime/client/cluster.js';
import { requestJob } from '../../runtime/client/job-requests.js';
import type { CoordClient } from '../../coord/types.js';
import type { AppRef } from './malleable-app.js';
import { malleableJob } from './malleable-kind-ref.js';
import type { MalleableOutcome, MalleableRuntimeOptions, RescaleAck } from './runtime-options.js';

export interface MalleableJobOptions {
  /** Nodes to start on (default 1). */
  nodes?: number;
  minNodes?: number;
  maxNodes?: number;
  runtime?: MalleableRuntimeOptions;
}

export interface MalleableJob<R> extends Omit<JobHandle, 'result'> {
  /** The application's result and the runtime's statistics. */
  result(): Promise<MalleableOutcome<R>>;
}

/** Submits an application (a module exporting `defineMalleable(…)`) as a malleable job; its parameters and options are checked first. */
export async function submitMalleable<R = unknown>(cluster: Cluster, app: AppRef, params: unknown, opts: MalleableJobOptions = {}): Promise<MalleableJob<R>> {
  const job = await cluster.submitJob({
    ...malleableJob(app, params, opts.runtime),
    nodes: opts.nodes ?? 1,
    ...(opts.minNodes !== undefined ? { minNodes: opts.minNodes } : {}),
    ...(opts.maxNodes !== undefined ? { maxNodes: opts.maxNodes } : {}),
  });
  return { ...job, result: () => job.result<MalleableOutcome<R>>() };
}

/** Asks a running malleable job to run on `nodes` nodes (a count, or the node ids to keep); resolves with its acknowledgement. */
export async function rescaleMalleable(client: CoordClient, jobId: string, nodes: number | string[], timeoutMs = 120_000): Promise<RescaleAck> {
  return (await requestJob(client, jobId, 'rescale', { nodes }, { timeoutMs })) as RescaleAck;
}

/** Asks a running malleable job to leave `node` (a failure warning, a spot interruption). */
export async function vacateMalleable(client: CoordClient, jobId: string, node: string, timeoutMs = 120_000): Promise<RescaleAck> {
  return (await requestJob(client, jobId, 'vacate', { node }, { timeoutMs })) as RescaleAck;
}

export interface MalleableProgress {
  iteration: number;
  iterations: number;
  nodes: string[];
  epoch: number;
  rescales: number;
  rollbacks: number;
}

export async function malleableProgress(client: CoordClient, jobId: string, timeoutMs = 30_000): Promise<MalleableProgress> {
  return (await requestJob(client, jobId, 'progress', null, { timeoutMs })) as MalleableProgress;
}
