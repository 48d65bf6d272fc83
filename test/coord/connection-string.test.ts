import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connect, embeddedServer } from '../../src/coord/connect.js';
import { parseConnectionString } from '../../src/coord/connection-string.js';

describe('connection strings', () => {
  it('parses embedded (the default), named embedded instances and zk:// ensembles with chroot', () => {
    assert.deepEqual(parseConnectionString(undefined), { backend: 'embedded', name: 'default' });
    assert.deepEqual(parseConnectionString('embedded'), { backend: 'embedded', name: 'default' });
    assert.deepEqual(parseConnectionString('embedded:test-1'), { backend: 'embedded', name: 'test-1' });
    assert.deepEqual(parseConnectionString('zk://127.0.0.1:2181'), { backend: 'zookeeper', hosts: [{ host: '127.0.0.1', port: 2181 }], chroot: '' });
    assert.deepEqual(parseConnectionString('zk://a.example:1,b:2,[::1]:3/tidepool/prod'), {
      backend: 'zookeeper',
      hosts: [{ host: 'a.example', port: 1 }, { host: 'b', port: 2 }, { host: '::1', port: 3 }],
      chroot: '/tidepool/prod',
    });
  });

  it('names the offending part of a bad connection string', () => {
    assert.throws(() => parseConnectionString('zookeeper://x:1'), /bad connection string "zookeeper:\/\/x:1": expected/);
    assert.throws(() => parseConnectionString('zk://'), /no host:port given/);
    assert.throws(() => parseConnectionString('zk://host'), /"host" is not host:port/);
    assert.throws(() => parseConnectionString('zk://host:99999'), /"host:99999" is not host:port/);
    assert.throws(() => parseConnectionString('zk://h:1,,h:2'), /"" is not host:port/);
    assert.throws(() => parseConnectionString('zk://h:1//x'), /chroot/);
    assert.throws(() => parseConnectionString('embedded:bad name'), /instance name/);
  });

  it('connects to the shared default embedded instance or to a separate named one', async () => {
    const a = await connect();
    const b = await connect('embedded');
    const c = await connect('embedded:isolated-connection-test');
    const path = `/conn-${process.pid}-${Date.now()}`;
    await a.create(path);
    assert.ok(await b.exists(path), 'default instance is shared');
    assert.equal(await c.exists(path), null, 'a named instance is separate');
    assert.equal(embeddedServer('isolated-connection-test'), embeddedServer('isolated-connection-test'));
    await Promise.all([a.close(), b.close(), c.close()]);
  });
});
