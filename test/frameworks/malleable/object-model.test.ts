import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import stencil from '../../../src/frameworks/malleable/apps/stencil2d.js';
import wave from '../../../src/frameworks/malleable/apps/wave2d.js';
import { emptyOutbox, ObjectHost, type Routed } from '../../../src/frameworks/malleable/object-host.js';
import { runSequential } from '../../../src/frameworks/malleable/sequential.js';
import { plainStencil, plainWave } from './plain-grids.js';

describe('the malleable object model', () => {
  it('Stencil2D over blocks equals a plain whole-grid Jacobi bit for bit', () => {
    for (const [grid, blocks, iterations] of [[24, 4, 30], [23, 3, 17], [16, 1, 5], [40, 5, 0]] as const) {
      const got = runSequential<{ checksum: string; sum: number }>(stencil, { grid, blocks, iterations });
      const want = plainStencil(grid, iterations, blocks);
      assert.equal(got.checksum, want.checksum, `grid ${grid}, ${blocks}² blocks, ${iterations} iterations`);
      assert.equal(got.sum, want.sum);
    }
  });

  it('Wave2D over blocks equals a plain whole-grid wave solver bit for bit', () => {
    const got = runSequential<{ checksum: string }>(wave, { grid: 32, blocks: 4, iterations: 25 });
    assert.equal(got.checksum, plainWave(32, 25, 4).checksum);
  });

  it('objects moved between hosts mid-run, with their unread messages, give the same result', () => {
    const p = { grid: 20, blocks: 4, iterations: 12 };
    const hosts = [new ObjectHost(stencil, p), new ObjectHost(stencil, p)];
    const owner = Array.from({ length: 16 }, (_, i) => i % 2);
    const route = (it: number, out: Routed[]) => {
      for (const h of [0, 1]) hosts[h]!.deliver(it, out.filter((m) => owner[m.to] === h));
    };
    route(0, hosts.flatMap((h, k) => h.init(owner.flatMap((o, i) => (o === k ? [i] : [])))));
    for (let it = 0; it < p.iterations; it++) {
      const out = emptyOutbox();
      for (const h of hosts) for (const i of h.indices()) h.step(i, it, out);
      route(it + 1, out.messages);
      if (it === 5) {
        // everything from host 1 to host 0 (a shrink), then half of it back (an expand)
        hosts[0]!.put(hosts[1]!.take(hosts[1]!.indices(), it + 1));
        owner.fill(0);
        assert.equal(hosts[1]!.size, 0);
      }
      if (it === 8) {
        const back = [1, 3, 5, 7, 9];
        hosts[1]!.put(hosts[0]!.take(back, it + 1));
        for (const i of back) owner[i] = 1;
      }
    }
    const summaries = [...hosts[0]!.summaries(), ...hosts[1]!.summaries()].sort((a, b) => a[0] - b[0]).map(([, s]) => s);
    const got = stencil.result(summaries as never, p);
    assert.equal(got.checksum, plainStencil(20, 12, 4).checksum);
  });

  it('bad parameters are refused naming the field', () => {
    assert.throws(() => runSequential(stencil, { grid: 10, blocks: 11, iterations: 1 }), /"blocks" must be a whole number from 1 to grid \(10\)/);
    assert.throws(() => runSequential(stencil, { grid: 10, blocks: 2, iterations: -1 }), /"iterations"/);
  });
});
