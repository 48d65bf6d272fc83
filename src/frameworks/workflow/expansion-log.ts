/**
 * A run's additions (workflow-growth.ts), in the order every member applies them:
 * `<run>/expansions.jsonl`, one JSON line per adding task — its sequence number, its id and
 * fingerprint, the tasks it added (checked declarations) and their fingerprints. The leader appends a
 * line before it tells anyone, so a member that hears of addition N (every message carries the
 * count its sender applied) reads it here. Lines written by a submitter before the run starts
 * (`before`: additions of tasks that are up to date, from an earlier run) come first.
 *
 * Read in file order, a line counts only if its sequence number is the next one and its task added
 * nothing yet: two leaders for a moment (a failover) cannot make members disagree.
 */
import { appendFileSync, closeSync, mkdirSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import type { TaskDecl } from './workflow-builder.js';

export interface ExpansionRecord {
  seq: number;
  /** The adding task's id and fingerprint (an up-to-date task's additions are applied again by a later run). */
  by: string;
  byFingerprint: string;
  tasks: TaskDecl[];
  fingerprints: string[];
  /** Applied by the submitter before the run started. */
  before?: true;
}

export const expansionsPath = (runDir: string) => join(runDir, 'expansions.jsonl');

/** Reads a run's additions as they are appended (from where it stopped), keeping only the lines that count. */
export class ExpansionLog {
  private offset = 0;
  private readonly accepted = new Set<string>();
  count = 0;

  constructor(private readonly runDir: string) {}

  /** The lines that count appended since the last call (none if the file does not exist yet). */
  readNew(): ExpansionRecord[] {
    let fd: number;
    try {
      fd = openSync(expansionsPath(this.runDir), 'r');
    } catch {
      return [];
    }
    const chunks: Buffer[] = [];
    let at = this.offset;
    try {
      for (;;) {
        const buf = Buffer.alloc(1 << 20);
        const n = readSync(fd, buf, 0, buf.length, at);
        if (n === 0) break;
        chunks.push(buf.subarray(0, n));
        at += n;
      }
    } finally {
      closeSync(fd);
    }
    const text = Buffer.concat(chunks);
    const end = text.lastIndexOf(0x0a) + 1; // a line still being written waits for the next call
    this.offset += end;
    const out: ExpansionRecord[] = [];
    for (const line of text.subarray(0, end).toString('utf8').split('\n')) {
      if (line === '') continue;
      let rec: ExpansionRecord;
      try {
        rec = JSON.parse(line) as ExpansionRecord;
      } catch {
        continue;
      }
      if (rec.seq !== this.count || this.accepted.has(rec.by)) continue;
      this.accepted.add(rec.by);
      this.count++;
      out.push(rec);
    }
    return out;
  }

  /** Appends a line (the leader: `seq` must be the count read so far). */
  append(rec: ExpansionRecord): void {
    mkdirSync(this.runDir, { recursive: true });
    appendFileSync(expansionsPath(this.runDir), `${JSON.stringify(rec)}\n`);
  }
}

/** Every run's additions by the adding task's fingerprint (the latest wins), for the rerun planner. */
export function expansionsByFingerprint(runDirs: string[]): Map<string, ExpansionRecord> {
  const out = new Map<string, ExpansionRecord>();
  for (const run of runDirs) for (const rec of new ExpansionLog(run).readNew()) out.set(rec.byFingerprint, rec);
  return out;
}
