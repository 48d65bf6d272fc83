/**
 * π by Monte Carlo as an iterative application: darts thrown at the unit square, counted inside the
 * quarter circle. The application says only how to run iterations and combine tallies; tidepool
 * balances them over the threads and nodes.
 */
import { defineIterative } from '../../src/frameworks/iterative/index.js';

export interface Darts {
  thrown: number;
  inside: number;
}

export default defineIterative<Darts, { dartsPerIteration: number }>({
  name: 'pi-darts',
  iterate(first, count, tally, ctx) {
    for (let i = first; i < first + count; i++) {
      const r = ctx.random(i); // iteration i's own stream: the same numbers wherever i runs
      for (let k = 0; k < ctx.params.dartsPerIteration; k++) {
        const x = r.uniform();
        const y = r.uniform();
        if (x * x + y * y < 1) tally.inside++;
      }
      tally.thrown += ctx.params.dartsPerIteration;
    }
  },
  result: {
    initial: () => ({ thrown: 0, inside: 0 }),
    combine: (a, b) => ({ thrown: a.thrown + b.thrown, inside: a.inside + b.inside }),
  },
});
