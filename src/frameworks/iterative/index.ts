/** The iterative framework's public API (re-exported from tidepool's index). */
export { defineIterative, type IterativeTaskType } from './define-iterative.js';
export { runIterative, submitIterative, iterateSequentially, iterativeInput, ITERATIVE_KIND, type IterativeOptions } from './run-iterative.js';
export { IterationRandom } from './iteration-random.js';
export type { BalanceStrategy, IterationContext, IterativeDefinition, IterativeResult, RuperSettings } from './iterative-types.js';
export type { NodeFigures } from './figures.js';
