import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CoordClient } from '../../src/coord/types.js';
import { testSeeds } from '../support/seeds.js';
import { zookeeperBackend, type Backend } from './backends.js';
import { runTerminationProperty } from './termination-property.js';

describe('termination detection property (ZooKeeper ensemble, connections cut mid-run)', () => {
  let backend: Backend;
  before(async () => {
    backend = await zookeeperBackend();
  });
  after(async () => backend.close());

  for (const seed of testSeeds([11, 12, 13])) {
    const maxBatch = seed % 2 === 0 ? 1 : 16;
    it(`seed ${seed}, batch ${maxBatch}: never early, never missed, exactly once`, { timeout: 180_000 }, async () => {
      const clients: CoordClient[] = await Promise.all([0, 1, 2].map(() => backend.connect({ sessionTimeoutMs: 8_000 })));
      const watcherClient = await backend.connect({ sessionTimeoutMs: 8_000 });
      let disconnects = 0;
      for (const c of clients) c.onState((s) => s === 'disconnected' && disconnects++);
      let nextCut = 150;
      const result = await runTerminationProperty({
        seed, size: 2000, clients, watcherClient, maxBatch, timeoutMs: 120_000,
        // Every 150–400 issued completions, cut one tracker's TCP connection while its transactions are in flight.
        onCompletionIssued: async (count, rng) => {
          if (count < nextCut) return;
          nextCut = count + rng.int(150, 400);
          await backend.interrupt(rng.pick(clients));
        },
      });
      assert.ok(disconnects > 0, 'connections were cut during the run');
      assert.ok(result.transactions > 0);
      await Promise.all([...clients, watcherClient].map((c) => c.close()));
    });
  }
});
