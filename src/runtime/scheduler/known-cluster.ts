/**
 * The cluster as the reconciler's watches and its own commits have told it: membership, every
 * assignment, and each job's size, result and `started` marker. Each watch delivers one znode's
 * states in order; an assignment is also written by the reconciler's commits, whose results may be
 * newer or older than a delivery processed after them, so assignments are ordered by the
 * transaction id of their last change (mzxid). Each `learn…` says whether anything changed, so an
 * echo of the reconciler's own write does not cause another pass. When a pass may trust this view
 * instead of reading the cluster again is the reconciler's business (see Reconciler).
 */
export interface KnownAssignment {
  /** The job the node is assigned to ('' idle). */
  job: string;
  version: number;
  mtime: number;
  /** The transaction id of the znode's last change. */
  zxid: bigint;
}

export interface KnownJob {
  /** The desired size znode: its parsed value (null: absent or unreadable) and data version (-1: absent). */
  size: { value: number | null; version: number } | undefined;
  /** Whether the result znode exists (a job never un-finishes). */
  finished: boolean | undefined;
  /** Whether the `started` marker exists (it is never removed while the job exists). */
  started: boolean | undefined;
}

export class KnownCluster {
  members: readonly string[] | undefined;
  assignmentIds: readonly string[] | undefined;
  jobIds: readonly string[] | undefined;
  readonly assignments = new Map<string, KnownAssignment>();
  readonly jobs = new Map<string, KnownJob>();

  /** An assignment znode's state; true if it is newer than what is known and says something new. */
  learnAssignment(id: string, read: KnownAssignment): boolean {
    const known = this.assignments.get(id);
    if (known && known.zxid >= read.zxid) return false;
    this.assignments.set(id, read);
    return !known || known.job !== read.job || known.version !== read.version;
  }

  forgetAssignment(id: string): void {
    this.assignments.delete(id);
  }

  /** A job's size znode as its watch delivered it (version -1: absent); true if it changed. */
  learnSize(jobId: string, size: { value: number | null; version: number }): boolean {
    const job = this.job(jobId);
    if (job.size && job.size.version === size.version && job.size.value === size.value) return false;
    job.size = size;
    return true;
  }

  /** Whether a job's result znode exists; true if the job is newly known to be finished. */
  learnResult(jobId: string, exists: boolean): boolean {
    const job = this.job(jobId);
    if (job.finished) return false;
    job.finished = exists;
    return exists;
  }

  /** Whether a job's `started` marker exists (once known to exist, always). */
  learnStarted(jobId: string, started: boolean): void {
    const job = this.job(jobId);
    job.started = job.started === true || started;
  }

  forgetJob(jobId: string): void {
    this.jobs.delete(jobId);
  }

  /** Whether every listed node and job has its znodes known. */
  complete(): boolean {
    if (!this.members || !this.assignmentIds || !this.jobIds) return false;
    if (this.assignmentIds.some((id) => !this.assignments.has(id))) return false;
    return this.jobIds.every((id) => {
      const j = this.jobs.get(id);
      // A finished job needs nothing more (its nodes are released whatever its size).
      return j !== undefined && (j.finished === true || (j.size !== undefined && j.finished !== undefined && j.started !== undefined));
    });
  }

  private job(jobId: string): KnownJob {
    let job = this.jobs.get(jobId);
    if (!job) this.jobs.set(jobId, (job = { size: undefined, finished: undefined, started: undefined }));
    return job;
  }
}
