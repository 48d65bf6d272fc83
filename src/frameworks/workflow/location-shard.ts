/**
 * One shard of the File Location Service (AME §3.2–3.3, Fig. 5) as a state machine without I/O: an
 * in-memory table from file to state (INVALID or VALID), the location of a VALID file, and the
 * workers waiting for an INVALID one. A query of an INVALID file registers the asker as a waiter;
 * the update that makes it VALID returns every waiter to notify. Beyond AME: a node that leaves
 * takes the files only it held back to INVALID (their producers must run again), and entries move
 * between shards when the membership changes.
 */

/** Where a file can be fetched: the node holding it in memory (fetched from there with layer messages). */
export interface FileLocation {
  node: string;
}

export type ShardFileState = 'INVALID' | 'VALID';

interface Entry {
  state: ShardFileState;
  location?: FileLocation;
  waiters: Set<string>;
}

export type QueryAnswer = { state: 'VALID'; location: FileLocation } | { state: 'INVALID' };

export interface ShardEntry {
  file: number;
  location?: FileLocation;
  waiters: string[];
}

export class LocationShard {
  private readonly table = new Map<number, Entry>();
  queries = 0;
  updates = 0;

  private entry(file: number): Entry {
    let e = this.table.get(file);
    if (!e) {
      e = { state: 'INVALID', waiters: new Set() };
      this.table.set(file, e);
    }
    return e;
  }

  state(file: number): ShardFileState {
    return this.table.get(file)?.state ?? 'INVALID';
  }

  /** A worker asks where `file` is; if nowhere yet, it is told when it appears. */
  query(file: number, from: string): QueryAnswer {
    this.queries++;
    const e = this.entry(file);
    if (e.state === 'VALID') return { state: 'VALID', location: e.location! };
    e.waiters.add(from);
    return { state: 'INVALID' };
  }

  /** `file` now exists at `location`: returns the waiters to notify (each once), and forgets them. */
  update(file: number, location: FileLocation): string[] {
    this.updates++;
    const e = this.entry(file);
    e.state = 'VALID';
    e.location = location;
    const waiters = [...e.waiters];
    e.waiters.clear();
    return waiters;
  }

  /** `node` left: its files are lost (INVALID again) and it waits for nothing. Returns the files lost. */
  nodeLeft(node: string): number[] {
    const lost: number[] = [];
    for (const [file, e] of this.table) {
      e.waiters.delete(node);
      if (e.state === 'VALID' && e.location!.node === node) {
        e.state = 'INVALID';
        delete e.location;
        lost.push(file);
      }
    }
    return lost;
  }

  /** Removes and returns the entries `keep` rejects (they belong to another shard now). */
  handOff(keep: (file: number) => boolean): ShardEntry[] {
    const out: ShardEntry[] = [];
    for (const [file, e] of this.table) {
      if (keep(file)) continue;
      out.push({ file, ...(e.location ? { location: e.location } : {}), waiters: [...e.waiters] });
      this.table.delete(file);
    }
    return out;
  }

  /** Takes over entries handed off by another shard; returns waiters to notify for files now VALID. */
  takeOver(entries: ShardEntry[]): { file: number; location: FileLocation; waiters: string[] }[] {
    const notify: { file: number; location: FileLocation; waiters: string[] }[] = [];
    for (const { file, location, waiters } of entries) {
      const e = this.entry(file);
      for (const w of waiters) e.waiters.add(w);
      if (location && e.state === 'INVALID') {
        e.state = 'VALID';
        e.location = location;
      }
      if (e.state === 'VALID' && e.waiters.size > 0) {
        notify.push({ file, location: e.location!, waiters: [...e.waiters] });
        e.waiters.clear();
      }
    }
    return notify;
  }

  get size(): number {
    return this.table.size;
  }
}
