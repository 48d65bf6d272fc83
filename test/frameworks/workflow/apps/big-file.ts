/** Function tasks for the workflow tests: one writes a file of several transfer chunks, one digests it. */
import { createHash } from 'node:crypto';

export const BIG_BYTES = 9 * 1024 * 1024 + 7;

export function bigContent(): Uint8Array {
  const b = new Uint8Array(BIG_BYTES);
  for (let i = 0; i < b.length; i++) b[i] = (i * 131 + (i >>> 13)) & 0xff;
  return b;
}

export function makeBig(): Record<string, Uint8Array> {
  return { 'big.bin': bigContent() };
}

export function digestBig(inputs: Record<string, Uint8Array>): Record<string, string> {
  const big = inputs['big.bin']!;
  return { 'digest.txt': `${big.length} ${createHash('sha256').update(big).digest('hex')}\n` };
}
