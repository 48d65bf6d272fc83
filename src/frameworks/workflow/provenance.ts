/**
 * What ran, attempt by attempt, as Pegasus' kickstart records it: each member appends one JSON line
 * per task attempt to `<run>/provenance/<member>.jsonl` when the attempt ends (the task, its
 * transformation, the attempt number, host and node, start and end, exit code, bytes read by source —
 * shared directory, peer, held here — and written), and a line per attempt started to
 * `<member>.started` (what `workflow status` counts as running), and `<member>.paused` when it stops
 * starting tasks because the run is being stopped. Lines are gathered per turn of the event loop and
 * appended together. The leader writes `<run>/outcome.json` when the run ends.
 */
import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { provenanceDir } from './run-directory.js';

export type AttemptStatus = 'ok' | 'failed' | 'input-lost';

export interface AttemptRecord {
  task: string;
  /** The stage or transformation (mProject, …). */
  transformation: string;
  attempt: number;
  /** It ran only to recreate intermediate files lost with a node (or not kept by an earlier run). */
  recreate?: boolean;
  host: string;
  node: string;
  /** ISO times, and the duration in seconds (from the milliseconds measured). */
  start: string;
  end: string;
  duration: number;
  status: AttemptStatus;
  /** A command's exit code (null when killed); absent for functions and replays. */
  exitCode?: number | null;
  error?: string;
  bytesIn: { shared: number; peer: number; local: number };
  bytesOut: number;
}

export interface RunOutcome {
  status: 'done' | 'failed' | 'stopped';
  ended: string;
  error?: string;
  /** Tasks completed in the run (recreations apart). */
  completed: number;
}

export class ProvenanceWriter {
  private records: string[] = [];
  private starts: string[] = [];
  private scheduled = false;
  private writing: Promise<void> = Promise.resolve();
  private readonly base: string;

  constructor(runDir: string, member: string) {
    this.base = join(provenanceDir(runDir), member.replace(/[^\w.-]/g, '_'));
  }

  started(task: string, attempt: number, at: number, recreate: boolean): void {
    this.starts.push(`${JSON.stringify([task, attempt, Math.round(at), recreate ? 1 : 0])}\n`);
    this.schedule();
  }

  ended(record: AttemptRecord): void {
    this.records.push(`${JSON.stringify(record)}\n`);
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const records = this.records.join('');
      const starts = this.starts.join('');
      this.records = [];
      this.starts = [];
      this.writing = this.writing.then(async () => {
        await mkdir(join(this.base, '..'), { recursive: true });
        if (starts !== '') await appendFile(`${this.base}.started`, starts);
        if (records !== '') await appendFile(`${this.base}.jsonl`, records);
      }).catch(() => undefined); // provenance is a record, not a reason to fail the run
    });
  }

  /** This member stopped starting tasks (the run is being stopped): `<member>.paused`, what `workflow status` shows as stopping. */
  paused(at = new Date()): void {
    try {
      mkdirSync(join(this.base, '..'), { recursive: true });
      writeFileSync(`${this.base}.paused`, `${at.toISOString()}\n`);
    } catch {
      // a record, not a reason to fail the stop
    }
  }

  /** Resolves when everything given so far is written. */
  async flushed(): Promise<void> {
    while (this.scheduled) await new Promise((r) => setImmediate(r));
    await this.writing;
  }
}

export async function writeOutcome(runDir: string, outcome: RunOutcome): Promise<void> {
  await writeFile(join(runDir, 'outcome.json'), `${JSON.stringify(outcome)}\n`);
}

export function readOutcome(runDir: string): RunOutcome | undefined {
  try {
    return JSON.parse(readFileSync(join(runDir, 'outcome.json'), 'utf8')) as RunOutcome;
  } catch {
    return undefined;
  }
}

/** Every attempt record of a run, and the attempts started (task and attempt) that have no record yet. */
export function readProvenance(runDir: string): { records: AttemptRecord[]; running: { task: string; attempt: number; since: number; node: string }[]; paused: string[] } {
  const dir = provenanceDir(runDir);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return { records: [], running: [], paused: [] };
  }
  const records: AttemptRecord[] = [];
  const started = new Map<string, { task: string; attempt: number; since: number; node: string }>();
  for (const name of names.sort()) {
    if (!name.endsWith('.jsonl') && !name.endsWith('.started')) continue;
    const text = readFileSync(join(dir, name), 'utf8');
    for (const line of text.split('\n')) {
      if (line === '') continue;
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        continue; // a line being written as we read
      }
      if (name.endsWith('.jsonl')) records.push(parsed as AttemptRecord);
      else if (name.endsWith('.started')) {
        const [task, attempt, since, recreate] = parsed as [string, number, number, number];
        const node = name.slice(0, -'.started'.length);
        started.set(`${task}\u0000${attempt}\u0000${recreate === 1}\u0000${node}`, { task, attempt, since, node });
      }
    }
  }
  for (const r of records) started.delete(`${r.task}\u0000${r.attempt}\u0000${r.recreate === true}\u0000${r.node.replace(/[^\w.-]/g, '_')}`);
  const paused = names.filter((n) => n.endsWith('.paused')).map((n) => n.slice(0, -'.paused'.length));
  return { records, running: [...started.values()], paused };
}
