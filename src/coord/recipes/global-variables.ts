import { Emitter } from '../../util/emitter.js';
import { log } from '../../util/log.js';
import { isCoordError, isRetryable } from '../errors.js';
import { joinPath } from '../paths.js';
import { mkdirp, reconnected } from '../tree-ops.js';
import type { CoordClient } from '../types.js';
import { watchData, type WatchHandle } from '../watch.js';
import { emptyStats, type RecipeStats } from './recipe-stats.js';

/**
 * How a proposed value combines with the current one. It must be monotone (merging never makes
 * the value worse, and merge(merge(a, b), b) = merge(a, b)), so that concurrent updates converge
 * on the best value whatever order they commit in.
 */
export type MergeRule<T> = 'min' | 'max' | 'replace' | ((current: T, proposed: T) => T);

export interface VarDefinition<T> {
  rule: MergeRule<T>;
}

type Events = { change: { name: string; value: unknown } };

/** The largest value a global variable may hold, as JSON (a znode holds at most 1 MB; every member keeps a copy in shared memory). */
export const MAX_VAR_BYTES = 512 * 1024;

/** A variable's value as JSON bytes; a value over MAX_VAR_BYTES is refused, naming the variable. */
export function encodeVar(name: string, value: unknown): Buffer {
  const encoded = Buffer.from(JSON.stringify(value ?? null));
  if (encoded.length > MAX_VAR_BYTES) throw new RangeError(`global variable "${name}" is ${encoded.length} bytes as JSON; the limit is ${MAX_VAR_BYTES}`);
  return encoded;
}

/**
 * Global variables after TASKWORK §3.6: every member keeps a local copy (getVar is a plain read),
 * setVar merges locally at once and then publishes through a conditional write on the znode
 * version, retrying on conflict, so concurrent updates never lose the better value. Changes reach
 * every member through data watches.
 */
export class GlobalVariables {
  readonly stats: RecipeStats = emptyStats();
  private readonly events = new Emitter<Events>();
  private readonly rules = new Map<string, (a: unknown, b: unknown) => unknown>();
  private readonly values = new Map<string, unknown>();
  private readonly watches = new Map<string, WatchHandle>();
  /** Each variable's znode value and version as last read or written here. */
  private readonly known = new Map<string, { value: unknown; version: number }>();
  /** This node's proposals not yet taken by a publication round, merged. */
  private readonly pending = new Map<string, { value: unknown }>();
  /** The latest publication round of each variable. */
  private readonly publishing = new Map<string, Promise<unknown>>();

  constructor(private readonly client: CoordClient, readonly basePath: string) {}

  on(event: 'change', listener: (change: Events['change']) => void): () => void {
    return this.events.on(event, listener);
  }

  /** Declares a variable and starts following it; resolves once the current global value is known. */
  async define<T>(name: string, def: VarDefinition<T>): Promise<void> {
    validateName(name);
    this.rules.set(name, mergeRule(def.rule) as (a: unknown, b: unknown) => unknown);
    if (this.watches.has(name)) return;
    await mkdirp(this.client, this.basePath);
    const handle = watchData(this.client, this.pathOf(name), (data) => {
      this.stats.reads++;
      if (data !== null) this.learn(name, decode(data.data), data.stat.version);
      else this.known.delete(name);
    });
    this.watches.set(name, handle);
    await handle.ready;
  }

  /** The local value (undefined before any member set it). Never touches the network. */
  getVar<T>(name: string): T | undefined {
    return this.values.get(name) as T | undefined;
  }

  /**
   * Merges `value` into the variable here and globally; resolves with the global value after the merge.
   * Publication is one conditional write at the version last seen here (no read first; on a conflict it
   * reads, merges and writes again). A proposal the value known here already covers is not written (one
   * read, to answer with the current global value), and proposals made while a write is in flight go out
   * together in the next one (a search that improves its bound a thousand times a second writes a few
   * times, not a thousand).
   */
  async setVar<T>(name: string, value: T): Promise<T> {
    const merge = this.ruleOf(name);
    encodeVar(name, value); // refused here, before anything is merged
    this.absorb(name, value);
    const pending = this.pending.get(name);
    this.pending.set(name, { value: pending === undefined ? value : merge(pending.value, value) });
    return this.round(name, merge) as Promise<T>;
  }

  /** Queues a publication round of the variable (after the one in flight) and returns it. */
  private round(name: string, merge: (a: unknown, b: unknown) => unknown): Promise<unknown> {
    const round = (this.publishing.get(name) ?? Promise.resolve()).catch(() => undefined).then(() => this.publish(name, merge));
    this.publishing.set(name, round);
    void round.then(() => this.publishing.get(name) === round && this.publishing.delete(name), () => undefined);
    return round;
  }

