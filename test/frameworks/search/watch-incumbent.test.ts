/**
 * `tidepool solve`'s progress line follows the job's incumbent value; a variable it cannot read (not JSON,
 * not an incumbent) is skipped, and the watch goes on (a throw inside the watch would end the client).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { EmbeddedClient } from '../../../src/coord/embedded/embedded-client.js';
import { EmbeddedServer } from '../../../src/coord/embedded/embedded-server.js';
import { mkdirp } from '../../../src/coord/tree-ops.js';
import { watchIncumbent } from '../../../src/frameworks/search/solve.js';
import { jobPaths } from '../../../src/runtime/job/job-paths.js';
import { waitFor } from '../../support/wait.js';

it('the progress line takes each incumbent value and skips what is not one', async () => {
  const client = new EmbeddedClient(new EmbeddedServer(), 600_000);
  const path = `${jobPaths('j').vars}/incumbent`;
  await mkdirp(client, jobPaths('j').vars);
  const seen: number[] = [];
  const stop = watchIncumbent(client, 'j', (v) => seen.push(v));
  try {
    await client.create(path, Buffer.from('not json'));
    await client.setData(path, Buffer.from(JSON.stringify({ value: 5, solution: [0, 1] })));
    await waitFor(() => seen.length === 1, 'the first incumbent');
    await client.setData(path, Buffer.from('42'));
    await client.setData(path, Buffer.from(JSON.stringify({ value: 3, solution: [1, 0] })));
    await waitFor(() => seen.length === 2, 'the second incumbent');
    assert.deepEqual(seen, [5, 3]);
  } finally {
    stop();
    await client.close();
  }
});
