import type { KindEvent } from '../kinds/job-kind.js';

/** What a node reports about itself and its job (for the API, the CLI and the dashboard). */
export type NodeEvent =
  | { type: 'job-joined'; node: string; job: string }
  | { type: 'job-left'; node: string; job: string; reason: 'drained' | 'finished' | 'failed' }
  | { type: 'leader'; node: string; job: string }
  /** The job's kind failed the job on this node (a task failed for good, say). */
  | { type: 'failed'; job: string; node: string; error: string }
  /** Periodic load report of a node in a job (cumulative counters). */
  | { type: 'progress'; job: string; node: string; running: number; pooled: number; tasksDone: number; splits: number; stealsIn: number; stealsOut: number; migrationsOut: number }
  | KindReport;

/** What a job's kind reported on a node (MemberContext.report; the kinds' events are declared in KindEvents), with the job and the node. */
export type KindReport = KindEvent & { job: string; node: string };
