import stencil from '../src/frameworks/malleable/apps/stencil2d.js';
import { runSequential } from '../src/frameworks/malleable/sequential.js';
const t0 = performance.now();
runSequential(stencil, { grid: 1024, blocks: 8, iterations: 100 });
console.log('seq ms', performance.now() - t0);
