import { randomUUID } from 'node:crypto';
import { Emitter } from '../../util/emitter.js';
import { isCoordError, isRetryable } from '../errors.js';
import { joinPath, sequenceOf } from '../paths.js';
import { mkdirp, reconnected } from '../tree-ops.js';
import type { CoordClient } from '../types.js';
import { emptyStats, type RecipeStats } from './recipe-stats.js';

export interface Candidate {
  id: string;
  data: unknown;
}

type Events = { elected: void; lost: 'expired' | 'resigned' };

const PREFIX = 'c_';

/**
 * Leader election with ephemeral-sequential candidates. Each candidate watches only its
 * immediate predecessor, so a departure wakes exactly one candidate (no herd effect).
 * Candidate names carry a per-attempt token, so after a connection loss during create
 * the candidate finds its own znode instead of creating a second one.
 */
export class LeaderElection {
  readonly stats: RecipeStats = emptyStats();
  private readonly events = new Emitter<Events>();
  private readonly token = randomUUID();
  private myName: string | undefined;
  private leading = false;
  private stopped = false;
  private offState: (() => void) | undefined;

  constructor(private readonly client: CoordClient, readonly electionPath: string, private readonly candidate: Candidate) {}

  on<K extends keyof Events>(event: K, listener: (payload: Events[K]) => void): () => void {
    return this.events.on(event, listener);
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /** Enters the election; `elected` fires when (and if) this candidate becomes leader. */
  async start(): Promise<void> {
    await mkdirp(this.client, this.electionPath);
    this.offState = this.client.onState((s) => {
      if (s === 'expired') this.lose('expired');
    });
    this.myName = await this.enter();
    await this.check();
  }

  /** Resolves when this candidate is leader (or rejects if the session ends first). */
  whenElected(): Promise<void> {
    if (this.leading) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const offElected = this.events.once('elected', () => { offLost(); resolve(); });
      const offLost = this.events.once('lost', (why) => { offElected(); reject(new Error(`left the election: ${why}`)); });
    });
  }

  /** The current leader, read from the election (not from local state). */
  async leader(): Promise<Candidate | null> {
    for (;;) {
      const first = (await this.candidates())[0];
      if (!first) return null;
      try {
        this.stats.reads++;
        const { data } = await this.client.getData(joinPath(this.electionPath, first));
        return JSON.parse(data.toString('utf8')) as Candidate;
      } catch (err) {
        if (!isCoordError(err, 'NO_NODE')) throw err; // it left meanwhile: ask again
      }
    }
  }

  /** Leaves the election; a leader hands over to the next candidate. */
  async resign(): Promise<void> {
    this.stopped = true;
    this.offState?.();
    if (this.myName) {
      this.stats.writes++;
      try {
        await this.client.delete(joinPath(this.electionPath, this.myName));
      } catch (err) {
        if (!isCoordError(err, 'NO_NODE', 'SESSION_EXPIRED', 'CLOSED')) throw err;
      }
    }
    this.myName = undefined;
    if (this.leading) this.lose('resigned');
  }

  private async enter(): Promise<string> {
    const data = Buffer.from(JSON.stringify(this.candidate));
    const prefix = `${PREFIX}${this.token}-`;
    for (;;) {
      try {
        this.stats.writes++;
        const path = await this.client.create(joinPath(this.electionPath, prefix), data, 'ephemeral_sequential');
        return path.slice(this.electionPath.length + 1);
      } catch (err) {
        if (!isRetryable(err)) throw err;
        this.stats.retries++;
        await reconnected(this.client);
        const mine = (await this.candidates()).find((name) => name.startsWith(prefix));
        if (mine) return mine;
      }
    }
  }

  /** Leader if first; otherwise watch the predecessor and check again when it goes. */
  private async check(): Promise<void> {
    while (!this.stopped && this.myName) {
      const names = await this.candidates();
      const index = names.indexOf(this.myName);
      if (index < 0) return this.lose('expired'); // our znode is gone: the session ended
      if (index === 0) {
        if (!this.leading) {
          this.leading = true;
          this.events.emit('elected', undefined);
        }
        return;
      }
      const predecessor = joinPath(this.electionPath, names[index - 1]!);
      this.stats.reads++;
      const stat = await this.client.exists(predecessor, (event) => {
        if (event.type === 'deleted') this.recheck();
      });
      if (stat) return; // the watch will call us back
    }
  }

  private recheck(): void {
    this.check().catch((err: unknown) => {
      if (isRetryable(err)) {
        this.stats.retries++;
        const off = this.client.onState((s) => {
          if (s === 'connected') { off(); this.recheck(); }
        });
      }
    });
  }

  private async candidates(): Promise<string[]> {
    this.stats.reads++;
    const children = await this.client.getChildren(this.electionPath);
    return children.filter((c) => c.startsWith(PREFIX)).sort((a, b) => sequenceOf(a) - sequenceOf(b));
  }

  private lose(why: 'expired' | 'resigned'): void {
    const was = this.leading;
    this.leading = false;
    this.stopped = true;
    this.offState?.();
    if (was || why === 'expired') this.events.emit('lost', why);
  }
}
