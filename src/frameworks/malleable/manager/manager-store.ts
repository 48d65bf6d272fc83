import { isCoordError } from '../../../coord/errors.js';
import { joinPath } from '../../../coord/paths.js';
import { mkdirp } from '../../../coord/tree-ops.js';
import type { CoordClient } from '../../../coord/types.js';
import { decode } from '../../../util/codec.js';
import { TASK_POOL_KIND } from '../../../runtime/pool/task-pool-ref.js';
import { submitJob, type SubmitOptions } from '../../../runtime/client/submit.js';
import { clusterPaths, jobPaths } from '../../../runtime/job/job-paths.js';
import { newJobId, type JobSpec } from '../../../runtime/job/job-spec.js';
import type { JobOutcome } from '../../../runtime/job/outcome.js';
import { readOrNull } from '../../../coord/znode-reads.js';
import { isFlexibility, type Flexibility } from './managed-job.js';
import type { QueuedJob } from './manager-core.js';

/** The name jobs carry in JobSpec.managedBy when this resource manager places their nodes. */
export const MANAGER_NAME = 'manager';

/** How a job is rescaled: a `rescale` control request it acknowledges, or (task pool) draining nodes. */
export type RescaleChannel = 'control' | 'drain';

export interface RescaleEvent {
  at: number;
  type: 'launch' | 'expand' | 'shrink';
  /** The job's node count after the event. */
  nodes: number;
  /** For a rescale: how long the job took, as it reported (control) or as measured (drain), ms. */
  tRescaleMs?: number;
}

/**
 * The manager's record of a job, `jobs/<id>/managed` (JSON), beside the core's spec and result: it
 * survives a restart of the manager, which resumes a shrink left `pending` by sending it again
 * (a rescale to an explicit node list is idempotent).
 */
export interface ManagedRecord {
  flexibility: Flexibility;
  channel: RescaleChannel;
  pending?: { nodes: string[]; removed: string[]; sentAt: number };
  /** An operator's `tidepool scale JOB N`, until the manager has taken it (it becomes `pin`). */
  rescaleTo?: number;
  /**
   * The size an operator fixed (`tidepool scale JOB N`): the job's range is [pin, pin] (within its own
   * range) for every decision until the operator releases it (`tidepool scale JOB --release`).
   */
  pin?: number;
  /** An evolving job's own request (`ctx.requestResize(min, max)`), until the manager has acted on it. */
  resize?: { min: number; max: number };
  /** The node range the job asked for last; it replaces the submitted [minNodes, maxNodes] for every policy. */
  bounds?: { min: number; max: number };
  events: RescaleEvent[];
}

/** Events kept per job (the oldest are dropped). */
const EVENT_LIMIT = 200;

export function managerPaths(root?: string) {
  const cluster = clusterPaths(root);
  return { ...cluster, election: joinPath(cluster.root, 'manager-election'), record: (jobId: string) => joinPath(jobPaths(jobId, root).base, 'managed') };
}

export interface ManagedSubmitOptions extends Omit<SubmitOptions, 'managedBy' | 'nodes' | 'minNodes' | 'maxNodes'> {
  flexibility: Flexibility;
  /** Requested size: a rigid job's size (default: minNodes). */
  nodes?: number;
  minNodes?: number;
  maxNodes?: number;
}

/** Queues a job for the resource manager: its record first, then the core's job (spec last). */
export async function submitManagedJob(client: CoordClient, opts: ManagedSubmitOptions, root?: string): Promise<JobSpec> {
  if (!isFlexibility(opts.flexibility)) throw new Error(`kind must be rigid, moldable or malleable, got ${String(opts.flexibility)}`);
  const minNodes = opts.flexibility === 'rigid' ? (opts.nodes ?? opts.minNodes ?? 1) : (opts.minNodes ?? 1);
  const maxNodes = opts.flexibility === 'rigid' ? minNodes : (opts.maxNodes ?? Infinity);
  const nodes = opts.nodes ?? minNodes;
  if (!Number.isInteger(minNodes) || minNodes < 1) throw new Error(`--min must be a whole number ≥ 1, got ${minNodes}`);
  const jobId = opts.jobId ?? newJobId();
  // A task-pool job gives nodes back by draining them; any other kind is asked through its control channel.
  const record: ManagedRecord = { flexibility: opts.flexibility, channel: opts.kind.module === TASK_POOL_KIND.module ? 'drain' : 'control', events: [] };
  await mkdirp(client, jobPaths(jobId, root).base);
  await client.create(managerPaths(root).record(jobId), Buffer.from(JSON.stringify(record)));
  return submitJob(client, { ...opts, jobId, nodes, minNodes, maxNodes, managedBy: MANAGER_NAME }, root);
}

export interface ManagedJobInfo extends QueuedJob {
  /** The job's own node range (submitted, or its latest `requestResize`); minNodes/maxNodes are the pin when pinned. */
  range: { min: number; max: number };
  record: ManagedRecord;
  version: number;
  outcome: JobOutcome['status'] | null;
  module: string;
}

