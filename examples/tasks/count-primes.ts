/**
 * A task type as an application writes it: count the primes in [lo, hi). The state is plain data;
 * `split` hands the upper half of the remaining range to a new task whenever tidepool wants work
 * (an idle worker, a node that joined, a steal request); `shouldMigrate` lets a draining node
 * hand the rest of the range to another node. No threads, sockets or serialization here.
 */
import { defineTask } from '../../src/index.js';

export interface Range {
  lo: number;
  hi: number;
  /** Primes found so far in the part already done (travels with the task when it migrates). */
  found: number;
}

function isPrime(n: number): boolean {
  if (n < 2) return false;
  if (n % 2 === 0) return n === 2;
  for (let d = 3; d * d <= n; d += 2) if (n % d === 0) return false;
  return true;
}

export default defineTask<Range, number>({
  name: 'count-primes',
  run(range, ctx) {
    while (range.lo < range.hi) {
      if (ctx.shouldMigrate()) return;
      if (isPrime(range.lo)) range.found++;
      range.lo++;
      if ((range.lo & 1023) === 0) ctx.potentialSplit();
    }
    ctx.emit(range.found);
  },
  split(range) {
    if (range.hi - range.lo < 4096) return undefined;
    const mid = range.lo + Math.floor((range.hi - range.lo) / 2);
    const upper = { lo: mid, hi: range.hi, found: 0 };
    range.hi = mid;
    return upper;
  },
  result: { initial: () => 0, combine: (a, b) => a + b },
});
