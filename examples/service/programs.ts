/**
 * The seed's programs (seed 002 §4) as ordinary functions of a module, and their distributed forms:
 * closures over these functions are the tasks. Nothing here knows about sockets, threads or
 * serialization.
 */
import type { Distribution } from '../../src/frameworks/service/index.js';

/** The smallest factor of n (n itself when prime), by trial division — seed 002 Fig. 1. */
export function factorize(n: number): number {
  for (let k = 2; k * k <= n; k++) if (n % k === 0) return k;
  return n;
}

/**
 * The smallest factor of a 64-bit number (n itself when prime), by trial division in BigInt arithmetic:
 * the paper's `long` (Fig. 1) where a JavaScript number would round products above 2^53.
 */
export function factorizeBig(n: bigint): bigint {
  if (n % 2n === 0n) return 2n;
  for (let k = 3n; k * k <= n; k += 2n) if (n % k === 0n) return k;
  return n;
}

/**
 * `count` 64-bit products (2^63 ≤ p·q < 2^64) of two primes, for the paper's Table 1 and Fig. 5: the smaller
 * factor p is one of the largest primes below 2^bits, the larger q the first prime from 2^63.5 / p — so that
 * trial division, which stops at p, takes about 2^(bits-1) steps whatever the product's size.
 */
export function products64(count: number, bits: number): bigint[] {
  const isPrime = (n: bigint) => n > 1n && factorizeBig(n) === n;
  const out: bigint[] = [];
  for (let p = (1n << BigInt(bits)) - 1n; out.length < count; p -= 2n) {
    if (!isPrime(p)) continue;
    let q = BigInt(Math.floor(2 ** 63.5 / Number(p))) | 1n;
    while (!isPrime(q)) q += 2n;
    out.push(p * q);
  }
  return out;
}

/** Escape counts of one image row of the Mandelbrot set (one byte per pixel). */
export function mandelbrotRow(y: number, width: number, height: number, maxIter: number): Uint8Array {
  const row = new Uint8Array(width);
  const ci = (y / height) * 2.4 - 1.2;
  for (let x = 0; x < width; x++) {
    const cr = (x / width) * 3.5 - 2.5;
    let zr = 0, zi = 0, i = 0;
    while (i < maxIter && zr * zr + zi * zi <= 4) {
      const t = zr * zr - zi * zi + cr;
      zi = 2 * zr * zi + ci;
      zr = t;
      i++;
    }
    row[x] = i === maxIter ? 0 : 1 + (i % 255);
  }
  return row;
}

/** Primes in [lo, hi). */
export function countPrimes(lo: number, hi: number): number {
  let count = 0;
  for (let n = Math.max(lo, 2); n < hi; n++) {
    let prime = true;
    for (let k = 2; k * k <= n; k++) if (n % k === 0) { prime = false; break; }
    if (prime) count++;
  }
  return count;
}

const MOVES = [[1, 2], [2, 1], [2, -1], [1, -2], [-1, -2], [-2, -1], [-2, 1], [-1, 2]] as const;

/** Open knight's tours on an n×n board that start on square `start` (row-major index). */
export function knightTours(n: number, start: number): number {
  const visited = new Uint8Array(n * n);
  const walk = (square: number, depth: number): number => {
    if (depth === n * n) return 1;
    let tours = 0;
    const r = Math.floor(square / n), c = square % n;
    for (const [dr, dc] of MOVES) {
      const rr = r + dr, cc = c + dc;
      if (rr < 0 || rr >= n || cc < 0 || cc >= n) continue;
      const next = rr * n + cc;
      if (visited[next]) continue;
      visited[next] = 1;
      tours += walk(next, depth + 1);
      visited[next] = 0;
    }
    return tours;
  };
  visited[start] = 1;
  return walk(start, 1);
}

/** One task per item, started as one batch; resolves with their results once the batch is over (its costs are in `distribution.lastCosts`). */
async function taskPerItem<T, R>(distribution: Distribution, items: T[], fn: (item: T) => R): Promise<R[]> {
  const tasks = items.map((item) => distribution.task(() => fn(item)));
  const batch = await distribution.start(tasks);
  const results = await Promise.all(tasks.map((t) => t.result));
  await batch.done;
  return results;
}

/** Seed 002 Fig. 1: one task per number. */
export function factorizeAll(distribution: Distribution, numbers: number[]): Promise<number[]> {
  return taskPerItem(distribution, numbers, factorize);
}

/** Seed 002 Table 1: one task per 64-bit number, factorized in BigInt arithmetic. */
export function factorizeAllBig(distribution: Distribution, numbers: bigint[]): Promise<bigint[]> {
  return taskPerItem(distribution, numbers, factorizeBig);
}

/** Seed 002 Fig. 3: a parallel loop whose iterations each fill one row (a new array) of the image. */
export async function mandelbrot(distribution: Distribution, width: number, height: number, maxIter: number): Promise<Uint8Array> {
  const rows = new Array<Uint8Array | undefined>(height).fill(undefined);
  await distribution.parallelFor(0, height, (y) => {
    rows[y] = mandelbrotRow(y, width, height, maxIter);
  });
  return mandelbrotImage(rows as Uint8Array[], width);
}

/** The image of its rows, one after the other. */
export function mandelbrotImage(rows: Uint8Array[], width: number): Uint8Array {
  const image = new Uint8Array(width * rows.length);
  rows.forEach((row, y) => image.set(row, y * width));
  return image;
}

/** Primes below `limit`, counted in `chunks` tasks whose counts land in an array. */
export async function primes(distribution: Distribution, limit: number, chunks: number): Promise<number> {
  const counts = new Array<number>(chunks).fill(0);
  const size = Math.ceil(limit / chunks);
  await distribution.parallelFor(0, chunks, (i) => {
    counts[i] = countPrimes(i * size, Math.min(limit, (i + 1) * size));
  });
  return counts.reduce((a, b) => a + b, 0);
}

/** All open knight's tours of an n×n board: one task per start square. */
export async function allKnightTours(distribution: Distribution, n: number): Promise<number> {
  const counts = await taskPerItem(distribution, Array.from({ length: n * n }, (_, start) => start), (start) => knightTours(n, start));
  return counts.reduce((a, b) => a + b, 0);
}
