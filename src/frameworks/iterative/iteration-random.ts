/**
 * Random numbers indexed by iteration: the stream of iteration i depends only on (seed, i), so an
 * iteration draws the same numbers whichever thread, process or retry runs it. Counter-based: the
 * k-th number of stream (seed, i) is a keyed hash of k (Wellons' lowbias32 finaliser, two rounds
 * keyed by seed and iteration), so pointing the generator at an iteration costs two hashes and no
 * allocation.
 */
const TWO_POW_32 = 4294967296;

function mix(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  x ^= x >>> 16;
  return x >>> 0;
}

export class IterationRandom {
  private k0 = 0;
  private k1 = 0;
  private n = 0;
  private spare: number | undefined;

  constructor(readonly seed: number) {}

  /** Points the generator at the start of iteration `i`'s stream (returns itself, no allocation). */
  at(i: number): this {
    const lo = i >>> 0;
    const hi = Math.floor(i / TWO_POW_32) >>> 0;
    this.k0 = mix(lo ^ mix(this.seed ^ 0x9e3779b9));
    this.k1 = mix((hi + 0x632be5ab) ^ this.k0);
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
