/**
 * Runs examples/malleable/particles.ts as a malleable job on an embedded cluster of three nodes:
 * it starts on 3, shrinks to 1 at iteration 20 and expands to 3 at iteration 40, and the result
 * equals the sequential run of the same application (every particle counted once, in the same cell).
 *
 *   npx tsx examples/malleable/run-particles.ts
 */
import { Cluster } from '../../src/index.js';
import { runSequential, submitMalleable } from '../../src/frameworks/malleable/index.js';
import particles, { type RingCount } from './particles.js';

export async function runParticles() {
  const params = { cells: 24, particlesPerCell: 50, iterations: 60 };
  const cluster = await Cluster.embedded({ nodes: 3, workers: 1 });
  try {
    const app = { module: new URL('./particles.ts', import.meta.url).href, export: 'default' };
    const job = await submitMalleable<RingCount>(cluster, app, params, { nodes: 3, runtime: { rescaleAt: [{ iteration: 20, nodes: 1 }, { iteration: 40, nodes: 3 }] } });
    const { result, stats } = await job.result();
    return { result, sequential: runSequential<RingCount>(particles, params), rescales: stats.rescales.map((r) => `${r.kind} to ${r.nodes.length} at ${r.iteration}`) };
  } finally {
    await cluster.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(JSON.stringify(await runParticles()));
