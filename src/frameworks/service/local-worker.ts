/**
 * A worker thread of `Distribution.local()`: one vm sandbox per batch it is given tasks of, and the
 * blobs the executor sent it (it keeps what the executor says it keeps: held-blobs.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { VmSandbox } from './vm-sandbox.js';
import { useRuntimeBundle } from './runtime-bundle.js';
import type { CaptureGraph } from './graph-format.js';

/** What the executor sends: a batch's graph the first time, blobs this worker lacks, and what to drop. */
export interface LocalRequest {
  id: number;
  key: string;
  graph?: string;
  blobs?: [string, Uint8Array][];
  dropBlobs?: string[];
  indexes?: number[];
  timeoutMs?: number;
  /** The batch is over here: forget its sandbox. */
  drop?: boolean;
}

useRuntimeBundle((workerData as { runtime: string }).runtime);
const sandboxes = new Map<string, VmSandbox>();
const blobs = new Map<string, Uint8Array>();

parentPort!.on('message', (m: LocalRequest) => {
  try {
    for (const hash of m.dropBlobs ?? []) blobs.delete(hash);
    for (const [hash, bytes] of m.blobs ?? []) blobs.set(hash, bytes);
    if (m.drop) {
      sandboxes.delete(m.key);
      return parentPort!.postMessage({ id: m.id, outcomes: [] });
    }
    let sandbox = sandboxes.get(m.key);
    if (!sandbox) {
      if (m.graph === undefined) throw new Error(`batch ${m.key} is not loaded here`);
      const graph = JSON.parse(m.graph) as CaptureGraph;
      const own = new Map(Object.keys(graph.blobs ?? {}).map((hash) => [hash, blobs.get(hash)!]));
      sandbox = new VmSandbox(m.graph, graph.codes, m.timeoutMs, (graph.packages ?? []).map((p) => p.code ?? ''), own);
      sandboxes.set(m.key, sandbox);
    }
    const outcomes: [number, string][] = [];
    for (const i of m.indexes ?? []) {
      try {
        outcomes.push([i, sandbox.run(i)]);
      } catch (e) {
        outcomes.push([i, JSON.stringify({ ok: false, err: { name: 'TimeoutError', message: (e as Error).message } })]);
      }
    }
    parentPort!.postMessage({ id: m.id, outcomes });
  } catch (e) {
    parentPort!.postMessage({ id: m.id, error: (e as Error).message });
  }
});
