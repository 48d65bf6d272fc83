/**
 * tidepool: an elastic task-parallel runtime for TypeScript on Node.js.
 *
 * - Task API: `defineTask` (run, split, result reducer, global variables).
 * - Clusters: `Cluster.embedded()` (in-process, no external service) or `Cluster.connect('zk://…')`.
 * - Coordination layer and recipes (ZooKeeper or embedded), transports, and the node itself.
 * - Watching a cluster: `ClusterMonitor`, `startDashboard` (live page, server-sent events, Prometheus).
 */
export { CONTROL_CHECK_EVERY, defineTask, loadTaskType, type TaskContext, type TaskDefinition, type TaskType, type TaskRef, type ResultReducer, type VarRules, type SpawnOptions } from './runtime/task.js';
export { Cluster, type ClusterEvent, type EmbeddedClusterOptions, type JobHandle, type JobOptions } from './runtime/cluster.js';
export { TidepoolNode, type NodeOptions } from './runtime/node.js';
export type { NodeEvent } from './runtime/node-events.js';
export type { JobOutcome, JobSpec } from './runtime/job-spec.js';
export { submitJob, scaleJob, drainNode, cancelJob, requestJob, listNodes, listJobs, awaitOutcome, jobLeader, type NodeInfo, type SubmitOptions } from './runtime/job-control.js';
export { readTallies, settledTallies, type JobTally } from './runtime/job-tallies.js';
export { defineJobKind, type JobKind, type JobKindDefinition, type KindRef, type MemberContext, type MemberRole, type MemberCounters, type LeaderContext, type LeaderRole, type LayerBody } from './runtime/kinds/job-kind.js';
export { taskPoolKind, taskPoolMember, taskPoolLeader, TASK_POOL_KIND, type TaskPoolMember, type TaskPoolHooks } from './runtime/kinds/task-pool-kind.js';
export { runElastic, type ElasticRunOptions, type ElasticRunStats } from './runtime/client/elastic-run.js';
export type { TaskFailure } from './runtime/contributions.js';
export type { Workers } from './runtime/worker/worker-pool.js';
export { defineSearch, solveSequentially } from './frameworks/search/define-search.js';
export type { SearchProblem, EnumerationProblem, DecisionProblem, OptimisationProblem, SearchResult, SearchKind } from './frameworks/search/search-problem.js';
export { rootSearchState, type SearchState, type SearchInput } from './frameworks/search/search-state.js';
export * from './coord/index.js';
export { InProcessNetwork, InProcessTransport, TcpTransport, TransportError, type Transport, type Message, type PeerAddress } from './transport/index.js';
export { setLogLevel, setLogFormat, setLogger, type LogLevel, type Logger, type Log, type LogFields } from './util/log.js';
export { MetricsRegistry, NO_METRICS, type Metrics } from './runtime/metrics/metrics-registry.js';
export type { Histogram, HistogramDefinition } from './runtime/metrics/histogram.js';
export { startMetricsServer, type MetricsServer, type MetricsServerOptions, type Probe } from './runtime/metrics/metrics-server.js';
export type { NodeMetricsOptions } from './runtime/metrics/node-observability.js';
export { ClusterMonitor, type MonitorOptions } from './dashboard/cluster-monitor.js';
export { startDashboard, type DashboardOptions, type DashboardServer } from './dashboard/dashboard-server.js';
export { EventRing, type EventLists, type TimedEvent } from './runtime/kinds/kind-events.js';
export { EventPublisher, type EventPublisherOptions } from './runtime/event-source.js';
export type { ClusterSnapshot, NodeView, JobView, TimelinePoint, DashboardHello } from './dashboard/snapshot.js';
export { pruneFinishedJobs, type RetentionOptions } from './runtime/job-retention.js';
export { Reconciler, type ReconcilerOptions, type ReconcilerStats } from './runtime/scheduler/reconciler.js';
export { setDesiredSize, assignNamedNode } from './runtime/scheduler/job-sizing.js';
export { plan as planScheduling, applyDecisions } from './runtime/scheduler/planner.js';
export { fcfsPolicy, type FcfsOptions } from './runtime/scheduler/fcfs-policy.js';
export type { SchedulingPolicy } from './runtime/scheduler/policy.js';
export { validateNodeRange, jobBounds, fcfsOrder, type ClusterView, type NodeState, type JobState, type Decision } from './runtime/scheduler/cluster-view.js';
export { ControlChannel, CONTROL_MESSAGE_LIMIT, type ControlRequest, type ControlAck, type ControlServer, type RequestOptions } from './coord/recipes/control-channel.js';
export { ObjectStore, type ObjectStoreOptions, type BlobInfo } from './data/object-store.js';
export { BlobTransferService, type BlobTransferOptions, type FetchOptions, type FetchAuthorizer } from './data/blob-transfer.js';
export { BlobDirectory, type BlobRef, type BlobLocation, type BlobDirectoryOptions } from './data/blob-directory.js';
export { DataPlane, type DataPlaneOptions } from './data/data-plane.js';
export { DataError, type DataErrorCode } from './data/data-error.js';
export { hashOf, type BlobHash } from './data/content-hash.js';
export { MAX_REQUEST_BYTES, requestBytes } from './coord/request-size.js';
export * from './frameworks/service/index.js';
export * from './frameworks/iterative/index.js';
export * from './frameworks/malleable/manager/index.js';
export * from './frameworks/malleable/index.js';
export { loadWorkflow, parseWorkflow } from './frameworks/workflow/load-workflow.js';
export { WorkflowBuilder, type TaskDecl, type FileUse, type WorkflowSource } from './frameworks/workflow/workflow-builder.js';
export { WorkflowError } from './frameworks/workflow/workflow-error.js';
export { finalOutputs, workflowInputs, childrenOf, type Workflow, type WorkflowTask, type WorkflowFile, type WorkflowCounts, type CommandSpec, type FunctionRef, type WorkflowFunction } from './frameworks/workflow/workflow.js';
export { runWorkflow, submitWorkflow, prepareReplayInputs, WORKFLOW_KIND, WORKFLOW_TASK, type RunWorkflowOptions } from './frameworks/workflow/run-workflow.js';
export type { WorkflowJobConfig, WorkflowResult, MemberReport } from './frameworks/workflow/workflow-kind.js';
export { WorkflowEngine, type EngineIO, type EngineOptions, type EngineStats } from './frameworks/workflow/workflow-engine.js';
export { Journal } from './frameworks/workflow/journal.js';
