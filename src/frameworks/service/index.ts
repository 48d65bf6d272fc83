/**
 * tidepool-runtime/service: task parallelism as a service (docs/service.md) — ordinary closures run on
 * a remote cluster and their results and side effects come back. Needs the optional packages acorn,
 * acorn-walk and esbuild (clients), fastify (the service) and isolated-vm (the nodes' sandbox).
 */
export { Distribution, DistributedTask, type DistributionOptions, type BatchOptions, type PackageTravel } from './distribution.js';
export { CaptureError, type CaptureOptions } from './capture.js';
export { WriteConflictError, type Conflict } from './apply-changes.js';
export { startService, type ServiceOptions, type RunningService } from './service-server.js';
export type { BatchCosts } from './executor.js';
export type { ConnectOptions as ServiceConnectOptions } from './remote-executor.js';
export type { SandboxLimits } from './sandbox-pool.js';
export { default as serviceBatchTask } from './service-task.js';
