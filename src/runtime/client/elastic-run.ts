/**
 * Runs one job to its end on a cluster that changes size under it (seed 000's Fig. 6 experiment,
 * and what `tidepool solve --scale`, the demo and the benchmarks do): starts the nodes it needs —
 * in-process ones for an embedded cluster, local node processes for a ZooKeeper one — applies a
 * scale schedule, stops the nodes it started once they are released, and counts what happened.
 * Frameworks supply only how to submit their job and how to describe its progress.
 */
import { readFileSync } from 'node:fs';
import { GroupMembership } from '../../coord/recipes/group-membership.js';
import { ClusterSecret, type SecretInput } from '../../util/cluster-secret.js';
import { jobPaths } from '../job/job-paths.js';
import { Cluster, type ClusterEvent, type JobHandle } from './cluster.js';
import type { JobOutcome } from '../job/outcome.js';
import { settledTallies } from '../job/tallies.js';
import { startNodeProcess, stopNodeProcesses, type NodeProcess } from './node-processes.js';
import type { ScaleStep } from './scale-schedule.js';

export interface ElasticRunOptions {
  /** Nodes to start: embedded ones, or with `zk` local node processes that join the cluster for this run. */
  nodes: number;
  workers: number;
  /** Run on the cluster registered at this ZooKeeper connection string instead. */
  zk?: string;
  /** With `zk`: the cluster secret's file for local node processes (else $TIDEPOOL_SECRET). */
  secretFile?: string;
  /** With `zk`: the cluster secret this client submits with (default: the one in `secretFile`). */
  secret?: SecretInput;
  schedule: ScaleStep[];
  /** Run on this embedded cluster (owned by the caller, left running) instead of starting one. */
  cluster?: Cluster;
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

export interface ElasticRunStats {
  /** From submission to the outcome (the wait for the nodes' tallies after it is not counted). */
  seconds: number;
  steals: number;
  migrations: number;
  nodesJoined: number;
  nodesLeft: number;
  /**
   * Time the workers spent running the job's tasks (seconds, summed over workers, from the nodes'
   * tallies): divided by workers × `seconds`, the share of the run they were busy — what start-up,
   * steals and the end cost, apart from how fast the machine ran them. Absent without tallies.
   */
  workerSeconds?: number;
}

/**
 * Submits a job with `submit`, runs the schedule, and resolves with its outcome and statistics.
 * `describe` adds the framework's part (a search's incumbent, say) to the progress line.
 */
export async function runElastic(
  opts: ElasticRunOptions,
  submit: (cluster: Cluster) => Promise<JobHandle>,
  describe: (cluster: Cluster, job: string) => { line(): string; stop(): void } = () => ({ line: () => '', stop: () => undefined }),
): Promise<{ outcome: JobOutcome; stats: ElasticRunStats; jobId: string }> {
  // With `zk` the client needs the secret too: given, or the nodes' file.
  const secret = opts.secret ?? (opts.secretFile !== undefined ? ClusterSecret.parse(readFileSync(opts.secretFile, 'utf8'), opts.secretFile) : undefined);
  // The client signs and submits; it serves no data (nodes need not reach it): its job's root stays in the ledger.
  const cluster = opts.cluster ?? (opts.zk ? await Cluster.connect(opts.zk, { ...(secret !== undefined ? { secret } : {}), serveData: false }) : await Cluster.embedded({ nodes: opts.nodes, workers: opts.workers, progressIntervalMs: 0 }));
  const processes: NodeProcess[] = [];
  /** Nodes this run started; when a scale-in releases one, it is decommissioned (stopped), as in seed 000's Fig. 6. */
  const startedHere = new Set<string>();
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
  const counts = { steals: 0, migrations: 0, nodesLeft: 0 };
  const joined = new Set<string>();
  /** Nodes seen in the job's membership group (any process's), and nodes that left the cluster. */
  const members = new Set<string>();
  const gone = new Set<string>();
  let membership: GroupMembership | undefined;
  /** Waits for nodes to join the job (see `inJob`), re-checked on every event; true once settled. */
  const waiting: Array<() => boolean> = [];
  const recheck = () => {
    for (let i = waiting.length - 1; i >= 0; i--) if (waiting[i]!()) waiting.splice(i, 1);
  };
  /** Resolves once each of `ids` has joined the job or left the cluster, or the run has finished. */
  const inJob = (ids: string[]) => new Promise<void>((resolve) => {
    const settled = () => finished || ids.every((id) => members.has(id) || gone.has(id));
    if (settled()) return resolve();
    waiting.push(() => (settled() ? (resolve(), true) : false));
  });
  const timers: NodeJS.Timeout[] = [];
  /** Scale steps under way; the run waits for them before it stops what they started. */
  const steps: Promise<void>[] = [];
  let finished = false;
  const listeners: Array<() => void> = [];
  let described: { line(): string; stop(): void } | undefined;
  try {
    if (opts.zk && opts.nodes > 0) await addNodes(opts.nodes);
    const started = performance.now();
    const job = await submit(cluster);
    // The scheduler assigns the job's nodes shortly after submission: count from what it asked for.
    const initialNodes = job.nodes;
    listeners.push(cluster.on((e) => {
      opts.onEvent?.(e);
      if (e.type === 'steal' && e.job === job.id) counts.steals++;
      if (e.type === 'migration' && e.job === job.id) counts.migrations++;
      if (e.type === 'job-joined' && e.job === job.id) joined.add(e.node);
      if (e.type === 'job-left' && e.job === job.id && e.reason === 'drained') counts.nodesLeft++;
      if (e.type === 'node-left') gone.add(e.node);
      recheck();
    }));
    membership = new GroupMembership(cluster.coordination, jobPaths(job.id).members);
    membership.on('joined', (m) => {
      members.add(m.id);
      recheck();
    });
    await membership.watch();
    let size = initialNodes;
    // Steps take effect in the schedule's order: a scale-in due while the scale-out before it is still
    // starting its nodes waits for it (else it would shrink first, and the nodes added late stay). A
    // scale-out ends when the nodes it assigned have joined the job: a scale-in after it drains them,
    // instead of releasing a node still joining, which would leave without having taken part.
    let previous: Promise<void> = Promise.resolve();
    for (const step of opts.schedule) {
      timers.push(setTimeout(() => {
        const after = previous;
        steps.push(previous = (async () => {
          await after;
          if (finished) return;
          if (step.delta > 0 && opts.startNodesOnScaleOut !== false) await addNodes(step.delta);
          // The job may have ended while a node process started: then the step is moot (the node is stopped below).
          if (finished) return;
          size = Math.max(1, size + step.delta);
          const change = await cluster.scale(job.id, size);
          decommissioning.push(...change.released.map((id) => decommission(id).catch(() => undefined)));
          await inJob(change.added);
        })().catch(() => undefined));
      }, step.atMs));
    }
    described = describe(cluster, job.id);
    const progress = opts.onProgress ? setInterval(() => {
      const s = ((performance.now() - started) / 1000).toFixed(1);
      opts.onProgress!(`${s}s  nodes ${size}  steals ${counts.steals}  migrations ${counts.migrations}${described!.line()}`);
    }, 1000) : undefined;
    const outcome = await job.outcome();
    // The run's time ends with its answer; waiting for the nodes' tallies below is bookkeeping.
    const seconds = (performance.now() - started) / 1000;
    clearInterval(progress);
    // Nodes in other processes report their steals and migrations (counted where tasks leave, as the events are) only in their tallies.
    const tally = await settledTallies(cluster.coordination, job.id).catch(() => undefined);
    let workers = {};
    if (tally && tally.tallies > 0) {
      counts.steals = Math.max(counts.steals, tally.total.stealsOut);
      counts.migrations = Math.max(counts.migrations, tally.total.migrationsOut);
      workers = { workerSeconds: tally.total.workerMs / 1000 };
    }
    return {
      jobId: job.id,
      outcome,
      stats: { seconds, ...counts, nodesJoined: Math.max(0, joined.size - initialNodes), ...workers },
    };
  } finally {
    finished = true;
    recheck();
    membership?.stop();
    described?.stop();
    for (const t of timers) clearTimeout(t);
    for (const off of listeners) off();
    await Promise.all(steps);
    await Promise.all(decommissioning);
    await stopNodeProcesses(processes);
    if (!opts.cluster) await cluster.close();
  }
}
