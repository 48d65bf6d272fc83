/**
 * A run's status and statistics from its directory alone (no cluster): what `tidepool workflow
 * status` and `tidepool workflow statistics` print, after pegasus-status and pegasus-statistics —
 * tasks done, up to date, running and failed; per transformation the attempts, successes, failures
 * and runtimes; the run's wall time and the cumulative time of its attempts; bytes by source; per host.
 */
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Journal, runDirs } from './journal.js';
import { readOutcome, readProvenance, type AttemptRecord, type RunOutcome } from './provenance.js';
import { readRunInfo, type RunInfo } from './run-directory.js';
import { ExpansionLog } from './expansion-log.js';

/** RUN as given: a run directory, a state directory (its latest run) or a shared directory (the latest run of its `.tidepool`). */
export function findRunDir(given: string): string {
  const dir = resolve(given);
  if (existsSync(join(dir, 'run.json'))) return dir;
  for (const state of [dir, join(dir, '.tidepool')]) {
    const latest = existsSync(join(state, 'runs')) ? runDirs(state).at(-1) : undefined;
    if (latest) return latest;
  }
  throw new Error(`${given}: not a run directory, nor a shared or state directory with runs (a run directory holds run.json)`);
}

export interface RunStatus {
  run: string;
  info: RunInfo;
  outcome?: RunOutcome;
  /** `done`, `failed`, `stopped`; `stopping` (members paused); or `running` (no outcome yet: running, or ended without one). */
  state: RunOutcome['status'] | 'running' | 'stopping';
  /** Tasks added while the run went (by tasks adding tasks), besides the workflow's own (`info.tasks`, with those added before it started). */
  added: number;
  done: number;
  upToDate: number;
  left: number;
  running: { task: string; attempt: number; node: string; seconds: number }[];
  failedAttempts: { task: string; attempt: number; node: string; error: string }[];
  /** Seconds since the run's journal or provenance last changed. */
  idleSeconds: number;
}

export function runStatus(runDir: string, now = Date.now()): RunStatus {
  const info = readRunInfo(runDir);
  const outcome = readOutcome(runDir);
  const { records, running, paused } = readProvenance(runDir);
  const done = Journal.scan(runDir).completions.size;
  const added = addedDuring(runDir);
  let last = statSync(join(runDir, 'run.json')).mtimeMs;
  for (const sub of ['journal', 'provenance']) {
    try {
      last = Math.max(last, statSync(join(runDir, sub)).mtimeMs);
    } catch {
      // nothing written there yet
    }
  }
  return {
    run: runDir, info, ...(outcome ? { outcome } : {}), state: outcome?.status ?? (paused.length > 0 ? 'stopping' : 'running'),
    added, done, upToDate: info.upToDate, left: Math.max(0, info.toRun + added - done),
    running: outcome ? [] : running.map((r) => ({ task: r.task, attempt: r.attempt, node: r.node, seconds: (now - r.since) / 1000 })),
    failedAttempts: records.filter((r) => r.status === 'failed').map((r) => ({ task: r.task, attempt: r.attempt, node: r.node, error: r.error ?? '' })),
    idleSeconds: (now - last) / 1000,
  };
}

export function statusText(s: RunStatus): string {
  const i = s.info;
  const lines = [
    `run ${s.run}`,
    `${i.workflow} (${i.format}, ${i.tasks} tasks${s.added > 0 ? ` + ${s.added} added while it ran` : ''}): ${s.state}${s.outcome?.error ? `: ${s.outcome.error}` : ''}`,
    `started ${i.started}${s.outcome ? `, ended ${s.outcome.ended}` : `, last activity ${s.idleSeconds.toFixed(0)} s ago`}`,
    `tasks: ${s.done + s.upToDate} of ${i.tasks + s.added} done (${s.upToDate} up to date when it started, ${s.done} run), ${s.running.length} running, ${s.left} left; ${s.failedAttempts.length} failed attempts`,
    ...s.running.map((r) => `  running: ${r.task} (attempt ${r.attempt}) on ${r.node} for ${r.seconds.toFixed(1)} s`),
    ...s.failedAttempts.slice(-10).map((f) => `  failed: ${f.task} (attempt ${f.attempt}) on ${f.node}: ${f.error.split('\n')[0]}`),
  ];
  return lines.join('\n');
}

export interface TransformationStatistics {
  transformation: string;
  attempts: number;
  succeeded: number;
  failed: number;
  /** Seconds, over successful attempts. */
  min: number;
  max: number;
  mean: number;
  total: number;
}

export interface RunStatistics {
  run: string;
  workflow: string;
  format: string;
  /** The workflow's tasks, with those added at run time. */
  tasks: number;
  upToDate: number;
  /** Tasks with a successful attempt in this run (recreations apart), tasks whose last attempt failed. */
  succeeded: number;
  failed: number;
  incomplete: number;
  attempts: number;
  retries: number;
  recreations: number;
  /** First attempt's start to last attempt's end (seconds). */
  wallTime: number;
  /** Sum of every attempt's duration, and of the successful ones'. */
  cumulativeTime: number;
  cumulativeSucceededTime: number;
  bytes: { shared: number; peer: number; local: number; out: number };
  transformations: TransformationStatistics[];
  hosts: { host: string; node: string; attempts: number; seconds: number }[];
}

