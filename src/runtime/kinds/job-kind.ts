/**
 * The job-kind seam. A node keeps only assignment, membership and lifecycle; what a job does on
 * its member nodes and on its elected leader comes from the job's kind, and what it needs in the
 * coordination service before any node joins from the kind's `prepare`, run at submission. The
 * task pool (runtime/pool/) is one kind among others; frameworks bring their own (iterative
 * balancing, malleable object arrays, workflows), each a module exporting the result of
 * `defineJobKind`, loaded by every node from the job spec's reference (kind-registry.ts) — the same
 * weak-migration rule as task types. Nothing here is any one kind's: messages, events and settings
 * are plain objects the kind gives meaning to.
 */
import type { CoordClient, Op } from '../../coord/types.js';
import type { CodeAdmission } from '../job/code-admission.js';
import type { GlobalVariables } from '../../coord/recipes/global-variables.js';
import type { GroupMembership } from '../../coord/recipes/group-membership.js';
import type { RecipeStats } from '../../coord/recipes/recipe-stats.js';
import type { BlobRef } from '../../data/blob-directory.js';
import type { DataPlane } from '../../data/data-plane.js';
import type { Log } from '../../util/log.js';
import type { Rng } from '../../util/rng.js';
import type { Metrics } from '../metrics/metrics-registry.js';
import type { JobPaths } from '../job/job-paths.js';
import type { JobSpec } from '../job/job-spec.js';
import type { JobOutcome } from '../job/outcome.js';
import type { WorkCounters } from '../job/tallies.js';
import type { WorkerEvent, Workers } from '../worker/worker-pool.js';
import type { EventLists } from './kind-events.js';

/** Layer messages are plain objects with a string `type`. */
export interface LayerBody {
  type: string;
  [key: string]: unknown;
}

/**
 * The events kinds report on a node (MemberContext.report), by type: a kind declares its own by
 * augmenting this interface (the task pool's steals, migrations, placements and completions:
 * pool/pool-events.ts), so that whoever listens to a node or a cluster gets them typed.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface KindEvents {}

/** One event a kind reports, as declared in KindEvents. */
export type KindEvent = { [T in keyof KindEvents]: { type: T } & KindEvents[T] }[keyof KindEvents];

/** What a kind's `prepare` may use at submission, on the submitter's side. */
export interface PrepareContext {
  readonly client: CoordClient;
  /** The job's znodes (not created yet: `share` creates the job's own first). */
  readonly paths: JobPaths;
  /** Stores bytes in the submitter's data plane for the job (a large root state, say); absent without one. */
  readonly share?: (bytes: Uint8Array, what: string) => Promise<BlobRef>;
}

/** What `prepare` hands back: the kind's part of the spec as it is stored, and what to create with the spec. */
export interface Prepared {
  /** The kind's spec as nodes read it (default: as submitted). */
  kindSpec?: unknown;
  /** Znodes created in the one transaction that creates the spec: all or none, and never a spec without them. */
  ops?: Op[];
}

/** What a kind's member and leader code may use on its node. */
export interface MemberContext {
  readonly nodeId: string;
  readonly spec: JobSpec;
  readonly client: CoordClient;
  readonly paths: JobPaths;
  /** The node's worker threads; their events for this job reach `MemberRole.onWorker`. */
  readonly workers: Workers;
  /** The job's global variables (a coordination recipe; the kind defines the ones it uses). */
  readonly vars: GlobalVariables;
  readonly rng: Rng;
  /**
   * The node's data plane: blobs too large for the coordination service (inputs, states, results,
   * code), shared and obtained by reference; peers fetch them only for jobs they are members of.
   */
  readonly data?: DataPlane;
  /** This node's settings for the job's kind, by its name (NodeOptions.kindOptions; tests and benchmarks tune with them). */
  readonly options?: unknown;
  /** Sends a layer message to the same job's member on another node (validated there by `validateMessage`). */
  send(to: string, body: LayerBody): Promise<void>;
  /** The other live members of the job. */
  peers(): string[];
  /** The job's live membership (read it; the node joins and leaves it). */
  readonly membership: GroupMembership;
  /**
   * The node's code admission: the job's spec and its kind were admitted before the kind was loaded; a
   * kind admits each further module the job names (the task pool's task module, a workflow's functions) before importing it.
   */
  readonly code: CodeAdmission;
  /** Reports what happened to the node's listeners (tagged with the job and the node; see KindEvents). */
  report(event: KindEvent): void;
  /** Ends the job as failed (the first outcome written wins), e.g. when a task failed for good. */
  fail(error: string): void;
  /**
   * The node's metrics as this kind's: histograms registered here carry `kind="<name>"` and are served
   * on the node's `/metrics` (absent, or recording nothing, when the node serves no metrics).
   */
  readonly metrics?: Metrics;
  /** Logging with this job's and node's ids as fields (absent: the process's `log`, without them). */
  readonly log?: Log;
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

/** The counters a member reports for its node in a job (published with the node's stats; the dashboard draws them for every kind that keeps them). */
export interface MemberCounters extends WorkCounters {
  /** Time this node's workers spent running the job's tasks (ms), for a kind that measures it. */
  workerMs?: number;
  /** Kind-specific figures (a layer adds its own without touching the core's). */
  figures?: Record<string, number>;
  /** Small bounded event lists for the dashboard (task spans, finish times; see kind-events.ts). */
  events?: EventLists;
}

/** A member's counters before it has any (or for a kind that keeps none). */
export const ZERO_COUNTERS: MemberCounters = { tasksDone: 0, splits: 0, stealsIn: 0, stealsOut: 0, migrationsIn: 0, migrationsOut: 0 };

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
  /** Stable name (for logs, status, the dashboard, and NodeOptions.kindOptions). */
  name: string;
  /**
   * Runs once, at submission, in the submitter's process: checks the kind's spec (a clear error there
   * rather than on every node) and returns what the job needs before any node joins (the task pool:
   * its ledger with the root task). Without it the spec is stored as submitted.
   */
  prepare?(spec: JobSpec, ctx: PrepareContext): Prepared | void | Promise<Prepared | void>;
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
  for (const fn of ['prepare', 'leader', 'validateMessage'] as const) {
    if (definition[fn] !== undefined && typeof definition[fn] !== 'function') throw new TypeError(`defineJobKind: \`${fn}\` must be a function`);
  }
  return { ...definition, kind: 'tidepool.job-kind' };
}
