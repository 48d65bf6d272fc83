/**
 * ZooKeeper over TLS (docs/security.md): a real ZooKeeper server (Debian's package) that serves TLS
 * only — a `secureClientPort` with a PKCS#12 key store made by keytool, client certificates required
 * (`ssl.clientAuth=need`), no plaintext client port — reached by tidepool through `tidepool zk-tunnel`
 * (a child process of the built CLI): a node process and a client run a job through it. The server
 * listens on its TLS port alone, and answers neither a plaintext client there nor a TLS client without a
 * certificate. A tunnel that cannot verify the server forwards nothing and says why.
 */
import assert from 'node:assert/strict';
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { connect } from '../../src/coord/connect.js';
import type { CoordClient } from '../../src/coord/types.js';
import { awaitOutcome } from '../../src/runtime/job/outcome.js';
import { submitJob } from '../../src/runtime/client/submit.js';
import { taskPoolJob } from '../../src/runtime/pool/task-pool-ref.js';
import type { TaskRef } from '../../src/runtime/worker/task.js';
import { TlsTunnel } from '../../src/transport/tls-tunnel.js';
import { startServing } from '../support/cli.js';
import { secretFile, secretIn, startNodeProcess, type NodeProcess } from '../support/node-process.js';
import { withDeadline } from '../support/wait.js';
import { fourLetterWord, startEnsemble, type ZkEnsemble } from '../support/zk-ensemble.js';

const BIN = fileURLToPath(new URL('../../bin/tidepool.mjs', import.meta.url));
const COUNT: TaskRef = { module: new URL('../../examples/count.js', import.meta.url).href, export: 'default' };
const run = promisify(execFile);

/** keytool (the JDK's, beside the JVM ZooKeeper runs on): a key pair in a PKCS#12 store, and its certificate in PEM. */
async function keyPair(dir: string, name: string, password: string, extra: string[] = []): Promise<{ store: string; pem: string }> {
  const store = join(dir, `${name}.p12`);
  const pem = join(dir, `${name}.pem`);
  await run('keytool', ['-genkeypair', '-alias', name, '-keyalg', 'EC', '-groupname', 'secp256r1', '-dname', `CN=${name}`, '-validity', '2',
    '-keystore', store, '-storetype', 'PKCS12', '-storepass', password, '-keypass', password, ...extra]);
  await run('keytool', ['-exportcert', '-rfc', '-alias', name, '-keystore', store, '-storepass', password, '-file', pem]);
  return { store, pem };
}

