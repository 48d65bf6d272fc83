/**
 * Plain sequential Stencil2D and Wave2D over one whole padded grid, written without the object
 * model: the reference every malleable run must match bit for bit. The block hashes are taken the
 * way the applications take them (interior rows of each block, little-endian float64).
 */
import { createHash } from 'node:crypto';

export interface PlainResult {
  checksum: string;
  sum: number;
}

function finish(n: number, blocks: number, a: Float64Array): PlainResult {
  const w = n + 2;
  const h = createHash('sha256');
  let sum = 0;
  const span = (b: number) => [Math.floor((n * b) / blocks), Math.floor((n * (b + 1)) / blocks)] as const;
  for (let by = 0; by < blocks; by++) {
    for (let bx = 0; bx < blocks; bx++) {
      const [r0, r1] = span(by);
      const [c0, c1] = span(bx);
      const block = createHash('sha256');
      let s = 0;
      for (let r = r0; r < r1; r++) {
        const row = a.subarray((r + 1) * w + c0 + 1, (r + 1) * w + c1 + 1);
        block.update(Buffer.from(row.buffer, row.byteOffset, row.byteLength));
        for (const v of row) s += v;
      }
      h.update(block.digest('hex'));
      sum += s;
    }
  }
  return { checksum: h.digest('hex'), sum };
}

export function plainStencil(n: number, iterations: number, blocks: number): PlainResult {
  const w = n + 2;
  let u = new Float64Array(w * w);
  for (let c = 1; c <= n; c++) u[c] = 1; // the top edge is held at 1
  for (let r = 0; r < n; r++) for (let c = 0; c < n; c++) u[(r + 1) * w + c + 1] = ((r * 131 + c * 71) % 97) / 97;
  let v = u.slice();
  for (let it = 0; it < iterations; it++) {
    for (let r = 1; r <= n; r++) for (let c = 1; c <= n; c++) {
      const p = r * w + c;
      v[p] = (u[p]! + u[p - w]! + u[p + w]! + u[p - 1]! + u[p + 1]!) * 0.2;
    }
    [u, v] = [v, u];
  }
  return finish(n, blocks, u);
}

export function plainWave(n: number, iterations: number, blocks: number): PlainResult {
  const w = n + 2;
  const mid = (n - 1) / 2;
  const sigma2 = 2 * (n / 16) ** 2;
  let u = new Float64Array(w * w);
  for (let r = 0; r < n; r++) for (let c = 0; c < n; c++) u[(r + 1) * w + c + 1] = Math.exp(-((r - mid) ** 2 + (c - mid) ** 2) / sigma2);
  let prev = u.slice();
  for (let it = 0; it < iterations; it++) {
    for (let r = 1; r <= n; r++) for (let c = 1; c <= n; c++) {
      const p = r * w + c;
      const x = u[p]!;
      prev[p] = 2 * x - prev[p]! + 0.25 * (u[p - w]! + u[p + w]! + u[p - 1]! + u[p + 1]! - 4 * x);
    }
    [u, prev] = [prev, u];
  }
  return finish(n, blocks, u);
}
