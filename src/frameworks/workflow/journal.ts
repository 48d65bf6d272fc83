/**
 * The workflow's journal in the shared directory: one append-only file per member, a line per
 * finished task (`D task node`) and per intermediate file saved to shared storage (`S file`). Task
 * state itself lives in memory on the members; the journal is what survives them: a dispatcher
 * reads it when it reconciles, and a resumed workflow skips the tasks it lists.
 */
import { appendFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JournalState } from './dispatcher.js';

export class Journal {
  constructor(readonly dir: string, private readonly member: string, private readonly run: string) {
    mkdirSync(dir, { recursive: true });
  }

  /** Appended synchronously: a completion is durable before it is reported. `R` marks a re-run that recreated lost files. */
  done(entries: [number, string][], recreated = false): void {
    if (entries.length > 0) appendFileSync(join(this.dir, `${this.member}.log`), entries.map(([t, node]) => `${recreated ? 'R' : 'D'} ${t} ${node} ${this.run}\n`).join(''));
  }

  saved(files: number[]): void {
    if (files.length > 0) appendFileSync(join(this.dir, `${this.member}.log`), files.map((f) => `S ${f}\n`).join(''));
  }

  /**
   * Everything every member (of this run and earlier ones) wrote; the last line about a task wins.
   * A task finished by an earlier run is "done on" no live node: its files are gone unless saved.
   */
  static read(dir: string, run: string): JournalState {
    return Journal.scan(dir, run).state;
  }

  /** The state, and how many times each task was completed (D) and re-run to recreate files (R). */
  static scan(dir: string, run = ''): { state: JournalState; completions: Map<number, number>; recreations: number } {
    const state: JournalState = { done: new Map(), saved: new Set() };
    const completions = new Map<number, number>();
    let recreations = 0;
    let names: string[];
    try {
      names = readdirSync(dir).filter((n) => n.endsWith('.log'));
    } catch {
      return { state, completions, recreations };
    }
    for (const name of names) {
      for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
        const [kind, a, b, from] = line.split(' ');
        if ((kind === 'D' || kind === 'R') && a !== undefined && b !== undefined) state.done.set(Number(a), from === run ? b : `(run ${from})`);
        else if (kind === 'S' && a !== undefined) state.saved.add(Number(a));
        if (kind === 'D') completions.set(Number(a), (completions.get(Number(a)) ?? 0) + 1);
        if (kind === 'R') recreations++;
      }
    }
    return { state, completions, recreations };
  }
}
