/**
 * The resource manager for rigid, moldable and malleable jobs (docs/malleable.md, "Resource manager"):
 * its public API, exported with the malleable framework (tidepool-runtime/malleable). The policies'
 * internals, the split-phase executor and the trace simulators are not exported: the benches import
 * them from their files.
 */
export { FLEXIBILITIES, type Flexibility, type ManagedJob } from './managed-job.js';
export { POLICY_NAMES, type PolicyName } from './policies.js';
export { ResourceManager, warnNode, clearWarning, listWarnings, type NodeWarning, type ResourceManagerOptions } from './resource-manager.js';
export { parseFailureLine, followFailureFeed, FailureFeedError, type FailurePrediction } from './failure-feed.js';
export {
  submitManagedJob, listManagedJobs, readManagedJob, requestRescale, releasePin, requestResize,
  type ManagedSubmitOptions, type ManagedJobInfo, type ManagedRecord, type RescaleEvent,
} from './manager-store.js';
