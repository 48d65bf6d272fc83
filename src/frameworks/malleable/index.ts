/** Malleable iterative applications (docs/malleable.md): the object model, the job kind, balancing, submission. */
export { defineMalleable, loadMalleableApp, isMalleableApp, type MalleableApp, type MalleableDefinition, type MalleableExport, type AnyMalleableApp, type StepContext, type Delivered, type Send } from './malleable-app.js';
export { runSequential } from './sequential.js';
export { greedyLB, refineLB, blockMapping, balance, slotLoads, type Strategy } from './load-balance.js';
export { malleableKind, MALLEABLE_KIND } from './malleable-kind.js';
export { submitMalleable, rescaleMalleable, vacateMalleable, malleableProgress, type MalleableJob, type MalleableJobOptions, type MalleableProgress } from './submit.js';
export type { MalleableRuntimeOptions, MalleableInput, MalleableOutcome, MalleableStats, RescaleAck } from './runtime-options.js';
export { MALLEABLE_APPS } from './applications.js';
export type { GridParams, GridResult } from './apps/grid-blocks.js';
