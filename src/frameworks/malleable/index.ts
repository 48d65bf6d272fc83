/**
 * tidepool-runtime/malleable: malleable iterative applications (docs/malleable.md) — the object model
 * (`defineMalleable`), submission and rescaling of malleable jobs, the bundled applications — and the
 * resource manager that places rigid, moldable and malleable jobs.
 */
export { defineMalleable, type MalleableApp, type MalleableDefinition, type AppRef, type AnyMalleableApp, type StepContext, type Reductions } from './malleable-app.js';
export type { Delivered, Send } from './object-messages.js';
export type { ReduceOp } from './collectives.js';
export { runSequential } from './sequential.js';
export type { Strategy } from './load-balance.js';
export { MALLEABLE_KIND, malleableJob } from './malleable-kind-ref.js';
export { submitMalleable, rescaleMalleable, vacateMalleable, malleableProgress, type MalleableJob, type MalleableJobOptions, type MalleableProgress } from './submit.js';
export type { MalleableRuntimeOptions, MalleableSpec, MalleableOutcome, MalleableStats, RescaleAck } from './runtime-options.js';
export { MALLEABLE_APPS } from './applications.js';
export type { GridParams, GridResult } from './apps/grid-blocks.js';
export * from './manager/index.js';
