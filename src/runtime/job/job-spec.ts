/**
 * What a job is, as its submitter wrote it to `<job>/spec` and every node reads it: which kind runs
 * it and that kind's part of the spec, how many nodes it runs on, and what it brings along (an input
 * every member's workers may read, shipped code). Nothing here is any one kind's: the task pool's
 * task type and variables, a malleable job's application, a workflow's configuration are `kindSpec`.
 */
import { randomBytes } from 'node:crypto';
import type { BlobRef } from '../../data/blob-directory.js';
import type { SharedInputForm } from '../worker/shared-input.js';
import type { PeerAddress } from '../../transport/types.js';

/** Where a job kind's code lives (module specifier and export name); `builtin:` names ship with tidepool. */
export interface KindRef {
  module: string;
  export: string;
}

/** How many nodes a job runs on. */
export interface NodeRange {
  /** Nodes it asks for at submission; the scheduler assigns them as they are free. */
  requested: number;
  /** It does not start with fewer (a task pool may start with 0: on whatever is free). */
  min: number;
  /** It never gets more (absent: no limit). */
  max?: number;
}

/**
 * A job as stored in its `spec` znode: its kind and the kind's part of the spec, its node range, a label
 * for listings, and what it brings along (input, shipped code). A kind's `prepare` receives it at submission.
 */
export interface JobSpec<KindSpec = unknown> {
  id: string;
  /** The job's kind (kinds/kind-registry.ts loads it on every node). */
  kind: KindRef;
  /** The kind's own part of the spec, as its `prepare` left it at submission. */
  kindSpec: KindSpec;
  nodes: NodeRange;
  createdAt: number;
  /** What the job runs, for listings (a task module, an application, a workflow's name). */
  label: string;
  /** Read-only data shared by the job's workers (TaskContext.input), if any and small. */
  input?: unknown;
  /** A large input lives in the data plane instead: binary ('bytes') or MessagePack ('msgpack'). */
  inputBlob?: { ref: BlobRef; form: SharedInputForm };
  /** A module of the submitter's machine (`module`, as the kind's spec names it) shipped as a bundle. */
  code?: { module: string; bundle: BlobRef };
  /** The resource manager that places this job's nodes (e.g. 'manager'); the cluster's reconciler leaves it alone. */
  managedBy?: string;
  /**
   * The submitting client's data plane, when it serves one (its id and address on the node channel):
   * the last place asked to keep a copy of the job's large final value (result-copies.ts).
   */
  submitter?: PeerAddress;
  /**
   * HMAC by the cluster secret over every other field (job/job-signature.ts): a node runs the job only when
   * it verifies (job/code-admission.ts).
   */
  signature?: string;
}

export function newJobId(): string {
  return `j-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
}
