/** A worker thread of `Distribution.local()`: one vm sandbox per batch it is given tasks of. */
import { parentPort } from 'node:worker_threads';
import { VmSandbox } from './vm-sandbox.js';
import type { CaptureGraph } from './graph-format.js';

const sandboxes = new Map<string, VmSandbox>();

parentPort!.on('message', (m: { id: number; key: string; graph?: string; indexes?: number[]; timeoutMs?: number; drop?: boolean }) => {
  try {
    if (m.drop) {
      sandboxes.delete(m.key);
      return parentPort!.postMessage({ id: m.id, outcomes: [] });
    }
    let sandbox = sandboxes.get(m.key);
    if (!sandbox) {
      if (m.graph === undefined) throw new Error(`batch ${m.key} is not loaded here`);
      const graph = JSON.parse(m.graph) as CaptureGraph;
      sandbox = new VmSandbox(m.graph, graph.codes, m.timeoutMs, (graph.packages ?? []).map((p) => p.code ?? ''));
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
