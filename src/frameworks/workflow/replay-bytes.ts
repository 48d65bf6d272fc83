/**
 * The content of a replayed file: `size` bytes determined by the file's key alone (a 32-bit hash
 * seeds xorshift words), so that every replay of a workflow writes bit-identical files, files of
 * equal size still differ (the data plane stores equal content once), and a test can check a file.
 */
import { hash32 } from './rendezvous.js';

export function replayBytes(key: string, size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  const words = new Uint32Array(bytes.buffer, 0, size >>> 2);
  let x = hash32(key) || 1;
  for (let i = 0; i < words.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    words[i] = x >>> 0;
  }
  for (let i = words.length * 4; i < size; i++) bytes[i] = (hash32(key, i) & 0xff);
  return bytes;
}
