/**
 * The malleable kind's layer messages and the leader's commands, with their shape checks.
 *
 *   leader → member   mall-cmd   { id, epoch, cmd }        a command (below); answered by mall-reply
 *   member → leader   mall-reply { id, ok, value | error }
 *   member → member   mall-halo  { epoch, iteration, items, collective? } messages between objects and the sender's
 *                                                           collective traffic, one batch per node pair per iteration;
 *                                                           with `ended`, no batch: the job ended before `iteration`
 *   member → member   mall-move  { epoch, seq, object, thread }  an object moving at a sync point (state + unread messages)
 *                                                           to the receiver's object thread `thread`
 *   member → member   mall-move-ack { epoch, seq }
 *   member → leader   mall-leaving {}                        this node was told to leave: evacuate me
 *   member → member   hold { job, ref }                      keep a copy of a checkpoint blob (data plane)
 */
import type { BlobRef } from '../../data/blob-directory.js';
import { validateHold } from '../../runtime/job/durable-blobs.js';
import type { LayerBody } from '../../runtime/kinds/job-kind.js';
import type { CollectivePart } from './collectives.js';
import type { PackedObject, ResizeWish, Routed } from './object-host.js';

/**
 * Where each object lives: on node `nodes[owner[i]]`, on its thread `thread[i]` (placement.ts).
 * `threads[n]` is how many object threads node `nodes[n]` runs for the job.
 */
export interface Mapping {
  nodes: string[];
  owner: number[];
  threads: number[];
  thread: number[];
}

/** A coordinated checkpoint: where each member's part of it is in the data plane. */
export interface CheckpointManifest {
  /** The next iteration to run from this checkpoint. */
  iteration: number;
  parts: Array<{ node: string; ref: BlobRef; indices: number[] }>;
  takenAt: number;
  /** The data plane scope of its parts' references (discarded when a newer checkpoint commits). */
  scope?: string;
}

export type Command =
  /** Drop everything; take this mapping; build objects afresh (no manifest) or load them from the checkpoint. */
  | { type: 'restore'; map: Mapping; manifest: CheckpointManifest | null }
  /** Install this mapping (the location table) and run `threads` object threads; answers how many objects this node holds. */
  | { type: 'configure'; map: Mapping; threads: number }
  /** Wait until `expect` halo batches for `iteration` are in. */
  | { type: 'settle'; iteration: number; expect: number }
  /** Run `count` iterations from `iteration` on every hosted object: the first once `expect` halo batches are in. */
  | { type: 'run'; iteration: number; count: number; expect: number }
  /** Send away objects the new mapping puts elsewhere, take in those it puts here (at the sync point before `iteration`). */
  | { type: 'migrate'; map: Mapping; iteration: number }
  /** Store every hosted object (with unread messages) in the data plane under `scope`, copied to one of `peers`. */
  | { type: 'checkpoint'; iteration: number; peers: string[]; scope: string }
  | { type: 'collect' };

export interface RunReply {
  /** Nodes this member sent a halo batch to (each expects one batch from it). */
  sentTo: string[];
  /** Flattened [object, ms, object, ms, …]: each object's fastest step in these iterations. */
  loads: number[];
  /** Wall time of each iteration on this member (waiting for halos included), ms. */
  times: number[];
  /** The application's `done` held: the job ends before this iteration (the iterations after it did not run). */
  ended?: number;
  /** The last resize request of an object here in these iterations (an evolving job). */
  resize?: ResizeWish & { iteration: number };
}

export interface MoveBody extends LayerBody {
  type: 'mall-move';
  epoch: number;
  seq: number;
  object: PackedObject;
  /** The receiver's object thread that takes it in. */
  thread: number;
}

export interface HaloBody extends LayerBody {
  type: 'mall-halo';
  epoch: number;
  iteration: number;
  items: Routed[];
  /** What the sender's objects reduced and broadcast (read in `iteration`). */
  collective?: CollectivePart;
  /** Not a batch: the sender found the job done, and `iteration` will not run. */
  ended?: boolean;
}

const isInt = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0;
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

export function validateMalleableMessage(body: LayerBody): string | undefined {
  switch (body.type) {
    case 'mall-cmd':
      if (!isInt(body.id) || !isInt(body.epoch)) return 'mall-cmd needs whole-number "id" and "epoch"';
      return isObj(body.cmd) && typeof body.cmd.type === 'string' ? undefined : 'mall-cmd needs a "cmd" with a string "type"';
    case 'mall-reply':
      return isInt(body.id) && typeof body.ok === 'boolean' ? undefined : 'mall-reply needs a whole-number "id" and a boolean "ok"';
    case 'mall-halo': {
      if (!isInt(body.epoch) || !isInt(body.iteration)) return 'mall-halo needs whole-number "epoch" and "iteration"';
      if (body.ended !== undefined && typeof body.ended !== 'boolean') return 'mall-halo "ended" must be a boolean';
      const c = body.collective;
      if (c !== undefined && !(isObj(c) && Array.isArray(c.contributions) && c.contributions.every((x) => isObj(x) && typeof x.name === 'string' && isInt(x.from))
        && Array.isArray(c.broadcasts) && c.broadcasts.every((x) => isObj(x) && isInt(x.from)))) return 'mall-halo "collective" must be {contributions: [{name, from, value}], broadcasts: [{from, msg}]}';
      return Array.isArray(body.items) && body.items.every((m) => isObj(m) && isInt(m.to) && isInt(m.from)) ? undefined : 'mall-halo "items" must be [{to, from, msg}]';
    }
    case 'mall-move':
      if (!isInt(body.epoch) || !isInt(body.seq) || !isInt(body.thread)) return 'mall-move needs whole-number "epoch", "seq" and "thread"';
      return isObj(body.object) && isInt(body.object.index) && Array.isArray(body.object.inbox) ? undefined : 'mall-move needs an "object" {index, state, load, inbox}';
    case 'mall-move-ack':
      return isInt(body.epoch) && isInt(body.seq) ? undefined : 'mall-move-ack needs whole-number "epoch" and "seq"';
    case 'mall-leaving':
      return undefined;
    case 'hold':
      return validateHold(body);
    default:
      return `unknown malleable message "${body.type}"`;
  }
}
