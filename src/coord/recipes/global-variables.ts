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
      if (data !== null) this.absorb(name, decode(data.data));
    });
    this.watches.set(name, handle);
    await handle.ready;
  }

  /** The local value (undefined before any member set it). Never touches the network. */
  getVar<T>(name: string): T | undefined {
    return this.values.get(name) as T | undefined;
  }

  /** Merges `value` into the variable here and globally; resolves with the global value after the merge. */
  async setVar<T>(name: string, value: T): Promise<T> {
    const merge = this.ruleOf(name);
    this.absorb(name, value);
    const path = this.pathOf(name);
    for (;;) {
      try {
        this.stats.reads++;
        let current: { value: unknown; version: number } | null = null;
        try {
          const { data, stat } = await this.client.getData(path);
          current = { value: decode(data), version: stat.version };
        } catch (err) {
          if (!isCoordError(err, 'NO_NODE')) throw err;
        }
        const next = current === null ? value : merge(current.value, value);
        if (current !== null && sameValue(next, current.value)) {
          this.absorb(name, current.value);
          return current.value as T;
        }
        this.stats.writes++;
        if (current === null) await this.client.create(path, encode(next));
        else await this.client.setData(path, encode(next), current.version);
        this.absorb(name, next);
        return next as T;
      } catch (err) {
        // A concurrent writer won the race (or the reply was lost): read again and re-merge.
        if (isCoordError(err, 'BAD_VERSION', 'NODE_EXISTS', 'NO_NODE')) {
          this.stats.retries++;
          continue;
        }
        if (!isRetryable(err)) throw err;
        this.stats.retries++;
        await reconnected(this.client);
      }
    }
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
