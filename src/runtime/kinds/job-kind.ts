/**
 * The job-kind seam. A node keeps only assignment, membership and lifecycle; what a job does on
 * its member nodes and on its elected leader comes from the job's kind. The splittable task pool
 * (task-pool-kind.ts) is the first kind; frameworks bring their own (iterative balancing, malleable
 * object arrays, workflows), each a module exporting the result of `defineJobKind`, loaded by every
 * node from the module reference in the job spec — the same weak-migration rule as task types.
 */
import type { CoordClient } from '../../coord/types.js';
import type { DataPlane } from '../../data/data-plane.js';
import type { GlobalVariables } from '../../coord/recipes/global-variables.js';
import type { GroupMembership } from '../../coord/recipes/group-membership.js';
import type { RecipeStats } from '../../coord/recipes/recipe-stats.js';
import type { Log } from '../../util/log.js';
import type { Rng } from '../../util/rng.js';
import type { Metrics } from '../metrics/metrics-registry.js';
import type { StealPlannerOptions } from '../pool/steal-planner.js';
import type { JobPaths } from '../job/job-paths.js';
import type { NodeCounters } from '../node/node-stats.js';
import type { EventLists } from './kind-events.js';
import type { JobOutcome, JobSpec } from '../job/job-spec.js';
import type { RunnerEvent } from '../pool/job-runner.js';
import type { WorkerEvent, Workers } from '../worker/worker-pool.js';

/** Where a job kind's code lives (module specifier and export name); `builtin:` names ship with tidepool. */
export interface KindRef {
  module: string;
  export: string;
}

/** What a kind's member and leader code may use on its node. */
export interface MemberContext {
  readonly nodeId: string;
  readonly spec: JobSpec;
  readonly client: CoordClient;
  readonly paths: JobPaths;
  /** The node's worker threads; their events for this job reach `MemberRole.onWorker`. */
  readonly workers: Workers;
  readonly vars: GlobalVariables;
  /** The job's variable board (shared with workers), if the job declares variables. */
  readonly board: SharedArrayBuffer | undefined;
  readonly rng: Rng;
  /**
   * The node's data plane: blobs too large for the coordination service (inputs, states, results,
   * code), shared and obtained by reference; peers fetch them only for jobs they are members of.
   */
  readonly data?: DataPlane;
  /** The node's stealing parameters (tests and benchmarks tune them). */
  readonly steal?: StealPlannerOptions;
  /** Sends a layer message to the same job's member on another node (validated there by `validateMessage`). */
  send(to: string, body: LayerBody): Promise<void>;
  /** The other live members of the job. */
  peers(): string[];
  /** The job's live membership (read it; the node joins and leaves it). */
  readonly membership: GroupMembership;
  /** Reports what happened (steals, migrations, task completions, failures) to the node's listeners. */
  report(event: RunnerEvent): void;
  /**
   * The node's metrics as this kind's: histograms registered here carry `kind="<name>"` and are served
   * on the node's `/metrics` (absent, or recording nothing, when the node serves no metrics).
   */
  readonly metrics?: Metrics;
  /** Logging with this job's and node's ids as fields (absent: the process's `log`, without them). */
  readonly log?: Log;
}

/** Layer messages are plain objects with a string `type`. */
export interface LayerBody {
  type: string;
  [key: string]: unknown;
}

/** A kind's part on one member node, from joining the job to leaving it. */
export interface MemberRole {
  /** A layer message from another member (already validated). */
  onMessage?(from: string, body: LayerBody): void;
  /**
   * A message of ours came back undelivered: the receiver is not (or no longer) in this job.
   * The task pool treats a bounced steal as "nothing to give" and a bounced offer as refused.
   */
  onBounce?(from: string, body: LayerBody): void;
  onWorker?(event: WorkerEvent): void;
  peersJoined?(): void;
  peerLeft?(nodeId: string): void;
  /**
   * Hands everything this node holds to the remaining members; resolves when nothing is left.
   * `handOver: false` (the whole cluster is stopping): make everything durable, hand nothing over.
   */
  drain(opts?: { handOver?: boolean }): Promise<void>;
  /** The job ended or this node left it: stop at once. */
  stop(): void;
  /** Load and counters for status, the dashboard and metrics (kind-specific figures in `figures`). */
  load?(): { running: number; pooled: number };
  counters?(): MemberCounters;
  /** Coordination operations the role made (ledger writes and reads, say). */
  coordStats?(): RecipeStats;
}

/** The counters a member reports for its node in a job (published with the node's stats, shown by the dashboard). */
export interface MemberCounters extends Omit<NodeCounters, 'busy' | 'queued' | 'coord'> {
  /** Time this node's workers spent running the job's tasks (ms), for a kind that measures it. */
  workerMs?: number;
  /** Kind-specific figures (a layer adds its own without touching the core's). */
  figures?: Record<string, number>;
  /** Small bounded event lists for the dashboard (task spans, finish times; see kind-events.ts). */
  events?: EventLists;
}

/** What the job's elected leader has beyond a member's context: its own member role and `finish`. */
export interface LeaderContext extends MemberContext {
  /** This node's member role of the same job (the leader is a member too). */
  readonly member: MemberRole;
  /** Ends the job with this outcome (the first outcome written wins). */
  finish(outcome: JobOutcome): Promise<boolean>;
}

/** What runs on the job's elected leader while it leads; stopped when it loses leadership. */
export interface LeaderRole {
  stop(): void;
  /** Requests from the job's control channel (operator, resource manager); the returned value is the ack. */
  onControl?(type: string, body: unknown): Promise<unknown>;
}

/** A job kind as its author writes it (`defineJobKind`): the code every member runs, and optionally the leader's. */
export interface JobKindDefinition {
  /** Stable name (for logs, status and the dashboard). */
  name: string;
  member(ctx: MemberContext): MemberRole | Promise<MemberRole>;
  leader?(ctx: LeaderContext): LeaderRole | Promise<LeaderRole>;
  /**
   * Checks a layer message's shape on arrival; returns a description of what is wrong, or
   * undefined. A malformed frame from a peer is dropped and logged, never cast.
   */
  validateMessage?(body: LayerBody): string | undefined;
}

/** A job kind as `defineJobKind` returns it: export it from a module so that every node can load it by reference. */
export interface JobKind extends JobKindDefinition {
  readonly kind: 'tidepool.job-kind';
}

/** Declares a job kind; export it from a module so that every node can load it by reference. */
export function defineJobKind(definition: JobKindDefinition): JobKind {
  if (!definition || typeof definition.member !== 'function') throw new TypeError('defineJobKind: `member` must be a function');
  if (definition.leader !== undefined && typeof definition.leader !== 'function') throw new TypeError('defineJobKind: `leader` must be a function');
  return { ...definition, kind: 'tidepool.job-kind' };
}
