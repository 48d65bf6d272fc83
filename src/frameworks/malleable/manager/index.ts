/** The resource manager for rigid, moldable and malleable jobs (docs/malleable.md, "Resource manager"). */
export { FLEXIBILITIES, type Flexibility, type ManagedJob, type ManagedView } from './managed-job.js';
export { equipartitionPolicy, type EquipartitionOptions } from './equipartition-policy.js';
export { managerPolicy, rigidFcfsPolicy, POLICY_NAMES, type PolicyName } from './policies.js';
export { decideJobs, type JobDecision } from './job-decisions.js';
export { SplitPhaseExecutor, type ExecutorEvent } from './split-phase-executor.js';
export { ManagerCore, type QueuedJob } from './manager-core.js';
export { ResourceManager, warnNode, clearWarning, type ResourceManagerOptions } from './resource-manager.js';
export {
  submitManagedJob, listManagedJobs, readManagedJob, requestRescale, MANAGER_NAME,
  type ManagedSubmitOptions, type ManagedJobInfo, type ManagedRecord, type RescaleEvent, type RescaleChannel,
} from './manager-store.js';
export { simulateWorkload, type SimJobSpec, type SimCosts, type SimResult, type SimJobResult } from './workload-sim.js';
export { parseCrosbyJson, parsePauleyTsv, type PricePoint, type PriceSeries } from './traces/spot-price-trace.js';
export { priceSensitiveRun, type SpotRun } from './traces/spot-rescale.js';
export { spotFleetRun, SPOT_NOTICE_MS, type SpotFleetOptions, type SpotFleetRun, type FleetEvent } from './traces/spot-fleet.js';
export { parseLanlCsv, type Outage } from './traces/failure-trace.js';
export { simulateFaultTolerance, type PoolOutage, type FtCosts, type FtResult } from './traces/proactive-ft.js';
export { TraceError } from './traces/trace-error.js';
