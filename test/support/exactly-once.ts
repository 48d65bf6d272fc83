/**
 * Test support: an exactly-once checker. Every job kind has units of work that must each be counted
 * once in a result, whatever failed on the way — search nodes, iteration indices, workflow task
 * attempts, malleable iterations, service task indices. A test names the units it expects (or, where
 * a result only holds a total, the total the problem implies), feeds in what the run counted, and
 * `assert()` fails naming the units missing, counted twice or more, and counted but never expected.
 *
 * The expected units and totals come from the problem, never from the code under test: the size of
 * an unpruned TSP tree is a closed form, a workflow's tasks are in its file, a range of iteration
 * indices or of service task indices is what the test asked for.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** How many of each kind of problem a failure message lists before "… and N more". */
const LISTED = 8;

function listed<T>(items: T[], show: (item: T) => string): string {
  const head = items.slice(0, LISTED).map(show).join(', ');
  return items.length > LISTED ? `${head} … and ${items.length - LISTED} more` : head;
}

/** The units of one kind of work, each expected to be counted exactly once. */
export class ExactlyOnce<U extends string | number> {
  private readonly expected: Set<U>;
  private readonly counts = new Map<U, number>();

  constructor(readonly kind: string, expected: Iterable<U>) {
    this.expected = new Set(expected);
  }

  /** Units `lo`, `lo`+1, … `hi`−1. */
  static range(kind: string, lo: number, hi: number): ExactlyOnce<number> {
    return new ExactlyOnce(kind, Array.from({ length: Math.max(0, hi - lo) }, (_, i) => lo + i));
  }

  /** Records that the run counted `unit` (`times` times). */
  count(unit: U, times = 1): this {
    this.counts.set(unit, (this.counts.get(unit) ?? 0) + times);
    return this;
  }

  countAll(units: Iterable<U>): this {
    for (const u of units) this.count(u);
    return this;
  }

  /** Units counted `[lo, hi)`: a range of indices as one entry (a block of iterations, say). */
  countRange(lo: number, hi: number): this {
    for (let u = lo; u < hi; u++) this.count(u as U);
    return this;
  }

  /** What is wrong, in words (empty when every expected unit was counted exactly once and nothing else was). */
  problems(): string[] {
    const missing = [...this.expected].filter((u) => !this.counts.has(u));
    const repeated = [...this.counts].filter(([u, n]) => this.expected.has(u) && n > 1);
    const unexpected = [...this.counts].filter(([u]) => !this.expected.has(u));
    return [
      ...(missing.length ? [`${missing.length} never counted: ${listed(missing, String)}`] : []),
      ...(repeated.length ? [`${repeated.length} counted more than once: ${listed(repeated, ([u, n]) => `${String(u)} (${n}×)`)}`] : []),
      ...(unexpected.length ? [`${unexpected.length} counted but not expected: ${listed(unexpected, ([u, n]) => `${String(u)} (${n}×)`)}`] : []),
    ];
  }

  /** Fails, naming what is wrong, unless every expected unit was counted exactly once and nothing else was. */
  assert(context = ''): void {
    const problems = this.problems();
    assert.deepEqual(problems, [], `${context ? `${context}: ` : ''}${this.kind} (${this.expected.size} expected): ${problems.join('; ')}`);
  }
}

/**
 * For results that hold only a total (a search's count of nodes): the total must be what the
 * problem implies; a unit lost and another counted twice would still cancel out, so a test pairs this
 * with a check that depends on every unit (an optimum, a bit-identical value).
 */
export function assertCountedTotal(kind: string, counted: number, expected: number, context = ''): void {
  assert.equal(counted, expected, `${context ? `${context}: ` : ''}${kind}: ${counted} counted, ${expected} expected (${counted > expected ? `${counted - expected} counted twice or more` : `${expected - counted} never counted`})`);
}

// ---------------------------------------------------------------------------------------------
// What the problems imply

/**
 * Search nodes of an unpruned TSP tree over `cities` cities with the first one fixed: the root, then
 * every ordered choice of k of the other n−1 cities: Σ_{k=0}^{n−1} (n−1)!/(n−1−k)!.
 */
export function tspTreeSize(cities: number): number {
  let total = 1;
  let level = 1;
  for (let k = 1; k <= cities - 1; k++) {
    level *= cities - k;
    total += level;
  }
  return total;
}

// ---------------------------------------------------------------------------------------------
// What a workflow's journal says

function journalFiles(dir: string): string[] {
  try {
    return readdirSync(dir).filter((n) => n.endsWith('.log')).sort();
  } catch {
    return [];
  }
}

export interface Completion {
  task: number;
  node: string;
}

/**
 * The workflow task completions (`D task node run` lines) in a run's journal directory (a fresh
 * shared directory per run: every line is this run's): each is one task attempt that finished and
 * was recorded. The journal in the shared directory is the workflow's record of what is done (a
 * member reconciling after a view change reads it), so a completion counts wherever it was written —
 * by a node cut off meanwhile too — and each task must have exactly one.
 */
export function workflowCompletions(dir: string): Completion[] {
  const out: Completion[] = [];
  for (const name of journalFiles(dir)) {
    for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
      const [kind, task, node] = line.split(' ');
      if (kind === 'D' && task !== undefined && node !== undefined) out.push({ task: Number(task), node });
    }
  }
  return out;
}
