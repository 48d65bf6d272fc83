import { watchData } from '../../coord/watch.js';
import { Cluster, type ClusterEvent } from '../../runtime/cluster.js';
import { jobPaths } from '../../runtime/job-paths.js';
import { startNodeProcess, stopNodeProcesses, type NodeProcess } from '../../runtime/node-processes.js';
import type { ScaleStep } from '../../runtime/scale-schedule.js';
import type { Application } from './applications.js';
import type { SearchResult } from './search-problem.js';
import { rootSearchState } from './search-state.js';

export interface SolveOptions {
  /** Nodes to start: embedded ones, or with `zk` local node processes that join the cluster for this run. */
  nodes: number;
  workers: number;
  /** Run on the cluster registered at this ZooKeeper connection string instead. */
  zk?: string;
  /** With `zk`: the cluster secret's file for local node processes (else $TIDEPOOL_SECRET). */
  secretFile?: string;
  noPrune: boolean;
  schedule: ScaleStep[];
  /** Run on this embedded cluster (owned by the caller, left running) instead of starting one. */
  cluster?: Cluster;
  /** Nodes the job starts on (default: every idle node). */
  jobNodes?: number;
  /**
   * Whether a scale-out step starts new nodes (default) or only assigns idle ones already running
   * (seed 000 used running VMs, to leave VM start-up time out of the measurement).
   */
  startNodesOnScaleOut?: boolean;
  /** With `zk`: how to start a local node process (default: this process's own script, i.e. the CLI). */
  nodeEntry?: { execArgv: string[]; script: string };
  onEvent?: (e: ClusterEvent) => void;
  /** Called about once a second with a one-line progress summary. */
  onProgress?: (line: string) => void;
}

export interface SolveStats {
  seconds: number;
  searchNodes: number;
  tasks: number;
  steals: number;
  migrations: number;
  nodesJoined: number;
  nodesLeft: number;
}

/** Runs one search job to completion, applying the scale schedule, and gathers its statistics. */
export async function solveOnCluster<I>(app: Application<I>, instance: I, opts: SolveOptions): Promise<{ result: SearchResult; stats: SolveStats; jobId: string }> {
  const cluster = opts.cluster ?? (opts.zk ? await Cluster.connect(opts.zk) : await Cluster.embedded({ nodes: opts.nodes, workers: opts.workers, progressIntervalMs: 0 }));
  const processes: NodeProcess[] = [];
  /** Nodes this run started; when a scale-in releases one, it is decommissioned (stopped), as in seed 000's Fig. 6. */
  const startedHere = new Set<string>();
  /** More nodes: in-process ones for an embedded cluster, local node processes for a ZooKeeper one. */
  const addNodes = async (count: number) => {
    if (!opts.zk) {
      for (const id of await cluster.addNodes(count)) startedHere.add(id);
      return;
    }
    const started = await Promise.all(Array.from({ length: count }, () => startNodeProcess({
      zk: opts.zk!, workers: opts.workers, ...(opts.secretFile !== undefined ? { secretFile: opts.secretFile } : {}),
      ...(opts.nodeEntry ? { entry: opts.nodeEntry } : {}),
    })));
    processes.push(...started);
    for (const p of started) startedHere.add(p.id);
  };
  /** Stops a released node once it has drained (SIGTERM drains a node process; stopNode drains an embedded one). */
  const decommission = async (id: string) => {
    if (!startedHere.delete(id)) return;
    const child = processes.find((p) => p.id === id);
    if (child) {
      child.kill('SIGTERM');
      await child.exited;
    } else {
      await cluster.stopNode(id);
    }
  };
  const decommissioning: Promise<void>[] = [];
  const stats = { steals: 0, migrations: 0, nodesJoined: 0, nodesLeft: 0 };
  let incumbent: number | undefined;
  let initialNodes = 0;
  const joined = new Set<string>();
  const timers: NodeJS.Timeout[] = [];
  const listeners: Array<() => void> = [];
  try {
    if (opts.zk && opts.nodes > 0) await addNodes(opts.nodes);
    const started = performance.now();
    const job = await cluster.submit(app.ref, rootSearchState(app.problem, instance), {
      input: { instance, noPrune: opts.noPrune }, ...(opts.jobNodes !== undefined ? { nodes: opts.jobNodes } : {}),
    });
    initialNodes = (await cluster.nodes()).filter((n) => n.assignment === job.id).length;
    listeners.push(cluster.on((e) => {
      opts.onEvent?.(e);
      if (e.type === 'steal' && e.job === job.id) stats.steals++;
      if (e.type === 'migration' && e.job === job.id) stats.migrations++;
      if (e.type === 'job-joined' && e.job === job.id) joined.add(e.node);
      if (e.type === 'job-left' && e.job === job.id && e.reason === 'drained') stats.nodesLeft++;
    }));
    let size = initialNodes;
    for (const step of opts.schedule) {
      timers.push(setTimeout(() => {
        void (async () => {
          if (step.delta > 0 && opts.startNodesOnScaleOut !== false) await addNodes(step.delta);
          size = Math.max(1, size + step.delta);
          const change = await cluster.scale(job.id, size);
          decommissioning.push(...change.released.map((id) => decommission(id).catch(() => undefined)));
        })().catch(() => undefined);
      }, step.atMs));
    }
    const bound = watchBound(cluster, job.id, (v) => (incumbent = v));
    const progress = opts.onProgress ? setInterval(() => {
      const s = ((performance.now() - started) / 1000).toFixed(1);
      opts.onProgress!(`${s}s  nodes ${size}  steals ${stats.steals}  migrations ${stats.migrations}${incumbent !== undefined ? `  bound ${incumbent}` : ''}`);
    }, 1000) : undefined;
    const outcome = await job.outcome();
    clearInterval(progress);
    bound();
    if (outcome.status !== 'done') throw new Error(outcome.status === 'failed' ? outcome.error : 'the job was cancelled');
    const result = outcome.value as SearchResult;
    stats.nodesJoined = Math.max(0, joined.size - initialNodes);
    return {
      jobId: job.id,
      result,
      stats: { seconds: (performance.now() - started) / 1000, searchNodes: result.searchNodes, tasks: outcome.completions, ...stats },
    };
  } finally {
    for (const t of timers) clearTimeout(t);
    for (const off of listeners) off();
    await Promise.all(decommissioning);
    await stopNodeProcesses(processes);
    if (!opts.cluster) await cluster.close();
  }
}

/** Follows the job's shared incumbent (the `bound` variable) for progress display. */
function watchBound(cluster: Cluster, jobId: string, onValue: (v: number) => void): () => void {
  const handle = watchData(cluster.coordination, `${jobPaths(jobId).vars}/bound`, (d) => {
    if (d) onValue(JSON.parse(d.data.toString('utf8')) as number);
  });
  return () => handle.close();
}
