/**
 * Random numbers indexed by iteration: the stream of iteration i depends only on (seed, i), so an
 * iteration draws the same numbers whichever thread, process or retry runs it. Counter-based: the
 * k-th number of stream (seed, i) is a keyed hash of k (Wellons' lowbias32 finaliser, two rounds
 * keyed by seed and iteration), so pointing the generator at an iteration costs two hashes and no
 * allocation.
 *
 * Seeds are 64-bit: the low word keys the first round, the high word the second, each through a
 * bijection, so for any one iteration two different seeds give two different keys. A seed below 2^32
 * gives the same streams as when seeds were 32-bit.
 */
const TWO_POW_32 = 4294967296;
const SEED_LIMIT = 1n << 64n;

function mix(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  x ^= x >>> 16;
  return x >>> 0;
}

/** What a seed may be given as: a whole number up to 2^53 − 1, or a bigint or decimal string up to 2^64 − 1. */
export type Seed = number | bigint | string;

/**
 * The seed as a bigint in [0, 2^64), or a RangeError naming `what`. A number above 2^53 − 1 is refused:
 * it was already rounded where it was written (give it as a bigint or a decimal string).
 */
export function seedValue(seed: Seed, what = 'seed'): bigint {
  let value: bigint;
  if (typeof seed === 'bigint') value = seed;
  else if (typeof seed === 'number') {
    if (!Number.isSafeInteger(seed)) {
      throw new RangeError(`${what} must be a whole number ≥ 0${Number.isInteger(seed) ? ' given as a bigint or a decimal string above 2^53 − 1 (a larger number has been rounded already)' : ''}, got ${String(seed)}`);
    }
    value = BigInt(seed);
  } else if (typeof seed === 'string' && /^\d+$/.test(seed.trim())) value = BigInt(seed.trim());
  else throw new RangeError(`${what} must be a whole number ≥ 0, got ${JSON.stringify(seed)}`);
  if (value < 0n || value >= SEED_LIMIT) throw new RangeError(`${what} must be a whole number from 0 to 2^64 − 1 (18446744073709551615), got ${value}`);
  return value;
}

export class IterationRandom {
  /** The seed's two words, each already through its own bijection. */
  private readonly s0: number;
  private readonly s1: number;
  private k0 = 0;
  private k1 = 0;
  private n = 0;
  private spare: number | undefined;
  /** The seed, as a decimal string (0 … 2^64 − 1). */
  readonly seed: string;

  constructor(seed: Seed) {
    const value = seedValue(seed);
    this.seed = value.toString();
    this.s0 = mix(Number(value & 0xffffffffn) ^ 0x9e3779b9);
    const hi = Number(value >> 32n);
    // 0 for seeds below 2^32 (the streams they always had), a bijection of the high word otherwise.
    this.s1 = (mix(hi ^ 0x85ebca6b) ^ mix(0x85ebca6b)) >>> 0;
  }

  /** Points the generator at the start of iteration `i`'s stream (returns itself, no allocation). */
  at(i: number): this {
    const lo = i >>> 0;
    const hi = Math.floor(i / TWO_POW_32) >>> 0;
    this.k0 = mix(lo ^ this.s0);
    this.k1 = mix((hi + 0x632be5ab) ^ this.k0 ^ this.s1);
    this.n = 0;
    this.spare = undefined;
    return this;
  }

  /** The next 32 random bits of the stream, as an unsigned integer. */
  nextUint32(): number {
    this.n = (this.n + 1) >>> 0;
    return mix((mix(this.n ^ this.k0) + this.k1) >>> 0);
  }

  /** Uniform in [0, 1) with 53 random bits. */
  uniform(): number {
    const a = this.nextUint32() >>> 5;
    const b = this.nextUint32() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  }

  /** Exponential with mean 1 (an optical depth, a waiting time). */
  exponential(): number {
    return -Math.log(1 - this.uniform());
  }

  /** Standard normal (Box–Muller; the second value of each pair is kept for the next call). */
  normal(): number {
    if (this.spare !== undefined) {
      const z = this.spare;
      this.spare = undefined;
      return z;
    }
    const r = Math.sqrt(-2 * Math.log(1 - this.uniform()));
    const phi = 2 * Math.PI * this.uniform();
    this.spare = r * Math.sin(phi);
    return r * Math.cos(phi);
  }
}