/** The TCP ports process `pid` listens on (Linux: its socket inodes matched in /proc/<pid>/net/tcp{,6}). */
function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let link = '';
    try {
      link = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue; // closed meanwhile
    }
    const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
    if (inode) inodes.add(inode);
  }
  const ports = new Set<number>();
  for (const table of ['tcp', 'tcp6']) {
    for (const line of readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // local_address is f[1] (hex ip:port), st is f[3] (0A = LISTEN), inode is f[9].
      if (f.length > 9 && f[3] === '0A' && inodes.has(f[9]!)) ports.add(parseInt(f[1]!.split(':').at(-1)!, 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}

/** What a plaintext connection through `port` gets for `srvr`: the whole answer, '' when closed without one. */
function srvrThrough(port: number): Promise<string> {
  return fourLetterWord(port, 'srvr', 20_000).catch((err: Error) => `failed: ${err.message}`);
}

describe('ZooKeeper over TLS through tidepool zk-tunnel', { timeout: 300_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'tp-zk-tls-'));
  const secret = secretFile();
  let zk: ZkEnsemble;
  let securePort: number;
  let server: { store: string; pem: string };
  let client: { store: string; pem: string };
  let tunnel: ChildProcess | undefined;
  let tunnelZk: string;
  const nodes: NodeProcess[] = [];
  let coord: CoordClient | undefined;

  before(async () => {
    server = await keyPair(dir, 'zookeeper', 'server-pass', ['-ext', 'SAN=ip:127.0.0.1,dns:localhost']);
    client = await keyPair(dir, 'tidepool', 'client-pass');
    const trust = join(dir, 'trust.p12');
    await run('keytool', ['-importcert', '-noprompt', '-alias', 'tidepool', '-file', client.pem, '-keystore', trust, '-storetype', 'PKCS12', '-storepass', 'trust-pass']);
    const passphrase = join(dir, 'client.pass');
    writeFileSync(passphrase, 'client-pass\n', { mode: 0o600 });
    zk = await startEnsemble({
      size: 1,
      tls: {
        config: [
          `ssl.keyStore.location=${server.store}`, 'ssl.keyStore.password=server-pass', 'ssl.keyStore.type=PKCS12',
          `ssl.trustStore.location=${trust}`, 'ssl.trustStore.password=trust-pass', 'ssl.trustStore.type=PKCS12',
          'ssl.clientAuth=need',
        ],
        probe: { ca: readFileSync(server.pem), pfx: readFileSync(client.store), passphrase: 'client-pass' },
      },
    });
    securePort = zk.servers[0]!.clientPort;
    const started = await startServing(process.execPath, [BIN, 'zk-tunnel', '--connect', `127.0.0.1:${securePort}`, '--listen', '127.0.0.1:0',
      '--ca', server.pem, '--pfx', client.store, '--passphrase-file', passphrase, '--json'], { what: 'tidepool zk-tunnel' });
    tunnel = started.child;
    tunnelZk = (JSON.parse(started.firstLine) as { zk: string }).zk;
  });

  after(async () => {
    await coord?.close();
    for (const n of nodes) n.kill('SIGKILL');
    await Promise.all(nodes.map((n) => n.exited));
    if (tunnel && tunnel.exitCode === null) {
      const exited = new Promise((resolve) => tunnel!.once('exit', resolve));
      tunnel.kill('SIGTERM');
      await withDeadline(exited, 'tidepool zk-tunnel to stop on SIGTERM');
    }
    await zk?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves TLS only: the server listens on its secure port alone and answers no plaintext client there', async () => {
    assert.deepStrictEqual(listeningPorts(zk.servers[0]!.pid!), [securePort], 'the ZooKeeper server listens on its TLS port and nothing else');
    assert.doesNotMatch(await srvrThrough(securePort), /Mode:/, 'a plaintext client gets nothing from the TLS port');
    const noCertificate = await fourLetterWord(securePort, 'srvr', 20_000, { ca: readFileSync(server.pem) }).catch((err: Error) => err.message);
    assert.doesNotMatch(noCertificate, /Mode:/, 'a TLS client without a client certificate gets nothing (ssl.clientAuth=need)');
    assert.match(await srvrThrough(Number(tunnelZk.split(':').at(-1))), /Mode: standalone/, 'the same request through the tunnel is answered');
  });

  it('runs a job with a node and a client that reach ZooKeeper through the tunnel only', async () => {
    nodes.push(await startNodeProcess({ zk: tunnelZk, secretFile: secret }));
    coord = await connect(tunnelZk, { secret: secretIn(secret), connectTimeoutMs: 30_000 });
    const spec = await submitJob(coord, { ...taskPoolJob(COUNT, { n: 1000 }), nodes: 1, secret: secretIn(secret) });
    const outcome = await withDeadline(awaitOutcome(coord, spec.id), 'the job through the tunnel', 120_000);
    assert.equal(outcome.status === 'done' && outcome.value, 168, 'examples/count.js counts the 168 primes below 1000');
  });

  it('forwards nothing to a server it cannot verify, and says why', async () => {
    const cases = [
      { name: 'a CA that did not sign the server\'s certificate', options: { ca: readFileSync(client.pem), pfx: readFileSync(client.store), passphrase: 'client-pass' }, reason: /self[- ]signed|unable to (verify|get)|certificate/i },
      { name: 'the server\'s CA under another name', options: { ca: readFileSync(server.pem), pfx: readFileSync(client.store), passphrase: 'client-pass', servername: 'zk.elsewhere' }, reason: /zk\.elsewhere|altnames/i },
    ];
    for (const c of cases) {
      const t = new TlsTunnel({ targets: [{ host: '127.0.0.1', port: securePort }], connectTimeoutMs: 20_000, ...c.options });
      const failures: string[] = [];
      t.events.on('targetFailed', (e) => failures.push(e.reason));
      await t.start();
      try {
        assert.doesNotMatch(await srvrThrough(t.port), /Mode:/, `${c.name}: nothing forwarded`);
        assert.equal(failures.length, 1, `${c.name}: one failure reported`);
        assert.match(failures[0]!, c.reason, `${c.name}: the reason`);
      } finally {
        await t.close();
      }
    }
  });

  it('listens on loopback only', () => {
    assert.throws(() => new TlsTunnel({ targets: [{ host: '127.0.0.1', port: securePort }], host: '0.0.0.0' }), /loopback only/);
  });
});
