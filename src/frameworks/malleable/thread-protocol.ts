/**
 * Messages between a member (the node's main thread) and its object threads, and between the object
 * threads of one node. Each channel is a MessagePort (FIFO); every message carries the epoch it belongs
 * to, and a thread drops those of older epochs (a rollback) and keeps those of newer ones for later.
 *
 *   main → thread    commands (with `id`, answered by `reply`): restore, map, run, settle, take, put, pack, collect;
 *                    remote { iteration, items, collective? }   one halo batch from another node, the part for this thread
 *                    end { iteration }                          the job ended before `iteration`
 *   thread → main    reply { id, ok, value | error }
 *                    out { iteration, items, collective, … }    what the thread's objects sent other nodes in one
 *                                                               iteration, their step times and resize wish
 *                    ended { iteration }                        the convergence test ended the job before `iteration`
 *   thread → thread  batch { iteration, items, collective? }    one per iteration to every other thread of the node,
 *                                                               even empty (so each counts what it waits for)
 */
import type { CollectivePart } from './collectives.js';
import type { PackedObject, ResizeWish, Routed } from './object-host.js';
import type { Mapping } from './protocol.js';

/** What a thread needs to host objects (besides the application, which its launcher knows): whose, with which parameters. */
export interface ThreadSetup {
  node: string;
  params: unknown;
}

export type ThreadCommand =
  /** Drop everything; take `map`; build the objects `init` (sending their first messages) or take in `objects` (from a checkpoint, whose next iteration is `settledAt`). */
  | { type: 'restore'; map: Mapping; init?: number[]; objects?: PackedObject[]; settledAt?: number }
  /** Install `map`; with `settledAt`, every message of that iteration is where it is read (after objects moved). */
  | { type: 'map'; map: Mapping; settledAt?: number }
  /** Run `count` iterations from `iteration`; the first waits for `expect` batches from other nodes (none when settled), later ones for one from each. */
  | { type: 'run'; iteration: number; count: number; expect: number }
  /** Wait until every message of `iteration` is in (`expect` batches from other nodes). */
  | { type: 'settle'; iteration: number; expect: number }
  /** Remove these objects and answer them packed, with their unread messages (`iteration`: the next to run). */
  | { type: 'take'; indices: number[]; iteration: number }
  | { type: 'put'; objects: PackedObject[] }
  /** Answer every object here packed and encoded (a checkpoint part): { indices, bytes }. */
  | { type: 'pack'; iteration: number }
  /** Answer every object's summary: [index, summary] pairs. */
  | { type: 'collect' };

export type ToThread =
  | (ThreadCommand & { id: number; epoch: number })
  | { type: 'remote'; epoch: number; iteration: number; items: Routed[]; collective?: CollectivePart }
  | { type: 'end'; epoch: number; iteration: number };

/** What one thread's objects sent in one iteration, read in `iteration`, and how their steps went. */
export interface ThreadOut {
  type: 'out';
  epoch: number;
  iteration: number;
  /** Messages to objects on other nodes. */
  items: Routed[];
  collective: CollectivePart;
  /** Flattened [object, ms, …]: each object's step time (none for `init`). */
  loads: number[];
  /** Wall time of the iteration on this thread, waiting for messages included (ms; none for `init`). */
  ms?: number;
  resize?: ResizeWish & { iteration: number };
}

export type FromThread =
  | { type: 'reply'; id: number; ok: true; value: unknown }
  | { type: 'reply'; id: number; ok: false; error: string }
  | ThreadOut
  | { type: 'ended'; epoch: number; iteration: number };

export interface PeerBatch {
  type: 'batch';
  epoch: number;
  iteration: number;
  items: Routed[];
  collective?: CollectivePart;
}

/** A checkpoint part of one thread: its objects, encoded. */
export interface PackedPart {
  indices: number[];
  bytes: Uint8Array;
}
