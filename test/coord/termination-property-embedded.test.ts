import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EmbeddedClient } from '../../src/coord/embedded/embedded-client.js';
import { EmbeddedServer } from '../../src/coord/embedded/embedded-server.js';
import { Rng } from '../../src/util/rng.js';
import { testSeeds } from '../support/seeds.js';
import { runTerminationProperty } from './termination-property.js';

describe('termination detection property (embedded, injected connection losses)', () => {
  for (const seed of testSeeds([1, 2, 3, 4, 5, 6])) {
    for (const maxBatch of [1, 32]) {
      it(`seed ${seed}, batch ${maxBatch}: never early, never missed, exactly once`, { timeout: 120_000 }, async () => {
        const server = new EmbeddedServer();
        const clients = [0, 1, 2, 3].map(() => new EmbeddedClient(server, 5_000));
        const faults = new Rng(seed * 7919);
        // Lose the connection before or after applying 5% of the trackers' transactions.
        for (const c of clients) server.injectFaults(c.sessionId, () => (faults.chance(0.05) ? (faults.chance(0.5) ? 'before' : 'after') : undefined));
        const watcherClient = new EmbeddedClient(server, 5_000);
        const result = await runTerminationProperty({ seed, size: 3000, clients, watcherClient, maxBatch });
        assert.ok(result.retries > 0, 'injected faults caused retries');
        if (maxBatch > 1) assert.ok(result.transactions < 3000, 'batching folded completions');
        await Promise.all([...clients, watcherClient].map((c) => c.close()));
      });
    }
  }
});
