/**
 * A task module in plain JavaScript, as `tidepool submit` takes it (a file is resolved from the current
 * directory; every node must be able to import it, so on several machines put it where all of them
 * have it). It counts the primes below `n`: the root state is `{"n": N}`, and the range splits in
 * halves whenever tidepool wants work for another worker or node.
 *
 *   tidepool submit examples/count.js --flexibility malleable --min 1 --max 2 --root '{"n":200000}' --zk 127.0.0.1:2181
 *   tidepool result JOB --zk 127.0.0.1:2181 --wait 1m      # 17984
 */
import { defineTask } from 'tidepool-runtime';

/** The root `{n}` becomes the range [0, n) with nothing found yet (in place: the state travels as it is). */
function range(s) {
  if (s.hi === undefined) Object.assign(s, { lo: 0, hi: s.n, found: 0 });
  return s;
}

function isPrime(k) {
  if (k < 2) return false;
  if (k % 2 === 0) return k === 2;
  for (let d = 3; d * d <= k; d += 2) if (k % d === 0) return false;
  return true;
}

export default defineTask({
  name: 'count',
  run(state, ctx) {
    const s = range(state);
    while (s.lo < s.hi) {
      if (ctx.shouldMigrate()) return;
      if (isPrime(s.lo)) s.found++;
      s.lo++;
      if ((s.lo & 1023) === 0) ctx.potentialSplit();
    }
    ctx.emit(s.found);
  },
  split(state) {
    const s = range(state);
    if (s.hi - s.lo < 4096) return undefined;
    const mid = s.lo + Math.floor((s.hi - s.lo) / 2);
    const upper = { n: s.n, lo: mid, hi: s.hi, found: 0 };
    s.hi = mid;
    return upper;
  },
  result: { initial: () => 0, combine: (a, b) => a + b },
});
