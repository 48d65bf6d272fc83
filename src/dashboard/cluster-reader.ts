import { isCoordError } from '../coord/errors.js';
import { joinPath } from '../coord/paths.js';
import type { CoordClient } from '../coord/types.js';
import { decode } from '../util/codec.js';
import { eventSourcesPath } from '../runtime/node/event-source.js';
import { listJobs } from '../runtime/client/job-list.js';
import { listNodes, type NodeInfo } from '../runtime/scheduler/index.js';
import { clusterPaths, jobPaths } from '../runtime/job/job-paths.js';
import type { JobOutcome } from '../runtime/job/outcome.js';
import type { JobSpec } from '../runtime/job/job-spec.js';
import type { NodeStats } from '../runtime/node/node-stats.js';

/** What one read of the coordination service tells about the cluster (input to SnapshotBuilder). */
export interface ClusterReading {
  at: number;
  nodes: { info: NodeInfo; stats: NodeStats | null }[];
  jobs: JobReading[];
  /** Event sources (a service, a resource manager) and what each published, unchecked. */
  sources?: { name: string; data: unknown }[];
}

export interface JobReading {
  id: string;
  spec: Pick<JobSpec, 'label' | 'nodes' | 'createdAt'>;
  outcome: JobOutcome | null;
  vars: Record<string, number>;
}

/**
 * Reads nodes, their published stats and the jobs. Finished jobs are read once and then served
 * from the cache (their znodes never change again), so a long-lived cluster costs reads only
 * for what is live.
 */
export class ClusterReader {
  private readonly finished = new Map<string, JobReading>();
  private readonly specs = new Map<string, JobReading['spec']>();

  constructor(private readonly client: CoordClient, private readonly root?: string) {}

  async read(): Promise<ClusterReading> {
    const [nodes, jobIds, sources] = await Promise.all([this.readNodes(), listJobs(this.client, this.root), this.readSources()]);
    const jobs = (await Promise.all(jobIds.map((id) => this.readJob(id)))).filter((j): j is JobReading => j !== null);
    for (const id of this.finished.keys()) if (!jobIds.includes(id)) this.finished.delete(id);
    return { at: Date.now(), nodes, jobs, sources };
  }

  /** The event sources' lists (`/tidepool/events/<source>`, see runtime/node/event-source.ts). */
  async readSources(): Promise<NonNullable<ClusterReading['sources']>> {
    const dir = eventSourcesPath(this.root);
    let names: string[];
    try {
      names = await this.client.getChildren(dir);
    } catch (err) {
      if (isCoordError(err, 'NO_NODE')) return [];
      throw err;
    }
    const read = await Promise.all(names.sort().map(async (name) => ({ name, data: await this.json<unknown>(joinPath(dir, name)) })));
    return read.filter((s) => s.data !== null);
  }

  /** The live nodes with what each last published (null until a node first reports). */
  async readNodes(): Promise<ClusterReading['nodes']> {
    const statsDir = clusterPaths(this.root).stats;
    const infos = await listNodes(this.client, this.root);
    return Promise.all(infos.map(async (info) => ({ info, stats: await this.json<NodeStats>(joinPath(statsDir, info.id)) })));
  }

  private async readJob(id: string): Promise<JobReading | null> {
    const done = this.finished.get(id);
    if (done) return done;
    const paths = jobPaths(id, this.root);
    let spec = this.specs.get(id);
    if (!spec) {
      const full = await this.data(paths.spec);
      if (!full) return null; // being created or removed
      const decoded = decode<JobSpec>(full);
      spec = { label: decoded.label, nodes: decoded.nodes, createdAt: decoded.createdAt };
      this.specs.set(id, spec);
    }
    const result = await this.data(paths.result);
    const outcome = result ? decode<JobOutcome>(result) : null;
    const reading: JobReading = { id, spec, outcome, vars: await this.vars(paths.vars) };
    if (outcome) {
      this.finished.set(id, reading);
      this.specs.delete(id);
    }
    return reading;
  }

  /**
   * The job's numeric global variables; one that holds a numeric `value` with more (a search's incumbent with
   * its solution) counts as that number. Others (tours, flags with data) are not plotted.
   */
  private async vars(dir: string): Promise<Record<string, number>> {
    let names: string[];
    try {
      names = await this.client.getChildren(dir);
    } catch (err) {
      if (isCoordError(err, 'NO_NODE')) return {};
      throw err;
    }
    const out: Record<string, number> = {};
    for (const name of names.sort()) {
      const value = await this.json<unknown>(joinPath(dir, name));
      const number = typeof value === 'object' && value !== null && 'value' in value ? value.value : value;
      if (typeof number === 'number' && Number.isFinite(number)) out[name] = number;
    }
    return out;
  }

  private async json<T>(path: string): Promise<T | null> {
    const data = await this.data(path);
    if (!data || data.length === 0) return null;
    try {
      return JSON.parse(data.toString('utf8')) as T;
    } catch {
      return null; // not JSON: not ours to show
    }
  }

  private async data(path: string): Promise<Buffer | null> {
    try {
      return Buffer.from((await this.client.getData(path)).data);
    } catch (err) {
      if (isCoordError(err, 'NO_NODE')) return null;
      throw err;
    }
  }
}
