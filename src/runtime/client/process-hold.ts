/**
 * An embedded cluster keeps its process alive while it has work, and only then: its nodes' worker
 * threads do not hold the process (NodeOptions.holdsProcess), so a program that forgets
 * `cluster.close()` still ends once its jobs have. A job holds the process from the moment it exists
 * (whoever submitted it: `Cluster.submit`, a framework, the resource manager) until its outcome is
 * written or its znode is gone; a cluster operation (starting nodes, closing) holds it while it runs.
 */
import type { CoordClient } from '../../coord/types.js';
import { watchChildren } from '../../coord/watch.js';
import { awaitOutcome } from '../job/outcome.js';
import { clusterPaths } from '../job/job-paths.js';

/** One referenced timer shared by every holder: the process stays alive while anyone holds it. */
export class ProcessHold {
  private holders = 0;
  private timer: NodeJS.Timeout | undefined;

  /** Holds the process until the returned release is called (calling it again does nothing). */
  acquire(): () => void {
    if (this.holders++ === 0) this.timer = setInterval(() => undefined, 2 ** 30);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.holders === 0) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    };
  }

  /** Holds the process while `work` runs. */
  async during<T>(work: () => Promise<T>): Promise<T> {
    const release = this.acquire();
    try {
      return await work();
    } finally {
      release();
    }
  }

  /** Whether anything holds the process now. */
  get held(): boolean {
    return this.holders > 0;
  }
}

/**
 * Holds the process while any job of the cluster at `root` has no outcome. Returns the function
 * that stops watching and releases every job's hold (the cluster is closing).
 */
export function holdWhileJobsRun(client: CoordClient, hold: ProcessHold, root?: string): () => void {
  const running = new Map<string, () => void>();
  const watch = watchChildren(client, clusterPaths(root).jobs, (jobs) => {
    const now = new Set(jobs ?? []);
    for (const [id, release] of running) {
      if (!now.has(id)) {
        release();
        running.delete(id);
      }
    }
    for (const id of now) {
      if (running.has(id)) continue;
      const release = hold.acquire();
      running.set(id, release);
      // An outcome ends the hold; so does losing the session (the cluster is closing).
      awaitOutcome(client, id, root).then(release, release);
    }
  });
  return () => {
    watch.close();
    for (const release of running.values()) release();
    running.clear();
  };
}