/** A managed job's spec, record and outcome; null when it is not (or not yet fully) a managed job. */
export async function readManagedJob(client: CoordClient, jobId: string, root?: string): Promise<ManagedJobInfo | null> {
  const paths = jobPaths(jobId, root);
  const [specRead, recordRead, resultRead] = await Promise.all([readOrNull(client, paths.spec), readOrNull(client, managerPaths(root).record(jobId)), readOrNull(client, paths.result)]);
  if (!specRead || !recordRead) return null;
  const spec = decode<JobSpec>(specRead.data);
  if (spec.managedBy !== MANAGER_NAME) return null;
  const record = parseRecord(recordRead.data, jobId);
  const outcome = resultRead ? decode<JobOutcome>(resultRead.data).status : null;
  const own = { min: record.bounds?.min ?? spec.nodes.min, max: record.bounds?.max ?? spec.nodes.max ?? Infinity };
  const pin = record.pin !== undefined ? Math.min(Math.max(record.pin, own.min), own.max) : undefined;
  const minNodes = pin ?? own.min;
  const maxNodes = pin ?? own.max;
  return {
    id: jobId, createdAt: spec.createdAt, flexibility: record.flexibility, nodes: Math.min(Math.max(spec.nodes.requested, minNodes), maxNodes), minNodes,
    maxNodes, finished: outcome !== null, started: record.events.some((e) => e.type === 'launch'), ...(pin !== undefined ? { pinned: true } : {}),
    range: own, record, version: recordRead.stat.version, outcome, module: spec.label,
  };
}

/** Every managed job in the cluster, oldest first. */
export async function listManagedJobs(client: CoordClient, root?: string): Promise<ManagedJobInfo[]> {
  let ids: string[];
  try {
    ids = await client.getChildren(clusterPaths(root).jobs);
  } catch (err) {
    if (isCoordError(err, 'NO_NODE')) return [];
    throw err;
  }
  const jobs = (await Promise.all(ids.map((id) => readManagedJob(client, id, root)))).filter((j): j is ManagedJobInfo => j !== null);
  return jobs.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
}

/** Changes a job's record with `change` (read-modify-write at the version read; retried on races). */
export async function updateRecord(client: CoordClient, jobId: string, change: (r: ManagedRecord) => void, root?: string): Promise<ManagedRecord> {
  const path = managerPaths(root).record(jobId);
  for (let attempt = 0; attempt < 20; attempt++) {
    const read = await readOrNull(client, path);
    if (!read) throw new Error(`job ${jobId} is not a managed job`);
    const record = parseRecord(read.data, jobId);
    change(record);
    if (record.events.length > EVENT_LIMIT) record.events.splice(0, record.events.length - EVENT_LIMIT);
    try {
      await client.setData(path, Buffer.from(JSON.stringify(record)), read.stat.version);
      return record;
    } catch (err) {
      if (!isCoordError(err, 'BAD_VERSION')) throw err;
    }
  }
  throw new Error(`could not update the record of job ${jobId}: it kept changing`);
}

/** Asks the manager to rescale a malleable job to `nodes` (taken at its next pass; clamped to the job's range). */
export async function requestRescale(client: CoordClient, jobId: string, nodes: number, root?: string): Promise<void> {
  if (!Number.isInteger(nodes) || nodes < 1) throw new Error(`node count must be a whole number ≥ 1, got ${nodes}`);
  await updateRecord(client, jobId, (r) => void (r.rescaleTo = nodes), root);
}

/**
 * Releases an operator's size (`tidepool scale JOB --release`): the policy sizes the job again from
 * its next pass, by T_gap and the rescale's cost as for any job. Returns the size that was pinned
 * (undefined: none was, and nothing changes).
 */
export async function releasePin(client: CoordClient, jobId: string, root?: string): Promise<number | undefined> {
  let was: number | undefined;
  await updateRecord(client, jobId, (r) => {
    was = r.pin ?? r.rescaleTo;
    delete r.pin;
    delete r.rescaleTo;
  }, root);
  return was;
}

/**
 * An evolving job asks the manager for between `min` and `max` nodes from now on (taken at its next
 * pass, like an operator's request; see ResourceManager).
 */
export async function requestResize(client: CoordClient, jobId: string, min: number, max: number, root?: string): Promise<void> {
  if (!Number.isInteger(min) || min < 1 || !Number.isInteger(max) || max < min) throw new Error(`a resize needs whole numbers 1 ≤ min ≤ max, got (${min}, ${max})`);
  await updateRecord(client, jobId, (r) => void (r.resize = { min, max }), root);
}

const isRange = (v: unknown): v is { min: number; max: number } => {
  const r = v as { min?: unknown; max?: unknown } | null;
  return typeof r === 'object' && r !== null && Number.isInteger(r.min) && Number.isInteger(r.max) && (r.min as number) >= 1 && (r.max as number) >= (r.min as number);
};

function parseRecord(data: Uint8Array, jobId: string): ManagedRecord {
  const r = JSON.parse(Buffer.from(data).toString('utf8')) as Partial<ManagedRecord>;
  if (!isFlexibility(r.flexibility)) throw new Error(`job ${jobId}: managed record has no valid flexibility`);
  return {
    flexibility: r.flexibility, channel: r.channel === 'control' ? 'control' : 'drain', events: Array.isArray(r.events) ? r.events : [],
    ...(r.pending ? { pending: r.pending } : {}), ...(r.rescaleTo !== undefined ? { rescaleTo: r.rescaleTo } : {}),
    ...(Number.isInteger(r.pin) && (r.pin as number) >= 1 ? { pin: r.pin } : {}),
    ...(isRange(r.resize) ? { resize: r.resize } : {}), ...(isRange(r.bounds) ? { bounds: r.bounds } : {}),
  };
}
