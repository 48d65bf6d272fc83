/**
 * The location service's latency figures (seed 004 Fig. 14), kept apart from the engine's logic: the
 * round trip of a query batch and of an update batch to a remote shard (one probe out per shard and
 * kind at a time), and how long a query waited for a file that did not exist yet. Simulations have no
 * clock (`now` undefined): then nothing is measured.
 */
export type ProbedKind = 'wf-query' | 'wf-update';

/** At most this many samples per figure (a million-task run would otherwise grow them without end). */
const MAX_SAMPLES = 10_000;

export class LatencyProbes {
  /** When each outstanding query was sent. */
  private readonly asked = new Map<number, number>();
  /** Probes out (`shard|kind` → probe) and when each left. */
  private readonly probing = new Map<string, number>();
  private readonly probes = new Map<number, { at: number; key: string; samples: number[] }>();
  private seq = 0;

  constructor(
    private readonly self: string,
    private readonly now: (() => number) | undefined,
    private readonly samples: { queryMs: number[]; updateMs: number[]; waitMs: number[] },
  ) {}

  /** A query for `file` leaves now. */
  asking(file: number): void {
    const now = this.now?.();
    if (now !== undefined) this.asked.set(file, now);
  }

  /** A query answered: at once (the file existed; the probes time those round trips), or when the file appeared (it waited). */
  answered(file: number, waited: boolean): void {
    const asked = this.asked.get(file);
    const now = this.now?.();
    if (asked === undefined || now === undefined) return;
    this.asked.delete(file);
    if (waited && this.samples.waitMs.length < MAX_SAMPLES) this.samples.waitMs.push(now - asked);
  }

  /** A probe for a batch of this type to `to`, if it is a query or update batch to a remote shard with none out yet. */
  probe(to: string, type: string): { probe?: number } {
    if ((type !== 'wf-query' && type !== 'wf-update') || to === this.self || !this.now) return {};
    const key = `${to}|${type}`;
    if (this.probing.has(key)) return {};
    const probe = this.seq++;
    this.probing.set(key, probe);
    this.probes.set(probe, { at: this.now(), key, samples: type === 'wf-query' ? this.samples.queryMs : this.samples.updateMs });
    return { probe };
  }

  /** The shard acknowledged the probe's batch: one sample. */
  acknowledged(probe: number): void {
    const p = this.probes.get(probe);
    if (!p) return;
    this.probes.delete(probe);
    this.probing.delete(p.key);
    if (p.samples.length < MAX_SAMPLES) p.samples.push(this.now!() - p.at);
  }

  /** `node` left: no answer will come to the probes sent to it (no sample). */
  peerGone(node: string): void {
    for (const [probe, p] of this.probes) {
      if (!p.key.startsWith(`${node}|`)) continue;
      this.probes.delete(probe);
      this.probing.delete(p.key);
    }
  }
}
