/**
 * `tidepool manager --embedded`: a one-machine trial of the resource manager — an embedded cluster of
 * its own (in-process nodes, embedded coordination) and the jobs of `--jobs FILE|-` queued as they
 * arrive, each one's outcome printed when it ends. Nothing outside this process takes part: the
 * cluster and its jobs end with it.
 */
import type { Readable } from 'node:stream';
import type { CoordClient } from '../../coord/types.js';
import { submitManagedJob } from '../../frameworks/malleable/manager/manager-store.js';
import { awaitOutcome, cancelJob, type JobOutcome } from '../../runtime/job/outcome.js';
import type { ClusterSecret } from '../../util/cluster-secret.js';
import { followLines } from '../../util/line-feed.js';
import { log } from '../../util/log.js';
import { printLine } from '../output.js';
import { managedJobOf } from './managed-job-input.js';
import { parseTrialJob, type TrialJob } from './manager-job-feed.js';

/** The trial's jobs: queued as their lines say, followed to their end; `stop()` cancels those still running. */
export class TrialJobs {
  private readonly running = new Set<string>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;
  private readonly startedAt = Date.now();

  constructor(private readonly client: CoordClient, private readonly secret: ClusterSecret, private readonly json: boolean | undefined) {}

  /** Reads the feed to its end, queueing each job at its time (a line waits for the one before it). */
  follow(input: Readable, name: string): Promise<void> {
    return followLines(input, name, parseTrialJob, (t) => this.queueAt(t), (err) => log.error('manager', `${err.message}; skipped`));
  }

  private async queueAt(t: TrialJob): Promise<void> {
    const wait = this.startedAt + t.at - Date.now();
    if (wait > 0) {
      // The job's arrival time (the trial's workload), not a synchronization: stop() ends the wait.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          resolve();
        }, wait);
        this.timers.add(timer);
      });
    }
    if (this.stopped) return;
    try {
      const job = await managedJobOf(t.job, { module: `${t.where}: "${t.job.jobKind === 'malleable' ? 'app' : 'module'}"`, input: `${t.where}: "input"`, jobKind: `${t.where}: "jobKind"` });
      const spec = await submitManagedJob(this.client, {
        ...job, flexibility: t.flexibility, minNodes: t.min, secret: this.secret,
        ...(t.max !== undefined ? { maxNodes: t.max } : {}), ...(t.nodes !== undefined ? { nodes: t.nodes } : {}),
      });
      this.running.add(spec.id);
      printLine(this.json, { queued: spec.id, from: t.where, flexibility: t.flexibility, minNodes: spec.nodes.min, maxNodes: spec.nodes.max ?? null }, `job ${spec.id} queued (${t.flexibility}, ${t.where})`);
      void awaitOutcome(this.client, spec.id).then((o) => {
        this.running.delete(spec.id);
        if (!this.stopped) printLine(this.json, { finished: spec.id, ...outcomeSummary(o) }, `job ${spec.id} ${describeOutcome(o)}`);
      }, () => undefined); // the trial stopped first
    } catch (err) {
      log.error('manager', `${t.where}: not queued: ${(err as Error).message}`);
    }
  }

  /** Queues nothing more and cancels the trial's jobs that still run (its cluster ends with it). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await Promise.all([...this.running].map((id) => cancelJob(this.client, id).catch(() => false)));
  }
}

/** A job's outcome in a line: a malleable job's result with its rescales, another's value, or the error. */
function outcomeSummary(o: JobOutcome): Record<string, unknown> {
  if (o.status !== 'done') return { status: o.status, ...('error' in o ? { error: o.error } : {}) };
  const value = o.value as { result?: unknown; stats?: { rescales?: Array<{ kind: string; nodes: string[]; tRescaleMs: number }>; rollbacks?: number } } | unknown;
  if (value !== null && typeof value === 'object' && 'result' in value && 'stats' in value) {
    const { result, stats } = value as { result: unknown; stats: { rescales: Array<{ kind: string; nodes: string[]; tRescaleMs: number }>; rollbacks: number } };
    return { status: 'done', result, rescales: stats.rescales.filter((r) => r.kind !== 'none').map((r) => ({ kind: r.kind, nodes: r.nodes.length, tRescaleMs: r.tRescaleMs })), rollbacks: stats.rollbacks };
  }
  return { status: 'done', value };
}

function describeOutcome(o: JobOutcome): string {
  const s = outcomeSummary(o);
  if (s.status !== 'done') return `${String(s.status)}${s.error !== undefined ? `: ${String(s.error)}` : ''}`;
  const rescales = s.rescales as Array<{ kind: string; nodes: number }> | undefined;
  const text = JSON.stringify(s.result ?? s.value);
  return `done: ${text.length > 200 ? `${text.slice(0, 200)}…` : text}${rescales ? ` (${rescales.map((r) => `${r.kind} → ${r.nodes}`).join(', ') || 'no rescale'})` : ''}`;
}
