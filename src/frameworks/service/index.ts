/**
 * tidepool-runtime/service: task parallelism as a service (docs/service.md) — ordinary closures run on
 * a remote cluster and their results and side effects come back. Needs the optional packages acorn,
 * acorn-walk and esbuild (clients), fastify (the service) and isolated-vm (the nodes' sandbox).
 */
export { Distribution, type DistributionOptions, type ClientOptions, type BatchOptions, type PackageTravel, type CacheStats, type StartedBatch } from './distribution.js';
export { DistributedTask, CancelledError } from './distributed-task.js';
export { SharedValue } from './shared-value.js';
export { CaptureError, type CaptureOptions } from './capture.js';
export { WriteConflictError, type Conflict } from './apply-changes.js';
export { startService, type ServiceOptions, type RunningService } from './service-server.js';
export { ServiceTenants, type TenantSpec, type TenantQuotas } from './service-tenants.js';
export { ServiceConnectionError } from './tls-errors.js';
export type { ConsoleLine } from './batch-settlement.js';
export type { BatchCosts } from './executor.js';
export type { ConnectOptions as ServiceConnectOptions } from './remote-executor.js';
export type { SandboxLimits } from './sandbox-pool.js';
export { default as serviceTask } from './service-task.js';
export { default as serviceJobKind } from './service-kind.js';
