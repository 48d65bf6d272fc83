/**
 * Test application: a job whose final value is megabytes of incompressible bytes — far more than the
 * coordination service takes in one znode. Each task produces the bytes of its range (a counter-mode
 * hash stream, so any byte can be checked independently) and the result collects the pieces.
 */
import { createHash } from 'node:crypto';
import { defineTask } from '../../../src/runtime/worker/task.js';

/** Bytes per emitted piece. */
const PIECE = 256 * 1024;

export interface Piece { lo: number; bytes: Uint8Array }

/** Bytes lo .. hi-1 of the stream: SHA-256 of each 32-byte block's index. */
export function streamBytes(lo: number, hi: number): Uint8Array {
  const out = new Uint8Array(hi - lo);
  for (let i = lo; i < hi;) {
    const block = Math.floor(i / 32);
    const digest = createHash('sha256').update(String(block)).digest();
    const from = i - block * 32;
    const take = Math.min(32 - from, hi - i);
    out.set(digest.subarray(from, from + take), i - lo);
    i += take;
  }
  return out;
}

/** The pieces of a result put in order: the whole stream, or an error naming a gap or an overlap. */
export function assemble(pieces: Piece[], total: number): Uint8Array {
  const sorted = [...pieces].sort((a, b) => a.lo - b.lo);
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of sorted) {
    if (p.lo !== at) throw new Error(`piece at ${p.lo}, expected ${at}`);
    out.set(p.bytes, at);
    at += p.bytes.length;
  }
  if (at !== total) throw new Error(`${at} of ${total} bytes`);
  return out;
}

export default defineTask<{ lo: number; hi: number }, Piece[]>({
  name: 'big-result',
  run(s, ctx) {
    while (s.lo < s.hi) {
      const end = Math.min(s.hi, s.lo + PIECE);
      ctx.emit([{ lo: s.lo, bytes: streamBytes(s.lo, end) }]);
      s.lo = end;
      ctx.potentialSplit();
    }
  },
  split(s) {
    if (s.hi - s.lo < 2 * PIECE) return undefined;
    const mid = s.lo + Math.floor((s.hi - s.lo) / 2);
    const upper = { lo: mid, hi: s.hi };
    s.hi = mid;
    return upper;
  },
  result: { initial: () => [], combine: (a, b) => a.concat(b) },
});
