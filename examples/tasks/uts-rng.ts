/**
 * The splittable random stream of the Unbalanced Tree Search benchmark (UTS, Olivier et al., LCPC 2006):
 * a node's state is a SHA-1 digest (five 32-bit words); child i's state is SHA-1(parent state ‖ i as
 * 4 big-endian bytes); the root's is SHA-1(16 zero bytes ‖ seed). The node's random number is its last
 * word's low 31 bits. Every node's state depends only on its path from the root, so a tree has the same
 * shape however its parts are scattered over threads and machines, and node counts match UTS's
 * published ones (T3: 4,112,897 nodes).
 *
 * SHA-1 is written out for the one 64-byte block these short messages need: `crypto.createHash` costs
 * about a microsecond of setup per call, several times the hash itself.
 */

/** Message schedule scratch (one per thread; the hash never yields, so it is never shared mid-use). */
const W = new Int32Array(80);

/** Hashes the single padded block already in W[0..15] and writes the five digest words to `out` at `at`. */
function compressInto(out: Int32Array, at: number): void {
  for (let t = 16; t < 80; t++) {
    const x = W[t - 3]! ^ W[t - 8]! ^ W[t - 14]! ^ W[t - 16]!;
    W[t] = (x << 1) | (x >>> 31);
  }
  let a = 0x67452301, b = 0xefcdab89 | 0, c = 0x98badcfe | 0, d = 0x10325476, e = 0xc3d2e1f0 | 0;
  // Four loops, one per round function: no branch per round.
  for (let t = 0; t < 20; t++) {
    const temp = (((a << 5) | (a >>> 27)) + ((b & c) | (~b & d)) + e + 0x5a827999 + W[t]!) | 0;
    e = d; d = c; c = (b << 30) | (b >>> 2); b = a; a = temp;
  }
  for (let t = 20; t < 40; t++) {
    const temp = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + 0x6ed9eba1 + W[t]!) | 0;
    e = d; d = c; c = (b << 30) | (b >>> 2); b = a; a = temp;
  }
  for (let t = 40; t < 60; t++) {
    const temp = (((a << 5) | (a >>> 27)) + ((b & c) | (b & d) | (c & d)) + e + (0x8f1bbcdc | 0) + W[t]!) | 0;
    e = d; d = c; c = (b << 30) | (b >>> 2); b = a; a = temp;
  }
  for (let t = 60; t < 80; t++) {
    const temp = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + (0xca62c1d6 | 0) + W[t]!) | 0;
    e = d; d = c; c = (b << 30) | (b >>> 2); b = a; a = temp;
  }
  out[at] = 0x67452301 + a;
  out[at + 1] = (0xefcdab89 | 0) + b;
  out[at + 2] = (0x98badcfe | 0) + c;
  out[at + 3] = 0x10325476 + d;
  out[at + 4] = (0xc3d2e1f0 | 0) + e;
}

/** Writes the root's state for `seed` (SHA-1 of 20 bytes: 16 zeros, then the seed) to `out` at `at`. */
export function writeRootState(seed: number, out: Int32Array, at = 0): void {
  W.fill(0, 0, 16);
  W[4] = seed | 0;
  W[5] = 0x80000000 | 0; // padding bit after 20 bytes
  W[15] = 160; // message length in bits
  compressInto(out, at);
}

/** Writes the state of child `index` of the node whose state is `parent` (five words) to `out` at `at`. */
export function writeChildState(parent: ArrayLike<number>, index: number, out: Int32Array, at: number): void {
  W[0] = parent[0]!;
  W[1] = parent[1]!;
  W[2] = parent[2]!;
  W[3] = parent[3]!;
  W[4] = parent[4]!;
  W[5] = index;
  W[6] = 0x80000000 | 0; // padding bit after 24 bytes
  W[7] = W[8] = W[9] = W[10] = W[11] = W[12] = W[13] = W[14] = 0;
  W[15] = 192; // message length in bits
  compressInto(out, at);
}

/** The node's uniform draw in [0, 1): its last state word's low 31 bits over 2^31 (UTS's rng_toProb). */
export function nodeDraw(words: ArrayLike<number>, at: number): number {
  return (words[at + 4]! & 0x7fffffff) / 2147483648;
}