  /**
   * The variable's global value, read from the ensemble once this member's own proposals made so far are
   * published; undefined if no member ever set it.
   */
  async settled<T>(name: string): Promise<T | undefined> {
    const merge = this.ruleOf(name);
    await this.publishing.get(name)?.catch(() => undefined);
    // A round that failed left its proposal pending for the next one: publish it now.
    if (this.pending.has(name)) await this.round(name, merge);
    this.stats.reads++;
    try {
      const { data, stat } = await this.client.getData(this.pathOf(name));
      const value = decode(data);
      this.learn(name, value, stat.version);
      return value as T;
    } catch (err) {
      if (isCoordError(err, 'NO_NODE')) return undefined;
      throw err;
    }
  }

  /** One publication round (rounds of a variable run one at a time): this node's proposals since the last round. */
  private async publish(name: string, merge: (a: unknown, b: unknown) => unknown): Promise<unknown> {
    const proposal = this.pending.get(name);
    this.pending.delete(name);
    // An earlier round took this call's proposal and published it.
    if (proposal === undefined) return this.known.get(name)?.value ?? this.values.get(name);
    const path = this.pathOf(name);
    // Whether `known` was read just now: a proposal it covers then needs nothing more.
    let fresh = false;
    try {
      for (;;) {
        const known = this.known.get(name);
        const covered = known !== undefined && sameValue(merge(known.value, proposal.value), known.value);
        if (covered && fresh) return known.value;
        try {
          // Covered by what is known here, which may be behind: no write, but a read, to answer with the global value.
          if (!known || covered) {
            fresh = true;
            this.stats.reads++;
            try {
              const { data, stat } = await this.client.getData(path);
              this.learn(name, decode(data), stat.version);
            } catch (err) {
              if (!isCoordError(err, 'NO_NODE')) throw err;
              this.stats.writes++;
              await this.client.create(path, encode(proposal.value));
              this.learn(name, proposal.value, 0);
            }
            continue;
          }
          const next = merge(known.value, proposal.value);
          this.stats.writes++;
          const stat = await this.client.setData(path, encode(next), known.version);
          this.learn(name, next, stat.version);
          fresh = true;
        } catch (err) {
          // A concurrent writer won the race (or the reply was lost): read again and re-merge.
          this.known.delete(name);
          this.stats.retries++;
          if (isCoordError(err, 'BAD_VERSION', 'NODE_EXISTS', 'NO_NODE')) continue;
          if (!isRetryable(err)) throw err;
          await reconnected(this.client);
        }
      }
    } catch (err) {
      // Not published: the next round carries it (merged under any later proposal: for 'replace', the later one stays).
      const later = this.pending.get(name);
      this.pending.set(name, { value: later === undefined ? proposal.value : merge(proposal.value, later.value) });
      throw err;
    }
  }

  /** The znode's value at `version` (read or written here); a newer version always wins. */
  private learn(name: string, value: unknown, version: number): void {
    const known = this.known.get(name);
    if (!known || version >= known.version) this.known.set(name, { value, version });
    this.absorb(name, value);
  }

  stop(): void {
    for (const w of this.watches.values()) w.close();
    this.watches.clear();
  }

  private absorb(name: string, incoming: unknown): void {
    const merge = this.rules.get(name);
    const had = this.values.has(name);
    const before = this.values.get(name);
    const after = had && merge ? merge(before, incoming) : incoming;
    if (had && sameValue(before, after)) return;
    this.values.set(name, after);
    this.events.emit('change', { name, value: after });
  }

  private ruleOf(name: string): (a: unknown, b: unknown) => unknown {
    const rule = this.rules.get(name);
    if (!rule) throw new Error(`global variable "${name}" is not defined: call define() first`);
    return rule;
  }

  private pathOf(name: string): string {
    return joinPath(this.basePath, name);
  }
}

/** A variable's merge rule as a function (one definition for the coordination recipe and the workers). */
export function mergeRule<T>(rule: MergeRule<T>): (a: T, b: T) => T {
  if (rule === 'min') return (a, b) => ((b as number) < (a as number) ? b : a);
  if (rule === 'max') return (a, b) => ((b as number) > (a as number) ? b : a);
  if (rule === 'replace') return (_a, b) => b;
  return rule;
}

function validateName(name: string): void {
  if (!/^[\w.-]{1,200}$/.test(name)) throw new Error(`invalid variable name "${name}": use letters, digits and _ . -`);
}

function sameValue(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

function encode(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value));
}

function decode(data: Buffer): unknown {
  try {
    return JSON.parse(data.toString('utf8'));
  } catch (err) {
    log.warn('vars', 'ignoring a malformed global variable value', err);
    return undefined;
  }
}