export function runStatistics(runDir: string): RunStatistics {
  const info = readRunInfo(runDir);
  const added = addedDuring(runDir);
  const { records } = readProvenance(runDir);
  const byTask = new Map<string, AttemptRecord[]>();
  for (const r of records) {
    if (r.recreate) continue;
    const list = byTask.get(r.task) ?? [];
    list.push(r);
    byTask.set(r.task, list);
  }
  let succeeded = 0;
  let failed = 0;
  for (const attempts of byTask.values()) {
    if (attempts.some((a) => a.status === 'ok')) succeeded++;
    else if (attempts.some((a) => a.status === 'failed')) failed++;
  }
  const stages = new Map<string, TransformationStatistics>();
  const hosts = new Map<string, { host: string; node: string; attempts: number; seconds: number }>();
  const bytes = { shared: 0, peer: 0, local: 0, out: 0 };
  let first = Infinity;
  let last = -Infinity;
  let cumulativeTime = 0;
  let cumulativeSucceededTime = 0;
  for (const r of records) {
    const s = stages.get(r.transformation) ?? { transformation: r.transformation, attempts: 0, succeeded: 0, failed: 0, min: Infinity, max: 0, mean: 0, total: 0 };
    s.attempts++;
    if (r.status === 'ok') {
      s.succeeded++;
      s.min = Math.min(s.min, r.duration);
      s.max = Math.max(s.max, r.duration);
      s.total += r.duration;
      cumulativeSucceededTime += r.duration;
    } else if (r.status === 'failed') s.failed++;
    stages.set(r.transformation, s);
    const h = hosts.get(r.node) ?? { host: r.host, node: r.node, attempts: 0, seconds: 0 };
    h.attempts++;
    h.seconds += r.duration;
    hosts.set(r.node, h);
    cumulativeTime += r.duration;
    first = Math.min(first, Date.parse(r.start));
    last = Math.max(last, Date.parse(r.end));
    bytes.shared += r.bytesIn.shared;
    bytes.peer += r.bytesIn.peer;
    bytes.local += r.bytesIn.local;
    bytes.out += r.bytesOut;
  }
  for (const s of stages.values()) {
    s.mean = s.succeeded > 0 ? s.total / s.succeeded : 0;
    if (s.min === Infinity) s.min = 0;
  }
  return {
    run: runDir, workflow: info.workflow, format: info.format, tasks: info.tasks + added, upToDate: info.upToDate,
    succeeded, failed, incomplete: Math.max(0, info.toRun + added - succeeded - failed),
    attempts: records.length, retries: records.filter((r) => !r.recreate && r.status !== 'ok').length, recreations: records.filter((r) => r.recreate && r.status === 'ok').length,
    wallTime: records.length > 0 ? (last - first) / 1000 : 0, cumulativeTime, cumulativeSucceededTime, bytes,
    transformations: [...stages.values()].sort((a, b) => (a.transformation < b.transformation ? -1 : 1)),
    hosts: [...hosts.values()].sort((a, b) => (a.node < b.node ? -1 : 1)),
  };
}

const table = (rows: (string | number)[][]): string[] => {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => String(r[c]).length)));
  return rows.map((r) => `  ${r.map((v, c) => (c === 0 ? String(v).padEnd(widths[c]!) : String(v).padStart(widths[c]!))).join('  ')}`.trimEnd());
};
const secs = (x: number) => x.toFixed(3);
const size = (x: number) => (x < 10_000 ? `${x} B` : x < 10_000_000 ? `${(x / 1e3).toFixed(1)} kB` : `${(x / 1e6).toFixed(1)} MB`);

export function statisticsText(s: RunStatistics): string {
  return [
    `Workflow ${s.workflow} (${s.format}), run ${s.run}`,
    '',
    ...table([
      ['Type', 'Succeeded', 'Failed', 'Incomplete', 'Up to date', 'Total', 'Retries', 'Total+Retries'],
      ['Tasks', s.succeeded, s.failed, s.incomplete, s.upToDate, s.tasks, s.retries, s.tasks + s.retries],
    ]),
    '',
    `Workflow wall time                        : ${secs(s.wallTime)} s (first attempt's start to last attempt's end)`,
    `Cumulative task wall time                 : ${secs(s.cumulativeTime)} s (every attempt)`,
    `Cumulative task wall time, succeeded      : ${secs(s.cumulativeSucceededTime)} s`,
    `Attempts                                  : ${s.attempts} (${s.retries} failed, ${s.recreations} recreations)`,
    `Bytes read                                : ${size(s.bytes.shared)} shared, ${size(s.bytes.peer)} peer to peer, ${size(s.bytes.local)} held locally; written ${size(s.bytes.out)}`,
    '',
    'Per transformation (seconds over successful attempts):',
    ...table([
      ['Transformation', 'Count', 'Succeeded', 'Failed', 'Min', 'Max', 'Mean', 'Total'],
      ...s.transformations.map((t) => [t.transformation, t.attempts, t.succeeded, t.failed, secs(t.min), secs(t.max), secs(t.mean), secs(t.total)]),
    ]),
    '',
    'Per node:',
    ...table([['Node', 'Host', 'Attempts', 'Seconds'], ...s.hosts.map((h) => [h.node, h.host, h.attempts, secs(h.seconds)])]),
  ].join('\n');
}

/** Tasks added while the run went (its additions, apart from those made before it started). */
function addedDuring(runDir: string): number {
  return new ExpansionLog(runDir).readNew().filter((r) => !r.before).reduce((n, r) => n + r.tasks.length, 0);
}
