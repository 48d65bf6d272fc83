// Plain-text 0/1 knapsack instances:
//   # comment lines, trailing `# comments` and blank lines are allowed anywhere
//   n capacity          first non-comment line
//   value weight        n lines, one item each
// All numbers are non-negative integers (at most 2^53 - 1).
import { Rng } from '../../../util/rng.js';
import { InputError } from '../input-error.js';

export interface KnapsackInstance {
  name: string;
  capacity: number;
  values: number[];
  weights: number[];
}

/** Item counts above this are rejected as absurd. */
export const MAX_KNAPSACK_ITEMS = 10_000_000;
/** knapsackByDynamicProgramming refuses capacities above this. */
export const MAX_DP_CAPACITY = 10_000_000;
/** …and tables (items × (capacity + 1) bits) above this many bits (128 MB). */
const MAX_DP_TABLE_BITS = 2 ** 30;

const DEFAULT_FILE = '<input>';

const fields = (k: number): string => `${k} field${k === 1 ? '' : 's'}`;

function basenameOf(file: string): string {
  if (file === DEFAULT_FILE) return 'input';
  const base = file.slice(Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\')) + 1);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(0, dot) : base;
}

/** Parses the text format above. Throws {@link InputError} with the 1-based line number on malformed input. */
export function parseKnapsack(text: string, file: string = DEFAULT_FILE): KnapsackInstance {
  function fail(line: number | undefined, detail: string): never {
    throw new InputError(file, line, detail);
  }
  function count(token: string, line: number, what: string): number {
    if (/^\+?\d+$/.test(token)) {
      const x = Number(token);
      if (!Number.isSafeInteger(x)) fail(line, `${what} ${token} is too large (at most ${Number.MAX_SAFE_INTEGER})`);
      return x;
    }
    if (/^-\d+(?:\.\d*)?$/.test(token)) fail(line, `${what} ${token} is negative (expected a non-negative integer)`);
    if (/^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/.test(token)) fail(line, `${what} ${token} is not an integer`);
    return fail(line, `non-numeric token "${token}" (expected ${what})`);
  }

  let n: number | undefined;
  let capacity = 0;
  let headerLine = 0;
  const values: number[] = [];
  const weights: number[] = [];

  let lineNo = 0;
  for (const raw of text.split('\n')) {
    lineNo++;
    const hash = raw.indexOf('#');
    const line = (hash >= 0 ? raw.slice(0, hash) : raw).trim();
    if (line.length === 0) continue;
    const t = line.split(/\s+/);
    if (n === undefined) {
      if (t.length !== 2) fail(lineNo, `expected the header "n capacity", found ${fields(t.length)}`);
      n = count(t[0]!, lineNo, 'item count');
      capacity = count(t[1]!, lineNo, 'capacity');
      if (n > MAX_KNAPSACK_ITEMS) fail(lineNo, `item count ${n} is absurd (at most ${MAX_KNAPSACK_ITEMS})`);
      headerLine = lineNo;
      continue;
    }
    if (values.length === n) fail(lineNo, `too many items: expected ${n} (header, line ${headerLine}), found more`);
    if (t.length !== 2) fail(lineNo, `expected an item "value weight", found ${fields(t.length)}`);
    values.push(count(t[0]!, lineNo, 'value'));
    weights.push(count(t[1]!, lineNo, 'weight'));
  }
  if (n === undefined) fail(undefined, 'missing header "n capacity"');
  if (values.length < n) fail(headerLine, `too few items: expected ${n} (header), found ${values.length}`);
  return { name: basenameOf(file), capacity, values, weights };
}

/**
 * A weakly correlated random instance (the classic hard-ish family): weights uniform in 1..1000, each value the
 * weight ± up to 100 (at least 1), capacity half the total weight. Seeded, so (n, seed) always gives the same items.
 */
export function randomKnapsack(n: number, seed: number): KnapsackInstance {
  if (!Number.isInteger(n) || n < 1 || n > MAX_KNAPSACK_ITEMS) throw new RangeError(`n must be an integer in 1..${MAX_KNAPSACK_ITEMS}, got ${n}`);
  const rng = new Rng(seed);
  const values: number[] = [];
  const weights: number[] = [];
  let total = 0;
  for (let i = 0; i < n; i++) {
    const w = rng.int(1, 1000);
    weights.push(w);
    values.push(Math.max(1, w + rng.int(-100, 100)));
    total += w;
  }
  return { name: `knap${n}-${seed}`, capacity: Math.floor(total / 2), values, weights };
}

/**
 * Exact optimum by dynamic programming over capacities 0..capacity (for tests and cross-checks):
 * O(n × capacity) time, n × (capacity + 1) bits for the choices. Items are returned 0-based, ascending.
 */
export function knapsackByDynamicProgramming(k: KnapsackInstance): { value: number; items: number[] } {
  const n = k.values.length;
  const cap = k.capacity;
  if (k.weights.length !== n) throw new RangeError(`${n} values but ${k.weights.length} weights`);
  if (!Number.isInteger(cap) || cap < 0 || cap > MAX_DP_CAPACITY) throw new RangeError(`capacity ${cap} is out of range 0..${MAX_DP_CAPACITY} for the DP`);
  const words = Math.ceil((cap + 1) / 32);
  if (n * words * 32 > MAX_DP_TABLE_BITS) throw new RangeError(`${n} items × capacity ${cap} is too large for the DP table`);
  const best = new Float64Array(cap + 1);
  const took = new Uint32Array(n * words);
  for (let i = 0; i < n; i++) {
    const w = k.weights[i]!;
    const v = k.values[i]!;
    const row = i * words;
    for (let c = cap; c >= w; c--) {
      const candidate = best[c - w]! + v;
      if (candidate > best[c]!) {
        best[c] = candidate;
        took[row + (c >>> 5)] = took[row + (c >>> 5)]! | (1 << (c & 31));
      }
    }
  }
  const items: number[] = [];
  let c = cap;
  for (let i = n - 1; i >= 0; i--) {
    if (((took[i * words + (c >>> 5)]! >>> (c & 31)) & 1) !== 0) {
      items.push(i);
      c -= k.weights[i]!;
    }
  }
  items.reverse();
  return { value: best[cap]!, items };
}
