/**
 * How the service and its long-lived job talk through the coordination service, under the job's own
 * znode (`<job>/service`, given by the job's leader): the service writes a batch's descriptor
 * (`batches/<id>`) and the indexes it cancels (`cancel/<id>`); members write what the batch's tasks
 * return (`out/<id>/c-<seq>`, groups of compressed outcome chunks) and the service reads and deletes
 * them. A batch's graph rides in its descriptor when small, else in the data plane; its blobs are in the
 * data plane (shared by the service for the job: Cluster.share). Small znodes only: a group holds at
 * most GROUP_BYTES, a chunk larger than that travels in parts.
 */
import { joinPath } from '../../coord/paths.js';
import type { BlobRef } from '../../data/blob-directory.js';
import type { PackedChunk } from './outcome-chunks.js';
import type { SandboxLimits } from './sandbox-pool.js';

/** A graph up to this size (JSON text) rides in its descriptor. */
export const INLINE_GRAPH_BYTES = 256 * 1024;
/** The largest outcome group one znode holds (well inside ZooKeeper's 1 MiB per request). */
export const GROUP_BYTES = 512 * 1024;

export interface BatchDescriptor {
  tasks: number;
  limits: SandboxLimits;
  /** The graph's JSON when small, else `graphRef`. */
  graph?: string;
  graphRef?: BlobRef;
  /** The blobs the graph names. */
  blobs: Record<string, BlobRef>;
}

/** What a member writes: whole chunks, or one part of a chunk too large for a znode (its other fields ride with part 0). */
export type OutcomeGroup =
  | { chunks: PackedChunk[] }
  | { part: { key: string; k: number; n: number }; bytes: Uint8Array; chunk?: Omit<PackedChunk, 'z'> };

export function channelPaths(dir: string) {
  return {
    dir,
    batches: joinPath(dir, 'batches'),
    out: joinPath(dir, 'out'),
    cancel: joinPath(dir, 'cancel'),
    /** Ephemeral, the service's: the job ends when it goes. */
    owner: joinPath(dir, 'owner'),
    batch: (id: string) => joinPath(dir, 'batches', id),
    outOf: (id: string) => joinPath(dir, 'out', id),
    cancelOf: (id: string) => joinPath(dir, 'cancel', id),
  };
}

/** Batch ids sort in the order they were started. */
export function batchId(seq: number): string {
  return `b${String(seq).padStart(10, '0')}`;
}

/** The indexes a batch cancelled, as the service writes them: every index, or a list. */
export type CancelledIndexes = 'all' | number[];
