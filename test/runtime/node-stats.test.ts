/**
 * A node's published stats (the dashboard's and `tidepool status`'s source): written only when they
 * change, read at the moment of publishing — so the final counters of a job, published as the node
 * leaves it, are what the znode holds even if the node clears the job before the write gets its turn.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { connect } from '../../src/coord/connect.js';
import { StatsPublisher } from '../../src/runtime/node/node-stats.js';

describe('node stats publisher', () => {
  it('writes what the stats were when publish was called, and nothing when they did not change', async () => {
    const client = await connect(`embedded:stats-${randomBytes(3).toString('hex')}`);
    try {
      const path = '/tidepool/stats/n-1';
      let current: { job: string | null; tasksDone: number } = { job: 'j-1', tasksDone: 0 };
      const publisher = new StatsPublisher(client, path, () => current, 60_000);
      const read = async () => JSON.parse((await client.getData(path)).data.toString('utf8')) as { job: string | null; tasksDone: number; at: number };
      await publisher.publish();
      assert.deepEqual({ ...(await read()), at: 0 }, { job: 'j-1', tasksDone: 0, at: 0 });
      current = { job: 'j-1', tasksDone: 42 };
      const final = publisher.publish(); // the job's last figures
      current = { job: null, tasksDone: 0 }; // the node clears its job before that write has run
      await final;
      assert.deepEqual({ ...(await read()), at: 0 }, { job: 'j-1', tasksDone: 42, at: 0 }, 'the final counters, not the cleared job');
      const version = (await client.getData(path)).stat.version;
      await publisher.publish();
      assert.deepEqual({ ...(await read()), at: 0 }, { job: null, tasksDone: 0, at: 0 });
      await publisher.publish();
      assert.equal((await client.getData(path)).stat.version, version + 1, 'an unchanged publish writes nothing');
      await publisher.stop();
    } finally {
      await client.close();
    }
  });
});
