import { joinPath } from '../../coord/paths.js';
import type { GroupMembership } from '../../coord/recipes/group-membership.js';
import { TerminationList } from '../../coord/recipes/termination-detection.js';
import type { CoordClient } from '../../coord/types.js';
import { log } from '../../util/log.js';
import { blobValueRef } from '../../data/blob-values.js';
import { decode } from '../../util/codec.js';
import { foldContributions } from './contributions.js';
import type { JobPaths } from '../job/job-paths.js';
import { publishOutcome, type JobOutcome, type TaskFailure } from '../job/outcome.js';
import type { Ledger } from './ledger.js';
import type { ResultReducer } from '../worker/task.js';
import type { TaskSnapshot } from './task-snapshot.js';
import type { TxnMarker } from './ledger-batches.js';
import { ledgerPaths, type LedgerZnodes } from './task-pool-spec.js';

/** How long a failed recovery scan or result collection waits before the next. */
const RESCAN_AFTER_MS = 250;
/** The longest wait between two attempts to collect a job's result. */
const MAX_COLLECT_WAIT_MS = 5_000;

/**
 * The task pool's leader duties on the job's elected leader: watch the ledger for termination (seed 000, Alg. 1),
 * fold the committed result contributions into the job's result exactly once, and recover the
 * tasks of members that vanished (crash, expired session) by claiming their records.
 */
export class TaskPoolLeaderDuties {
  private readonly termination: TerminationList;
  private readonly ledgerZnodes: LedgerZnodes;
  private stopped = false;
  private recovering = Promise.resolve();

  constructor(
    private readonly client: CoordClient,
    paths: JobPaths,
    private readonly ledger: Ledger,
    private readonly members: GroupMembership,
    private readonly reducer: ResultReducer<unknown>,
    /** Hands a recovered (now owned) task to the local runner. */
    private readonly adopt: (snapshot: TaskSnapshot) => void,
    /** Ends the job with its outcome (the leader context's `finish`: a large value goes to the data plane). */
    private readonly publish: (outcome: JobOutcome) => Promise<boolean> = (o) => publishOutcome(client, paths, o),
    /** The job's global variables as they are once every task has counted (for the reducer's `withVars`). */
    private readonly finalVars: () => Promise<Record<string, unknown>> = async () => ({}),
  ) {
    this.ledgerZnodes = ledgerPaths(paths);
    this.termination = new TerminationList(client, this.ledgerZnodes.termination);
  }

  start(): void {
    // Whoever declared termination: a leader elected after its predecessor declared it, but died before the
    // result was published, collects it (the first outcome written wins, so collecting twice is harmless).
    void this.termination.finished().then(() => this.collectResult());
    this.termination.start();
    this.members.on('left', () => this.recover());
    this.recover();
  }

  stop(): void {
    this.stopped = true;
    this.termination.stop();
  }

  /**
   * Claims every task whose owner is not a live member (the unowned root included). A scan that fails (a
   * connection lost under load) is repeated: no later event may come to start another, and tasks left
   * with a dead owner would never run.
   */
  recover(): void {
    this.recovering = this.recovering.then(() => this.recoverOnce()).catch((err: unknown) => {
      log.warn('job', 'recovery scan failed; scanning again shortly', err);
      if (!this.stopped) setTimeout(() => this.recover(), RESCAN_AFTER_MS).unref();
    });
  }

  private async recoverOnce(): Promise<void> {
    if (this.stopped) return;
    const live = new Set(this.members.view().keys());
    const ids = await this.ledger.list();
    for (const id of ids) {
      if (this.stopped) return;
      const entry = await this.ledger.read(id);
      if (!entry || live.has(entry.record.owner)) continue;
      // A large state was obtained from a surviving holder by read(); the claim keeps its reference.
      const { ref } = entry.record;
      const snapshot: TaskSnapshot = { id, state: entry.record.state, partial: entry.record.partial, version: entry.version, ...(ref ? { ref } : {}) };
      if (await this.ledger.claim(snapshot)) {
        if (entry.record.owner !== '') log.info('job', `recovered task ${id} from ${entry.record.owner}`);
        this.adopt({ ...snapshot, version: snapshot.version + 1 });
      }
    }
  }

  /**
   * Collects the result; a collection that fails (a connection lost under load, a peer holding a large
   * contribution down) is repeated, waiting twice as long each time up to 5 s: nothing else would end the job.
   */
  private collectResult(waitMs = RESCAN_AFTER_MS): void {
    if (this.stopped) return;
    this.collect().catch((err: unknown) => {
      log.warn('job', `collecting the result failed; collecting again in ${waitMs} ms`, err);
      setTimeout(() => this.collectResult(Math.min(waitMs * 2, MAX_COLLECT_WAIT_MS)), waitMs).unref();
    });
  }

  /** Folds every committed contribution (in the transaction markers) and publishes the result. */
  private async collect(): Promise<void> {
    const txns = await this.client.getChildren(this.ledgerZnodes.txns);
    const contributions: unknown[] = [];
    let completions = 0;
    for (let i = 0; i < txns.length; i += 64) {
      const chunk = await Promise.all(txns.slice(i, i + 64).map((t) => this.client.getData(joinPath(this.ledgerZnodes.txns, t))));
      for (const { data } of chunk) {
        const marker = decode<TxnMarker>(data);
        // Large contributions are references, obtained from the data plane here; the rest are taken as they are.
        for (const [k, r] of marker.results.entries()) {
          contributions.push(blobValueRef(r) ? await this.ledger.resolveResult(r) : r);
          completions += marker.tasks?.[k] ?? 1; // a contribution of tasks run inline stands for all of them
        }
      }
    }
    const vars = this.reducer.withVars ? await this.finalVars() : {};
    let folded: { value: unknown; failures: TaskFailure[] };
    try {
      folded = foldContributions(this.reducer, contributions);
      if (this.reducer.withVars) folded.value = this.reducer.withVars(folded.value, vars);
    } catch (err) {
      // The application's reducer threw: the job ends as failed, saying so (it would otherwise never end).
      const error = `the task type's result reducer failed: ${err instanceof Error ? err.message : String(err)}`;
      await this.publish({ status: 'failed', error, finishedAt: Date.now() });
      return;
    }
    const { value, failures } = folded;
    await this.publish({
      status: 'done', value, finishedAt: Date.now(), completions, ...(failures.length > 0 ? { failures } : {}),
    });
  }
}
