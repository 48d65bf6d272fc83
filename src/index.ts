/**
 * tidepool-runtime: an elastic task-parallel runtime for TypeScript on Node.js.
 *
 * This entry point is what a program needs to run its own parallel code: define a task type
 * (`defineTask`) or a search problem (`defineSearch`), start or join a cluster (`Cluster`), submit,
 * scale and watch jobs. The other parts have entry points of their own, so that a program installs
 * and loads only what it uses:
 *
 * - `tidepool-runtime/iterative` — iterative Monte Carlo applications balanced by RUPER-LB
 * - `tidepool-runtime/malleable` — malleable object applications and the resource manager
 * - `tidepool-runtime/service`   — task parallelism as a service (closures on a remote cluster)
 * - `tidepool-runtime/workflow`  — many-task workflows (Pegasus, WfCommons, or built in code)
 * - `tidepool-runtime/coord`     — the coordination layer and its recipes (ZooKeeper or embedded)
 * - `tidepool-runtime/dashboard` — the live dashboard and Prometheus metrics of a cluster
 *
 * The service, the workflow file readers, the dashboard and code shipping need optional packages;
 * using one without them fails with a `MissingPackageError` that names the command to install them.
 */

// A program using the package runs jobs of any built-in kind (its embedded nodes do); each kind's code loads when a job of it runs.
import './frameworks/builtin-kinds.js';

// Tasks: what runs in parallel.
export { defineTask } from './runtime/worker/task.js';
export type { TaskContext, TaskDefinition, TaskType, TaskRef, ResultReducer, VarRules, SpawnOptions } from './runtime/worker/task.js';

// Clusters and jobs.
export { Cluster } from './runtime/client/cluster.js';
export type { ClusterEvent, EmbeddedClusterOptions, JobHandle, JobOptions, JobRequest } from './runtime/client/cluster.js';
export type { NodeEvent, KindReport } from './runtime/node/node-events.js';
export type { JobOutcome, TaskFailure } from './runtime/job/outcome.js';
export type { JobSpec, KindRef, NodeRange } from './runtime/job/job-spec.js';
export { requestJob } from './runtime/client/job-requests.js';
export { awaitOutcome } from './runtime/job/outcome.js';
export { listJobs } from './runtime/client/job-list.js';
export type { NodeInfo } from './runtime/scheduler/index.js';

// The search framework: branch-and-bound, decision and enumeration searches as task types.
export { defineSearch, solveSequentially } from './frameworks/search/define-search.js';
export type { SearchProblem, EnumerationProblem, DecisionProblem, OptimisationProblem, SearchResult, SearchKind } from './frameworks/search/search-problem.js';
export { rootSearchState } from './frameworks/search/search-state.js';
export type { SearchState, SearchInput } from './frameworks/search/search-state.js';

// Job kinds: what a job does on its nodes beyond the task pool (docs/job-kinds.md).
export { defineJobKind } from './runtime/kinds/job-kind.js';
export type { JobKind, JobKindDefinition, MemberContext, MemberRole, MemberCounters, LeaderContext, LeaderRole, LayerBody, KindEvent, KindEvents, PrepareContext, Prepared } from './runtime/kinds/job-kind.js';
export { moduleOnNode, obtainInput } from './runtime/job/job-inputs.js';
export { durableBlobs, onHold, secureBeforeLeaving, validateHold } from './runtime/job/durable-blobs.js';
export type { DurableBlobs, HoldMessage, JobMemberSide } from './runtime/job/durable-blobs.js';
export { registerJobKind } from './runtime/kinds/kind-registry.js';
export { taskPoolKind, prepareTaskPool, taskPoolMember, taskPoolLeader } from './runtime/pool/task-pool-kind.js';
export type { TaskPoolMember, TaskPoolHooks, TaskPoolOptions } from './runtime/pool/task-pool-kind.js';
export { TASK_POOL_KIND, taskPoolJob } from './runtime/pool/task-pool-ref.js';
export type { TaskPoolSpec, TaskPoolSubmission } from './runtime/pool/task-pool-spec.js';
export type { Workers } from './runtime/worker/worker-pool.js';
export { readTallies, settledTallies } from './runtime/job/tallies.js';
export type { JobTally, WorkCounters } from './runtime/job/tallies.js';
export { EventRing } from './runtime/kinds/kind-events.js';
export type { EventLists, TimedEvent } from './runtime/kinds/kind-events.js';
export { EventPublisher } from './runtime/node/event-source.js';
export type { EventPublisherOptions } from './runtime/node/event-source.js';

// Errors a program may meet, and logging.
export { DataError } from './data/data-error.js';
export type { DataErrorCode } from './data/data-error.js';
export { MissingPackageError } from './util/optional-package.js';
export { setLogLevel, setLogFormat, setLogger } from './util/log.js';
export type { LogLevel, Logger, Log, LogFields } from './util/log.js';

// Metrics: a node's registry and endpoint (NodeOptions.metrics, Cluster.embedded({ metrics })), a kind's histograms.
export { MetricsRegistry, NO_METRICS } from './runtime/metrics/metrics-registry.js';
export type { Metrics } from './runtime/metrics/metrics-registry.js';
export type { Histogram, HistogramDefinition } from './runtime/metrics/histogram.js';
export { startMetricsServer } from './runtime/metrics/metrics-server.js';
export type { MetricsServer, MetricsServerOptions, Probe } from './runtime/metrics/metrics-server.js';
export type { NodeMetricsOptions } from './runtime/node/node-observability.js';
