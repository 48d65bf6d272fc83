/**
 * The malleable job's durable state in the coordination service (`/tidepool/jobs/<job>/malleable`):
 * the configuration epoch, the last committed checkpoint and the stats so far. Writing a checkpoint's manifest here
 * is its commit point; a new leader (after a failover) rolls back to it. Writes are fenced by the
 * znode's version, so a deposed leader cannot overwrite its successor's state.
 */
import { isCoordError, isRetryable } from '../../coord/errors.js';
import { joinPath } from '../../coord/paths.js';
import type { CoordClient } from '../../coord/types.js';
import { decode, encode } from '../../util/codec.js';
import type { JobPaths } from '../../runtime/job/job-paths.js';
import { readOrNull } from '../../coord/znode-reads.js';
import type { CheckpointManifest } from './protocol.js';
import type { MalleableStats } from './runtime-options.js';

export interface MalleableState {
  epoch: number;
  manifest: CheckpointManifest | null;
  /** What earlier leaders did (rescales acknowledged, rollbacks, checkpoints): the job's stats survive a leader change. */
  history?: Pick<MalleableStats, 'rescales' | 'rollbacks' | 'checkpoints'> & Partial<Pick<MalleableStats, 'resizeRequests'>>;
}

export class DurableState {
  private readonly path: string;
  private version = -1;
  /** What a write whose answer was lost (a connection loss) tried to store: it may have been stored. */
  private unanswered: Buffer | undefined;

  constructor(private readonly client: CoordClient, paths: JobPaths) {
    this.path = joinPath(paths.base, 'malleable');
  }

  async load(): Promise<MalleableState> {
    const read = await readOrNull(this.client, this.path);
    this.unanswered = undefined;
    if (!read) {
      this.version = -1;
      return { epoch: 0, manifest: null };
    }
    this.version = read.stat.version;
    return decode<MalleableState>(read.data);
  }

  /**
   * Writes the state; throws if another leader wrote since this one read. A write of this leader's whose
   * answer was lost and that did land is not another leader's: the znode then holds exactly what it
   * wrote, and the next save goes on from there (before, a connection loss across slow links made the
   * leader's next save fail as 'taken over', and the job failed).
   */
  async save(state: MalleableState): Promise<void> {
    const data = encode(state);
    try {
      await this.write(data);
    } catch (err) {
      if (isRetryable(err)) {
        this.unanswered = data;
        throw err;
      }
      if (!isCoordError(err, 'BAD_VERSION', 'NODE_EXISTS')) throw err;
      const read = this.unanswered && await readOrNull(this.client, this.path);
      if (!read || !read.data.equals(this.unanswered!)) throw new Error('another leader has taken over this malleable job');
      this.version = read.stat.version;
      this.unanswered = undefined;
      await this.write(data).catch((again: unknown) => {
        throw isCoordError(again, 'BAD_VERSION', 'NODE_EXISTS') ? new Error('another leader has taken over this malleable job') : again;
      });
    }
  }

  private async write(data: Buffer): Promise<void> {
    if (this.version < 0) {
      await this.client.create(this.path, data);
      this.version = 0;
    } else {
      this.version = (await this.client.setData(this.path, data, this.version)).version;
    }
    this.unanswered = undefined;
  }
}
