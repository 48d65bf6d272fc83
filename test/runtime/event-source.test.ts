import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EmbeddedClient } from '../../src/coord/embedded/embedded-client.js';
import { EmbeddedServer } from '../../src/coord/embedded/embedded-server.js';
import { joinPath } from '../../src/coord/paths.js';
import { ClusterReader } from '../../src/dashboard/cluster-reader.js';
import { eventSourcesPath, EventPublisher } from '../../src/runtime/node/event-source.js';

describe('EventPublisher', () => {
  it('publishes bounded lists as an ephemeral znode, writing only when they changed, gone with its session', async () => {
    const server = new EmbeddedServer();
    const client = new EmbeddedClient(server, 4_000);
    const reader = new ClusterReader(new EmbeddedClient(server, 4_000));
    const source = new EventPublisher(client, 'service.7480', { limit: 2, intervalMs: 60_000 });
    for (const id of ['b1', 'b2', 'b3']) source.put('batches', { id, at: 1, values: { dispatchMs: 1 } });
    await source.flush();
    const [read] = await reader.readSources();
    assert.equal(read!.name, 'service.7480');
    assert.deepEqual((read!.data as { lists: unknown }).lists, { batches: [{ id: 'b2', at: 1, values: { dispatchMs: 1 } }, { id: 'b3', at: 1, values: { dispatchMs: 1 } }] });
    const path = joinPath(eventSourcesPath(), 'service.7480');
    const version = (await client.getData(path)).stat.version;
    await source.flush();
    assert.equal((await client.getData(path)).stat.version, version, 'nothing changed: no write');
    source.put('batches', { id: 'b4', at: 2 });
    await source.flush();
    assert.equal((await client.getData(path)).stat.version, version + 1);
    await source.stop();
    await client.close();
    assert.deepEqual(await reader.readSources(), [], 'ephemeral: gone with the session');
  });

  it('refuses names that are not path-safe', () => {
    const client = new EmbeddedClient(new EmbeddedServer(), 4_000);
    assert.throws(() => new EventPublisher(client, 'a/b'), /event source name "a\/b"/);
    assert.throws(() => new EventPublisher(client, 'ok').put('no good', { id: 'x', at: 1 }), /event list name "no good"/);
  });
});
