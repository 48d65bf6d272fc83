/**
 * What most workflow tests on an embedded cluster share: one cluster for the describe block it is
 * called in (started before its tests, closed after them) and fresh temporary directories, removed
 * after the block.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { Cluster } from '../../../src/runtime/client/cluster.js';

export interface EmbeddedFixture {
  /** The block's cluster (started by its `before`). */
  readonly cluster: Cluster;
  /** A new empty directory, removed after the block. */
  fresh(): string;
}

export function embeddedFixture(opts: { nodes: number; workers?: number; prefix: string }): EmbeddedFixture {
  let cluster: Cluster | undefined;
  const dirs: string[] = [];
  before(async () => {
    cluster = await Cluster.embedded({ nodes: opts.nodes, workers: opts.workers ?? 1 });
  });
  after(async () => {
    await cluster?.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  return {
    get cluster(): Cluster {
      if (!cluster) throw new Error('the embedded cluster is started by the describe block\'s before hook');
      return cluster;
    },
    fresh() {
      const d = mkdtempSync(join(tmpdir(), opts.prefix));
      dirs.push(d);
      return d;
    },
  };
}
