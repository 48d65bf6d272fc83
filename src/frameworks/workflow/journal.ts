/**
 * The workflow's journal: what survives the members. Each run has a directory of its own under the
 * shared directory's state directory (`<shared>/.tidepool/runs/<run>/journal/`), with one
 * append-only file per member, a line per
 *
 *   D task node fingerprint recipe id    a task finished for the first time in this run
 *   R task node fingerprint recipe id    it ran again to recreate lost intermediate files
 *   F fingerprint size mtimeNs sha256 name   the task with that fingerprint wrote this file to the shared directory
 *   S file                               an intermediate file saved to the shared directory when the run was stopped
 *
 * Within a run, a dispatcher reads its own run's lines by task number (a reconcile). Across runs only
 * fingerprints count (`JournalHistory`): task numbers differ between workflows, and a completion
 * applies to a task of another run only if it is the same computation. Names and ids are URI-encoded.
 */
import { appendFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JournalState } from './dispatcher.js';
import { formatStamp, parseStamp, type FileStamp } from './file-stamp.js';

/** A completion to journal: the task, where it ran, and what identifies it across runs. */
export interface Completion {
  task: number;
  node: string;
  fingerprint: string;
  recipe: string;
  id: string;
  /** Files it wrote to the shared directory (final outputs; intermediates too in the shared storage mode). */
  wrote: { name: string; stamp: FileStamp }[];
}

export const journalDir = (runDir: string) => join(runDir, 'journal');

export class Journal {
  private readonly path: string;

  constructor(runDir: string, member: string) {
    mkdirSync(journalDir(runDir), { recursive: true });
    this.path = join(journalDir(runDir), `${member.replace(/[^\w.-]/g, '_')}.log`);
  }

  /** Appended synchronously: a completion is durable before it is reported. `R` marks a re-run that recreated lost files. */
  done(entries: Completion[], recreated = false): void {
    if (entries.length === 0) return;
    const kind = recreated ? 'R' : 'D';
    let text = '';
    for (const c of entries) {
      for (const w of c.wrote) text += `F ${c.fingerprint} ${formatStamp(w.stamp)} ${encodeURIComponent(w.name)}\n`;
      text += `${kind} ${c.task} ${c.node} ${c.fingerprint} ${c.recipe} ${encodeURIComponent(c.id)}\n`;
    }
    appendFileSync(this.path, text);
  }

  /** Intermediate files saved to the shared directory by a stopping run, with their producers' fingerprints and stamps. */
  saved(files: { file: number; fingerprint: string; name: string; stamp: FileStamp }[]): void {
    if (files.length === 0) return;
    appendFileSync(this.path, files.map((s) => `F ${s.fingerprint} ${formatStamp(s.stamp)} ${encodeURIComponent(s.name)}\nS ${s.file}\n`).join(''));
  }

  /** This run's state by task number: where each finished task ran (the last line about a task wins), files saved. */
  static read(runDir: string): JournalState {
    return Journal.scan(runDir).state;
  }

  /** This run's state, and how many times each task was completed (D) and re-run to recreate files (R). */
  static scan(runDir: string): { state: JournalState; completions: Map<number, number>; recreations: number } {
    const state: JournalState = { done: new Map(), saved: new Set() };
    const completions = new Map<number, number>();
    let recreations = 0;
    for (const line of journalLines(journalDir(runDir))) {
      const kind = line[0];
      if (kind !== 'D' && kind !== 'R' && kind !== 'S') continue;
      const [, a, b] = line.split(' ');
      if (kind === 'S') {
        if (a !== undefined) state.saved.add(Number(a));
        continue;
      }
      if (a === undefined || b === undefined) continue;
      const t = Number(a);
      state.done.set(t, b);
      if (kind === 'D') completions.set(t, (completions.get(t) ?? 0) + 1);
      else recreations++;
    }
    return { state, completions, recreations };
  }
}

/** Every line of every member's file in a journal directory (none if it does not exist). */
function* journalLines(dir: string): Generator<string> {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.log')).sort();
  } catch {
    return;
  }
  for (const name of names) {
    const text = readFileSync(join(dir, name), 'utf8');
    let from = 0;
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', from)) {
      yield text.slice(from, nl);
      from = nl + 1;
    }
  }
}

/** The run directories under a state directory, oldest first (run ids begin with their start time). */
export function runDirs(stateDir: string): string[] {
  try {
    return readdirSync(join(stateDir, 'runs')).sort().map((r) => join(stateDir, 'runs', r));
  } catch {
    return [];
  }
}

/** What every earlier run in a shared directory did, by fingerprint (the rerun planner's view of the journal). */
export class JournalHistory {
  /** Fingerprints with a completion (first or recreation) in some run. */
  readonly completed = new Set<string>();
  /** `fingerprint NUL name` → the stamps of the file as completions of that fingerprint left it (one per write). */
  private readonly written = new Map<string, FileStamp[]>();

  constructor(readonly runs: string[]) {
    for (const run of runs) {
      for (const line of journalLines(journalDir(run))) {
        const kind = line[0];
        if (kind === 'D' || kind === 'R') {
          const fp = line.split(' ', 4)[3];
          if (fp !== undefined) this.completed.add(fp);
        } else if (kind === 'F') {
          const [, fp, size, mtime, sha, name] = line.split(' ');
          const stamp = parseStamp(size, mtime, sha);
          if (fp === undefined || name === undefined || !stamp) continue;
          const key = `${fp}\u0000${decodeURIComponent(name)}`;
          const list = this.written.get(key);
          if (list) list.push(stamp);
          else this.written.set(key, [stamp]);
        }
      }
    }
  }

  static load(stateDir: string): JournalHistory {
    return new JournalHistory(runDirs(stateDir));
  }

  /**
   * The stamps a file had when completions of this fingerprint wrote it (oldest first). The file is
   * intact if it is as any of them left it: the same write, or (compared by content) the same bytes.
   */
  stampsOf(fingerprint: string, name: string): FileStamp[] {
    return this.written.get(`${fingerprint}\u0000${name}`) ?? [];
  }

  /** The latest completion of each of these task ids (any fingerprint): its recipe and its run, to say what changed. */
  lastCompletions(ids: Set<string>): Map<string, { recipe: string; run: string; fingerprint: string }> {
    return lastCompletions(this.runs, ids);
  }
}

/** The latest completion in these runs of each of these task ids (any fingerprint): its recipe and its run. */
export function lastCompletions(runs: readonly string[], ids: Set<string>): Map<string, { recipe: string; run: string; fingerprint: string }> {
  const out = new Map<string, { recipe: string; run: string; fingerprint: string }>();
  for (const run of runs) {
    for (const line of journalLines(journalDir(run))) {
      if (line[0] !== 'D' && line[0] !== 'R') continue;
      const [, , , fingerprint, recipe, id] = line.split(' ');
      if (id === undefined) continue;
      const decoded = decodeURIComponent(id);
      if (ids.has(decoded)) out.set(decoded, { recipe: recipe!, run, fingerprint: fingerprint! });
    }
  }
  return out;
}
