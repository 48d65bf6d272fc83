import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { listenAddress, localAddressTowards, nodeAddresses, parseHostPort, reachableUrl } from '../../src/cli/addresses.js';
import { UsageError } from '../../src/cli/errors.js';
import { assertCleanError, runCommand, tidepool } from '../support/cli.js';
import { secretFile } from '../support/node-process.js';

const LOCAL_ZK = [{ host: '127.0.0.1', port: 2181 }];
/** TEST-NET-2 (RFC 5737): an address on no machine; only compared, never dialled. */
const REMOTE_ZK = [{ host: '198.51.100.7', port: 2181 }];

describe('addresses: --listen and --advertise', () => {
  it('parses ADDR[:PORT] in its forms and says why a value is not one', () => {
    assert.deepEqual(parseHostPort('10.0.0.5'), { host: '10.0.0.5' });
    assert.deepEqual(parseHostPort('10.0.0.5:7400'), { host: '10.0.0.5', port: 7400 });
    assert.deepEqual(parseHostPort('node-a.example:7400'), { host: 'node-a.example', port: 7400 });
    assert.deepEqual(parseHostPort('[fd00::5]:7400'), { host: 'fd00::5', port: 7400 });
    assert.deepEqual(parseHostPort('fd00::5'), { host: 'fd00::5' });
    assert.throws(() => parseHostPort('10.0.0.5:99999'), /^Error: "10\.0\.0\.5:99999" has no valid port/);
    assert.throws(() => parseHostPort('tcp://10.0.0.5'), /^Error: "tcp:\/\/10\.0\.0\.5" is not ADDR\[:PORT\]/);
  });

  it('refuses to advertise a wildcard, saying a routable address is needed', async () => {
    for (const advertise of ['0.0.0.0', '0.0.0.0:7400', '[::]']) {
      await assert.rejects(nodeAddresses({ advertise: parseHostPort(advertise) }, LOCAL_ZK), (err: Error) => {
        assert.ok(err instanceof UsageError);
        assert.match(err.message, /^--advertise .*: (0\.0\.0\.0|::) is a wildcard, not an address peers can dial; a routable address is needed/);
        return true;
      });
    }
  });

  it('refuses a loopback advertised (or listened-on) address when ZooKeeper is on another machine', async () => {
    await assert.rejects(nodeAddresses({ advertise: parseHostPort('127.0.0.1') }, REMOTE_ZK), /--advertise 127\.0\.0\.1: a loopback address, but ZooKeeper \(198\.51\.100\.7:2181\) is on another machine/);
    await assert.rejects(nodeAddresses({ listen: parseHostPort('127.0.0.1') }, REMOTE_ZK), /--listen 127\.0\.0\.1: a node listening on loopback cannot be dialled/);
    // With ZooKeeper on this machine, loopback is what a single-machine cluster uses.
    assert.deepEqual(await nodeAddresses({ advertise: parseHostPort('127.0.0.2') }, LOCAL_ZK), { listen: { host: '127.0.0.2', port: 0 }, advertise: { host: '127.0.0.2' } });
  });

  it('advertises the --listen address, or the address towards ZooKeeper when listening on a wildcard or nothing is given', async () => {
    assert.deepEqual(await nodeAddresses({ listen: parseHostPort('127.0.0.3:7400') }, LOCAL_ZK), { listen: { host: '127.0.0.3', port: 7400 }, advertise: { host: '127.0.0.3' } });
    // ZooKeeper on loopback: the kernel's source address towards it is loopback too.
    assert.deepEqual(await nodeAddresses({}, LOCAL_ZK), { listen: { host: '127.0.0.1', port: 0 }, advertise: { host: '127.0.0.1' } });
    assert.deepEqual(await nodeAddresses({ listen: parseHostPort('0.0.0.0'), port: 7401 }, LOCAL_ZK), { listen: { host: '0.0.0.0', port: 7401 }, advertise: { host: '127.0.0.1' } });
    assert.deepEqual(await nodeAddresses({ listen: parseHostPort('0.0.0.0'), advertise: parseHostPort('10.1.2.3:9000') }, REMOTE_ZK), { listen: { host: '0.0.0.0', port: 0 }, advertise: { host: '10.1.2.3', port: 9000 } });
    assert.equal(await localAddressTowards({ host: '127.0.0.5', port: 9 }), '127.0.0.1');
  });

  it('fills --listen from defaults, and refuses conflicting ports', () => {
    assert.deepEqual(listenAddress({ listen: parseHostPort('0.0.0.0:8080') }, { host: '127.0.0.1', port: 7470 }), { host: '0.0.0.0', port: 8080 });
    assert.deepEqual(listenAddress({}, { host: '127.0.0.1', port: 7470 }), { host: '127.0.0.1', port: 7470 });
    assert.deepEqual(listenAddress({ listen: parseHostPort('10.0.0.5'), port: 0 }, { host: '127.0.0.1', port: 7470 }), { host: '10.0.0.5', port: 0 });
    assert.throws(() => listenAddress({ listen: parseHostPort('0.0.0.0:8080'), port: 9090 }, { port: 0 }, '--dashboard'), /names port 8080 and --dashboard 9090: give the port once/);
  });

  it('shows a wildcard listener by an address clients reach', () => {
    assert.equal(reachableUrl('http://0.0.0.0:9464', '10.0.0.11'), 'http://10.0.0.11:9464');
    assert.equal(reachableUrl('http://127.0.0.1:9464', '10.0.0.11'), 'http://127.0.0.1:9464');
    assert.equal(reachableUrl('http://[::]:9464/', 'fd00::5'), 'http://[fd00::5]:9464/');
  });

  it('tidepool node refuses --advertise 0.0.0.0 with a clear error and exit code 2', async () => {
    const run = await tidepool(['node', '--zk', 'zk://127.0.0.1:2181', '--secret-file', secretFile(), '--listen', '0.0.0.0', '--advertise', '0.0.0.0']);
    assertCleanError(run, /error: --advertise 0\.0\.0\.0: 0\.0\.0\.0 is a wildcard, not an address peers can dial; a routable address is needed/);
    const bad = await tidepool(['node', '--zk', '127.0.0.1:2181', '--secret-file', secretFile(), '--listen', 'tcp://10.0.0.5']);
    assertCleanError(bad, /error: --listen: "tcp:\/\/10\.0\.0\.5" is not ADDR\[:PORT\]/);
    // The setting's variable is checked the same way (without the caller's other TIDEPOOL_* variables).
    const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TIDEPOOL_'))), TIDEPOOL_NODE_ADVERTISE: '0.0.0.0' };
    const variable = await runCommand(process.execPath, [fileURLToPath(new URL('../../bin/tidepool.mjs', import.meta.url)), 'node', '--zk', '127.0.0.1:2181', '--secret-file', secretFile()], { env });
    assertCleanError(variable, /error: --advertise 0\.0\.0\.0: 0\.0\.0\.0 is a wildcard/);
    const both = await tidepool(['node', '--zk', '127.0.0.1:2181', '--secret-file', secretFile(), '--listen', '0.0.0.0', '--host', '0.0.0.0']);
    assertCleanError(both, /--host is the old name of --listen: give one of them/);
  });
});
