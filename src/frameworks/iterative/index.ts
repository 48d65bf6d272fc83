/**
 * tidepool-runtime/iterative: iterative applications (docs/iterative.md) — Monte Carlo runs balanced
 * across threads and nodes by RUPER-LB, work stealing or a static split, bit-identical whatever the balancing.
 */
export { defineIterative, type IterativeTaskType } from './define-iterative.js';
export { runIterative, submitIterative, iterateSequentially, type IterativeOptions } from './run-iterative.js';
export { ITERATIVE_KIND } from './iterative-kind-ref.js';
export { IterationRandom, type Seed } from './iteration-random.js';
export type { BalanceStrategy, IterationContext, IterativeDefinition, IterativeResult, IterativeTask, IterativeTaskResult, RuperSettings } from './iterative-types.js';
export type { NodeFigures } from './figures.js';
